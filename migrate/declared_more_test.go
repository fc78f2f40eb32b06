package migrate

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/statecraft/statecraft/spec"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/uid"
)

// collectionsTTL is the TTL the judge's job declares for the TTL states of
// testdata/specs/collections-keyed.yaml: entries stamped 12 hours ago are visible, those stamped
// 36 hours ago expired (the judge refuses an expiry that falls while it reads).
const collectionsTTL = 24 * time.Hour

// declaredState is one keyed state of a generated declaration's expectation, in the judge's type
// names (no spaces).
type declaredState struct {
	kind, keyType, valueType, userKeyType, namespace string
	ttl                                              bool
	entries                                          []any
}

// declaredData collects a generated data file's lines and the expectation's keyed states and
// timers of one operator.
type declaredData struct {
	t      *testing.T
	label  string
	lines  []string
	states map[string]*declaredState
	timers []any
}

func (d *declaredData) add(rec map[string]any) {
	b, err := json.Marshal(rec)
	if err != nil {
		d.t.Fatal(err)
	}
	d.lines = append(d.lines, string(b))
}

// entry adds a data line for state (its key group left to statecraft) and the matching
// expected entry; extra are further field, value pairs of both (ttlTimestamp).
func (d *declaredData) entry(state string, key, ns, userKey, value any, extra ...any) {
	rec := map[string]any{"operator": d.label, "state": state, "key": key, "namespace": ns, "userKey": userKey, "value": value}
	exp := map[string]any{"key": key, "namespace": ns, "userKey": userKey, "value": value}
	for j := 0; j+1 < len(extra); j += 2 {
		rec[extra[j].(string)] = extra[j+1]
		exp[extra[j].(string)] = extra[j+1]
	}
	d.add(rec)
	st := d.states[state]
	if st == nil {
		d.t.Fatalf("no state %s", state)
	}
	st.entries = append(st.entries, exp)
}

func (d *declaredData) timer(kind string, key, ns any, ts int64) {
	d.add(map[string]any{"operator": d.label, "state": "_timer_state/" + kind + "_user-timers", "kind": kind, "key": key, "namespace": ns, "timestamp": ts})
	d.timers = append(d.timers, map[string]any{"key": key, "kind": kind, "namespace": ns, "timestamp": ts})
}

// operator is the expectation of the operator with uid u: its keyed states by name (TTL states
// with ttlMillis, so the judge restores them with that TTL) and timers.
func (d *declaredData) operator(u string, ttl time.Duration) map[string]any {
	var keyed []any
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range d.states {
			if !yield(n) {
				return
			}
		}
	}) {
		s := d.states[name]
		st := map[string]any{"name": name, "kind": s.kind, "keyType": s.keyType, "valueType": s.valueType,
			"userKeyType": nil, "ttl": s.ttl, "entries": s.entries}
		if s.userKeyType != "" {
			st["userKeyType"] = s.userKeyType
		}
		if s.namespace != "" {
			st["namespace"] = s.namespace
		}
		if s.ttl {
			st["ttlMillis"] = ttl.Milliseconds()
		}
		keyed = append(keyed, st)
	}
	timers := d.timers
	if timers == nil {
		timers = []any{}
	}
	return map[string]any{"uid": u, "uidHash": uid.Hash(u), "parallelism": 2, "maxParallelism": 128,
		"keyedStates": keyed, "timers": timers, "operatorStates": []any{}}
}

// sortedMap is a Map value as dump prints it and the judge reads it: [{"key", "value"}] in the
// order of the keys' JSON text.
func sortedMap(kv ...any) []any {
	var out []any
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, map[string]any{"key": kv[i], "value": kv[i+1]})
	}
	slices.SortFunc(out, func(a, b any) int {
		x, _ := json.Marshal(a.(map[string]any)["key"])
		y, _ := json.Marshal(b.(map[string]any)["key"])
		return bytes.Compare(x, y)
	})
	return out
}

