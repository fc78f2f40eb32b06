package plan

import (
	"fmt"
	"strings"
)

// The accumulator of one built-in aggregate call, as Flink 2.3.0 builds it
// (AggFunctionFactory picks the function by the call's kind, its argument's type and whether the
// call consumes retractions; AggsHandlerCodeGenerator lays the accumulators out in one row). A
// declarative function contributes one field per buffer attribute, an imperative one a single
// field of its accumulator type, whose data views (MapView, ListView) become RAW fields with a
// NullSerializer and keyed states of their own, named agg<call index>$<field name>:
//
//	call                      fields (nullable)                             own states
//	COUNT, COUNT(*)           BIGINT
//	SUM                       the call's type              (+ BIGINT count over retractions)
//	$SUM0                     the call's type
//	AVG(x)                    sum, BIGINT count: sum is BIGINT for TINYINT..BIGINT, DOUBLE for
//	                          FLOAT and DOUBLE, DECIMAL(38, s) for DECIMAL(p, s)
//	MIN, MAX                  x's type; STRING (VARCHAR(2147483647)) for CHAR and VARCHAR,
//	                          TIME(0) for TIME
//	  over retractions        STRUCTURED<'...MinWithRetractAccumulator',    agg<i>$map
//	                          `min` x, `mapSize` BIGINT, `map` view>        Map<x, Long>
//	FIRST_VALUE, LAST_VALUE   ROW<`firstValue` x, `firstOrder` BIGINT> (last: lastValue, lastOrder)
//	  over retractions        STRUCTURED<'...FirstValueWithRetractAccumulator', `firstValue` x,
//	                          `firstOrder` BIGINT, `valueToOrderMap` view, `orderToValueMap` view>
//	                          with states agg<i>$valueToOrderMap Map<x, ArrayData<BIGINT>> and
//	                          agg<i>$orderToValueMap Map<Long, ArrayData<x NOT NULL>>
//	COLLECT(x)                STRUCTURED<'...CollectAccumulator', `map` view> with state
//	                          agg<i>$map Map<x, Integer> (with or without retraction)
//	LISTAGG(x)                STRING delimiter, STRING value
//	  over retractions        STRUCTURED<'...ListAggWithRetractAccumulator', `list` list view,
//	                          `retractList` list view> with states agg<i>$list and
//	                          agg<i>$retractList, each List<StringData>
//	LISTAGG(x, sep)           the same fields as LISTAGG(x)
//	  over retractions        STRUCTURED<'...ListAggWsWithRetractAccumulator', `list`,
//	                          `retractList` list views, `delimiter` STRING> with the same states
//	JSON_OBJECTAGG            STRUCTURED<'...JsonObjectAggFunction$Accumulator', `map` view>
//	                          with state agg<i>$map Map<StringData, StringData> (with or
//	                          without retraction)
//	JSON_ARRAYAGG             STRUCTURED<'...JsonArrayAggFunction$Accumulator', `list` list view>
//	                          with state agg<i>$list List<StringData>
//
// Map keys and values and list elements are held in ExternalSerializers of their internal types
// (External<Integer> for an INT, External<DecimalData(10, 2)> for a DECIMAL(10, 2):
// distinctKeyShape). Other functions are not derived.
//
// Checked against the serializer snapshots of the accumulator rows Flink 2.3.0 wrote
// (testdata/upgrades/types-savepoints/group-builtins, retract-builtins, over-builtins,
// window-builtins, group-collect and retract-more: LISTAGG with a separator, the JSON functions,
// MAX and DISTINCT over DECIMAL and TIMESTAMP).

// runtimeAggPkg is the package of Flink's imperative built-in aggregate functions.
const runtimeAggPkg = "org.apache.flink.table.runtime.functions.aggregate."

// StateBackedListView is how a savepoint's RowDataSerializer renders an accumulator field that
// holds a state-backed list view.
const StateBackedListView = "RAW('org.apache.flink.table.api.dataview.ListView', NullSerializer)"

// ArrayOf is the value of a data view holding a list of values of SQL type elem: an
// ArrayDataSerializer, which Flink resolves by comparing the element types.
func ArrayOf(elem string) ValueType { return ValueType{Kind: "ArrayData<" + elem + ">"} }

