package bridge

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestDroppedHintSaysWhatIsTrue (issue 18, messages): where a savepoint operator maps to no
// operator of NEW, savepoint check offers `migrate uid` only when the same kind of operator in
// NEW declares state types the savepoint's do not contradict; where the layout changed it says a
// new UID cannot help. Both from Flink's catalogue, where Flink refused with "Cannot map": GROUP
// BY another BIGINT column behind a new Calc (same types: a rename is possible, though plan diff
// calls the meaning changed), and a CAST in front of the aggregate that also retyped its key (a
// rename would still fail on the key).
func TestDroppedHintSaysWhatIsTrue(t *testing.T) {
	cat := testdata("upgrades", "types")
	for _, c := range []struct {
		name, savepoint string
		want, notWant   string
	}{
		{"key-meaning-changed", filepath.Join(testdata("upgrades", "agg-filter-added"), "savepoint"),
			"statecraft migrate uid SAVEPOINT NEW_SAVEPOINT --rename uid:", "cannot help"},
		{"key-retyped", filepath.Join(testdata("upgrades", "agg-filter-added"), "savepoint"),
			"its state types differ from this state's, so a new UID cannot help", "migrate uid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sp, err := savepoint.Open(c.savepoint)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			b, err := Open(loadPlan(t, filepath.Join(cat, c.name, "new.plan.json")), plan.UIDOptions{}, sp)
			if err != nil {
				t.Fatal(err)
			}
			r := Check(b, CheckOptions{})
			var msgs []string
			for _, f := range r.Findings {
				if f.Code == "dropped" {
					msgs = append(msgs, f.Message)
				}
			}
			all := strings.Join(msgs, "\n")
			if len(msgs) == 0 || !strings.Contains(all, c.want) || strings.Contains(all, c.notWant) {
				t.Errorf("dropped findings:\n%s\nwant %q, not %q", all, c.want, c.notWant)
			}
		})
	}
}