// collectionsKeyedData is data for testdata/specs/collections-keyed.yaml and the expectation of
// what the job restored from it must find. TTL timestamps are relative to now: each TTL state
// has entries (list elements) 12 hours old, which the judge's 1-day TTL keeps visible, and
// entries 36 hours old, which it must find expired; every key of a TTL list or map keeps one
// visible element, so no slot is left empty.
func collectionsKeyedData(t *testing.T, now time.Time) (lines []string, e expectation) {
	t.Helper()
	live, dead := now.Add(-12*time.Hour).UnixMilli(), now.Add(-36*time.Hour).UnixMilli()
	c := &declaredData{t: t, label: "uid:collections-keyed", states: map[string]*declaredState{
		"triple":   {kind: "value", valueType: "Tuple3<Integer,String,Long>"},
		"wide":     {kind: "value", valueType: "Tuple5<Integer,String,Long,Boolean,Character>"},
		"ints":     {kind: "value", valueType: "int[]"},
		"blob":     {kind: "value", valueType: "byte[]"},
		"names":    {kind: "value", valueType: "String[]"},
		"boxed":    {kind: "value", valueType: "Integer[]"},
		"chars":    {kind: "list", valueType: "Character[]"},
		"flags":    {kind: "value", valueType: "boolean[]"},
		"tags":     {kind: "value", valueType: "List<String>"},
		"attrs":    {kind: "value", valueType: "Map<String,Long>"},
		"rows":     {kind: "list", valueType: "Tuple3<Integer,String,Long>"},
		"arrays":   {kind: "list", valueType: "long[]"},
		"nested":   {kind: "map", valueType: "List<Long>", userKeyType: "Tuple2<Integer,String>"},
		"byName":   {kind: "map", valueType: "Map<String,Integer>", userKeyType: "String"},
		"recent":   {kind: "list", valueType: "Row<String,Integer>", ttl: true},
		"expiring": {kind: "map", valueType: "Tuple2<Long,Long>", userKeyType: "String", ttl: true},
		"session":  {kind: "value", valueType: "String", ttl: true},
	}}
	for _, s := range c.states {
		s.keyType = "Character"
	}
	for i := range 6 {
		k := string(rune('a' + i))
		n := int64(i)
		c.entry("triple", k, nil, nil, map[string]any{"f0": i, "f1": "t" + k, "f2": n * 1_000_000_007})
		c.entry("wide", k, nil, nil, map[string]any{"f0": -i, "f1": "w" + k, "f2": n << 40, "f3": i%2 == 0, "f4": strings.ToUpper(k)})
		c.entry("ints", k, nil, nil, []any{i, -i, 1 << 30})
		c.entry("blob", k, nil, nil, base64.StdEncoding.EncodeToString([]byte{byte(i), 0xff, 'x'}))
		c.entry("names", k, nil, nil, []any{"n" + k, "", "ü" + k})
		c.entry("boxed", k, nil, nil, []any{i, nil, -7})
		c.entry("chars", k, nil, nil, []any{[]any{k, nil}, []any{"Z"}})
		c.entry("flags", k, nil, nil, []any{true, i%3 == 0})
		c.entry("tags", k, nil, nil, []any{"x" + k, "y" + k})
		c.entry("attrs", k, nil, nil, sortedMap("a"+k, n*10, "b", nil, "c", -n))
		c.entry("rows", k, nil, nil, []any{map[string]any{"f0": i, "f1": "r", "f2": n}, map[string]any{"f0": i + 1, "f1": nil, "f2": -n}})
		c.entry("arrays", k, nil, nil, []any{[]any{n, n + 1}, []any{}, []any{-n}})
		c.entry("nested", k, nil, map[string]any{"f0": i, "f1": "u" + k}, []any{n, n * n})
		c.entry("nested", k, nil, map[string]any{"f0": -1, "f1": "v"}, []any{})
		c.entry("byName", k, nil, "m"+k, sortedMap("p", i, "q", i*2))
		// TTL: list elements and map entries of every key, half of them expired; the value
		// state of odd keys expired (the judge must find no entry).
		recent, stamps := []any{[]any{"live-" + k, i}}, []any{live}
		if i%2 == 0 {
			recent, stamps = append(recent, []any{"old-" + k, nil}), append(stamps, dead)
		}
		c.entry("recent", k, nil, nil, recent, "ttlTimestamp", stamps)
		c.entry("expiring", k, nil, "live", map[string]any{"f0": n, "f1": n + 1}, "ttlTimestamp", live)
		if i%3 != 1 {
			c.entry("expiring", k, nil, "old", map[string]any{"f0": -n, "f1": 0}, "ttlTimestamp", dead)
		}
		ts := live
		if i%2 == 1 {
			ts = dead
		}
		c.entry("session", k, nil, nil, "s-"+k, "ttlTimestamp", ts)
		c.timer("event", k, nil, 3_000_000_000_000+n)
		if i%2 == 0 {
			c.timer("processing", k, nil, 3_100_000_000_000+n)
		}
	}
	// The count window: a Tuple4 key, one window (GlobalWindow) per key.
	w := &declaredData{t: t, label: "uid:count-window", states: map[string]*declaredState{
		"window-contents": {kind: "reducing", keyType: "Tuple4<Integer,String,Long,Character>", valueType: "Tuple3<Long,Long,String>", namespace: "GlobalWindow"},
	}}
	for i := range 5 {
		key := map[string]any{"f0": i, "f1": fmt.Sprint("k", i), "f2": int64(i) * 3, "f3": string(rune('A' + i))}
		w.entry("window-contents", key, "GlobalWindow", nil, map[string]any{"f0": int64(i + 1), "f1": int64(10 * i), "f2": fmt.Sprint("last-", i)})
	}
	meta := func(u string) map[string]any {
		return map[string]any{"operatorName": u, "operatorUid": u, "operatorUidHash": uid.Hash(u),
			"parallelism": 2, "maxParallelism": 128, "subtaskStateCount": 2}
	}
	e = expectation{
		"backend":   "hashmap",
		"metadata":  []any{meta("collections-keyed"), meta("count-window")},
		"operators": []any{c.operator("collections-keyed", collectionsTTL), w.operator("count-window", collectionsTTL)},
	}
	return append(c.lines, w.lines...), asExpectation(t, e)
}

