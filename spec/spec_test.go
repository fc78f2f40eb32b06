package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// TestPropertiesAreFlinks: the CheckpointProperties a declared savepoint ends with are the bytes
// Flink 2.3.0 and 1.20.0 wrote into every canonical savepoint fixture.
func TestPropertiesAreFlinks(t *testing.T) {
	var mds []string
	for _, g := range []string{"../testdata/savepoints/*/_metadata", "../testdata/flink-1.20/savepoints/*/_metadata"} {
		m, _ := filepath.Glob(g)
		mds = append(mds, m...)
	}
	n := 0
	for _, md := range mds {
		f, err := os.Open(md)
		if err != nil {
			t.Fatal(err)
		}
		m, err := metadata.Decode(f, md)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !canonical(t, filepath.Dir(md)) {
			continue
		}
		n++
		if !bytes.Equal(m.Tail, savepointProperties) {
			t.Errorf("%s: Flink's CheckpointProperties differ from the ones a declared savepoint gets", md)
		}
	}
	if n < 10 {
		t.Fatalf("only %d canonical savepoint fixtures: the test proves little", n)
	}
}

// canonical reports whether fixture dir is a canonical DataStream savepoint (its expectation
// says so; SQL jobs' stop-with-savepoint and native savepoints carry other properties).
func canonical(t *testing.T, dir string) bool {
	b, err := os.ReadFile(dir + ".expect.json")
	return err == nil && bytes.Contains(b, []byte(`"format": "canonical"`)) && !strings.Contains(filepath.Base(dir), "sql")
}

