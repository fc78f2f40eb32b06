package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSummarize runs a real `go test -json` (of this package's fixture test, through the go
// command) and checks the summary: ok lines kept, passing output dropped, the failure's output
// and status kept, slowest list present.
func TestSummarize(t *testing.T) {
	cases := []struct {
		name       string
		run        string
		wantFailed bool
		want       []string
		dontWant   []string
	}{
		{"pass", "TestFixturePass", false, []string{"ok  \t", "slowest tests", "testsummary TestFixturePass"}, []string{"fixture output"}},
		{"fail", "TestFixtureFail", true, []string{"FAIL", "fixture failure reason", "(FAIL)"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("go", "test", "-json", "-count=1", "-run", "^"+c.run+"$", ".")
			cmd.Env = append(cmd.Environ(), "TESTSUMMARY_FIXTURE=1")
			out, _ := cmd.Output() // a failing test exits 1; the events are what count
			var b strings.Builder
			failed, err := summarize(strings.NewReader(string(out)), &b, 5)
			if err != nil {
				t.Fatal(err)
			}
			if failed != c.wantFailed {
				t.Errorf("failed = %v, want %v:\n%s", failed, c.wantFailed, b.String())
			}
			for _, w := range c.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("summary lacks %q:\n%s", w, b.String())
				}
			}
			for _, w := range c.dontWant {
				if strings.Contains(b.String(), w) {
					t.Errorf("summary has %q:\n%s", w, b.String())
				}
			}
		})
	}
	var b strings.Builder
	if failed, _ := summarize(strings.NewReader("# some/pkg\nsyntax error\n"), &b, 5); !failed {
		t.Errorf("input without a package result was taken as a pass:\n%s", b.String())
	}
}
