package plan

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateTypesNodeVariants: the Flink-written plans of the type catalogue's bases
// (testdata/upgrades/types-savepoints, checked against their savepoints by
// bridge.TestTypeCatalogueAgreesWithFlink) and variants of them whose operator keeps other
// states (Flink picks FastTop1Function for a Top-1, AppendOnlyFirstNFunction for a first-N by
// processing time: the ranks base holds both), and a plan field that is missing or out of range
// says so.
func TestStateTypesNodeVariants(t *testing.T) {
	dir := filepath.Join("..", "testdata", "upgrades", "types-savepoints")
	cases := []struct {
		base, name string
		edits      []string // old, new pairs applied to the plan's JSON
		state      string   // a derived state, or "" when none is
		shape      string   // its shape
		complete   bool
		why        string // in ValueWhy when nothing is derived
		namespace  string
	}{
		{"top-n-update", "update-fast", nil, "data-state-with-update", "Map<Row<BIGINT, BIGINT>, Tuple2<Row<BIGINT, BIGINT, INT, BIGINT NOT NULL>, Integer>>", true, "", "VoidNamespace"},
		{"top-n-update", "top-1", []string{`"end" : 3`, `"end" : 1`}, "Top1-Rank-State", "Row<BIGINT, BIGINT, INT, BIGINT NOT NULL>", true, "", "VoidNamespace"},
		{"top-n-update", "no primary keys", []string{`"primaryKeys" : [ 0, 1 ]`, `"primaryKeys" : [ ]`}, "", "", false, "without primaryKeys", "VoidNamespace"},
		{"top-n-update", "primary key out of range", []string{`"primaryKeys" : [ 0, 1 ]`, `"primaryKeys" : [ 0, 9 ]`}, "", "", false, "primaryKeys: field 9", "VoidNamespace"},
		{"top-n", "append-fast", nil, "data-state-with-append", "", true, "", "VoidNamespace"},
		// The rank's input made (amount -> pt PROCTIME) and sorted by it ascending: a first-N.
		{"top-n", "first-n by proctime", []string{
			"\"outputType\" : \"ROW<`order_id` BIGINT, `user_id` BIGINT, `amount` INT>\",\n    \"description\" : \"Exchange",
			`"outputType" : {"type": "ROW", "fields": [{"name": "order_id", "fieldType": "BIGINT"}, {"name": "user_id", "fieldType": "BIGINT"}, ` +
				`{"name": "pt", "fieldType": {"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "nullable": false, "precision": 3, "kind": "PROCTIME"}}]},` +
				"\n    \"description\" : \"Exchange",
			`"isAscending" : false`, `"isAscending" : true`}, "counterState", "Integer", true, "", "VoidNamespace"},
		{"dedup-rowtime-last", "keep last by rowtime", nil, "deduplicate-state", "Row<BIGINT, INT, TIMESTAMP(3)>", true, "", "VoidNamespace"},
		{"dedup-rowtime-last", "mini-batch", []string{`"table.exec.mini-batch.enabled" : "false"`, `"table.exec.mini-batch.enabled" : "true"`}, "deduplicate-state", "Row<BIGINT, INT, TIMESTAMP(3)>", false, "", "VoidNamespace"},
		{"window-session", "session TVF", nil, "session-window-mapping", "Map<TimeWindow, TimeWindow>", false, "", "TimeWindow"},
		{"group-window", "GROUP BY TUMBLE", nil, "window-aggs", "Row<INT>", false, "", "TimeWindow"},
		{"group-window", "GROUP BY SESSION", []string{`"kind" : "TUMBLING"`, `"kind" : "SESSION"`}, "session-window-mapping", "Map<TimeWindow, TimeWindow>", false, "", "TimeWindow"},
		{"group-window", "count window", []string{`"isTimeWindow" : true`, `"isTimeWindow" : false`}, "window-aggs", "Row<INT>", false, "", ""},
		{"count-window", "tumbling count window", nil, "trigger-count-2", "Long", false, "", "CountWindow"},
		{"count-window", "its assigner", nil, "tumble-count-assigner", "Long", false, "", "CountWindow"},
		{"count-window-slide", "sliding count window", nil, "slide-count-assigner", "Long", false, "", "CountWindow"},
		{"count-window-slide", "its trigger counts to the size", nil, "trigger-count-2", "Long", false, "", "CountWindow"},
		{"count-window-slide", "no slide", []string{`"slide" : 1`, `"slide" : "1"`}, "window-aggs", "Row<BIGINT, INT>", false, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.base+"/"+tc.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, tc.base+".plan.json"))
			if err != nil {
				t.Fatal(err)
			}
			s := string(data)
			for i := 0; i+1 < len(tc.edits); i += 2 {
				if !strings.Contains(s, tc.edits[i]) {
					t.Fatalf("%s.plan.json has no %s", tc.base, tc.edits[i])
				}
				s = strings.Replace(s, tc.edits[i], tc.edits[i+1], 1)
			}
			p, err := Parse(tc.base, []byte(s))
			if err != nil {
				t.Fatal(err)
			}
			var n *Node
			for _, c := range p.Nodes {
				if _, ok := keyFieldPaths[c.Name]; ok {
					n = c
				}
			}
			if n == nil {
				t.Fatal("no stateful node")
			}
			st := n.StateTypes()
			if tc.state == "" {
				if len(st.Values) != 0 || !strings.Contains(st.ValueWhy, tc.why) || st.Complete {
					t.Errorf("values %v, complete %v, why %q: want none, why with %q", st.Values, st.Complete, st.ValueWhy, tc.why)
				}
				return
			}
			v, ok := st.Values[tc.state]
			if !ok || (tc.shape != "" && v.String() != tc.shape) {
				t.Errorf("%s: %v (%v), want %s", tc.state, v, ok, tc.shape)
			}
			if st.Complete != tc.complete || st.Namespace != tc.namespace {
				t.Errorf("complete %v, namespace %q: want %v, %q", st.Complete, st.Namespace, tc.complete, tc.namespace)
			}
			if tc.state == "session-window-mapping" && (st.NamespaceOf(tc.state) != "VoidNamespace" || st.Requires[tc.state].With != "window-aggs") {
				t.Errorf("the window mapping: namespace %q, requires %+v", st.NamespaceOf(tc.state), st.Requires)
			}
			if strings.HasSuffix(tc.state, "-count-assigner") && st.NamespaceOf(tc.state) != "VoidNamespace" {
				t.Errorf("the count assigner's namespace %q, want VoidNamespace", st.NamespaceOf(tc.state))
			}
			if tc.name == "no slide" && len(st.Values) != 1 {
				t.Errorf("a sliding count window without its slide: %v, want window-aggs alone", st.Values)
			}
		})
	}
}