// TestReadRefusals: a bad declaration is one error naming the file, the line and what is wrong.
func TestReadRefusals(t *testing.T) {
	plan, err := filepath.Abs("../testdata/savepoints/sql-group-aggregate.plan.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(plan)
	if err != nil {
		t.Fatal(err)
	}
	miniBatch := filepath.Join(t.TempDir(), "mini-batch.plan.json")
	text := strings.Replace(string(b), `"table.exec.mini-batch.enabled" : "false"`, `"table.exec.mini-batch.enabled" : "true"`, 1)
	if text == string(b) {
		t.Fatal("the plan has no mini-batch option to switch on")
	}
	os.WriteFile(miniBatch, []byte(text), 0o644)
	// The DISTINCT-over-strings aggregate with its first DISTINCT over two columns, s and a DATE
	// (a view keyed by a row of a type statecraft does not declare), and with its CHAR(3) column a DATE, and the DECIMAL and TIMESTAMP one with its
	// TIMESTAMP(3) a TIMESTAMP_LTZ (keys whose serializer is not derived).
	editPlan := func(name string, from, to string) string {
		file := "../testdata/specs/sql-distinct-string.json"
		if strings.Contains(from, "TIMESTAMP") {
			file = "../testdata/specs/sql-distinct-decimal.json"
		}
		if strings.HasPrefix(name, "minmax") {
			file = "../testdata/specs/sql-retract-minmax.json"
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), from, to)
		if text == string(b) {
			t.Fatalf("%s: %q is not in the plan", name, from)
		}
		f := filepath.Join(t.TempDir(), name+".plan.json")
		os.WriteFile(f, []byte(text), 0o644)
		return f
	}
	twoColumnsDate := editPlan("two-columns", `"argList" : [ 1 ],`, `"argList" : [ 1, 3 ],`)
	if b, _ := os.ReadFile(twoColumnsDate); !bytes.Contains(b, []byte("`c` CHAR(3)")) {
		t.Fatal("the two-columns plan has no CHAR(3) column c to make a DATE")
	} else {
		// c's own DISTINCT counts u instead, so c is a DATE only in the row.
		b = bytes.Replace(b, []byte(`"argList" : [ 3 ],`), []byte(`"argList" : [ 2 ],`), 1)
		os.WriteFile(twoColumnsDate, bytes.ReplaceAll(b, []byte("`c` CHAR(3)"), []byte("`c` DATE")), 0o644)
	}
	date := editPlan("date", "`c` CHAR(3)", "`c` DATE")
	ltz := editPlan("ltz", "`t` TIMESTAMP(3)", "`t` TIMESTAMP(3) WITH LOCAL TIME ZONE")
	// MIN and MAX over retractions with MAX(t)'s TIMESTAMP(3) a TIMESTAMP_LTZ (a key whose
	// serializer is not derived).
	minMaxLTZ := editPlan("minmax-ltz", "`t` TIMESTAMP(3)", "`t` TIMESTAMP(3) WITH LOCAL TIME ZONE")
	for _, tc := range []struct{ name, yaml, want string }{
		{"distinct over two columns, one a date", "operators:\n  - {plan: " + twoColumnsDate + ", node: 3}\n",
			"node 3: state distinctAcc_0: DISTINCT over several columns (VARCHAR(2147483647), DATE): SQL type \"DATE\": statecraft declares BOOLEAN"},
		{"distinct over a TIMESTAMP_LTZ", "operators:\n  - {plan: " + ltz + ", node: 3}\n",
			"node 3: the accumulator row is not derived: distinctAcc_1: DISTINCT over a TIMESTAMP(3) WITH LOCAL TIME ZONE column: statecraft does not derive its view's key serializer"},
		{"distinct over a date", "operators:\n  - {plan: " + date + ", node: 3}\n", "node 3: the accumulator row is not derived: distinctAcc_2: DISTINCT over a DATE column: statecraft does not derive its view's key serializer"},
		{"max over retractions of a TIMESTAMP_LTZ", "operators:\n  - {plan: " + minMaxLTZ + ", node: 6}\n",
			"node 6: the accumulator row is not derived: aggCalls.3: a data view keyed by a TIMESTAMP(3) WITH LOCAL TIME ZONE column: statecraft does not derive its view's key serializer"},
		{"mini-batch", "operators:\n  - {plan: " + miniBatch + ", node: 3}\n", "node 3 runs in a mini-batch operator (table.exec.mini-batch.enabled), whose states statecraft does not declare"},
		{"plan and uid", "operators:\n  - {plan: " + plan + ", node: 3, uid: a}\n", "spec.yaml:2: operators[0]: plan " + plan + ": a plan's operator takes its uid, key type and states from the plan; declare none of them"},
		{"plan without node", "operators:\n  - {plan: " + plan + "}\n", "node: want the id of the exec node"},
		{"node without plan", "operators:\n  - {uid: a, node: 3}\n", "spec.yaml:2: operators[0]: node 3 without a plan"},
		{"no such node", "operators:\n  - {plan: " + plan + ", node: 9}\n", "no exec node with id 9"},
		{"not an aggregate", "operators:\n  - {plan: " + plan + ", node: 1}\n", "node 1 is stream-exec-table-source-scan; statecraft declares the state of group aggregates"},
		{"no plan file", "operators:\n  - {plan: nope.json, node: 3}\n", "nope.json: no such file"},
		{"unknown type", "operators:\n  - uid: a\n    keyType: Integr\n", "spec.yaml:3: keyType: type \"Integr\": unknown type Integr"},
		{"tuple arity", "operators:\n  - uid: a\n    keyType: Integer\n    states:\n      - {name: s, kind: value, valueType: \"Tuple3<Long>\"}\n", "states[0] (line 5): valueType (line 5): type \"Tuple3<Long>\": Tuple3 needs 3 type arguments"},
		{"no id", "operators:\n  - parallelism: 2\n", "spec.yaml:2: operators[0]: an operator needs a uid or a uidHash"},
		{"uid and hash disagree", "operators:\n  - {uid: a, uidHash: 00000000000000000000000000000000}\n", "uid \"a\" hashes to"},
		{"bad kind", "operators:\n  - uid: a\n    keyType: Long\n    states:\n      - {name: s, kind: folding, valueType: Long}\n", "state \"s\": kind \"folding\""},
		{"map without user key", "operators:\n  - uid: a\n    keyType: Long\n    states:\n      - {name: s, kind: map, valueType: Long}\n", "a user key type is given for a map state, and only for one"},
		{"states without key", "operators:\n  - uid: a\n    states:\n      - {name: s, kind: value, valueType: Long}\n", "keyed states declared without a keyType"},
		{"parallelism", "operators:\n  - {uid: a, parallelism: 300, maxParallelism: 128}\n", "parallelism 300, max parallelism 128"},
		{"unknown field", "operators:\n  - {uid: a, operatorStateX: x}\n", "field operatorStateX not found"},
		{"pojo without fields", "operators:\n  - uid: a\n    keyType: {pojo: com.x.A}\n", "{pojo: CLASS, fields"},
		{"twice", "operators:\n  - uid: a\n  - uid: a\n", "declared twice"},
		{"operator state mode", "operators:\n  - uid: a\n    operatorStates:\n      - {name: s, mode: list, valueType: Long}\n", "spec.yaml:2: operators[0]: operatorStates[0] \"s\": mode \"list\", want split, union or broadcast"},
		{"broadcast without key", "operators:\n  - uid: a\n    operatorStates:\n      - {name: s, mode: broadcast, valueType: Long}\n", "operator state \"s\": want a value type, and a key type for a broadcast state only"},
		{"operator state type", "operators:\n  - uid: a\n    operatorStates:\n      - {name: s, mode: union, valueType: Lng}\n", "operatorStates[0] \"s\": valueType (line 4): type \"Lng\": unknown type"},
		{"operator state twice", "operators:\n  - uid: a\n    operatorStates:\n      - {name: s, mode: union, valueType: Long}\n      - {name: s, mode: split, valueType: Long}\n", "operator state \"s\": every state needs a name of its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := filepath.Join(t.TempDir(), "spec.yaml")
			os.WriteFile(f, []byte(tc.yaml), 0o644)
			_, err := Read(f)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestReadPlan: a SQL operator declared by a plan named relative to the declaration
// (testdata/specs/sql-group-aggregate.yaml) takes the plan's uid and the aggregate's states.
func TestReadPlan(t *testing.T) {
	s, err := Read("../testdata/specs/sql-group-aggregate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := s.Operators[0]
	var names []string
	for _, st := range o.States {
		names = append(names, st.Kind+":"+st.Name)
	}
	if o.UID != "3_group-aggregate" || o.Parallelism != 2 || strings.Join(names, " ") != "value:accState timer:_timer_state/processing_user-timers timer:_timer_state/event_user-timers" {
		t.Fatalf("uid %q parallelism %d states %v", o.UID, o.Parallelism, names)
	}
}

// TestDefaultMaxParallelism follows Flink's computeDefaultMaxParallelism.
func TestDefaultMaxParallelism(t *testing.T) {
	for _, c := range [][2]int32{{1, 128}, {85, 128}, {86, 256}, {200, 512}, {30000, 32768}} {
		if got := defaultMaxParallelism(c[0]); got != c[1] {
			t.Errorf("parallelism %d: %d, want %d", c[0], got, c[1])
		}
	}
}

// TestReadPlanViews: an aggregate with data views (testdata/specs/sql-distinct-aggregate.yaml)
// declares accState and its views' states in the order Flink's hashmap backend writes them, then
// the timer queues.
func TestReadPlanViews(t *testing.T) {
	s, err := Read("../testdata/specs/sql-distinct-aggregate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Operators[0].States {
		names = append(names, st.Kind+":"+st.Name)
	}
	want := "map:agg2$map value:accState value:distinctAcc_0_null_state map:distinctAcc_0 timer:_timer_state/processing_user-timers timer:_timer_state/event_user-timers"
	if o := s.Operators[0]; o.UID != "6_group-aggregate" || strings.Join(names, " ") != want {
		t.Fatalf("uid %q states %v, want %s", o.UID, names, want)
	}
}

// TestHeapOrder: the hashmap backend's order of states registered in the given order (the
// generated handler's views, then accState) is the order Flink wrote them in the headers of
// testdata/upgrades/types-savepoints/retract-builtins (nine states, two buckets shared) and
// group-count-distinct.
func TestHeapOrder(t *testing.T) {
	for _, tc := range []struct{ registered, written string }{
		{"agg3$map agg4$map agg5$valueToOrderMap agg5$orderToValueMap agg6$valueToOrderMap agg6$orderToValueMap agg7$list agg7$retractList accState",
			"agg5$orderToValueMap agg6$valueToOrderMap accState agg5$valueToOrderMap agg7$retractList agg6$orderToValueMap agg3$map agg7$list agg4$map"},
		{"distinctAcc_0 distinctAcc_0_null_state accState", "accState distinctAcc_0_null_state distinctAcc_0"},
	} {
		if got := strings.Join(heapOrder(strings.Fields(tc.registered)), " "); got != tc.written {
			t.Errorf("registered %s: order %s, Flink wrote %s", tc.registered, got, tc.written)
		}
	}
}
