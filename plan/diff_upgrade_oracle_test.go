package plan

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/oracletest"
)

// TestOracleFlink120Upgrade reruns the upgrade evidence behind plan diff's 1.20 -> 2.3 verdicts:
// Flink 2.3.0 executes NEW (compiled by 2.3) restoring from the savepoint Flink 1.20.0 took of
// OLD (non-restored state not allowed), is fed the rows of the program's spec, and its output is
// compared with the rows of a job that never stopped. plan diff must say compatible exactly when
// Flink carries the state on.
//
//   - dedup-keep-first was "incompatible" (outputInsertOnly added by 2.x) and is compatible:
//     an order id seen before the savepoint emits nothing after it.
//   - changelog-normalize stays incompatible: 2.3 pushes the WHERE into the operator and keeps
//     only rows that pass it, the 1.20 state holds every row, and the restored job retracts a
//     row its sink never received.
func TestOracleFlink120Upgrade(t *testing.T) {
	oracletest.Require(t, "to have Flink 2.3.0 restore the Flink 1.20 savepoints (needs Java 17 and Maven)")
	t.Parallel() // judges wait on the oracle servers, not on this process
	evidence := upgradeEvidence(t)
	for _, name := range []string{"dedup-keep-first", "changelog-normalize"} {
		t.Run(name, func(t *testing.T) {
			newPlan := filepath.Join(upgradeDir, "new", "runnable-"+name+".json")
			r := Diff(readPlan(t, filepath.Join(upgradeDir, "old", "runnable-"+name+".json")), readPlan(t, newPlan))
			out, code := judgeUpgrade(t, newPlan, filepath.Join(upgradeDir, "specs", name+".json"),
				filepath.Join("..", "testdata", "flink-1.20", "savepoints", "upgrade-"+name))
			outcome := map[int]string{0: "restored-correct", 1: "restored-wrong", 3: "refused"}[code]
			if outcome == "" {
				t.Fatalf("judge-plan exited %d (not a verdict):\n%s", code, out)
			}
			t.Logf("plan diff: %s (%s); Flink 2.3: %s", r.Verdict, r.Reason, outcome)
			if (outcome == "restored-correct") != (r.Verdict < Incompatible) {
				t.Errorf("plan diff says %s, but Flink 2.3 %s:\n%s", r.Verdict, outcome, out)
			}
			if outcome != evidence[name] {
				t.Errorf("Flink 2.3 %s, EVIDENCE.tsv says %s:\n%s", outcome, evidence[name], out)
			}
		})
	}
}

// judgeUpgrade runs the oracle's judge-plan PLAN SPEC SAVEPOINT and returns the tail of its
// output and its exit code.
func judgeUpgrade(t *testing.T, planFile, spec, sp string) (string, int) {
	t.Helper()
	b, err := oracletest.Run(t, "judge-plan", oracletest.Abs(t, planFile), oracletest.Abs(t, spec), oracletest.Abs(t, sp))
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "judge-plan") || strings.HasPrefix(l, "  sink") {
			lines = append(lines, l)
		}
	}
	out := strings.Join(lines, "\n")
	switch code := oracletest.ExitCode(err); {
	case err == nil:
		return out, 0
	case code >= 0:
		return out, code
	}
	t.Fatalf("oracle: %v", err)
	return "", -1
}
