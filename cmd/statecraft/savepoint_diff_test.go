package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/spdiff"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// migrated writes src migrated by the YAML steps into a new directory, with statecraft's own
// migrate package (verified as every migration is), and returns it.
func migrated(t *testing.T, src, steps string) string {
	t.Helper()
	s, err := migrate.ParseScript(strings.NewReader("steps:\n"+steps), "test script")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if _, err := migrate.Run(src, dst, s, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	return dst
}

// diffOut runs `savepoint diff --json A B` and decodes it.
func diffOut(t *testing.T, a, b string, extra ...string) (int, diffJSON) {
	t.Helper()
	code, out, errOut := runCLI(append(append([]string{"savepoint", "diff", "--json", "--limit", "2"}, extra...), a, b)...)
	if code == 1 {
		t.Fatalf("diff %s %s: exit 1: %s", a, b, errOut)
	}
	var d diffJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, out)
	}
	return code, d
}

// changes spells every difference the diff reports, one string each, so that a case can list
// exactly what it promises and nothing else: "OP match", "OP FIELD: A -> B", and per state
// "OP state S: -X +Y ~Z".
func changes(d diffJSON) []string {
	var out []string
	for _, o := range d.Operators {
		if o.Match != "id" {
			out = append(out, o.Operator+" "+o.Match)
		}
		for _, c := range o.Metadata {
			out = append(out, fmt.Sprintf("%s %s: %s -> %s", o.Operator, c.Field, c.A, c.B))
		}
		for _, s := range o.States {
			if s.Differs() {
				out = append(out, fmt.Sprintf("%s state %s: -%d +%d ~%d", o.Operator, s.Name, s.OnlyA, s.OnlyB, s.Changed))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDiffReportsExactlyTheMigration: between a fixture and each migrated copy of it (uid,
// rescale, parallelism, retype, drop-state both ways, patch), diff reports the change the
// migration promises and nothing else; a savepoint against itself is equal.
func TestDiffReportsExactlyTheMigration(t *testing.T) {
	src := migrateFixture(t, "keyed-hashmap")
	const op = "uid:int-keyed"
	// patch: a value replaced, a key added, an entry deleted, a map entry added, a list replaced,
	// and delete-where taking the ratio of keys 9, 10 and 11 (2.25, 2.5, 2.75).
	patch := filepath.Join(t.TempDir(), "patch.jsonl")
	if err := os.WriteFile(patch, []byte(`{"operator":"uid:int-keyed","state":"count","key":4,"namespace":null,"value":99}
{"operator":"uid:int-keyed","state":"count","key":1000,"namespace":null,"value":7}
{"op":"delete","operator":"uid:int-keyed","state":"sum","key":8,"namespace":null}
{"operator":"uid:int-keyed","state":"seen","key":10,"namespace":null,"userKey":"zz","value":5}
{"operator":"uid:int-keyed","state":"names","key":11,"namespace":null,"value":["x","y"]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		steps   string
		reverse bool // diff the migrated copy against the fixture
		want    []string
	}{
		{"uid", `  - rename-uid: {from: "uid:int-keyed", to: counter-v2}`, false, []string{
			op + " name",
			op + " operator id: 6d821971c3bfd7ae2c972e89d7414f7c -> " + uidHash("counter-v2"),
			op + " uid: int-keyed -> counter-v2",
		}},
		{"rescale", `  - rescale: {max-parallelism: 256, parallelism: 3}`, false, []string{
			op + " max parallelism: 128 -> 256",
			op + " parallelism: 2 -> 3",
			"uid:source max parallelism: 128 -> 256",
		}},
		{"parallelism", `  - rescale: {max-parallelism: 128, parallelism: 3}`, false, []string{
			op + " parallelism: 2 -> 3",
		}},
		{"retype", `  - retype: {operator: "uid:int-keyed", state: seen, to: Long}`, false, []string{
			op + " state seen VALUE_SERIALIZER: MapSerializer<StringSerializer, IntSerializer> -> MapSerializer<StringSerializer, LongSerializer>",
		}},
		{"drop-state", `  - drop-state: {operator: "uid:int-keyed", state: ratio}`, false, []string{
			op + " state ratio: value -> (absent)",
			op + " state ratio: -12 +0 ~0",
		}},
		{"patch", "  - patch: {data: " + strconv.Quote(patch) + `, delete-where: "ratio: value > 2"}`, false, []string{
			op + " state count: -0 +1 ~1",
			op + " state sum: -1 +0 ~0",
			op + " state seen: -0 +1 ~0",
			op + " state names: -0 +0 ~1",
			op + " state ratio: -3 +0 ~0",
		}},
		{"drop-state reversed", `  - drop-state: {operator: "uid:int-keyed", state: ratio}`, true, []string{
			op + " state ratio: (absent) -> value",
			op + " state ratio: -0 +12 ~0",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := src, migrated(t, src, c.steps)
			if c.reverse {
				a, b = b, a
			}
			code, d := diffOut(t, a, b)
			slices.Sort(c.want)
			if got := changes(d); !slices.Equal(got, c.want) {
				t.Errorf("diff reports\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
			if code != 2 || d.Equal {
				t.Errorf("exit %d, equal %v; want 2 and false", code, d.Equal)
			}
		})
	}
	t.Run("itself", func(t *testing.T) {
		code, d := diffOut(t, src, src)
		if got := changes(d); code != 0 || !d.Equal || len(got) != 0 {
			t.Errorf("exit %d, equal %v, changes %v; want 0, true, none", code, d.Equal, got)
		}
	})
}

func uidHash(uid string) string {
	h, _ := migrate.ParseSelector("uid:" + uid)
	return h.ID.String()
}

// TestDiffShowsChangedValues: a retype that adds a field with a default changes every value of
// that state, and diff shows the first ones decoded, old and new; the other states of the
// operator are equal, and --state limits the comparison to one state.
func TestDiffShowsChangedValues(t *testing.T) {
	src := migrateFixture(t, "evolve-hashmap")
	dst := migrated(t, src, `  - retype: {operator: "uid:evolve", state: profile, add-field: {name: f2, type: Long, default: 7}}`)
	code, d := diffOut(t, src, dst)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	var profile string
	for _, o := range d.Operators {
		for _, s := range o.States {
			if s.Name != "profile" {
				if s.Differs() {
					t.Errorf("state %s differs: %+v", s.Name, s)
				}
				continue
			}
			profile = fmt.Sprintf("-%d +%d ~%d of %d/%d", s.OnlyA, s.OnlyB, s.Changed, s.EntriesA, s.EntriesB)
			if s.Changed == 0 || s.Changed != s.EntriesA || len(s.ChgSam) != 2 {
				t.Errorf("profile: %s, %d samples", profile, len(s.ChgSam))
			}
			for _, e := range s.ChgSam {
				var old, nw []any
				json.Unmarshal(e.Old, &old)
				json.Unmarshal(e.New, &nw)
				if len(old) != 2 || len(nw) != 3 || fmt.Sprint(nw[2]) != "7" || fmt.Sprint(old) != fmt.Sprint(nw[:2]) {
					t.Errorf("profile key %s: %s -> %s, want the old row with 7 appended", e.Key, e.Old, e.New)
				}
			}
		}
	}
	if profile == "" {
		t.Fatal("no state profile in the diff")
	}
	// Text output says the same.
	code, out, _ := runCLI("savepoint", "diff", "--state", "profile", "--limit", "1", src, dst)
	if code != 2 || !strings.Contains(out, "state profile (value):") || !strings.Contains(out, "~ key=") || strings.Contains(out, "state events") {
		t.Errorf("text diff --state profile: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{src}, "want two savepoints"},
		{[]string{"--state", "nope", src, dst}, `--state "nope"`},
		{[]string{"--limit", "-1", src, dst}, "--limit -1"},
		{[]string{src, filepath.Join(t.TempDir(), "none")}, "B: "},
	} {
		code, _, errOut := runCLI(append([]string{"savepoint", "diff"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, errOut, c.want)
		}
	}
}

// TestDiffByKeyGroupAgreesWithSorted: the side-by-side reading by key group (same max
// parallelism) counts what sorting both sides by identity counts (with a budget small enough that
// the sort spills runs to disk and merges them), on pairs with changed, dropped and added entries
// and with subtasks owning other key-group ranges.
func TestDiffByKeyGroupAgreesWithSorted(t *testing.T) {
	defer func(b int64) { diffSpillBudget = b }(diffSpillBudget)
	diffSpillBudget = 4 << 10
	hm := migrateFixture(t, "keyed-hashmap")
	ev := migrateFixture(t, "evolve-hashmap")
	drop := migrated(t, hm, `  - drop-state: {operator: "uid:int-keyed", state: ratio}`)
	for _, c := range []struct{ name, a, b string }{
		{"dropped", hm, drop},
		{"added", drop, hm},
		{"other ranges", hm, migrated(t, hm, `  - rescale: {max-parallelism: 128, parallelism: 3}`)},
		{"changed", ev, migrated(t, ev, `  - retype: {operator: "uid:evolve", state: scores, add-field: {name: f0, type: String, default: new}}`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			spA, err := savepoint.Open(c.a)
			if err != nil {
				t.Fatal(err)
			}
			defer spA.Close()
			spB, err := savepoint.Open(c.b)
			if err != nil {
				t.Fatal(err)
			}
			defer spB.Close()
			all := func(string) bool { return true }
			differs := 0
			spills := diffSpills.Load()
			for _, p := range pairOperators(spA.Metadata, spB.Metadata) {
				if p.a == nil || p.b == nil {
					continue
				}
				byKG, sorted := spdiff.NewComparison(3), spdiff.NewComparison(3)
				if err := compareByKeyGroup(spA, spB, p, all, byKG); err != nil {
					t.Fatal(err)
				}
				if err := compareSorted(spA, spB, p, all, sorted); err != nil {
					t.Fatal(err)
				}
				x, y := byKG.Finish(), sorted.Finish()
				if len(x) != len(y) {
					t.Fatalf("%d states by key group, %d sorted", len(x), len(y))
				}
				for i := range x {
					gx := fmt.Sprintf("%s %d/%d -%d +%d ~%d samples %d %d %d", x[i].Name, x[i].EntriesA, x[i].EntriesB, x[i].OnlyA, x[i].OnlyB, x[i].Changed, len(x[i].OnlyASam), len(x[i].OnlyBSam), len(x[i].ChgSam))
					gy := fmt.Sprintf("%s %d/%d -%d +%d ~%d samples %d %d %d", y[i].Name, y[i].EntriesA, y[i].EntriesB, y[i].OnlyA, y[i].OnlyB, y[i].Changed, len(y[i].OnlyASam), len(y[i].OnlyBSam), len(y[i].ChgSam))
					if gx != gy {
						t.Errorf("by key group %s, sorted %s", gx, gy)
					}
					if x[i].Differs() {
						differs++
					}
				}
			}
			if differs == 0 && c.name != "other ranges" {
				t.Error("no state differs: the case tests nothing")
			}
			if diffSpills.Load() == spills {
				t.Error("the sort wrote no run to disk: the budget did not bind")
			}
		})
	}
}

// TestDiffRescaleSpills (#16): a rescale from max parallelism 128 to 256 moves keys between key
// groups, so diff sorts both sides; with the memory budget forced down to a few KiB it spills
// sorted runs to disk, and still finds that no state changed, only the max parallelism.
func TestDiffRescaleSpills(t *testing.T) {
	defer func(b int64) { diffSpillBudget = b }(diffSpillBudget)
	diffSpillBudget = 2 << 10
	for _, fixture := range []string{"keyed-hashmap", "types-rocksdb", "operator-state", "window-hashmap"} {
		t.Run(fixture, func(t *testing.T) {
			src := migrateFixture(t, fixture)
			dst := migrated(t, src, `  - rescale: {max-parallelism: 256}`)
			spills := diffSpills.Load()
			code, out, errOut := runCLI("savepoint", "diff", src, dst)
			if code != 2 || !strings.HasSuffix(out, "no state changed, max parallelism 128 -> 256 ("+english.Count(strings.Count(out, "max parallelism: 128 -> 256"), "operator")+")\n") {
				t.Errorf("exit %d, stderr %q:\n%s", code, errOut, out)
			}
			spilled := diffSpills.Load() - spills
			_, d := diffOut(t, src, dst)
			for _, c := range changes(d) {
				if !strings.HasSuffix(c, " max parallelism: 128 -> 256") {
					t.Errorf("diff reports %q besides the max parallelism", c)
				}
			}
			entries := int64(0)
			for _, o := range d.Operators {
				for _, s := range o.States {
					if s.Kind != "split" && s.Kind != "union" && s.Kind != "broadcast" {
						entries += s.EntriesA // keyed: sorted and spilled (operator state is held)
					}
					if s.EntriesA != s.EntriesB {
						t.Errorf("%s state %s: %d entries in A, %d in B", o.Operator, s.Name, s.EntriesA, s.EntriesB)
					}
				}
			}
			// A handful of entries fits any budget; dozens must not fit 2 KiB.
			if entries > 20 && spilled < 2 {
				t.Errorf("%d entries, %d runs spilled: the budget did not bind", entries, spilled)
			}
		})
	}
}

// TestDiffOfEveryFixtureWithItself: every fixture (canonical, native RocksDB, operator state,
// Flink 1.20) is read side by side by key group without falling back (its key groups come in
// ascending order) and equals itself.
func TestDiffOfEveryFixtureWithItself(t *testing.T) {
	eachFixture(t, func(t *testing.T, dir string, sp *savepoint.Savepoint) {
		for _, p := range pairOperators(sp.Metadata, sp.Metadata) {
			cmp := spdiff.NewComparison(1)
			if err := compareByKeyGroup(sp, sp, p, func(string) bool { return true }, cmp); err != nil {
				t.Fatalf("%s: %v", opLabel(p.a), err)
			}
			for _, s := range cmp.Finish() {
				if s.Differs() || s.EntriesA != s.EntriesB {
					t.Errorf("%s state %s differs from itself: %+v", opLabel(p.a), s.Name, s)
				}
			}
		}
		if code, out, errOut := runCLI("savepoint", "diff", dir, dir); code != 0 {
			t.Errorf("exit %d: %s%s", code, out, errOut)
		}
	})
}

// TestDiffAgreesWithFlinkReadings (#16): between two savepoints of one Flink job taken at
// different moments, diff counts per state what the State Processor API's readings of both
// (their committed expectations) say: entries on each side, and the entries only in A, only in B
// and changed, matched by key, namespace and map key (timers by key, namespace and timestamp);
// the keys of its changed samples are keys Flink read changed. Two pairs, both ways round:
//   - the keyed job's native savepoint after its 40 records, and the same job restored from such
//     a savepoint at parallelism 3 after replaying them (counts, sums and lists grew, the other
//     states stayed);
//   - native-churn-a and -b, two savepoints of one running job (oracle ChurnPair): between them
//     keys were cleared (only in A), keys were added (only in B), and kept keys lost and gained
//     map entries and timers; the case checks Flink's readings hold keys only in A and keys only
//     in B, so the pair tests more than changed values;
//   - two retained checkpoints (snapshot kinds): RocksDB full, and native-deletes, whose later
//     tables delete states, map keys and timers of the same keyed job.
func TestDiffAgreesWithFlinkReadings(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "savepoints")
	for _, pair := range [][2]string{{"native-rocksdb", "native-rescaled"}, {"native-rescaled", "native-rocksdb"},
		{"native-churn-a", "native-churn-b"}, {"native-churn-b", "native-churn-a"},
		{"../checkpoints/rocksdb-full", "../checkpoints/native-deletes"}} {
		t.Run(pair[0]+"-"+pair[1], func(t *testing.T) {
			type side = map[string]map[string]string // state -> identity -> value
			var flink [2]side
			for i, name := range pair {
				exp := readDumpExpectation(t, filepath.Join(dir, name+".expect.json"))
				flink[i] = side{}
				put := func(state string, raw json.RawMessage, id ...string) {
					if flink[i][state] == nil {
						flink[i][state] = map[string]string{}
					}
					v, err := canonical(raw)
					if err != nil {
						t.Fatal(err)
					}
					flink[i][state][strings.Join(id, " ")] = v
				}
				for _, o := range exp.Operators {
					for _, s := range o.KeyedStates {
						for _, e := range s.Entries {
							var x struct{ Key, Namespace, UserKey, Value json.RawMessage }
							if err := json.Unmarshal(e, &x); err != nil {
								t.Fatal(err)
							}
							k, _ := canonical(x.Key)
							ns, _ := canonical(x.Namespace)
							uk, _ := canonical(x.UserKey)
							put(s.Name, x.Value, k, ns, uk)
						}
					}
					for _, e := range o.Timers {
						var x struct {
							Key, Namespace json.RawMessage
							Kind           string
							Timestamp      int64
						}
						if err := json.Unmarshal(e, &x); err != nil {
							t.Fatal(err)
						}
						k, _ := canonical(x.Key)
						ns, _ := canonical(x.Namespace)
						put(x.Kind+" timers", json.RawMessage("null"), k, ns, strconv.FormatInt(x.Timestamp, 10))
					}
				}
			}
			if strings.HasPrefix(pair[0], "native-churn") {
				// Keys (of any state) that only one side's reading holds.
				var keys [2]map[string]bool
				for i := range flink {
					keys[i] = map[string]bool{}
					for _, ids := range flink[i] {
						for id := range ids {
							keys[i][strings.Fields(id)[0]] = true
						}
					}
				}
				var onlyA, onlyB []string
				for k := range keys[0] {
					if !keys[1][k] {
						onlyA = append(onlyA, k)
					}
				}
				for k := range keys[1] {
					if !keys[0][k] {
						onlyB = append(onlyB, k)
					}
				}
				if len(onlyA) == 0 || len(onlyB) == 0 {
					t.Fatalf("Flink's readings: keys %v only in A, %v only in B; the churn pair must have both", onlyA, onlyB)
				}
			}
			want := map[string]string{}
			changedKeys := map[string]bool{}
			for state := range flink[0] {
				a, b := flink[0][state], flink[1][state]
				var onlyA, onlyB, changed int
				for id, v := range a {
					if w, ok := b[id]; !ok {
						onlyA++
					} else if w != v {
						changed++
						changedKeys[state+" "+strings.Fields(id)[0]] = true
					}
				}
				for id := range b {
					if _, ok := a[id]; !ok {
						onlyB++
					}
				}
				want[state] = fmt.Sprintf("%d/%d -%d +%d ~%d", len(a), len(b), onlyA, onlyB, changed)
			}
			code, d := diffOut(t, filepath.Join(dir, pair[0]), filepath.Join(dir, pair[1]))
			got := map[string]string{}
			timers := map[string][5]int64{}
			for _, o := range d.Operators {
				for _, s := range o.States {
					if kind, ok := strings.CutPrefix(s.Name, "_timer_state/"); ok {
						kind, _, _ = strings.Cut(kind, "_")
						x := timers[kind+" timers"]
						timers[kind+" timers"] = [5]int64{x[0] + s.EntriesA, x[1] + s.EntriesB, x[2] + s.OnlyA, x[3] + s.OnlyB, x[4] + s.Changed}
						continue
					}
					got[s.Name] = fmt.Sprintf("%d/%d -%d +%d ~%d", s.EntriesA, s.EntriesB, s.OnlyA, s.OnlyB, s.Changed)
					for _, e := range s.ChgSam {
						k, _ := canonical(e.Key)
						if !changedKeys[s.Name+" "+k] {
							t.Errorf("state %s: diff shows key %s changed (%s -> %s); Flink read it unchanged", s.Name, k, e.Old, e.New)
						}
					}
				}
			}
			for kind, x := range timers {
				got[kind] = fmt.Sprintf("%d/%d -%d +%d ~%d", x[0], x[1], x[2], x[3], x[4])
			}
			for state := range want {
				if got[state] != want[state] {
					t.Errorf("state %s: diff counts %q, Flink's readings %q (entries A/B -only A +only B ~changed)", state, got[state], want[state])
				}
			}
			for state := range got {
				if _, ok := want[state]; !ok {
					t.Errorf("state %s: in the diff (%s), not in Flink's readings", state, got[state])
				}
			}
			if len(changedKeys) == 0 || code != 2 {
				t.Errorf("exit %d, %d keys changed by Flink's readings: the pair tests nothing", code, len(changedKeys))
			}
		})
	}
}
