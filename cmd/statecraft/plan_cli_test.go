package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// fixturePlan copies a plan the oracle compiled with Flink into a temporary directory, so a
// test may edit it.
func fixturePlan(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "testdata", "plans", name)
	data, err := os.ReadFile(src)
	if os.IsNotExist(err) {
		t.Skipf("%s not present", src)
	}
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(dst, data, 0o640); err != nil {
		t.Fatal(err)
	}
	return dst
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPlanTTLListTableAndJSON(t *testing.T) {
	p := fixturePlan(t, "join-inner.json")
	raw := readFile(t, p)
	code, out, errs := runCLI("plan", "ttl", "list", p)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Every state entry of the file appears as a row "<node id> <type> <index> <name> <input> <ttl>".
	rows := 0
	gjson.GetBytes(raw, "nodes").ForEach(func(_, n gjson.Result) bool {
		n.Get("state").ForEach(func(_, s gjson.Result) bool {
			rows++
			want := fmt.Sprintf("%d %s %d %s", n.Get("id").Int(), n.Get("type").String(), s.Get("index").Int(), s.Get("name").String())
			found := false
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(strings.Join(strings.Fields(line), " "), want) {
					found = true
				}
			}
			if !found {
				t.Errorf("no row %q in:\n%s", want, out)
			}
			return true
		})
		return true
	})
	if rows == 0 {
		t.Fatal("fixture has no state entries")
	}
	code, out, errs = runCLI("plan", "ttl", "list", "--json", p)
	if code != exitOK {
		t.Fatalf("--json exit %d: %s", code, errs)
	}
	var l listOutput
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.States) != rows {
		t.Fatalf("--json has %d states, the file %d", len(l.States), rows)
	}
	// The join's inputs: leftState holds the node feeding input 0 (first edge to the join).
	for _, s := range l.States {
		var firstSrc int64 = -1
		k := 0
		gjson.GetBytes(raw, "edges").ForEach(func(_, e gjson.Result) bool {
			if e.Get("target").Int() == int64(s.Node) {
				if k == s.Index {
					firstSrc = e.Get("source").Int()
				}
				k++
			}
			return true
		})
		if s.Input == nil || int64(*s.Input) != firstSrc {
			t.Errorf("state %d:%s input %v, want %d", s.Node, s.Name, s.Input, firstSrc)
		}
		if s.Human != "never" || s.TTL != "0 ms" || s.TTLMillis == nil || *s.TTLMillis != 0 {
			t.Errorf("state %+v: want 0 ms / never", s)
		}
		if !strings.Contains(s.Description, "Join(") {
			t.Errorf("--json should carry the full description, got %q", s.Description)
		}
	}
}

func TestPlanTTLSetDryRunWithFlagsAfterPositional(t *testing.T) {
	p := fixturePlan(t, "join-inner.json")
	before := readFile(t, p)
	code, out, errs := runCLI("plan", "ttl", "set", p, "--dry-run", "--all", "--ttl", "1h")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !bytes.Equal(before, readFile(t, p)) {
		t.Fatal("--dry-run wrote the plan")
	}
	if !strings.Contains(out, `-      "ttl" : "0 ms",`) || !strings.Contains(out, `+      "ttl" : "1 h",`) || !strings.HasPrefix(out, "--- a/") {
		t.Fatalf("dry-run output is not a unified diff of the ttl lines:\n%s", out)
	}
	plus, minus := 0, 0
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			plus++
		case strings.HasPrefix(l, "-"):
			minus++
		}
	}
	if plus != 2 || minus != 2 {
		t.Fatalf("diff should change exactly the two ttl lines (+%d -%d):\n%s", plus, minus, out)
	}
}

func TestPlanTTLSetInPlaceKeepsModeAndOtherBytes(t *testing.T) {
	p := fixturePlan(t, "join-inner.json")
	before := readFile(t, p)
	code, _, errs := runCLI("plan", "ttl", "set", p, "--node", "6:leftState", "--ttl", "90m", "--set", "state:rightState=2d")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	after := readFile(t, p)
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o640 {
		t.Fatalf("mode %v, want 0640 kept", st.Mode().Perm())
	}
	var left, right string
	gjson.GetBytes(after, "nodes").ForEach(func(_, n gjson.Result) bool {
		n.Get("state").ForEach(func(_, s gjson.Result) bool {
			switch s.Get("name").String() {
			case "leftState":
				left = s.Get("ttl").String()
			case "rightState":
				right = s.Get("ttl").String()
			}
			return true
		})
		return true
	})
	if left != "90 min" || right != "2 d" {
		t.Fatalf("left %q right %q, want 90 min and 2 d", left, right)
	}
	// Replace the two values back: the files must then be identical byte for byte.
	restored := bytes.Replace(bytes.Replace(after, []byte(`"90 min"`), []byte(`"0 ms"`), 1), []byte(`"2 d"`), []byte(`"0 ms"`), 1)
	if !bytes.Equal(restored, before) {
		t.Fatal("bytes outside the ttl values changed")
	}
}