// StructuredOf renders a structured accumulator type the way serializer.LogicalTypeSQL renders
// Flink's StructuredType: STRUCTURED<'class', `name` TYPE, ...>.
func StructuredOf(class string, fields ...string) string {
	return "STRUCTURED<'" + class + "', " + strings.Join(fields, ", ") + ">"
}

// callAccumulator derives the accumulator fields of call i (internal name fn, argument types
// args, the call's own type typ without NOT NULL) and the data view states it keeps (into
// views), or says why it cannot.
func callAccumulator(i int, fn string, args []string, typ string, retract bool, views map[string]ValueType) ([]string, string) {
	arg := func() (string, string) {
		if len(args) == 0 || args[0] == "" || strings.Contains(args[0], "*") {
			return "", fmt.Sprintf("%s's argument is not a column statecraft reads", fn)
		}
		return strings.TrimSuffix(args[0], " NOT NULL"), ""
	}
	switch fn {
	case "$COUNT$1":
		return []string{"BIGINT"}, ""
	case "$SUM$1":
		if retract {
			return []string{typ, "BIGINT"}, ""
		}
		return []string{typ}, ""
	case "$$SUM0$1", "$SUM0$1":
		return []string{typ}, ""
	case "$AVG$1":
		x, why := arg()
		if why != "" {
			return nil, why
		}
		sum, ok := avgSumType(x)
		if !ok {
			return nil, fmt.Sprintf("AVG over %s: statecraft does not derive its sum's type", x)
		}
		return []string{sum, "BIGINT"}, ""
	case "$MIN$1", "$MAX$1":
		x, why := arg()
		if why != "" {
			return nil, why
		}
		if !retract {
			return []string{minMaxType(x)}, ""
		}
		name, class := "min", "MinWithRetractAggFunction$MinWithRetractAccumulator"
		if fn == "$MAX$1" {
			name, class = "max", "MaxWithRetractAggFunction$MaxWithRetractAccumulator"
		}
		key, why := viewKeyShape(x)
		if why != "" {
			return nil, why
		}
		views[fmt.Sprintf("agg%d$map", i)] = shape("Map", shape("External", key), shape("External", ValueType{Kind: "Long"}))
		return []string{StructuredOf(runtimeAggPkg+class, "`"+name+"` "+x, "`mapSize` BIGINT", "`map` "+StateBackedView)}, ""
	case "$FIRST_VALUE$1", "$LAST_VALUE$1":
		x, why := arg()
		if why != "" {
			return nil, why
		}
		word, class := "first", "FirstValueWithRetractAggFunction$FirstValueWithRetractAccumulator"
		if fn == "$LAST_VALUE$1" {
			word, class = "last", "LastValueWithRetractAggFunction$LastValueWithRetractAccumulator"
		}
		if len(args) > 1 {
			return nil, fmt.Sprintf("%s with an order argument: statecraft does not derive its accumulator", fn)
		}
		value, order := "`"+word+"Value` "+x, "`"+word+"Order` BIGINT"
		if !retract {
			return []string{"ROW<" + value + ", " + order + ">"}, ""
		}
		key, why := viewKeyShape(x)
		if why != "" {
			return nil, why
		}
		long := ValueType{Kind: "Long"}
		views[fmt.Sprintf("agg%d$valueToOrderMap", i)] = shape("Map", shape("External", key), shape("External", ArrayOf("BIGINT")))
		views[fmt.Sprintf("agg%d$orderToValueMap", i)] = shape("Map", shape("External", long), shape("External", ArrayOf(x+" NOT NULL")))
		return []string{StructuredOf(runtimeAggPkg+class, value, order, "`valueToOrderMap` "+StateBackedView,
			"`orderToValueMap` "+StateBackedView)}, ""
	case "$COLLECT$1":
		// One accumulator with or without retraction: each value's multiplicity in a view.
		x, why := arg()
		if why != "" {
			return nil, why
		}
		key, why := viewKeyShape(x)
		if why != "" {
			return nil, why
		}
		views[fmt.Sprintf("agg%d$map", i)] = shape("Map", shape("External", key), shape("External", ValueType{Kind: "Integer"}))
		return []string{StructuredOf(runtimeAggPkg+"CollectAggFunction$CollectAccumulator", "`map` "+StateBackedView)}, ""
	case "$LISTAGG$1":
		if !retract {
			return []string{"VARCHAR(2147483647)", "VARCHAR(2147483647)"}, ""
		}
		str := shape("List", shape("External", ValueType{Kind: "StringData"}))
		views[fmt.Sprintf("agg%d$list", i)] = str
		views[fmt.Sprintf("agg%d$retractList", i)] = str
		lists := []string{"`list` " + StateBackedListView, "`retractList` " + StateBackedListView}
		switch len(args) {
		case 1:
			return []string{StructuredOf(runtimeAggPkg+"ListAggWithRetractAggFunction$ListAggWithRetractAccumulator", lists...)}, ""
		case 2:
			// With a separator: ListAggWsWithRetractAggFunction keeps the last one seen.
			return []string{StructuredOf(runtimeAggPkg+"ListAggWsWithRetractAggFunction$ListAggWsWithRetractAccumulator",
				append(lists, "`delimiter` VARCHAR(2147483647)")...)}, ""
		}
		return nil, fmt.Sprintf("LISTAGG with %d arguments: statecraft does not derive its accumulator", len(args))
	case "$JSON_OBJECTAGG_NULL_ON_NULL$1", "$JSON_OBJECTAGG_ABSENT_ON_NULL$1":
		// Each key's JSON value, with or without retraction. (Flink 2.3.0's accumulator has
		// the map alone; a later JsonObjectAggFunction adds a retractMap view.)
		str := shape("External", ValueType{Kind: "StringData"})
		views[fmt.Sprintf("agg%d$map", i)] = shape("Map", str, str)
		return []string{StructuredOf(runtimeAggPkg+"JsonObjectAggFunction$Accumulator", "`map` "+StateBackedView)}, ""
	case "$JSON_ARRAYAGG_NULL_ON_NULL$1", "$JSON_ARRAYAGG_ABSENT_ON_NULL$1":
		views[fmt.Sprintf("agg%d$list", i)] = shape("List", shape("External", ValueType{Kind: "StringData"}))
		return []string{StructuredOf(runtimeAggPkg+"JsonArrayAggFunction$Accumulator", "`list` "+StateBackedListView)}, ""
	}
	return nil, fmt.Sprintf("%s: statecraft derives accumulators only for COUNT, SUM, $SUM0, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE, LISTAGG, COLLECT, JSON_OBJECTAGG and JSON_ARRAYAGG", fn)
}

