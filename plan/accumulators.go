package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// The accumulator row of a group, window or over aggregate, as Flink 2.3.0's planner lays it
// out (AggregateUtil.transformToAggregateInfoList, AggregateInfoList.getAccTypes): the
// accumulator fields of every aggregate call in order, then one field per DISTINCT argument list:
//
//	SELECT k, COUNT(DISTINCT v), SUM(v), MAX(w) ... over an updating input (needRetraction):
//
//	accState  Row< BIGINT,     INT, BIGINT,   STRUCTURED<...MaxWithRetract...>, BIGINT,   RAW(MapView) >
//	               COUNT(v)    SUM with       MAX with retraction               count(*)  DISTINCT v
//	               (DISTINCT   retraction     (its values in state agg2$map)    inserted
//	               removed)    (sum, count)
//	distinctAcc_0  Map<External<v's internal type>, External<Long>>  (each distinct value, how
//	               often it was seen), distinctAcc_0_null_state External<Long>  (the NULL value's)
//
// Each call's fields and data view states are in aggfuncs.go (callAccumulator). A two-phase
// aggregate's global half lays its accumulators out the same way over the local half's input
// row (localAggInputRowType), with the count(*) inserted over retractions as above.
//
// A COUNT(*) (no argument, no filter, not DISTINCT) is appended when the aggregate needs an input
// count (it consumes retractions; a hopping window always) and the calls have none. A DISTINCT
// call's accumulator is that of its plain call; its view is a RAW field whose serializer is a
// NullSerializer (the data lives in its own keyed map state, distinctAcc_<n>, numbered by
// distinct argument list in order of appearance), so the field compares as that RAW type.

// StateBackedView is how a savepoint's RowDataSerializer renders an accumulator field that holds
// a state-backed data view: RawType(MapView, NullSerializer) (serializer.LogicalTypeSQL).
const StateBackedView = "RAW('org.apache.flink.table.api.dataview.MapView', NullSerializer)"

// aggregateStates derives the accumulator row (state accName) and distinct views of an aggregate
// node whose calls are at callsPath and whose arguments index the row args; a call consumes
// retractions when retractAll or its aggCallNeedRetractions entry says so; needInputCount says
// whether a COUNT(*) is inserted. It returns why when it cannot.
func (n *Node) aggregateStates(vals map[string]ValueType, accName, callsPath string, args []column, retractAll, needInputCount bool) string {
	calls := gjson.Get(n.Raw, callsPath).Array()
	retractPath := "aggCallNeedRetractions"
	if callsPath == incrementalCalls {
		retractPath = "partialAggCallNeedRetractions"
	}
	retract := gjson.Get(n.Raw, retractPath).Array()
	var acc []string
	hasCountStar := false
	type view struct {
		args  string
		types []string
		calls int
	}
	var views []view
	for i, c := range calls {
		fn := c.Get("internalName").Str
		typ := strings.TrimSuffix(c.Get("type").Str, " NOT NULL")
		argList := c.Get("argList").Array()
		r := retractAll || (i < len(retract) && retract[i].Bool())
		distinct := c.Get("distinct").Bool()
		if c.Get("approximate").Bool() {
			return fmt.Sprintf("%s.%d is an approximate aggregate: statecraft does not derive its accumulator", callsPath, i)
		}
		if fn == "$COUNT$1" && len(argList) == 0 && !distinct && c.Get("filterArg").Int() < 0 {
			hasCountStar = true
		}
		var argTypes []string
		for _, a := range argList {
			if k := int(a.Int()); k >= 0 && k < len(args) {
				argTypes = append(argTypes, args[k].Type)
			} else {
				argTypes = append(argTypes, "")
			}
		}
		fields, why := callAccumulator(i, fn, argTypes, typ, r, vals)
		if why != "" {
			return fmt.Sprintf("%s.%d: %s", callsPath, i, why)
		}
		acc = append(acc, fields...)
		if !distinct || len(argList) == 0 {
			continue
		}
		var key []string
		var ids []string
		for _, a := range argList {
			k := int(a.Int())
			if k < 0 || k >= len(args) || args[k].Type == "" || strings.Contains(args[k].Type, "*") {
				return fmt.Sprintf("%s.%d: DISTINCT argument %s is not a column statecraft reads", callsPath, i, a.Raw)
			}
			key = append(key, args[k].Type)
			ids = append(ids, a.Raw)
		}
		id := strings.Join(ids, ",")
		seen := false
		for j := range views {
			if views[j].args == id {
				seen = true
				views[j].calls++
			}
		}
		if !seen {
			views = append(views, view{id, key, 1})
		}
	}
	if needInputCount && !hasCountStar {
		acc = append(acc, "BIGINT")
	}
	// A view's value counts the rows per distinct value: a long while at most 64 calls (1 over
	// retractions) share the argument list, a long[] of one count per call beyond that.
	limit := 64
	if needInputCount {
		limit = 1
	}
	long := shape("External", ValueType{Kind: "Long"})
	for j, v := range views {
		acc = append(acc, StateBackedView)
		name := fmt.Sprintf("distinctAcc_%d", j)
		kt, why := distinctKeyShape(v.types)
		if why != "" {
			return name + ": " + why
		}
		if v.calls > limit {
			return fmt.Sprintf("%s: %d DISTINCT calls share the argument list %s: statecraft does not derive their view's value (long[])", name, v.calls, v.args)
		}
		vals[name] = shape("Map", shape("External", kt), long)
		vals[name+"_null_state"] = long
	}
	vals[accName] = RowOf(acc)
	return ""
}

