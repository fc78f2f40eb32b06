package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// flink120Plans lists the plans Flink 1.20 compiled from the oracle's SQL catalogue
// (testdata/flink-1.20/plans, made by FLINK_VERSION=1.20.0 testdata/oracle/run.sh plans).
func flink120Plans(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../testdata/flink-1.20/plans/*.json")
	if len(files) == 0 {
		t.Skip("no Flink 1.20 plans in testdata/flink-1.20/plans (FLINK_VERSION=1.20.0 testdata/oracle/run.sh plans)")
	}
	return files
}

func readPlan(t *testing.T, file string) *Plan {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(file, data)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return p
}

// stateLayout is a plan's keyed state as TTL editing sees it: node id, state index, name and
// TTL, one line each.
func stateLayout(p *Plan) string {
	var b strings.Builder
	for _, s := range p.States() {
		fmt.Fprintf(&b, "node %d state %d %s ttl %q\n", s.Node.ID, s.Index, s.Name, s.TTLText)
	}
	return b.String()
}

// TestFlink120Plans: every plan Flink 1.20 compiled reads and validates without errors, says
// flinkVersion 1.20, and has the same stateful nodes, state names, indices and TTLs as the 2.3.0
// plan of the same SQL program (the catalogue compiles both with default configuration).
func TestFlink120Plans(t *testing.T) {
	paired, states := 0, 0
	for _, f := range flink120Plans(t) {
		p := readPlan(t, f)
		if p.FlinkVersion != "1.20" {
			t.Errorf("%s: flinkVersion %q, want 1.20", f, p.FlinkVersion)
		}
		for _, fd := range p.Validate().Findings {
			if fd.Severity == Error {
				t.Errorf("%s: %s %s: %s", f, fd.Code, fd.Path, fd.Message)
			}
		}
		// Interval joins, OVER and window aggregates list no "state" in the plan (in 2.3.0
		// neither); the comparison below catches a plan that lost its states.
		states += len(p.States())
		other := filepath.Join("..", "testdata", "plans", filepath.Base(f))
		if _, err := os.Stat(other); err != nil {
			continue
		}
		paired++
		if got, want := stateLayout(p), stateLayout(readPlan(t, other)); got != want {
			t.Errorf("%s: state layout differs from the 2.3.0 plan\n1.20:\n%s2.3.0:\n%s", f, got, want)
		}
	}
	if states == 0 {
		t.Error("no 1.20 plan lists keyed state")
	}
	if paired == 0 {
		t.Error("no 1.20 plan has a 2.3.0 counterpart in testdata/plans")
	}
}
