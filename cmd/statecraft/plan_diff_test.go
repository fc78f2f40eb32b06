package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/ttl"
)

// diffFixture is the path of a plan the oracle compiled with Flink (read only).
func diffFixture(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "testdata", "plans", name+".json")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not present (make fixtures)", p)
	}
	return p
}

func runDiff(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(append([]string{"plan", "diff"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

// ttlEdited writes the oracle plan with its first state's TTL set to 1 h by the plan
// package's editor, and returns its path.
func ttlEdited(t *testing.T, name string) string {
	t.Helper()
	src := diffFixture(t, name)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(src, data)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := p.Apply([]plan.Change{{Entry: p.States()[0], TTL: ttl.TTL(3600000)}})
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name+"-1h.json")
	if err := os.WriteFile(dst, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestPlanDiffSummaryFirst(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		first    string
		more     []string
	}{
		{"group-aggregate", "group-aggregate", "Verdict: identical — no differences in 5 nodes", nil},
		{"group-aggregate", "group-aggregate-filtered", "Verdict: compatible — 1 stateless node changed",
			[]string{"~ node 2  stream-exec-calc_1  [compatible: stateless]", "~ field condition: null -> "}},
		{"join-inner", "join-inner-other-key", "Verdict: incompatible — 1 stateful node changed, 1 source renumbered, 1 stateless node added, 2 stateless nodes changed",
			[]string{"+ node 2  stream-exec-calc_1", "~ node 6 -> 7  stream-exec-join_1  [incompatible: stateful, matched by structure",
				"~ keys joinSpec.leftKeys: [1] -> [0]", "why: state key or distribution changed: joinSpec.leftKeys [1] -> [0]"}},
	} {
		code, out, errs := runDiff(diffFixture(t, tc.old), diffFixture(t, tc.new))
		if code != exitOK {
			t.Fatalf("%s %s: exit %d: %s", tc.old, tc.new, code, errs)
		}
		if first, _, _ := strings.Cut(out, "\n"); first != tc.first {
			t.Errorf("%s -> %s: first line %q, want %q", tc.old, tc.new, first, tc.first)
		}
		for _, m := range tc.more {
			if !strings.Contains(out, m) {
				t.Errorf("%s -> %s: output lacks %q:\n%s", tc.old, tc.new, m, out)
			}
		}
		if strings.Contains(out, "\x1b[") {
			t.Errorf("%s -> %s: colour codes in output to a buffer", tc.old, tc.new)
		}
	}
}

func TestPlanDiffTTLOnlyText(t *testing.T) {
	old := diffFixture(t, "group-aggregate")
	code, out, errs := runDiff(old, ttlEdited(t, "group-aggregate"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, m := range []string{"Verdict: ttl-only — TTL changed on 1 state", `~ ttl groupAggregateState: never -> 1h ("0 ms" -> "1 h")`} {
		if !strings.Contains(out, m) {
			t.Errorf("output lacks %q:\n%s", m, out)
		}
	}
}

func TestPlanDiffColor(t *testing.T) {
	old, new := diffFixture(t, "group-aggregate"), diffFixture(t, "group-aggregate-filtered")
	_, out, _ := runDiff(old, new, "--color", "always")
	if !strings.Contains(out, "\x1b[33m~") || !strings.Contains(out, "\x1b[0m") {
		t.Errorf("--color always: no colour codes:\n%q", out)
	}
	_, out, _ = runDiff(old, new, "--color", "never")
	if strings.Contains(out, "\x1b[") {
		t.Errorf("--color never: colour codes")
	}
	if code, _, errs := runDiff(old, new, "--color", "sometimes"); code != exitFailure || !strings.Contains(errs, "--color") {
		t.Errorf("--color sometimes: exit %d %q", code, errs)
	}
	// auto: a character device (as a terminal is) gets colour unless NO_COLOR is set; a
	// regular file or pipe never does.
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer dev.Close()
	t.Setenv("NO_COLOR", "")
	if on, _ := useColor("auto", dev); !on {
		t.Errorf("auto on a character device without NO_COLOR: no colour")
	}
	t.Setenv("NO_COLOR", "1")
	if on, _ := useColor("auto", dev); on {
		t.Errorf("auto with NO_COLOR=1: colour")
	}
	t.Setenv("NO_COLOR", "")
	reg, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	if on, _ := useColor("auto", reg); on {
		t.Errorf("auto on a regular file: colour")
	}
}

func TestPlanDiffJSON(t *testing.T) {
	code, out, errs := runDiff("--json", diffFixture(t, "join-inner"), diffFixture(t, "join-inner-other-key"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var r plan.DiffReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if r.Schema != 1 || r.Verdict != plan.Incompatible || r.Counts.Added != 1 || r.New.Nodes != 9 || r.Old.Nodes != 8 {
		t.Errorf("report %+v", r)
	}
	var generic struct {
		Verdict string `json:"verdict"`
		Nodes   []struct {
			Status string `json:"status"`
			Match  *struct {
				By         string  `json:"by"`
				Confidence float64 `json:"confidence"`
			} `json:"match"`
		} `json:"nodes"`
	}
	json.Unmarshal([]byte(out), &generic)
	if generic.Verdict != "incompatible" {
		t.Errorf("verdict %q", generic.Verdict)
	}
	byStructure := 0
	for _, n := range generic.Nodes {
		if n.Match != nil && n.Match.By == "structure" {
			byStructure++
			if n.Match.Confidence < plan.MinConfidence || n.Match.Confidence > 1 {
				t.Errorf("confidence %v", n.Match.Confidence)
			}
		}
	}
	if byStructure != 7 {
		t.Errorf("%d nodes matched by structure, want the 7 after the inserted calc", byStructure)
	}
}

func TestPlanDiffText(t *testing.T) {
	old, new := diffFixture(t, "group-aggregate"), diffFixture(t, "group-aggregate-filtered")
	code, out, errs := runDiff("--text", old, new)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, m := range []string{"--- " + old + "\n+++ " + new + "\n@@ -55,7 +55,21 @@\n", "\n-    \"condition\" : null,\n", "\n+    \"condition\" : {\n",
		"\n+    \"description\" : \"Calc(select=[user_id, amount], where=[(amount > 10)])\"\n"} {
		if !strings.Contains(out, m) {
			t.Errorf("--text lacks %q:\n%s", m, out)
		}
	}
	if code, out, _ := runDiff("--text", old, old); code != exitOK || out != "" {
		t.Errorf("--text of equal files: exit %d, %q", code, out)
	}
}

// --fail-on VERDICT exits 2 when the verdict is that one or worse; any = not identical.
func TestPlanDiffFailOn(t *testing.T) {
	ga, filtered := diffFixture(t, "group-aggregate"), diffFixture(t, "group-aggregate-filtered")
	ttlOnly := ttlEdited(t, "group-aggregate")
	ji, jk := diffFixture(t, "join-inner"), diffFixture(t, "join-inner-other-key")
	for _, tc := range []struct {
		old, new, failOn string
		want             int
	}{
		{ga, ga, "any", exitOK},
		{ga, ga, "ttl-only", exitOK},
		{ga, ttlOnly, "any", exitFindings},
		{ga, ttlOnly, "ttl-only", exitFindings},
		{ga, ttlOnly, "compatible", exitOK},
		{ga, filtered, "compatible", exitFindings},
		{ga, filtered, "uid-remap", exitOK},
		{ji, jk, "uid-remap", exitFindings},
		{ji, jk, "incompatible", exitFindings},
		{ji, jk, "", exitOK},
		{ga, ga, "identical", exitFindings},
	} {
		args := []string{tc.old, tc.new}
		if tc.failOn != "" {
			args = append(args, "--fail-on", tc.failOn)
		}
		if code, _, errs := runDiff(args...); code != tc.want {
			t.Errorf("%s %s --fail-on %s: exit %d, want %d (%s)", filepath.Base(tc.old), filepath.Base(tc.new), tc.failOn, code, tc.want, errs)
		}
		// The gate works the same with --json.
		if code, _, _ := runDiff(append(args, "--json")...); code != tc.want {
			t.Errorf("--json %s %s --fail-on %s: exit %d, want %d", filepath.Base(tc.old), filepath.Base(tc.new), tc.failOn, code, tc.want)
		}
	}
}

func TestPlanDiffErrors(t *testing.T) {
	ga := diffFixture(t, "group-aggregate")
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "broken.json")
	os.WriteFile(notJSON, []byte("{\n  \"nodes\" : [ {\n"), 0o600)
	notPlan := filepath.Join(dir, "other.json")
	os.WriteFile(notPlan, []byte(`{"hello": 1}`), 0o600)
	missing := filepath.Join(dir, "missing.json")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{ga}, "want two arguments"},
		{[]string{ga, ga, ga}, "want two arguments"},
		{[]string{ga, missing}, missing},
		{[]string{missing, ga}, missing},
		{[]string{ga, notJSON}, notJSON + ":2:16: not JSON"},
		{[]string{notPlan, ga}, notPlan + `: nodes: not a Flink compiled plan`},
		{[]string{ga, ga, "--fail-on", "bad"}, `--fail-on: unknown verdict "bad"`},
		{[]string{ga, ga, "--json", "--text"}, "exclude each other"},
		{[]string{"-", "-"}, "only one of OLD and NEW"},
	} {
		code, out, errs := runDiff(tc.args...)
		if code != exitFailure || !strings.Contains(errs, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q, want 1 and %q", tc.args, code, errs, tc.msg)
		}
		if out != "" {
			t.Errorf("%v: stdout %q on error", tc.args, out)
		}
	}
}
