package oracletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Run runs one oracle command (testdata/oracle/run.sh COMMAND ARGS...) with Flink's default
// version and returns its combined output; err is non-nil when the command failed or exited
// non-zero. Paths in args must be absolute: the oracle may serve many tests from one JVM whose
// working directory is not the test's.
func Run(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	return RunVersion(t, "", args...)
}

// RunVersion is Run with Flink version (for example "1.20.0"; "" for the default).
func RunVersion(t testing.TB, version string, args ...string) ([]byte, error) {
	t.Helper()
	for _, a := range args[1:] {
		if looksRelative(a) {
			t.Fatalf("oracletest.Run %s: path %q is relative; pass an absolute path", args[0], a)
		}
	}
	cmd := exec.Command(Script(t), args...)
	if version != "" {
		cmd.Env = append(os.Environ(), "FLINK_VERSION="+version)
	}
	return cmd.CombinedOutput()
}

// looksRelative reports whether a names an existing file or directory by a relative path.
func looksRelative(a string) bool {
	if a == "" || filepath.IsAbs(a) {
		return false
	}
	_, err := os.Stat(a)
	return err == nil
}
