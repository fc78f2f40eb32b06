// Package oracletest holds what Go tests share to call the Java oracle (testdata/oracle/run.sh,
// real Flink in a local MiniCluster): the STATECRAFT_ORACLE=1 gate, and the script's path from
// whichever package directory the test runs in.
package oracletest

import (
	"os"
	"path/filepath"
	"testing"
)

// Env is the variable that lets tests start the oracle: each run starts a JVM and often a
// MiniCluster, too slow for every go test.
const Env = "STATECRAFT_ORACLE"

// Require skips t unless STATECRAFT_ORACLE=1. The skip message is "set STATECRAFT_ORACLE=1 "
// followed by why (what the test has Flink do, and what it needs).
func Require(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(Env) != "1" {
		t.Skip("set " + Env + "=1 " + why)
	}
}

// Script returns the absolute path of testdata/oracle/run.sh. go test runs a package's tests in
// the package's directory, so the module root is the nearest directory above holding go.mod.
func Script(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "oracle", "run.sh")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("oracletest: no go.mod above the working directory")
		}
		dir = parent
	}
}