// createCollectionsKeyed creates the savepoint testdata/specs/collections-keyed.yaml declares,
// loaded with collectionsKeyedData (each line passed through edit, if given), and returns it
// with the data's lines and the expectation.
func createCollectionsKeyed(t *testing.T, edit func(string) string) (dst string, lines []string, e expectation) {
	t.Helper()
	lines, e = collectionsKeyedData(t, time.Now())
	for i := range lines {
		if edit != nil {
			lines[i] = edit(lines[i])
		}
	}
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, "collections-keyed")), Options{}, &Load{Data: data})
	return dst, lines, e
}

// TestLoadCollectionsKeyed: the savepoint declared with Character and Tuple4 keys (their key
// groups computed by statecraft), tuples up to Tuple5, arrays, List and Map values, list and map
// state of complex types, TTL list, map and value state and GlobalWindow namespaces holds
// exactly the data's records, TTL timestamps included (the dump prints them as the data gave
// them).
func TestLoadCollectionsKeyed(t *testing.T) {
	dst, lines, _ := createCollectionsKeyed(t, nil)
	got := dumpKeyed(t, dst)
	for i := range got {
		var m map[string]any
		d := json.NewDecoder(strings.NewReader(got[i]))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["keyGroup"]; !ok {
			t.Fatalf("dumped without a keyGroup: %s", got[i])
		}
		delete(m, "keyGroup")
		b, _ := json.Marshal(m)
		got[i] = string(b)
	}
	sameRecords(t, got, lines)
}

// restamp is the data line with its ttlTimestamp set to ts.
func restamp(t *testing.T, line string, ts int64) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["ttlTimestamp"]; !ok {
		t.Fatalf("no ttlTimestamp to change: %s", line)
	}
	m["ttlTimestamp"] = json.RawMessage(fmt.Sprint(ts))
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoadSpecSQL: the SQL group aggregate declared by its compiled plan
// (testdata/specs/sql-group-aggregate.yaml) and loaded with the fixture's dump holds exactly the
// dumped entries, under the fixture's operator id, uid, parallelism and max parallelism, and its
// keyed-state header (RowData key, accState's accumulator row, timer queues, with the
// Java-serialized logical types) is byte for byte the one Flink wrote.
func TestLoadSpecSQL(t *testing.T) {
	const name = "sql-group-aggregate"
	dst := createSpec(t, name)
	want, got := dumpKeyed(t, fixture(t, name)), dumpKeyed(t, dst)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Fatalf("the declared savepoint holds %d records, the fixture %d (or they differ)", len(got), len(want))
	}
	flink, ours := open(t, fixture(t, name)), open(t, dst)
	if len(ours.Metadata.Operators) != 1 {
		t.Fatalf("%d operators declared, want the aggregate", len(ours.Metadata.Operators))
	}
	o := ours.Metadata.Operators[0]
	i := slices.IndexFunc(flink.Metadata.Operators, func(f *metadata.OperatorState) bool { return f.ID == o.ID })
	if i < 0 {
		t.Fatalf("operator %s (%s) is not the fixture's", o.ID, o.UID)
	}
	fo := flink.Metadata.Operators[i]
	if o.UID != fo.UID || o.UID != "3_group-aggregate" || o.Parallelism != fo.Parallelism || o.MaxParallelism != fo.MaxParallelism {
		t.Errorf("operator %s: uid %q parallelism %d/%d, Flink's %q %d/%d", fo.ID, o.UID, o.Parallelism, o.MaxParallelism, fo.UID, fo.Parallelism, fo.MaxParallelism)
	}
	if hf, hs := header(t, flink, fo), header(t, ours, o); !bytes.Equal(hf.Raw, hs.Raw) {
		t.Errorf("keyed-state header differs from Flink's (%d vs %d bytes)", len(hs.Raw), len(hf.Raw))
	}
}

