package plan

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffAggregateStateTypes: plan diff judges an aggregate by the state types it derives, on
// plans Flink 2.3.0 compiled for the type catalogue (testdata/upgrades/types, Flink's verdict in
// each flink.json): a DECIMAL scale changed only in the Calc in front changes AVG's sum
// (refused by Flink), a widening CAST of AVG's argument keeps every state type (restored), and
// the same CAST of MAX's argument changes its accumulator (refused).
func TestDiffAggregateStateTypes(t *testing.T) {
	up := filepath.Join(repoRoot(), "testdata", "upgrades")
	old := loadPlan(t, filepath.Join(up, "types-savepoints", "group-builtins.plan.json"))
	for _, c := range []struct {
		name, reason string
		want         Verdict
	}{
		{"v23-builtins-avg-decimal-scale", "state accState's type changed", Incompatible},
		{"v23-builtins-avg-int-to-bigint", "aggregate arguments widened by a lossless CAST, state types unchanged ($AVG$1's argument INT -> BIGINT)", Compatible},
		{"v23-builtins-max-retyped", "aggCalls.7.argList", Incompatible},
		{"v23-builtins-alias-changed", "output name", Compatible},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := Diff(old, loadPlan(t, filepath.Join(up, "types", c.name, "new.plan.json")))
			var agg *NodeDiff
			for i := range d.Nodes {
				if d.Nodes[i].New != nil && d.Nodes[i].New.Type == "stream-exec-group-aggregate_1" {
					agg = &d.Nodes[i]
				}
			}
			if agg == nil {
				t.Fatal("no group aggregate in the diff")
			}
			if agg.Verdict != c.want || !strings.Contains(agg.Reason, c.reason) {
				t.Errorf("aggregate: %s (%s), want %s (%s)", agg.Verdict, agg.Reason, c.want, c.reason)
			}
		})
	}
}

func TestWidens(t *testing.T) {
	for _, c := range []struct {
		from, to string
		want     bool
	}{
		{"INT", "BIGINT", true}, {"TINYINT", "INT", true}, {"BIGINT", "INT", false},
		{"FLOAT", "DOUBLE", true}, {"DOUBLE", "FLOAT", false}, {"INT", "DOUBLE", false},
		{"INT NOT NULL", "BIGINT", true}, {"INT", "BIGINT NOT NULL", false},
		{"VARCHAR(5)", "VARCHAR(6)", false}, {"DECIMAL(10, 2)", "DECIMAL(10, 3)", false},
	} {
		if got := widens(c.from, c.to); got != c.want {
			t.Errorf("widens(%s, %s) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