func TestPlanTTLSetOutputAndStdin(t *testing.T) {
	p := fixturePlan(t, "dedup-then-aggregate.json")
	before := readFile(t, p)
	code, out, errs := runCLI("plan", "ttl", "set", p, "-o", "-", "--type", "deduplicate", "--ttl", "1 d")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !bytes.Equal(before, readFile(t, p)) {
		t.Fatal("-o - changed the input file")
	}
	if got := gjson.Get(out, `nodes.#(type=="stream-exec-deduplicate_1").state.0.ttl`).String(); got != "1 d" {
		t.Fatalf("stdout plan has dedup ttl %q", got)
	}
	outFile := filepath.Join(t.TempDir(), "out.json")
	if code, _, errs := runCLI("plan", "ttl", "set", "--all", "--ttl", "never", p, "-o", outFile); code != exitOK {
		t.Fatalf("-o FILE exit %d: %s", code, errs)
	}
	if !bytes.Equal(readFile(t, outFile), before) { // all were already 0 ms: nothing changes
		t.Fatal("setting never on never-expiring states changed bytes")
	}

	// "-" reads stdin and writes stdout.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { w.Write(before); w.Close() }()
	saved := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = saved }()
	code, out, errs = runCLI("plan", "ttl", "set", "-", "--state", "groupAggregateState", "--ttl", "PT2H")
	if code != exitOK {
		t.Fatalf("stdin exit %d: %s", code, errs)
	}
	if got := gjson.Get(out, `nodes.#(type=="stream-exec-group-aggregate_1").state.0.ttl`).String(); got != "2 h" {
		t.Fatalf("stdin plan: agg ttl %q", got)
	}
}

func TestPlanBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := readFile(t, fixturePlan(t, "dedup-then-aggregate.json"))
	aggPos, aggID := -1, -1
	gjson.GetBytes(good, "nodes").ForEach(func(k, n gjson.Result) bool {
		if n.Get("type").String() == "stream-exec-group-aggregate_1" {
			aggPos, aggID = int(k.Int()), int(n.Get("id").Int())
		}
		return true
	})
	// Messages name the node by its id (plan validate used to say nodes.<array index>).
	aggWant := fmt.Sprintf("nodes[id=%d]", aggID)
	mut := func(path string, v any) []byte {
		b, err := sjson.SetBytes(good, path, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	noName, _ := sjson.DeleteBytes(good, fmt.Sprintf("nodes.%d.state.0.name", aggPos))
	cases := []struct {
		name     string
		data     []byte
		args     []string // PLAN is appended first
		code     int
		contains []string
		usage    bool // a flag error, found before the file is read
	}{
		{"not JSON list", []byte("{\n  \"nodes\": [\n    {\"id\": 1,,}\n"), []string{"plan", "ttl", "list"}, exitFailure, []string{"notjson.json:3:", "not JSON"}, false},
		{"not JSON set", []byte("nope"), []string{"plan", "ttl", "set", "--all", "--ttl", "1h"}, exitFailure, []string{"not JSON"}, false},
		{"not a plan", []byte(`{"name": "x"}`), []string{"plan", "validate"}, exitFailure, []string{`no "nodes" array`}, false},
		{"state entry missing name", noName, []string{"plan", "validate"}, exitFindings, []string{aggWant + ".state.0.name", `no "name"`}, false},
		{"state entry missing name, list", noName, []string{"plan", "ttl", "list"}, exitFindings, []string{aggWant + ".state.0.name"}, false},
		{"ttl Flink cannot parse", mut(fmt.Sprintf("nodes.%d.state.0.ttl", aggPos), "1 fortnight"), []string{"plan", "validate"}, exitFindings, []string{aggWant + ".state.0.ttl", "fortnight"}, false},
		{"set refuses a plan with errors", mut(fmt.Sprintf("nodes.%d.state.0.ttl", aggPos), "1 fortnight"), []string{"plan", "ttl", "set", "--type", "deduplicate", "--ttl", "1h"}, exitFindings, []string{"fortnight", "--force"}, false},
		{"node id that does not exist", good, []string{"plan", "ttl", "set", "--node", "999", "--ttl", "1h"}, exitFailure, []string{"node 999 does not exist", "nodes with TTL state"}, false},
		{"stateless node", good, []string{"plan", "ttl", "set", "--node", "1", "--ttl", "1h"}, exitFailure, []string{"has no per-operator TTL"}, false},
		{"state name not found", good, []string{"plan", "ttl", "set", "--state", "leftState", "--ttl", "1h"}, exitFailure, []string{"deduplicateState", "groupAggregateState"}, false},
		{"bad duration", good, []string{"plan", "ttl", "set", "--all", "--ttl", "soon"}, exitFailure, []string{"soon"}, true},
		{"selector without ttl", good, []string{"plan", "ttl", "set", "--all"}, exitFailure, []string{"--ttl"}, true},
		{"set without selector", good, []string{"plan", "ttl", "set", "--ttl", "1h"}, exitFailure, []string{"--all"}, true},
		{"bad --set", good, []string{"plan", "ttl", "set", "--set", "7"}, exitFailure, []string{"SELECTOR=DURATION"}, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := "notjson.json"
			if i > 0 {
				name = fmt.Sprintf("case%d.json", i)
			}
			p := write(name, tc.data)
			args := append(append([]string{}, tc.args[:2]...), p)
			args = append(args, tc.args[2:]...)
			if tc.args[1] == "ttl" { // "plan ttl list|set PLAN ..."
				args = append(append([]string{}, tc.args[:3]...), p)
				args = append(args, tc.args[3:]...)
			}
			code, out, errs := runCLI(args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errs)
			}
			all := out + errs
			for _, c := range tc.contains {
				if !strings.Contains(all, c) {
					t.Errorf("output does not contain %q:\n%s", c, all)
				}
			}
			if !tc.usage && !strings.Contains(all, p) {
				t.Errorf("output does not name the file %s:\n%s", p, all)
			}
			if !bytes.Equal(readFile(t, p), tc.data) {
				t.Errorf("input was modified")
			}
		})
	}
}