// createSQLSpec creates the savepoint testdata/specs/sql-group-aggregate.yaml declares, loaded
// with accumulators (COUNT(*), SUM(v)) for keys 1, 7, 20 and 42 that no job produced, and returns
// it with the expectation that Flink, executing the plan restored from it, carries each on.
func createSQLSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	acc := map[int64][2]int64{1: {5, 500}, 7: {2, 14}, 20: {9, -3}, 42: {1, 1}}
	var lines []string
	for k, a := range acc {
		lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"accState","key":[%d],"namespace":null,"userKey":null,"value":[%d,%d]}`, k, a[0], a[1]))
	}
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, "sql-group-aggregate")), Options{}, &Load{Data: data})
	return dst, sqlCarryOnExpect(t, acc)
}

// TestDeclareSQLHeaders: group aggregates declared by their compiled plans (a TTL'd one, one
// over a deduplication's retractions, one with a FILTER) get the keyed-state headers Flink wrote
// into those plans' savepoints byte for byte, and so do aggregates with state-backed data views
// (COUNT DISTINCT; COUNT DISTINCT, SUM and MIN over retractions; COLLECT; the distinct half of a
// split aggregate), their views' map and null states in the hashmap backend's order; views
// statecraft does not declare (FIRST_VALUE over retractions) and a two-phase aggregate's global
// half (a mini-batch operator) are refused, naming why.
func TestDeclareSQLHeaders(t *testing.T) {
	up := filepath.Join("..", "testdata", "upgrades")
	for _, tc := range []struct {
		name, plan string
		node       int
		savepoint  string
		want       string // error, when refused
	}{
		{"ttl", "agg-ttl/plan.json", 3, "agg-ttl/savepoint", ""},
		{"filter", "agg-filter-added/old.plan.json", 3, "agg-filter-added/savepoint", ""},
		{"two-phase", "types-savepoints/group-two-phase.plan.json", 6, "", "node 6 is stream-exec-global-group-aggregate; statecraft declares the state of group aggregates (stream-exec-group-aggregate) only"},
		{"over retractions", "types-savepoints/dedup-then-aggregate.plan.json", 7, "types-savepoints/dedup-then-aggregate", ""},
		{"count distinct", "types-savepoints/group-count-distinct.plan.json", 3, "types-savepoints/group-count-distinct", ""},
		{"distinct, min over retractions", "../specs/sql-distinct-aggregate.json", 6, "../specs/sql-distinct-aggregate-savepoint", ""},
		{"collect", "types-savepoints/group-collect.plan.json", 4, "types-savepoints/group-collect", ""},
		{"distinct strings", "../specs/sql-distinct-string.json", 3, "../specs/sql-distinct-string-savepoint", ""},
		{"distinct decimals, timestamps", "../specs/sql-distinct-decimal.json", 3, "../specs/sql-distinct-decimal-savepoint", ""},
		{"distinct over two columns", "../specs/sql-distinct-columns.json", 4, "../specs/sql-distinct-columns-savepoint", ""},
		{"min, max over retractions of strings, decimals, timestamps", "../specs/sql-retract-minmax.json", 6, "../specs/sql-retract-minmax-savepoint", ""},
		{"max over retractions of a CHAR", "../specs/sql-retract-minmax-char.json", 6, "../specs/sql-retract-minmax-char-savepoint", ""},
		{"split distinct", "types-savepoints/group-split-distinct.plan.json", 6, "types-savepoints/group-split-distinct", ""},
		{"first value over retractions", "types-savepoints/retract-builtins.plan.json", 7, "", "node 7: state agg5$orderToValueMap of $FIRST_VALUE$1 (Map<External<Long>, External<ArrayData<INT NOT NULL>>>): statecraft declares the data views of DISTINCT, MIN and MAX over retractions and COLLECT only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, _ := filepath.Abs(filepath.Join(up, tc.plan))
			f := filepath.Join(t.TempDir(), "spec.yaml")
			os.WriteFile(f, []byte(fmt.Sprintf("operators:\n  - {plan: %s, node: %d}\n", plan, tc.node)), 0o644)
			sp, err := spec.Read(f)
			if tc.want != "" || err != nil {
				if err == nil || tc.want == "" || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			empty := filepath.Join(t.TempDir(), "empty")
			os.Mkdir(empty, 0o755)
			if err := sp.WriteEmpty(empty); err != nil {
				t.Fatal(err)
			}
			flink, ours := open(t, filepath.Join(up, tc.savepoint)), open(t, empty)
			o := ours.Metadata.Operators[0]
			i := slices.IndexFunc(flink.Metadata.Operators, func(f *metadata.OperatorState) bool { return f.ID == o.ID })
			if i < 0 {
				t.Fatalf("operator %s (%s) is not in Flink's savepoint", o.ID, o.UID)
			}
			if hf, hs := header(t, flink, flink.Metadata.Operators[i]), header(t, ours, o); !bytes.Equal(hf.Raw, hs.Raw) {
				t.Errorf("keyed-state header differs from Flink's (%d vs %d bytes)", len(hs.Raw), len(hf.Raw))
			}
		})
	}
}
