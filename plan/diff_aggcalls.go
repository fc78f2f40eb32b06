package plan

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// Aggregate calls and their state in plan diff. Two rules keep plan diff and savepoint check one
// model for aggregates:
//
//   - The state types a matched stateful node declares (StateTypes, derived from the plan) differ
//     between OLD and NEW: incompatible, even where the node's own JSON is unchanged. AVG over
//     DECIMAL(10, 2) -> DECIMAL(10, 3) changes only the Calc in front, but the average's sum
//     becomes DECIMAL(38, 3) and Flink 2.3.0 refuses the restore
//     (testdata/upgrades/types/v23-builtins-avg-decimal-scale).
//   - An aggregate call whose argument became a lossless widening CAST of the same column (the
//     argument positions may shift as the Calc in front gains the cast), with every state type
//     unchanged, keeps its state's meaning: AVG(amount) -> AVG(CAST(amount AS BIGINT)) keeps the
//     (BIGINT sum, BIGINT count) accumulator and Flink 2.3.0 restored it and went on averaging
//     (v23-builtins-avg-int-to-bigint). Its changed call type and row types are then compatible.

// stateTypesChanged says how the state types node o declares differ from those of n, "" when
// they are equal or either side's are not fully derived.
func stateTypesChanged(o, n *Node) string {
	a, b := o.StateTypes(), n.StateTypes()
	if a.Key != nil && b.Key != nil && strings.Join(a.Key, ", ") != strings.Join(b.Key, ", ") {
		return fmt.Sprintf("key types changed [%s] -> [%s]", strings.Join(a.Key, ", "), strings.Join(b.Key, ", "))
	}
	for _, name := range sortedKeys(a.Values) {
		x, ok := b.Values[name]
		if !ok {
			continue
		}
		if y := a.Values[name]; !reflect.DeepEqual(x, y) {
			return fmt.Sprintf("state %s's type changed %s -> %s (Flink refuses the restore: StateMigrationException)", name, ShortText(y.String(), 120), ShortText(x.String(), 120))
		}
	}
	return ""
}

// aggCallField matches the fields of an aggregate call that a widening cast of its argument
// changes: where the argument is and the call's type.
var aggCallField = regexp.MustCompile(`(^|\.)aggCalls\.\d+\.(argList|type)$`)

// widenedArguments says why every change c of a matched aggregate node o -> n is explained by
// widening casts of call arguments that keep its state, "" when they are not.
func widenedArguments(o, n *Node, changes []FieldChange) string {
	switch n.Name {
	case "stream-exec-group-aggregate", "stream-exec-window-aggregate":
		// One-phase only: a global half's arguments index the local half's input, which
		// the lineage walk does not follow.
	default:
		return ""
	}
	if o.Name != n.Name {
		return ""
	}
	for _, c := range changes {
		if !aggCallField.MatchString(c.Path) && c.Kind != "output-type" && c.Kind != "input-type" && c.Kind != "description" && namesOnly(c) == "" {
			return ""
		}
	}
	// The state must be fully derived on both sides and equal.
	vo, vn := map[string]ValueType{}, map[string]ValueType{}
	if o.aggregateNodeStates(vo) != "" || n.aggregateNodeStates(vn) != "" || !reflect.DeepEqual(vo, vn) {
		return ""
	}
	oc, nc := gjson.Get(o.Raw, "aggCalls").Array(), gjson.Get(n.Raw, "aggCalls").Array()
	if len(oc) != len(nc) || len(oc) == 0 {
		return ""
	}
	var widened []string
	for i := range oc {
		for _, f := range []string{"internalName", "distinct", "approximate", "ignoreNulls", "filterArg"} {
			if oc[i].Get(f).Raw != nc[i].Get(f).Raw {
				return ""
			}
		}
		oa, na := oc[i].Get("argList").Array(), nc[i].Get("argList").Array()
		if len(oa) != len(na) {
			return ""
		}
		for j := range oa {
			ol := columnLineage(inputOf(o, 0), int(oa[j].Int()), 0)
			inner, from, to, cast := castArgument(n, int(na[j].Int()))
			nl := columnLineage(inputOf(n, 0), int(na[j].Int()), 0)
			switch {
			case nl == ol:
			case cast && inner == ol && widens(from, to):
				widened = append(widened, fmt.Sprintf("%s's argument %s -> %s", oc[i].Get("internalName").Str, from, to))
			default:
				return ""
			}
		}
	}
	if len(widened) == 0 {
		return ""
	}
	return "aggregate arguments widened by a lossless CAST, state types unchanged (" + strings.Join(widened, ", ") + ")"
}

// inputOf is the node feeding input k of n, or nil.
func inputOf(n *Node, k int) *Node {
	for _, e := range n.Inputs {
		if e.Input == k {
			return n.owner.Node(e.Source)
		}
	}
	return nil
}

// castArgument: column col of n's input 0 is CAST(c AS to) of a column c of type from (through
// exchanges, from a Calc's projection); inner is c's lineage.
func castArgument(n *Node, col int) (inner, from, to string, ok bool) {
	up := inputOf(n, 0)
	for up != nil && (up.Name == "stream-exec-exchange" || up.Name == "stream-exec-mini-batch-assigner") {
		up = inputOf(up, 0)
	}
	if up == nil || up.Name != "stream-exec-calc" {
		return "", "", "", false
	}
	p := gjson.Get(up.Raw, fmt.Sprintf("projection.%d", col))
	ops := p.Get("operands").Array()
	if p.Get("internalName").Str != "$CAST$1" || len(ops) != 1 || ops[0].Get("kind").Str != "INPUT_REF" {
		return "", "", "", false
	}
	return columnLineage(inputOf(up, 0), int(ops[0].Get("inputIndex").Int()), 0), ops[0].Get("type").Str, p.Get("type").Str, true
}

// widens: every value of SQL type from is a value of type to, unchanged (integers to wider
// integers, FLOAT to DOUBLE; nullability may only be relaxed).
func widens(from, to string) bool {
	fromNN, toNN := strings.HasSuffix(from, " NOT NULL"), strings.HasSuffix(to, " NOT NULL")
	if toNN && !fromNN {
		return false
	}
	rank := map[string]int{"TINYINT": 1, "SMALLINT": 2, "INT": 3, "BIGINT": 4}
	f, t := strings.TrimSuffix(from, " NOT NULL"), strings.TrimSuffix(to, " NOT NULL")
	if rank[f] > 0 && rank[t] > 0 {
		return rank[f] <= rank[t]
	}
	return f == t || f == "FLOAT" && t == "DOUBLE"
}