// distinctKeyShape: the key of a distinct view is the argument's internal type for one argument
// (a BIGINT column: Long; DECIMAL(p, s): DecimalData(p, s); TIMESTAMP(p): TimestampData(p)), a
// row of them for several; the view's map wraps it in an ExternalSerializer, whose compatibility
// is the internal serializer's.
func distinctKeyShape(types []string) (ValueType, string) {
	if len(types) > 1 {
		return RowOf(types), ""
	}
	scalar := map[string]string{"BIGINT": "Long", "INT": "Integer", "SMALLINT": "Short", "TINYINT": "Byte",
		"BOOLEAN": "Boolean", "DOUBLE": "Double", "FLOAT": "Float"}
	t := strings.TrimSuffix(types[0], " NOT NULL")
	if k, ok := scalar[t]; ok {
		return ValueType{Kind: k}, ""
	}
	if strings.HasPrefix(t, "VARCHAR(") || strings.HasPrefix(t, "CHAR(") {
		return ValueType{Kind: "StringData"}, ""
	}
	// DecimalDataSerializer and TimestampDataSerializer snapshots hold the precision (and
	// scale), and Flink refuses a restore where they differ.
	var p, s int
	var rest string
	if n, _ := fmt.Sscanf(t, "DECIMAL(%d, %d)%s", &p, &s, &rest); n == 2 {
		return ValueType{Kind: fmt.Sprintf("DecimalData(%d, %d)", p, s)}, ""
	}
	if n, _ := fmt.Sscanf(t, "TIMESTAMP(%d)%s", &p, &rest); n == 1 {
		return ValueType{Kind: fmt.Sprintf("TimestampData(%d)", p)}, ""
	}
	return ValueType{}, fmt.Sprintf("DISTINCT over a %s column: statecraft does not derive its view's key serializer", t)
}

// aggregateNodeStates derives the states of the group and window aggregates' nodes.
func (n *Node) aggregateNodeStates(vals map[string]ValueType) string {
	needRetraction := gjson.Get(n.Raw, "needRetraction").Bool()
	var args []column
	var why string
	if strings.HasPrefix(n.Name, "stream-exec-global-") {
		// The global half's calls index the local half's input row.
		if args, why = localAggInputColumns(n); why != "" {
			return why
		}
	} else if args, why = n.inputColumns(0); why != "" {
		return why
	}
	if strings.HasSuffix(n.Name, "window-aggregate") {
		// A hopping window always counts its input (SliceSharedWindowAggProcessor).
		hop := gjson.Get(n.Raw, "windowing.window.type").Str == "HoppingWindow"
		return n.aggregateStates(vals, "window-aggs", "aggCalls", args, false, hop || needRetraction)
	}
	return n.aggregateStates(vals, "accState", "aggCalls", args, false, needRetraction)
}