func TestPlanValidateExitCodes(t *testing.T) {
	p := fixturePlan(t, "dedup-then-aggregate.json")
	if code, out, errs := runCLI("plan", "validate", p); code != exitOK || !strings.Contains(out, "0 errors, 0 warnings") {
		t.Fatalf("clean plan: exit %d\n%s%s", code, out, errs)
	}
	// Make the aggregate (downstream) expire before the deduplicate (upstream): a warning.
	if code, _, errs := runCLI("plan", "ttl", "set", p, "--set", "type:deduplicate=1d", "--set", "type:group-aggregate=1h"); code != exitOK || !strings.Contains(errs, "ttl-order") {
		t.Fatalf("set exit %d; the ordering warning should be shown: %s", code, errs)
	}
	code, out, _ := runCLI("plan", "validate", p)
	if code != exitOK || !strings.Contains(out, "warning") || !strings.Contains(out, "fix: raise") {
		t.Fatalf("warnings only: exit %d, want 0\n%s", code, out)
	}
	if code, _, _ := runCLI("plan", "validate", p, "--strict"); code != exitWarnings {
		t.Fatalf("--strict with warnings: exit %d, want %d", code, exitWarnings)
	}
	code, out, _ = runCLI("plan", "validate", "--json", p)
	var v validateOutput
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != exitOK {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	if v.Warnings != 1 || v.Errors != 0 || v.Findings[0].Code != "ttl-order" || len(v.Findings[0].Route) < 2 || v.Findings[0].Upstream.TTL != "1 d" {
		t.Fatalf("--json findings: %+v", v)
	}
	if code, _, _ := runCLI("plan", "validate", filepath.Join(t.TempDir(), "missing.json")); code != exitFailure {
		t.Fatalf("missing file: exit %d, want 1", code)
	}
}

// TestPlanTTLSetForce: a result with validation errors is written only with --force, and the
// findings are shown either way.
func TestPlanTTLSetForce(t *testing.T) {
	p := fixturePlan(t, "join-inner.json")
	raw := readFile(t, p)
	broken, err := sjson.SetBytes(raw, `edges.0.target`, 424242) // an edge to a missing node
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, broken, 0o640); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI("plan", "ttl", "set", p, "--all", "--ttl", "1h")
	if code != exitFindings || !strings.Contains(errs, "dangling-edge") || !bytes.Equal(readFile(t, p), broken) {
		t.Fatalf("without --force: exit %d, file changed %v\n%s", code, !bytes.Equal(readFile(t, p), broken), errs)
	}
	code, _, errs = runCLI("plan", "ttl", "set", p, "--all", "--ttl", "1h", "--force")
	if code != exitOK || !strings.Contains(errs, "dangling-edge") {
		t.Fatalf("with --force: exit %d\n%s", code, errs)
	}
	if got := gjson.GetBytes(readFile(t, p), `nodes.#(type=="stream-exec-join_1").state.0.ttl`).String(); got != "1 h" {
		t.Fatalf("--force did not write: ttl %q", got)
	}
}

// TestPlanTTLListJSONTypesAlike (issue 18, messages): statefulWithoutTTL[].type is the exec node
// type without its version suffix, as states[].type is, with the version in its own field.
func TestPlanTTLListJSONTypesAlike(t *testing.T) {
	code, out, errs := runCLI("plan", "ttl", "list", "--json", fixturePlan(t, "window-aggregate.json"))
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var l listOutput
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.StatefulWithoutTTL) == 0 {
		t.Fatalf("Flink's window aggregate plan lists no stateful node without TTL:\n%s", out)
	}
	for _, r := range l.StatefulWithoutTTL {
		if !strings.HasPrefix(r.Type, "stream-exec-") || strings.Contains(r.Type, "_") || r.Version < 1 {
			t.Errorf("statefulWithoutTTL entry %+v: want a type without _N and its version apart", r)
		}
	}
}
