package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

func testdata(parts ...string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(append([]string{filepath.Dir(filepath.Dir(file)), "testdata"}, parts...)...)
}

// sqlFixture opens the oracle's SQL savepoint: a group aggregate Flink 2.3.0 executed from
// sql-group-aggregate.plan.json and stopped with a canonical savepoint.
func sqlFixture(t *testing.T) *savepoint.Savepoint {
	t.Helper()
	dir := testdata("savepoints", "sql-group-aggregate")
	if _, err := os.Stat(filepath.Join(dir, "_metadata")); err != nil {
		t.Skipf("oracle fixture %s not present (make fixtures)", dir)
	}
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}

func loadPlan(t *testing.T, path string) *plan.Plan {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Parse(path, data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// expectation is the part of sql-group-aggregate.expect.json this package checks against.
type expectation struct {
	Metadata []struct {
		OperatorUID     *string `json:"operatorUid"`
		OperatorUIDHash string  `json:"operatorUidHash"`
		MaxParallelism  int32   `json:"maxParallelism"`
		Total           int64   `json:"totalSizeInBytes"`
	} `json:"metadata"`
	Operators []struct {
		UID         string `json:"uid"`
		UIDHash     string `json:"uidHash"`
		KeyedStates []struct {
			Name string `json:"name"`
		} `json:"keyedStates"`
	} `json:"operators"`
}

func readExpect(t *testing.T) expectation {
	t.Helper()
	data, err := os.ReadFile(testdata("savepoints", "sql-group-aggregate.expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expectation
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// The proof of plan.UIDs: every operator of a savepoint Flink wrote for a job executed from a
// compiled plan is matched to an exec node of that plan, the UID statecraft derives is the one
// Flink recorded, and its hash is the OperatorID Flink stored (savepoint_metadata's rows).
func TestSQLSavepointEveryOperatorMatched(t *testing.T) {
	sp := sqlFixture(t)
	p := loadPlan(t, testdata("savepoints", "sql-group-aggregate.plan.json"))
	b, err := Open(p, plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	exp := readExpect(t)
	if len(exp.Metadata) == 0 || len(b.Operators) != len(exp.Metadata) {
		t.Fatalf("%d savepoint operators, savepoint_metadata has %d rows", len(b.Operators), len(exp.Metadata))
	}
	if len(b.Unclaimed) != 0 {
		t.Errorf("unmatched savepoint operators: %+v", b.Unclaimed)
	}
	matched := map[string]Match{}
	for _, m := range b.Matches {
		matched[m.Operator.Hash] = m
	}
	stateful := 0
	for _, row := range exp.Metadata {
		m, ok := matched[row.OperatorUIDHash]
		if !ok {
			t.Errorf("savepoint_metadata row %s (uid %v) matched to no exec node", row.OperatorUIDHash, row.OperatorUID)
			continue
		}
		if row.OperatorUID == nil || m.Transformation.UID != *row.OperatorUID {
			t.Errorf("hash %s: statecraft derives UID %q from node %d, Flink recorded %v", row.OperatorUIDHash, m.Transformation.UID, m.Node.ID, row.OperatorUID)
		}
		if m.Transformation.Hash != row.OperatorUIDHash {
			t.Errorf("node %d %s: derived hash %s, savepoint has %s", m.Node.ID, m.Transformation.UID, m.Transformation.Hash, row.OperatorUIDHash)
		}
		if !m.Transformation.Operator {
			t.Errorf("savepoint operator %s matched to partition transformation %s", row.OperatorUIDHash, m.Transformation.UID)
		}
		if m.Operator.HasState {
			stateful++
			if !m.Transformation.State {
				t.Errorf("stateful savepoint operator %s matched to %s, which statecraft does not mark as the node's state holder", row.OperatorUIDHash, m.Transformation.UID)
			}
		}
		if m.Operator.Size != row.Total || m.Operator.MaxParallelism != row.MaxParallelism {
			t.Errorf("%s: size %d / maxParallelism %d, savepoint_metadata says %d / %d", row.OperatorUIDHash, m.Operator.Size, m.Operator.MaxParallelism, row.Total, row.MaxParallelism)
		}
	}
	// The State Processor API read the group aggregate's keyed state: the same operator must
	// be stateful here and carry the same state names.
	if stateful != len(exp.Operators) || stateful == 0 {
		t.Errorf("%d stateful operators matched, the oracle read state from %d", stateful, len(exp.Operators))
	}
	for _, eo := range exp.Operators {
		m, ok := matched[eo.UIDHash]
		if !ok {
			t.Errorf("oracle operator %s not matched", eo.UID)
			continue
		}
		var want []string
		for _, s := range eo.KeyedStates {
			want = append(want, s.Name)
		}
		if strings.Join(m.Operator.KeyedStates, ",") != strings.Join(want, ",") {
			t.Errorf("%s: keyed states %v, the State Processor API read %v", eo.UID, m.Operator.KeyedStates, want)
		}
		if m.Node.Node.Name != "stream-exec-group-aggregate" {
			t.Errorf("%s matched to node %d %s", eo.UID, m.Node.ID, m.Node.Type)
		}
	}
}

func findingCodes(r *Report, sev string) []string {
	var out []string
	for _, f := range r.Findings {
		if sev == "" || f.Severity == sev {
			out = append(out, f.Code)
		}
	}
	return out
}

func TestCheckOwnPlanRestores(t *testing.T) {
	sp := sqlFixture(t)
	b, err := Open(loadPlan(t, testdata("savepoints", "sql-group-aggregate.plan.json")), plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(b, CheckOptions{})
	if !r.Restores || len(r.Findings) != 0 || len(r.Unclaimed) != 0 {
		t.Fatalf("own plan: restores=%v findings=%+v unclaimed=%+v", r.Restores, r.Findings, r.Unclaimed)
	}
	if len(r.Nodes) != 1 {
		t.Fatalf("stateful nodes: %+v", r.Nodes)
	}
	n := r.Nodes[0]
	if n.ID != 3 || n.Status != "restored" || n.State == nil || n.State.MaxParallelism != 128 || n.State.Size == 0 ||
		strings.Join(n.State.KeyedStates, ",") != "accState" {
		t.Errorf("node 3: %+v state %+v", n, n.State)
	}
	// An explicit max parallelism equal to the savepoint's is fine; another one fails.
	if r := Check(b, CheckOptions{MaxParallelism: 128}); !r.Restores {
		t.Errorf("max parallelism 128: %+v", r.Findings)
	}
	r = Check(b, CheckOptions{MaxParallelism: 256})
	if r.Restores || strings.Join(findingCodes(r, SevError), ",") != "max-parallelism,max-parallelism,max-parallelism" {
		t.Errorf("max parallelism 256: restores=%v errors=%v (want one per matched operator, with or without state: sink, source, group aggregate)", r.Restores, findingCodes(r, SevError))
	}
}

// Another plan of the catalogue (a Top-N) does not claim the group aggregate's state: the
// restore fails unless non-restored state is allowed, and the rank starts empty.
func TestCheckIncompatiblePlan(t *testing.T) {
	sp := sqlFixture(t)
	b, err := Open(loadPlan(t, testdata("plans", "judge-top-n.json")), plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(b, CheckOptions{})
	if r.Restores {
		t.Fatal("judge-top-n restores the group aggregate's savepoint")
	}
	if len(r.Unclaimed) != 1 || r.Unclaimed[0].UID != "3_group-aggregate" {
		t.Errorf("unclaimed: %+v", r.Unclaimed)
	}
	if got := strings.Join(findingCodes(r, ""), ","); got != "starts-empty,dropped" {
		t.Errorf("findings %s: %+v", got, r.Findings)
	}
	if !strings.Contains(r.Findings[1].Message, "restore fails unless non-restored state is allowed") {
		t.Errorf("dropped message: %s", r.Findings[1].Message)
	}
	r = Check(b, CheckOptions{AllowNonRestoredState: true})
	if !r.Restores || strings.Join(findingCodes(r, SevWarning), ",") != "dropped" {
		t.Errorf("allow non-restored state: restores=%v %+v", r.Restores, r.Findings)
	}

	// The dedup-then-aggregate plan has a group aggregate too, as node 7, but over retractions:
	// its accumulators (COUNT(*), SUM with its count) are not the savepoint's, so a new UID
	// cannot help and the hint says so.
	b, err = Open(loadPlan(t, testdata("plans", "dedup-then-aggregate.json")), plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	r = Check(b, CheckOptions{})
	var dropped *Finding
	for i := range r.Findings {
		if r.Findings[i].Code == "dropped" {
			dropped = &r.Findings[i]
		}
	}
	if r.Restores || dropped == nil || !strings.Contains(dropped.Message, "a new UID cannot help: node 7 (accState: the savepoint's row has 2 fields") {
		t.Errorf("renumbered group aggregate: restores=%v %+v", r.Restores, r.Findings)
	}
}

// A format that gives the Top-N's rank the group aggregate's UID makes the rank claim state
// it does not use: the state names say so.
func TestCheckStateNamesDiffer(t *testing.T) {
	sp := sqlFixture(t)
	b, err := Open(loadPlan(t, testdata("plans", "judge-top-n.json")), plan.UIDOptions{Format: "<id>_group-aggregate"}, sp)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(b, CheckOptions{})
	var names *Finding
	for i := range r.Findings {
		if r.Findings[i].Code == "state-names" {
			names = &r.Findings[i]
		}
	}
	if names == nil || names.Severity != SevWarning || names.Node != 3 || !strings.Contains(names.Message, "accState") {
		t.Fatalf("state-names finding: %+v", r.Findings)
	}
}

// With UIDs disabled, no plan operator has the savepoint's IDs.
func TestCheckUIDsDisabled(t *testing.T) {
	sp := sqlFixture(t)
	b, err := Open(loadPlan(t, testdata("savepoints", "sql-group-aggregate.plan.json")), plan.UIDOptions{Generation: "DISABLED"}, sp)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(b, CheckOptions{})
	if r.Restores || len(b.Matches) != 0 || r.Nodes[0].Status != "no-uid" {
		t.Errorf("DISABLED: restores=%v matches=%d nodes=%+v", r.Restores, len(b.Matches), r.Nodes)
	}
}

// Savepoints without SQL UIDs (DataStream jobs): nothing matches a SQL plan, and every
// operator with state is reported as dropped, each with its state names.
func TestCheckDataStreamSavepointAgainstPlan(t *testing.T) {
	dir := testdata("savepoints", "keyed-hashmap")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("%s not present", dir)
	}
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	b, err := Open(loadPlan(t, testdata("plans", "group-aggregate.json")), plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	r := Check(b, CheckOptions{})
	withState := 0
	for _, o := range b.Operators {
		if o.HasState {
			withState++
		}
	}
	if withState == 0 || r.Restores || r.Count(SevError) != withState {
		t.Errorf("%d operators with state, %d errors, restores=%v", withState, r.Count(SevError), r.Restores)
	}
}

// TestCatalogueSavepoints checks plan.UIDs against savepoints of every catalogue plan, when a
// directory of them is given: STATECRAFT_SQL_SAVEPOINTS=DIR holds DIR/<plan name>/ (a canonical
// savepoint Flink wrote while executing testdata/plans/<plan name>.json). Every savepoint
// operator must be matched with the UID Flink recorded, every operator statecraft says a node
// always creates must be in the savepoint, every operator with state must be a node's state
// holder, and the plan must restore its own savepoint.
func TestCatalogueSavepoints(t *testing.T) {
	root := os.Getenv("STATECRAFT_SQL_SAVEPOINTS")
	if root == "" {
		t.Skip("STATECRAFT_SQL_SAVEPOINTS not set (a directory of <plan name>/ savepoints of the catalogue plans)")
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "_metadata"))
	if len(dirs) == 0 {
		t.Fatalf("no */_metadata under %s", root)
	}
	for _, md := range dirs {
		dir := filepath.Dir(md)
		name := filepath.Base(dir)
		planFile := testdata("plans", name+".json")
		if _, err := os.Stat(planFile); err != nil {
			t.Logf("%s: no plan %s", name, planFile)
			continue
		}
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		b, err := Open(loadPlan(t, planFile), plan.UIDOptions{}, sp)
		if err != nil {
			t.Fatal(err)
		}
		present := map[string]bool{}
		for _, o := range b.Operators {
			present[o.Hash] = true
		}
		for _, o := range b.Unclaimed {
			t.Errorf("%s: savepoint operator %q (uid %q, %s) matched to no exec node", name, o.Name, o.UID, o.Hash)
		}
		for _, m := range b.Matches {
			if m.Operator.UID != m.Transformation.UID {
				t.Errorf("%s: Flink recorded UID %q, statecraft derives %q", name, m.Operator.UID, m.Transformation.UID)
			}
			if m.Operator.HasState && !m.Transformation.State {
				t.Errorf("%s: %s has state but is not marked as its node's state holder", name, m.Transformation.UID)
			}
		}
		for _, n := range b.Nodes {
			for _, tr := range n.Transformations {
				if tr.Operator && tr.Presence == plan.Always && !present[tr.Hash] {
					t.Errorf("%s: node %d %s: operator %s is not in the savepoint", name, n.ID, n.Type, tr.UID)
				}
			}
		}
		if r := Check(b, CheckOptions{}); !r.Restores || r.Count(SevWarning) > 0 {
			t.Errorf("%s: own savepoint: restores=%v findings %+v", name, r.Restores, r.Findings)
		}
		t.Logf("%s: %d operators, all matched", name, len(b.Operators))
		sp.Close()
	}
}
