package plan

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// The types a stateful exec node declares for its keyed state, derived from the plan alone, so
// they can be compared with the serializer snapshots a savepoint stores (bridge.CheckTypes).
// Flink keys every SQL operator with a RowData key selector over the key fields of its input
// row; the key serializer is a RowDataSerializer whose field types are those input columns'
// types exactly as the upstream node's "outputType" writes them:
//
//	upstream node "outputType": ROW<`k` BIGINT, `v` BIGINT>   node "grouping": [0]
//	                                   \_______/                          |
//	key serializer: RowDataSerializer [BIGINT]  <-------------------------'
//
// Where the node's key fields live, by exec node (Flink 2.3.0 plans):
//
//	group-aggregate, global-group-aggregate,   "grouping"
//	global-window-aggregate, window-aggregate
//	join, interval-join                        "joinSpec.leftKeys" / "intervalJoinSpec.joinSpec.leftKeys" (input 0)
//	rank, sort-limit                           "partition.fields"
//	deduplicate, changelog-normalize           "uniqueKeys"
//	over-aggregate                             "overSpec.partition.fields"
//
// Value types are derived only where the rule is certain: the group aggregate's accumulator row
// (accState) for COUNT, SUM, MIN and MAX without DISTINCT or retraction, whose accumulators are
// one nullable field each (COUNT: BIGINT; SUM, MIN, MAX: the call's result type), as the
// savepoints of the oracle's aggregates show. Anything else is reported as not derived, with
// the reason, never guessed.

// StateTypes is what a node's operator will declare for its keyed state.
type StateTypes struct {
	// Key are the SQL types of the key row's fields, nil when KeyWhy says why they are unknown.
	Key    []string
	KeyWhy string
	// Values maps a keyed state name to the field types of its RowData value.
	Values map[string][]string
	// ValueWhy says why the other states' value types are not derived.
	ValueWhy string
}

// keyFieldPaths are the JSON paths of each node's key field indices (input 0).
var keyFieldPaths = map[string]string{
	"stream-exec-group-aggregate":         "grouping",
	"stream-exec-global-group-aggregate":  "grouping",
	"stream-exec-window-aggregate":        "grouping",
	"stream-exec-global-window-aggregate": "grouping",
	"stream-exec-join":                    "joinSpec.leftKeys",
	"stream-exec-interval-join":           "intervalJoinSpec.joinSpec.leftKeys",
	"stream-exec-rank":                    "partition.fields",
	"stream-exec-sort-limit":              "partition.fields",
	"stream-exec-deduplicate":             "uniqueKeys",
	"stream-exec-changelog-normalize":     "uniqueKeys",
	"stream-exec-over-aggregate":          "overSpec.partition.fields",
}

// StateTypes derives the node's key and value types from the plan.
func (n *Node) StateTypes() StateTypes {
	st := StateTypes{Values: map[string][]string{}}
	st.Key, st.KeyWhy = n.keyTypes()
	st.ValueWhy = fmt.Sprintf("statecraft does not derive the value types of %s's states", n.Name)
	if n.Name == "stream-exec-group-aggregate" {
		if acc, why := n.accumulatorTypes(); why != "" {
			st.ValueWhy = why
		} else {
			st.Values["accState"] = acc
			st.ValueWhy = ""
		}
	}
	return st
}

func (n *Node) keyTypes() ([]string, string) {
	path, ok := keyFieldPaths[n.Name]
	if !ok {
		return nil, fmt.Sprintf("statecraft does not know where %s keeps its key fields", n.Name)
	}
	keys := gjson.Get(n.Raw, path)
	if !keys.IsArray() {
		return nil, fmt.Sprintf("%s has no %q array", n.Path(), path)
	}
	cols, why := n.inputColumns(0)
	if why != "" {
		return nil, why
	}
	out := []string{}
	for _, k := range keys.Array() {
		i := int(k.Int())
		if k.Type != gjson.Number || i < 0 || i >= len(cols) {
			return nil, fmt.Sprintf("%s.%s: key field %s is not a column of the input (%d columns)", n.Path(), path, k.Raw, len(cols))
		}
		if t := cols[i].Type; t == "" || strings.Contains(t, "*") {
			return nil, fmt.Sprintf("key column %s is a time attribute or a type without a SQL string: statecraft does not compare it", cols[i].Name)
		}
		out = append(out, cols[i].Type)
	}
	return out, ""
}

// inputColumns are the columns of the row the node reads on input k: the upstream node's
// "outputType".
func (n *Node) inputColumns(k int) ([]column, string) {
	for _, e := range n.Inputs {
		if e.Input != k {
			continue
		}
		up := n.owner.Node(e.Source)
		if up == nil {
			return nil, fmt.Sprintf("%s: input %d comes from node %d, which the plan does not have", n.Path(), k, e.Source)
		}
		t := gjson.Get(up.Raw, "outputType")
		if t.IsObject() {
			// The JSON form Flink writes when a field's type has no SQL string (time
			// attributes): {"type": "ROW", "fields": [{"name", "fieldType": "BIGINT" | {...}}]}.
			var cols []column
			for _, f := range t.Get("fields").Array() {
				ft := f.Get("fieldType")
				c := column{Name: f.Get("name").Str}
				if ft.Type == gjson.String {
					c.Type = ft.Str
				}
				cols = append(cols, c)
			}
			if t.Get("type").Str == "ROW" && len(cols) > 0 {
				return cols, ""
			}
		}
		cols, ok := parseRowType(t.Str)
		if t.Type != gjson.String || !ok {
			return nil, fmt.Sprintf("%s: the outputType of its input node %d is not a ROW type statecraft reads", n.Path(), up.ID)
		}
		return cols, ""
	}
	return nil, fmt.Sprintf("%s: no edge feeds its input %d", n.Path(), k)
}

// accumulatorTypes derives a group aggregate's accumulator row, or says why it cannot.
func (n *Node) accumulatorTypes() ([]string, string) {
	if gjson.Get(n.Raw, "needRetraction").Bool() {
		return nil, "the aggregate consumes retractions (its accumulators carry retraction counters statecraft does not derive)"
	}
	var out []string
	for i, c := range gjson.Get(n.Raw, "aggCalls").Array() {
		fn := c.Get("internalName").Str
		if c.Get("distinct").Bool() {
			return nil, fmt.Sprintf("aggCalls.%d (%s) is DISTINCT: its accumulator holds a map view statecraft does not derive", i, fn)
		}
		switch {
		case fn == "$COUNT$1":
			out = append(out, "BIGINT")
		case fn == "$SUM$1" || fn == "$MIN$1" || fn == "$MAX$1":
			out = append(out, strings.TrimSuffix(c.Get("type").Str, " NOT NULL"))
		default:
			return nil, fmt.Sprintf("aggCalls.%d is %s: statecraft derives accumulators only for COUNT, SUM, MIN and MAX", i, fn)
		}
	}
	return out, ""
}
