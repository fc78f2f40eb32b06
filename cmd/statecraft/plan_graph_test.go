package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
)

func runGraph(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"plan", "graph"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPlanGraphFormats(t *testing.T) {
	f := diffFixture(t, "join-inner")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(f, data)
	if err != nil {
		t.Fatal(err)
	}
	findings := p.Validate().Findings
	for _, tc := range []struct {
		args []string
		want []byte
	}{
		{[]string{f}, plan.DOT(p, findings)},
		{[]string{f, "--format", "dot"}, plan.DOT(p, findings)},
		{[]string{"--format", "mermaid", f}, plan.Mermaid(p, findings)},
	} {
		code, out, errs := runGraph(tc.args...)
		if code != exitOK || out != string(tc.want) {
			t.Errorf("%v: exit %d (%s), output differs from the renderer:\n%s", tc.args, code, errs, out)
		}
	}
	// -o writes the same bytes to a file and nothing to stdout.
	dst := filepath.Join(t.TempDir(), "g.mmd")
	code, out, errs := runGraph(f, "--format", "mermaid", "-o", dst)
	if code != exitOK || out != "" {
		t.Fatalf("-o: exit %d, stdout %q, %s", code, out, errs)
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, plan.Mermaid(p, findings)) {
		t.Errorf("-o wrote %q", got)
	}
	if !strings.HasPrefix(string(plan.DOT(p, findings)), "// ") || !strings.Contains(string(plan.DOT(p, findings)), "digraph plan {") {
		t.Errorf("DOT header")
	}
}

func TestPlanGraphErrors(t *testing.T) {
	f := diffFixture(t, "join-inner")
	missing := filepath.Join(t.TempDir(), "nope.json")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{f, "--format", "svg"}, `--format "svg": want dot or mermaid`},
		{[]string{missing}, missing},
		{[]string{}, "want exactly one PLAN"},
		{[]string{f, f}, "want exactly one PLAN"},
		{[]string{f, "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "g.dot")}, "plan graph: write"},
	} {
		code, out, errs := runGraph(tc.args...)
		if code != exitFailure || !strings.Contains(errs, tc.msg) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 1 and %q", tc.args, code, out, errs, tc.msg)
		}
	}
}
