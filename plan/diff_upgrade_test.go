package plan

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// upgradeDir holds the Flink 1.20 -> 2.3 upgrade evidence: runnable twins of the catalogue
// programs compiled by both versions (old/, new/), the rows fed before and after the savepoint
// (specs/), and what Flink did (EVIDENCE.tsv). The savepoints are in ../savepoints/upgrade-<name>.
var upgradeDir = filepath.Join("..", "testdata", "flink-1.20", "upgrades")

// upgradePairs are the 14 catalogue programs Flink 1.20 and 2.3 both compiled, with the verdict
// plan diff must give for 1.20 -> 2.3 and a piece of its reason. The verdicts are Flink's:
// EVIDENCE.tsv records that Flink 2.3 ran each NEW plan from Flink 1.20's savepoint of OLD and
// carried the state on (compatible), or did not (incompatible).
var upgradePairs = []struct {
	name    string
	verdict Verdict
	reason  string
}{
	{"changelog-normalize", Incompatible, "field added by Flink 2.3 changes the state: filterCondition (Flink 2.x moved a filter into the operator"},
	{"dedup-keep-first", Compatible, "field added by Flink 2.3 that this operator does not read: outputInsertOnly = true"},
	{"dedup-keep-last", Compatible, "field added by Flink 2.3 with its default value: outputInsertOnly = false"},
	{"dedup-then-aggregate", Compatible, "field added by Flink 2.3 with its default value: outputInsertOnly = false"},
	{"group-aggregate", Compatible, "version changed (type)"},
	{"group-aggregate-ttl-config", Compatible, "version changed (type)"},
	{"interval-join", Compatible, "version changed (type)"},
	{"join-inner", Compatible, "version changed (type)"},
	{"join-left", Compatible, "version changed (type)"},
	{"join-state-ttl-hint", Compatible, "version changed (type)"},
	{"over-aggregate", Compatible, "field added by Flink 2.3 that this operator does not read: unboundedOverVersion = 2"},
	{"statement-set", Compatible, "field added by Flink 2.3 with its default value: outputInsertOnly = false"},
	{"top-n", Compatible, "version changed (type)"},
	{"window-aggregate", Compatible, "version changed (type)"},
}

