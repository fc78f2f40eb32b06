package migrate

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// patchKeyedHashmap sets, adds and deletes entries of keyed-hashmap's int-keyed operator: a
// value replaced, a new key added, an entry deleted, a map entry added, every map entry of a key
// deleted, a list replaced. The lines are as dump prints them without --operator.
const patchKeyedHashmap = `{"operator":"uid:int-keyed","state":"count","key":4,"namespace":null,"value":99}
{"operator":"uid:int-keyed","state":"count","key":1000,"namespace":null,"value":7}
{"op":"delete","operator":"uid:int-keyed","state":"sum","key":8,"namespace":null}

{"op":"delete","operator":"uid:int-keyed","state":"seen","key":9}
{"operator":"uid:int-keyed","state":"seen","key":10,"namespace":null,"userKey":"zz","value":5}
{"operator":"uid:int-keyed","state":"names","key":11,"namespace":null,"value":["x","y"]}
`

func runPatch(t *testing.T) (string, *Report) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "patch.jsonl")
	if err := os.WriteFile(data, []byte(patchKeyedHashmap), 0o644); err != nil {
		t.Fatal(err)
	}
	return run(t, fixture(t, "keyed-hashmap"), Options{}, &Patch{Data: data})
}

// TestPatch: the output holds the source's entries with exactly the patched ones changed, the
// report counts them, and only the touched key groups' subtask files are new.
func TestPatch(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	dst, rep := runPatch(t)
	before, after := dumpKeyed(t, src), dumpKeyed(t, dst)
	line := func(state string, kg, key int, uk, value string) string {
		return `{"operator":"uid:int-keyed","state":"` + state + `","keyGroup":` + itoa(kg) + `,"key":` + itoa(key) + `,"namespace":null,"userKey":` + uk + `,"value":` + value + `}`
	}
	want := slices.Clone(before)
	replace := func(old, new string) {
		i := slices.Index(want, old)
		if i < 0 {
			t.Fatalf("fixture lacks %s", old)
		}
		if new == "" {
			want = slices.Delete(want, i, i+1)
		} else {
			want[i] = new
		}
	}
	replace(line("count", 7, 4, "null", "3"), line("count", 7, 4, "null", "99"))
	replace(line("sum", 15, 8, "null", "60"), "")
	replace(line("seen", 51, 9, `"m0"`, "33"), "")
	replace(line("names", 102, 11, "null", `["n11","n23","n35"]`), line("names", 102, 11, "null", `["x","y"]`))
	want = append(want, line("count", 7, 1000, "null", "7"), line("seen", 67, 10, `"zz"`, "5"))
	slices.Sort(want)
	slices.Sort(after)
	if !slices.Equal(after, want) {
		t.Fatalf("patched savepoint:\n%s\nwant:\n%s", join(after), join(want))
	}
	ch := rep.Steps[0].Operators[0]
	for st, w := range map[string][3]int{"count": {1, 1, 0}, "sum": {0, 0, 1}, "seen": {0, 1, 1}, "names": {1, 0, 0}, "minmax": {}} {
		if got := [3]int{ch.Set[st], ch.Added[st], ch.Deleted[st]}; got != w {
			t.Errorf("state %s: set/added/deleted %v, want %v", st, got, w)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// patchedExpect is keyed-hashmap's expectation changed as patchKeyedHashmap promises.
func patchedExpect(t *testing.T) expectation {
	t.Helper()
	e := loadExpect(t, "keyed-hashmap")
	entry := func(key int, uk, value any) map[string]any {
		return map[string]any{"key": json.Number(itoa(key)), "namespace": nil, "userKey": uk, "value": value}
	}
	changed := 0
	for _, o := range e.list("operators") {
		o := o.(map[string]any)
		if o["uid"] != "int-keyed" {
			continue
		}
		for _, ks := range o["keyedStates"].([]any) {
			ks := ks.(map[string]any)
			var out []any
			for _, en := range ks["entries"].([]any) {
				en := en.(map[string]any)
				k := en["key"].(json.Number).String()
				switch {
				case ks["name"] == "count" && k == "4":
					en["value"] = json.Number("99")
					changed++
				case ks["name"] == "sum" && k == "8", ks["name"] == "seen" && k == "9":
					changed++
					continue
				case ks["name"] == "names" && k == "11":
					en["value"] = []any{"x", "y"}
					changed++
				}
				out = append(out, en)
			}
			switch ks["name"] {
			case "count":
				out = append(out, entry(1000, nil, json.Number("7")))
			case "seen":
				out = append(out, entry(10, "zz", json.Number("5")))
			}
			ks["entries"] = out
		}
	}
	if changed != 4 { // count 4, sum 8, seen 9 (its one map entry), names 11
		t.Fatalf("keyed-hashmap's expectation: %d of the 4 patched entries found", changed)
	}
	return e
}

// TestPatchRefusals: bad records are refused naming file and line, and nothing is written.
func TestPatchRefusals(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	for _, tc := range []struct{ line, want string }{
		{`{"op":"upsert","operator":"uid:int-keyed","state":"count","key":4,"value":1}`, `patch.jsonl:1: op "upsert"`},
		{`{"operator":"uid:int-keyed","state":"_timer_state/event_user-timers","key":4,"timestamp":5}`, `patch.jsonl:1: state "_timer_state/event_user-timers" is a timer queue`},
		{`{"operator":"uid:int-keyed","state":"count","key":4,"value":"x"}`, `patch.jsonl:1: value: want an integer`},
		{`{"operator":"uid:nope","state":"count","key":4,"value":1}`, `patch.jsonl:1: operator "uid:nope": no such operator`},
	} {
		data := filepath.Join(t.TempDir(), "patch.jsonl")
		os.WriteFile(data, []byte(tc.line+"\n"), 0o644)
		dst := filepath.Join(t.TempDir(), "out")
		_, err := Run(src, dst, []Step{&Patch{Data: data}}, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
		if _, err := os.Stat(dst); err == nil {
			t.Errorf("%s written after a refused patch", dst)
		}
	}
}

// TestPatchRecordOrder: the records of one entry apply in file order, whichever mix of sets,
// deletes and deletes of a map key's every entry, and the report counts each step.
func TestPatchRecordOrder(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	before := dumpKeyed(t, src)
	const op = `{"operator":"uid:int-keyed",`
	line := func(state string, kg, key int, uk, value string) string {
		return op + `"state":"` + state + `","keyGroup":` + itoa(kg) + `,"key":` + itoa(key) + `,"namespace":null,"userKey":` + uk + `,"value":` + value + `}`
	}
	count4, seen9 := line("count", 7, 4, "null", "3"), line("seen", 51, 9, `"m0"`, "33")
	set := func(state string, key int, uk, value string) string {
		if uk != "" {
			uk = `"userKey":` + uk + `,`
		}
		return op + `"state":"` + state + `","key":` + itoa(key) + `,"namespace":null,` + uk + `"value":` + value + `}`
	}
	del := func(state string, key int, uk string) string {
		if uk != "" {
			uk = `,"userKey":` + uk
		}
		return `{"op":"delete",` + op[1:] + `"state":"` + state + `","key":` + itoa(key) + `,"namespace":null` + uk + `}`
	}
	for _, tc := range []struct {
		name    string
		records []string
		gone    []string
		added   []string
		counts  map[string][3]int // set, added, deleted
	}{
		{"set twice", []string{set("count", 4, "", "5"), set("count", 4, "", "6")},
			[]string{count4}, []string{line("count", 7, 4, "null", "6")}, map[string][3]int{"count": {2, 0, 0}}},
		{"set then delete", []string{set("count", 4, "", "5"), del("count", 4, "")},
			[]string{count4}, nil, map[string][3]int{"count": {1, 0, 1}}},
		{"delete then set", []string{del("count", 4, ""), set("count", 4, "", "8")},
			[]string{count4}, []string{line("count", 7, 4, "null", "8")}, map[string][3]int{"count": {0, 1, 1}}},
		{"new key set then deleted", []string{set("count", 1001, "", "1"), del("count", 1001, "")},
			nil, nil, map[string][3]int{"count": {0, 1, 1}}},
		{"map entry added then the key's every entry deleted", []string{set("seen", 9, `"zz"`, "5"), del("seen", 9, "")},
			[]string{seen9}, nil, map[string][3]int{"seen": {0, 1, 2}}},
		{"the key's every entry deleted then a map entry added", []string{del("seen", 9, ""), set("seen", 9, `"zz"`, "5")},
			[]string{seen9}, []string{line("seen", 51, 9, `"zz"`, "5")}, map[string][3]int{"seen": {0, 1, 1}}},
		{"map entry set, then deleted by key", []string{set("seen", 9, `"m0"`, "1"), del("seen", 9, `"m0"`), set("seen", 9, `"m1"`, "2")},
			[]string{seen9}, []string{line("seen", 51, 9, `"m1"`, "2")}, map[string][3]int{"seen": {1, 1, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "patch.jsonl")
			if err := os.WriteFile(data, []byte(strings.Join(tc.records, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dst, rep := run(t, src, Options{}, &Patch{Data: data})
			want := slices.Clone(before)
			for _, g := range tc.gone {
				i := slices.Index(want, g)
				if i < 0 {
					t.Fatalf("fixture lacks %s", g)
				}
				want = slices.Delete(want, i, i+1)
			}
			want = append(want, tc.added...)
			got := dumpKeyed(t, dst)
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("patched savepoint:\n%s\nwant:\n%s", join(got), join(want))
			}
			ch := rep.Steps[0].Operators[0]
			for st, w := range tc.counts {
				if got := [3]int{ch.Set[st], ch.Added[st], ch.Deleted[st]}; got != w {
					t.Errorf("state %s: set/added/deleted %v, want %v", st, got, w)
				}
			}
		})
	}
}

// TestPatchSpills: a patch's records spilled under budgets from far below one key group's
// records (partitions split into chunks) to all of them in memory give the same output and
// report as the unspilled patch.
func TestPatchSpills(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	data := filepath.Join(t.TempDir(), "patch.jsonl")
	if err := os.WriteFile(data, []byte(patchKeyedHashmap), 0o644); err != nil {
		t.Fatal(err)
	}
	wantDst, wantRep := run(t, src, Options{}, &Patch{Data: data})
	want := dumpKeyed(t, wantDst)
	slices.Sort(want)
	wantCh, _ := json.Marshal(wantRep.Steps[0].Operators)
	split0 := splitLoaded.Load()
	for _, budget := range []int64{1, 150, 1 << 30} {
		t.Run(itoa(int(budget)), func(t *testing.T) {
			dst, rep := run(t, src, Options{SpillBudget: budget}, &Patch{Data: data})
			got := dumpKeyed(t, dst)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("spill budget %d: patched savepoint:\n%s\nwant:\n%s", budget, join(got), join(want))
			}
			if ch, _ := json.Marshal(rep.Steps[0].Operators); string(ch) != string(wantCh) {
				t.Fatalf("spill budget %d: report %s, want %s", budget, ch, wantCh)
			}
		})
	}
	if splitLoaded.Load() == split0 {
		t.Fatal("no partition of the records was split into chunks: the spilled path was not taken")
	}
}
