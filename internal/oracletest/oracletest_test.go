package oracletest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestScript: from this package's directory, two levels below the module root, Script finds
// the oracle's run.sh as an executable file.
func TestScript(t *testing.T) {
	got := Script(t)
	want, err := filepath.Abs(filepath.Join("..", "..", "testdata", "oracle", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Script() = %s, want %s", got, want)
	}
	fi, err := os.Stat(got)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&0o111 == 0 || !fi.Mode().IsRegular() {
		t.Errorf("%s: mode %v, want an executable file", got, fi.Mode())
	}
}

// TestRequire: without STATECRAFT_ORACLE=1 the test is skipped with the gate's message; with it,
// it goes on.
func TestRequire(t *testing.T) {
	for _, c := range []struct {
		env  string
		skip bool
	}{{"", true}, {"0", true}, {"1", false}} {
		t.Setenv(Env, c.env)
		r := &recorder{}
		done := make(chan struct{})
		go func() { // Skip ends the goroutine, as it ends a test
			defer close(done)
			Require(r, "to test the gate")
		}()
		<-done
		if r.skipped != c.skip {
			t.Errorf("%s=%q: skipped=%v, want %v", Env, c.env, r.skipped, c.skip)
		}
		if c.skip && r.msg != "set STATECRAFT_ORACLE=1 to test the gate" {
			t.Errorf("%s=%q: skip message %q", Env, c.env, r.msg)
		}
	}
}

// recorder is a testing.TB whose Skip records its message and ends the goroutine.
type recorder struct {
	testing.TB
	skipped bool
	msg     string
}

func (r *recorder) Helper() {}

func (r *recorder) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