// upgradeEvidence reads EVIDENCE.tsv: name -> outcome of NEW restored from OLD's savepoint
// (refused, restored-correct, restored-wrong). Every spec must fail a job that starts empty.
func upgradeEvidence(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(upgradeDir, "EVIDENCE.tsv"))
	if err != nil {
		t.Skipf("no upgrade evidence (testdata/flink-1.20/upgrades/EVIDENCE.tsv): %v", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		if strings.HasPrefix(sc.Text(), "#") || sc.Text() == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if cols[0] == "name" {
			continue // the header
		}
		if len(cols) < 5 {
			t.Fatalf("EVIDENCE.tsv line %d: %d columns, want name, new, control, fresh, message", line, len(cols))
		}
		// A job that starts empty must not pass the spec, or "restored-correct" would say
		// nothing about the restored state.
		if cols[3] != "differs" {
			t.Fatalf("EVIDENCE.tsv line %d: %s: a job starting empty gives the spec's rows (fresh %q)", line, cols[0], cols[3])
		}
		for _, o := range cols[1:3] {
			if o != "refused" && o != "restored-correct" && o != "restored-wrong" {
				t.Fatalf("EVIDENCE.tsv line %d: outcome %q", line, o)
			}
		}
		out[cols[0]] = cols[1]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFlink120UpgradeVerdicts: plan diff 1.20 -> 2.3 of each catalogue program gives the verdict
// Flink's restore gave (incompatible exactly where Flink refused or carried the state on wrong),
// and the runnable twin Flink executed diffs the same way, node for node, so its evidence
// stands for the catalogue plan.
func TestFlink120UpgradeVerdicts(t *testing.T) {
	evidence := upgradeEvidence(t)
	if len(evidence) != len(upgradePairs) {
		t.Errorf("EVIDENCE.tsv has %d programs, the table %d", len(evidence), len(upgradePairs))
	}
	for _, tc := range upgradePairs {
		t.Run(tc.name, func(t *testing.T) {
			cat := Diff(readPlan(t, filepath.Join("..", "testdata", "flink-1.20", "plans", tc.name+".json")),
				readPlan(t, filepath.Join("..", "testdata", "plans", tc.name+".json")))
			if cat.Verdict != tc.verdict || !strings.Contains(cat.Reason, tc.reason) {
				t.Errorf("catalogue pair: %s (%s), want %s (%s)", cat.Verdict, cat.Reason, tc.verdict, tc.reason)
			}
			twin := Diff(readPlan(t, filepath.Join(upgradeDir, "old", "runnable-"+tc.name+".json")),
				readPlan(t, filepath.Join(upgradeDir, "new", "runnable-"+tc.name+".json")))
			if got, want := nodeVerdicts(twin), nodeVerdicts(cat); got != want {
				t.Errorf("runnable twin diffs otherwise than the catalogue pair:\ntwin:\n%scatalogue:\n%s", got, want)
			}
			outcome, ok := evidence[tc.name]
			if !ok {
				t.Fatalf("no Flink evidence for %s", tc.name)
			}
			if flinkOK := outcome == "restored-correct"; flinkOK != (tc.verdict < Incompatible) {
				t.Errorf("verdict %s, but Flink 2.3 %s", tc.verdict, outcome)
			}
			if _, err := os.Stat(filepath.Join("..", "testdata", "flink-1.20", "savepoints", "upgrade-"+tc.name, "_metadata")); err != nil {
				t.Errorf("the evidence's savepoint is missing: %v", err)
			}
		})
	}
}

// nodeVerdicts is a diff as its stateful nodes' types, statuses, verdicts and reasons, one
// line each, then the overall verdict: what must agree between two diffs of the same query.
func nodeVerdicts(r *DiffReport) string {
	var b strings.Builder
	for _, d := range r.Nodes {
		if !d.Stateful() || d.State == stateSource {
			continue
		}
		ref := d.New
		if ref == nil {
			ref = d.Old
		}
		b.WriteString(ref.Type + " " + d.Status + " " + d.Verdict.String() + ": " + d.Reason + "\n")
	}
	b.WriteString("overall " + r.Verdict.String() + ": " + r.Reason + "\n")
	return b.String()
}

// TestAddedFieldRules: the rules for members a newer Flink added hold only where they should.
// Each case edits one member of a real plan pair (the 1.20 and 2.3 plans of one program).
func TestAddedFieldRules(t *testing.T) {
	pair := func(name string) (*Plan, []byte) {
		old := readPlan(t, filepath.Join("..", "testdata", "flink-1.20", "plans", name+".json"))
		data, err := os.ReadFile(filepath.Join("..", "testdata", "plans", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return old, data
	}
	// from -> to is applied to NEW, and to OLD too when both is set (a different query, not a
	// different Flink).
	cases := []struct {
		name, program, from, to string
		both                    bool
		verdict                 Verdict
		reason                  string
	}{
		{"keep-first as compiled", "dedup-keep-first", "", "", false, Compatible, "does not read: outputInsertOnly = true"},
		{"row-time keep-first reads outputInsertOnly", "dedup-keep-first",
			`"isRowtime" : false`, `"isRowtime" : true`, true, Incompatible, "outputInsertOnly: added"},
		{"mini-batch keep-first reads outputInsertOnly", "dedup-keep-first",
			`"table.exec.mini-batch.enabled" : "false"`, `"table.exec.mini-batch.enabled" : "true"`, true, Incompatible, "outputInsertOnly: added"},
		{"keep-last with the default", "dedup-keep-last", "", "", false, Compatible, "with its default value: outputInsertOnly = false"},
		{"row-time keep-last with the default", "dedup-keep-last",
			`"isRowtime" : false`, `"isRowtime" : true`, true, Compatible, "with its default value: outputInsertOnly = false"},
		{"bounded OVER as compiled", "over-aggregate", "", "", false, Compatible, "does not read: unboundedOverVersion = 2"},
		{"unbounded OVER reads unboundedOverVersion", "over-aggregate",
			`"kind" : "BOUNDED_WINDOW"`, `"kind" : "UNBOUNDED_WINDOW"`, true, Incompatible, "unboundedOverVersion: added"},
		{"unbounded OVER with the default version", "over-aggregate",
			`"unboundedOverVersion" : 2`, `"unboundedOverVersion" : 1`, false, Compatible, "with its default value: unboundedOverVersion = 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			old, data := pair(tc.program)
			if tc.from != "" {
				if !strings.Contains(string(data), tc.from) {
					t.Fatalf("%s.json has no %s", tc.program, tc.from)
				}
				data = []byte(strings.Replace(string(data), tc.from, tc.to, 1))
			}
			if tc.both {
				if !strings.Contains(string(old.Raw), tc.from) {
					t.Fatalf("the 1.20 %s.json has no %s", tc.program, tc.from)
				}
				var err error
				if old, err = Parse("old", []byte(strings.Replace(string(old.Raw), tc.from, tc.to, 1))); err != nil {
					t.Fatal(err)
				}
			}
			newp, err := Parse(tc.program+".json", data)
			if err != nil {
				t.Fatal(err)
			}
			r := Diff(old, newp)
			if r.Verdict != tc.verdict || !strings.Contains(r.Reason, tc.reason) {
				t.Errorf("%s (%s), want %s (%s)", r.Verdict, r.Reason, tc.verdict, tc.reason)
			}
			if tc.from != "" {
				return
			}
			// The same Flink on both sides: a member only NEW has is the query's doing.
			oldAs23, err := Parse("old", []byte(strings.Replace(string(old.Raw), `"flinkVersion" : "1.20"`, `"flinkVersion" : "2.3"`, 1)))
			if err != nil {
				t.Fatal(err)
			}
			if r := Diff(oldAs23, newp); r.Verdict != Incompatible {
				t.Errorf("both plans say flinkVersion 2.3, yet %s (%s)", r.Verdict, r.Reason)
			}
		})
	}
}