// avgSumType is the type of AVG's running sum over an argument of type x (AvgAggFunction's
// getSumType; LogicalTypeMerging.findSumAggType for DECIMAL: precision 38, the same scale).
func avgSumType(x string) (string, bool) {
	switch x {
	case "TINYINT", "SMALLINT", "INT", "BIGINT":
		return "BIGINT", true
	case "FLOAT", "DOUBLE":
		return "DOUBLE", true
	}
	var p, s int
	if n, err := fmt.Sscanf(x, "DECIMAL(%d, %d)", &p, &s); err == nil && n == 2 {
		return fmt.Sprintf("DECIMAL(38, %d)", s), true
	}
	return "", false
}

// minMaxType is the accumulator of MIN and MAX without retraction over x (the planner's
// MinAggFunction and MaxAggFunction subclasses): the argument's type, nullable, except that
// every CHAR and VARCHAR becomes STRING and TIME becomes TIME(0).
func minMaxType(x string) string {
	switch {
	case strings.HasPrefix(x, "VARCHAR(") || strings.HasPrefix(x, "CHAR("):
		return "VARCHAR(2147483647)"
	case strings.HasPrefix(x, "TIME("):
		return "TIME(0)"
	}
	return x
}

// viewKeyShape is the key of a data view keyed by values of SQL type x: its internal data
// structure, which the view's map wraps in an ExternalSerializer (as for DISTINCT views).
func viewKeyShape(x string) (ValueType, string) {
	k, why := distinctKeyShape([]string{x})
	if why != "" {
		return ValueType{}, strings.Replace(why, "DISTINCT over", "a data view keyed by", 1)
	}
	return k, ""
}
