package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/uid"
)

// sqlSavepoint is the oracle's SQL savepoint and the plan Flink executed to write it.
func sqlSavepoint(t *testing.T) (dir, planFile string) {
	t.Helper()
	dir = filepath.Join("..", "..", "testdata", "savepoints", "sql-group-aggregate")
	if _, err := os.Stat(filepath.Join(dir, "_metadata")); err != nil {
		t.Skipf("oracle fixture %s not present", dir)
	}
	return dir, dir + ".plan.json"
}

func TestSavepointCheckOwnPlan(t *testing.T) {
	dir, planFile := sqlSavepoint(t)
	code, out, errs := runCLI("savepoint", "check", dir, "--plan", planFile)
	if code != exitOK {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{
		"3     stream-exec-group-aggregate_1  3_group-aggregate  restored  accState, (+2 timer services)  128      7546 B",
		"restores: every operator with state in the savepoint is claimed by the plan",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Flags anywhere, JSON.
	code, out, errs = runCLI("savepoint", "check", "--json", "--plan", planFile, dir, "--max-parallelism", "128")
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var r struct {
		Restores bool `json:"restores"`
		Nodes    []struct {
			ID     int    `json:"id"`
			Status string `json:"status"`
			State  struct {
				UIDHash string   `json:"uidHash"`
				Keyed   []string `json:"keyedStates"`
			} `json:"state"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if !r.Restores || len(r.Nodes) != 1 || r.Nodes[0].ID != 3 || r.Nodes[0].State.UIDHash != uid.Hash("3_group-aggregate") {
		t.Errorf("JSON: %+v", r)
	}
}

func TestSavepointCheckIncompatible(t *testing.T) {
	dir, _ := sqlSavepoint(t)
	other := filepath.Join("..", "..", "testdata", "plans", "dedup-then-aggregate.json")
	code, out, _ := runCLI("savepoint", "check", dir, "--plan", other)
	if code != exitFindings {
		t.Fatalf("exit %d, want %d:\n%s", code, exitFindings, out)
	}
	for _, want := range []string{
		"4     stream-exec-deduplicate_1      4_deduplicate      no state: starts empty",
		`error: savepoint operator "GroupAggregate[3]" (uid 3_group-aggregate, hash 4f0fea56069e128b6efb5cf69722457e) (keyed: accState; 7546 bytes) is not in the plan: would be dropped: restore fails unless non-restored state is allowed`,
		// Node 7 aggregates over retractions: other accumulators, so a new UID cannot help.
		"a new UID cannot help: node 7 (accState: the savepoint's row has 2 fields",
		`info: savepoint operator "Sink: counts[4]"`,
		"would NOT restore: 1 error",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	code, out, _ = runCLI("savepoint", "check", dir, "--plan", other, "--allow-non-restored-state")
	if code != exitOK || !strings.Contains(out, "warning: savepoint operator \"GroupAggregate[3]\"") {
		t.Errorf("--allow-non-restored-state: exit %d:\n%s", code, out)
	}
	// A mismatching explicit max parallelism fails even under the savepoint's own plan.
	code, out, _ = runCLI("savepoint", "check", dir, "--plan", dir+".plan.json", "--max-parallelism", "256")
	if code != exitFindings || !strings.Contains(out, "the savepoint has max parallelism 128, the new job sets 256") {
		t.Errorf("--max-parallelism 256: exit %d:\n%s", code, out)
	}
	// The 1.15 UID format renames every operator: nothing is claimed.
	code, out, _ = runCLI("savepoint", "check", dir, "--plan", dir+".plan.json", "--uid-format", "<id>_<type>_<version>_<transformation>")
	if code != exitFindings || !strings.Contains(out, "3_stream-exec-group-aggregate_1_group-aggregate  no state: starts empty") {
		t.Errorf("1.15 format: exit %d:\n%s", code, out)
	}
}

func TestSavepointCheckBadInput(t *testing.T) {
	dir, planFile := sqlSavepoint(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no plan", []string{dir}, "--plan PLAN is required"},
		{"no path", []string{"--plan", planFile}, "want exactly one PATH"},
		{"missing savepoint", []string{filepath.Join(t.TempDir(), "nope"), "--plan", planFile}, "open savepoint"},
		{"missing plan", []string{dir, "--plan", filepath.Join(t.TempDir(), "nope.json")}, "read plan"},
		{"not a plan", []string{dir, "--plan", filepath.Join(dir, "_metadata")}, "not JSON"},
		{"bad generation", []string{dir, "--plan", planFile, "--uid-generation", "SOMETIMES"}, "PLAN_ONLY, ALWAYS or DISABLED"},
		{"bad max parallelism", []string{dir, "--plan", planFile, "--max-parallelism", "40000"}, "want 1..32768"},
	}
	for _, tt := range tests {
		code, out, errs := runCLI(append([]string{"savepoint", "check"}, tt.args...)...)
		if code != exitFailure || !strings.Contains(errs, tt.want) {
			t.Errorf("%s: exit %d, stderr %q (want %q), stdout %q", tt.name, code, errs, tt.want, out)
		}
	}
}

// TestSavepointCheckTypes: the type verdicts of the type catalogue on the command line: a key
// that gained a column is an error naming the fields (Flink refused it), so is COUNT -> COUNT
// DISTINCT, a state the new operator does not register is restored unread (a warning), a state
// statecraft does not derive is "types not checked" (exit 0, exit 2 with --strict), SUM -> MAX is an error only with
// --old-plan (Flink restored it with wrong results), and --json carries the per-state verdicts.
func TestSavepointCheckTypes(t *testing.T) {
	up := filepath.Join("..", "..", "testdata", "upgrades")
	sp := filepath.Join(up, "agg-filter-added", "savepoint")
	if _, err := os.Stat(filepath.Join(sp, "_metadata")); err != nil {
		t.Skipf("oracle fixture %s not present", sp)
	}
	newPlan := func(c string) string { return filepath.Join(up, "types", c, "new.plan.json") }
	gw, err := os.ReadFile(filepath.Join(up, "types-savepoints", "group-window.plan.json"))
	if err != nil || !bytes.Contains(gw, []byte(`"$SUM$1"`)) {
		t.Fatalf("group-window.plan.json: %v, or it has no $SUM$1 call", err)
	}
	unknownAgg := filepath.Join(t.TempDir(), "array-agg.plan.json")
	if err := os.WriteFile(unknownAgg, bytes.Replace(gw, []byte(`"$SUM$1"`), []byte(`"$ARRAY_AGG$1"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--plan", newPlan("key-column-added")}, exitFindings, "key serializer: the savepoint's row has 1 fields (BIGINT), the plan's 2 (BIGINT, BIGINT)"},
		// COUNT -> COUNT DISTINCT: the accumulator row gains the view's field (Flink refused it).
		{[]string{"--plan", newPlan("count-distinct")}, exitFindings, "state accState's value serializer: the savepoint's row has 2 fields (BIGINT, BIGINT), the plan's 3 (BIGINT, BIGINT, RAW('org.apache.flink.table.api.dataview.MapView', NullSerializer))"},
		// An event-time dedup turned from keep-first into keep-last (a 2.3.0 savepoint of the
		// catalogue): keep last registers other states, Flink restores the old ones unread.
		{[]string{"--plan", newPlan("v23-dedup-rowtime-first-to-last"), "@" + filepath.Join(up, "types-savepoints", "dedup-rowtime")}, exitOK,
			"warning: node 5 (stream-exec-deduplicate_1): the savepoint's state already-emitted-state-boolean is not one the plan's operator reads"},
		// A call statecraft derives no accumulator for (the legacy group window's SUM made a
		// ARRAY_AGG in a copy of its plan): "types not checked", an error only with --strict.
		{[]string{"--plan", unknownAgg, "@" + filepath.Join(up, "types-savepoints", "group-window")}, exitOK,
			"types not checked: window-aggs (aggCalls.0: $ARRAY_AGG$1: statecraft derives accumulators only for"},
		{[]string{"--plan", unknownAgg, "--strict", "@" + filepath.Join(up, "types-savepoints", "group-window")}, exitFindings, "restores as far as checked"},
		{[]string{"--plan", newPlan("sum-to-max")}, exitOK, "restores: every operator with state in the savepoint is claimed by the plan, with the state types checked"},
		// TTL switched on (Flink 2.3.0 restored it): restores because Flink migrates the values.
		{[]string{"--plan", newPlan("ttl-switched-on")}, exitOK, "with the state types checked; Flink migrates 1 state on restore"},
		{[]string{"--plan", newPlan("sum-to-max"), "--old-plan", filepath.Join(up, "agg-filter-added", "old.plan.json")}, exitFindings, "aggCalls.1.internalName \"$SUM$1\" -> \"$MAX$1\": Flink would restore it without an error and compute wrong results"},
	}
	for _, tc := range cases {
		// "@DIR" as the last argument: that savepoint instead of agg-filter-added's.
		from := sp
		if last := tc.args[len(tc.args)-1]; strings.HasPrefix(last, "@") {
			from, tc.args = last[1:], tc.args[:len(tc.args)-1]
		}
		code, out, errs := runCLI(append([]string{"savepoint", "check", from}, tc.args...)...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("%v: exit %d (want %d), output lacks %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
	}
	code, out, errs := runCLI("savepoint", "check", sp, "--json", "--plan", newPlan("key-column-added"))
	var r struct {
		Nodes []struct {
			Types []struct {
				State, Verdict string
			} `json:"types"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitFindings {
		t.Fatalf("--json: exit %d, %v:\n%s%s", code, err, out, errs)
	}
	if len(r.Nodes) != 1 || len(r.Nodes[0].Types) != 2 || r.Nodes[0].Types[0].State != "(key)" || r.Nodes[0].Types[0].Verdict != "incompatible" || r.Nodes[0].Types[1].Verdict != "compatible" {
		t.Errorf("--json types: %+v", r.Nodes)
	}
}