// localAggInputColumns reads a global aggregate's "localAggInputRowType" (a ROW string, or the
// JSON object form when it holds a time attribute).
func localAggInputColumns(n *Node) ([]column, string) {
	t := gjson.Get(n.Raw, "localAggInputRowType")
	if t.IsObject() {
		var cols []column
		for _, f := range t.Get("fields").Array() {
			ft := f.Get("fieldType")
			c := column{Name: f.Get("name").Str, Type: ft.Str}
			if ft.Type != gjson.String {
				c.Type = timeAttributeType(ft)
			}
			cols = append(cols, c)
		}
		return cols, ""
	}
	if cols, ok := parseRowType(t.Str); ok {
		return cols, ""
	}
	return nil, fmt.Sprintf("%s: no localAggInputRowType statecraft reads", n.Path())
}

// incrementalCalls are an incremental aggregate's calls: the partial half of a split DISTINCT
// aggregate under mini-batch (local, incremental, global aggregates).
const incrementalCalls = "partialOriginalAggCalls"

// incrementalStates: an incremental aggregate merges the partial accumulators of each mini-batch
// without keeping them (MiniBatchIncrementalGroupAggFunction has no accumulator state); what it
// keeps, under its partial grouping (the key and the distinct bucket), are the partial calls'
// state-backed data views: the DISTINCT views (distinctAcc_<n>) and the views of imperative
// functions (agg<i>$...). Its calls index "partialLocalAggInputRowType". Checked against the
// savepoint Flink 2.3.0 took of testdata/upgrades/types-savepoints/group-split-incremental.
func (n *Node) incrementalStates(vals map[string]ValueType) string {
	t := gjson.Get(n.Raw, "partialLocalAggInputRowType")
	args, ok := parseRowType(t.Str)
	if t.Type != gjson.String || !ok {
		return fmt.Sprintf("%s: no partialLocalAggInputRowType statecraft reads", n.Path())
	}
	views := map[string]ValueType{}
	if why := n.aggregateStates(views, "(partial accumulators)", incrementalCalls, args, false, gjson.Get(n.Raw, "partialAggNeedRetraction").Bool()); why != "" {
		return why
	}
	delete(views, "(partial accumulators)")
	for k, v := range views {
		vals[k] = v
	}
	return ""
}

// DistinctKeyTypes are the SQL types of the argument lists of a group aggregate's DISTINCT views,
// in view order (distinctAcc_<n> is the n-th: argument lists in order of appearance, a list
// shared by several calls once), each as its input column has it, nullability included: the
// view's map key is ExternalSerializer.of(DataTypeUtils.toInternalDataType(that type))
// (AggregateUtil.extractDistinctInformation), a row of them for several arguments. It returns
// why when the node's input row is not read.
func (n *Node) DistinctKeyTypes() ([][]string, string) {
	args, why := n.inputColumns(0)
	if why != "" {
		return nil, why
	}
	var ids []string
	var out [][]string
	for i, c := range gjson.Get(n.Raw, "aggCalls").Array() {
		argList := c.Get("argList")
		if !c.Get("distinct").Bool() || c.Get("approximate").Bool() || len(argList.Array()) == 0 {
			continue
		}
		types, why := argTypes(args, argList, i, "DISTINCT argument")
		if why != "" {
			return nil, why
		}
		var raw []string
		for _, a := range argList.Array() {
			raw = append(raw, a.Raw)
		}
		if id := strings.Join(raw, ","); !slices.Contains(ids, id) {
			ids = append(ids, id)
			out = append(out, types)
		}
	}
	return out, ""
}

// argTypes are the SQL types of the columns of args that aggregate call i's argList names (what:
// the arguments' name in the reason, when one is not a column).
func argTypes(args []column, argList gjson.Result, i int, what string) ([]string, string) {
	var types []string
	for _, a := range argList.Array() {
		k := int(a.Int())
		if k < 0 || k >= len(args) || args[k].Type == "" {
			return nil, fmt.Sprintf("aggCalls.%d: %s %s is not a column statecraft reads", i, what, a.Raw)
		}
		types = append(types, args[k].Type)
	}
	return types, ""
}

// CallArgTypes are the SQL types of aggregate call i's arguments, each as its input column has
// it (nullability and length included): MIN and MAX over retractions key their view by
// ExternalSerializer.of(toInternalDataType(the argument's type).notNull()). It returns why when
// the node's input row is not read or an argument is not one of its columns.
func (n *Node) CallArgTypes(i int) ([]string, string) {
	args, why := n.inputColumns(0)
	if why != "" {
		return nil, why
	}
	return argTypes(args, gjson.Get(n.Raw, fmt.Sprintf("aggCalls.%d.argList", i)), i, "argument")
}
