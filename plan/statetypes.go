package plan

import (
	"fmt"
	"sort"
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
//	incremental-group-aggregate                "partialAggGrouping" (the key and the DISTINCT bucket)
//	group-aggregate, global-group-aggregate,   "grouping"
//	global-window-aggregate, window-aggregate,
//	group-window-aggregate
//	join, interval-join                        "joinSpec.leftKeys" / "intervalJoinSpec.joinSpec.leftKeys" (input 0)
//	rank, sort-limit                           "partition.fields"
//	deduplicate, changelog-normalize           "uniqueKeys"
//	over-aggregate                             "overSpec.partition.fields"
//
// Value types are derived only where the rule is certain, each checked against the serializer
// snapshots of Flink-written savepoints (testdata/flink-1.20/savepoints/upgrade-*, restored by
// Flink 2.3.0 into the 2.3 plans):
//
//	node                          state                      value (TTL wrappers aside)
//	(global-)group-aggregate,     accState, window-aggs      Row<accumulators> (accumulators.go),
//	(global-)window-aggregate     distinctAcc_<n>,           DISTINCT views, data views of
//	                              agg<i>$<view>              built-in functions (aggfuncs.go)
//	incremental-group-aggregate   distinctAcc_<n>, ...       the partial calls' views only
//	join (no upsert keys)         left-records,              Map<Row<input>, Integer>      inner side
//	                              right-records              Map<Row<input>, Tuple2<Integer, Integer>>
//	                                                                                       outer side
//	interval-join                 IntervalJoin{Left,Right}   Map<Long, List<Tuple2<Row<input>, Boolean>>>
//	                              Cache; ...TimerState       Long
//	rank (AppendFast)             data-state-with-append     Map<Row<sort keys>, List<Row<input>>>
//	rank (Retract)                data-state                 the same
//	                              sorted-map                 SortedMap<Row<sort keys>, Long> + comparator
//	rank (Top-1, not Retract)     Top1-Rank-State            Row<input>
//	rank (first-N by proc time)   counterState               Integer
//	deduplicate (proc time)       deduplicate-state          Row<input> (keep last), Boolean (keep first)
//	deduplicate (event time,      waiting-to-emit-on-timer,  Row<input>,
//	keep first, insert-only)      already-emitted-state-...  Boolean
//	changelog-normalize           deduplicate-state          Row<input>
//	over-aggregate (proc time,    inputState                 Map<Long, List<Row<input>>>
//	bounded preceding)            accState                   Row<accumulators> (retracting)
//	                              ROWS: processedCountState, Long
//	                              smallestTSState; RANGE:
//	                              cleanupTsState
//
// More nodes (UpdateFast Top-N, event-time keep-last deduplication, session windows, the legacy
// group window aggregate) are in statetypes_nodes.go, the Top-1 and first-N ranks in rankTypes.
// Anything else is reported as not derived, with the reason, never guessed.
// Time attributes (PROCTIME, ROWTIME columns) have no SQL string in the plan, only a JSON type:
// they compare as the plain timestamp they are (timeAttributeType); a field of any other type
// without a SQL string is "" and never compared, so a row holding one is at best "not checked"
// on that field.

// StateTypes is what a node's operator will declare for its keyed state.
type StateTypes struct {
	// Key are the SQL types of the key row's fields, nil when KeyWhy says why they are unknown.
	Key    []string
	KeyWhy string
	// Values maps a keyed state name to the shape of its value.
	Values map[string]ValueType
	// ValueWhy says why the other states' value types are not derived.
	ValueWhy string
	// Namespace is the namespace every keyed state and timer of the node is declared with,
	// named like serializer.JavaType: "Long" (a window aggregate's slice end), "VoidNamespace"
	// (every other SQL operator); "" when not derived.
	Namespace string
	// StateNamespaces holds the states declared under another namespace than Namespace (a
	// legacy session window's window mapping is under VoidNamespace, its other states under
	// TimeWindow).
	StateNamespaces map[string]string
	// Complete: Values are every keyed state the node's operator registers, so a savepoint
	// state of another name is one the restored operator never reads (Flink restores it and
	// leaves it unread).
	Complete bool
	// Requires: a state the node cannot do without once the savepoint holds another of its
	// states (Requirement.With); a savepoint with that one and without this one fails the
	// restored job.
	Requires map[string]Requirement
}

// Requirement is StateTypes.Requires' entry: With is the state whose presence demands it, Why
// what Flink does without it.
type Requirement struct {
	With string
	Why  string
}

// NamespaceOf is the namespace the node declares its keyed state name with.
func (st StateTypes) NamespaceOf(name string) string {
	if ns, ok := st.StateNamespaces[name]; ok {
		return ns
	}
	return st.Namespace
}

// keyFieldPaths are the JSON paths of each node's key field indices (input 0).
var keyFieldPaths = map[string]string{
	"stream-exec-group-aggregate":             "grouping",
	"stream-exec-global-group-aggregate":      "grouping",
	"stream-exec-incremental-group-aggregate": "partialAggGrouping",
	"stream-exec-window-aggregate":            "grouping",
	"stream-exec-group-window-aggregate":      "grouping",
	"stream-exec-global-window-aggregate":     "grouping",
	"stream-exec-join":                        "joinSpec.leftKeys",
	"stream-exec-interval-join":               "intervalJoinSpec.joinSpec.leftKeys",
	"stream-exec-rank":                        "partition.fields",
	"stream-exec-sort-limit":                  "partition.fields",
	"stream-exec-deduplicate":                 "uniqueKeys",
	"stream-exec-changelog-normalize":         "uniqueKeys",
	"stream-exec-over-aggregate":              "overSpec.partition.fields",
}

// ValueType is the shape of a keyed state's value as the operator declares it, named the way
// serializer.JavaType names a snapshot: "Row" (a RowDataSerializer with the field types in Row),
// "Map", "List", "Tuple2" (Elems: key and value, element, fields) or a scalar: "Long",
// "Integer", "Boolean".
type ValueType struct {
	Kind  string
	Row   []string
	Elems []ValueType
	// Comparator is a "SortedMap"'s comparator, as serializer.SortedMapComparator renders it.
	Comparator string
}

// RowOf is a RowData value of the given field types.
func RowOf(fields []string) ValueType { return ValueType{Kind: "Row", Row: fields} }

func shape(kind string, elems ...ValueType) ValueType { return ValueType{Kind: kind, Elems: elems} }

// String renders the shape: Map<Row<BIGINT, INT>, Tuple2<Integer, Integer>>; a field without a
// SQL string shows as "?".
func (v ValueType) String() string {
	var parts []string
	if v.Kind == "Row" {
		for _, f := range v.Row {
			if f == "" {
				f = "?"
			}
			parts = append(parts, f)
		}
	} else if len(v.Elems) == 0 {
		return v.Kind
	}
	for _, e := range v.Elems {
		parts = append(parts, e.String())
	}
	return v.Kind + "<" + strings.Join(parts, ", ") + ">"
}

// StateTypes derives the node's key and value types from the plan.
func (n *Node) StateTypes() StateTypes {
	st := StateTypes{Values: map[string]ValueType{}}
	st.Key, st.KeyWhy = n.keyTypes()
	why := ""
	switch n.Name {
	case "stream-exec-group-aggregate", "stream-exec-global-group-aggregate", "stream-exec-window-aggregate", "stream-exec-global-window-aggregate":
		why = n.aggregateNodeStates(st.Values)
		if why == "" && gjson.Get(n.Raw, "windowing.window.type").Str == "SessionWindow" {
			n.mergingWindowStates(&st)
		}
	case "stream-exec-incremental-group-aggregate":
		why = n.incrementalStates(st.Values)
	case "stream-exec-join":
		why = n.joinRecordTypes(st.Values)
	case "stream-exec-interval-join":
		why = n.intervalJoinTypes(st.Values)
	case "stream-exec-rank":
		why = n.rankTypes(st.Values)
		st.Complete = why == "" && gjson.Get(n.Raw, "rankRange.type").Str == "Constant"
	case "stream-exec-deduplicate":
		why = n.dedupTypes(st.Values)
		st.Complete = why == "" && gjson.Get(n.Raw, `configuration.table\.exec\.mini-batch\.enabled`).Str == "false"
	case "stream-exec-over-aggregate":
		why = n.overTypes(st.Values)
	case "stream-exec-group-window-aggregate":
		why = n.groupWindowTypes(&st)
	case "stream-exec-changelog-normalize":
		var cols []column
		if cols, why = n.inputColumns(0); why == "" {
			st.Values["deduplicate-state"] = RowOf(columnTypes(cols))
		}
	default:
		why = fmt.Sprintf("statecraft does not derive the value types of %s's states", n.Name)
	}
	st.Namespace = n.namespace()
	st.ValueWhy = why
	if why == "" {
		st.ValueWhy = fmt.Sprintf("statecraft derives only %s of %s's states", strings.Join(sortedKeys(st.Values), ", "), n.Name)
	}
	return st
}

// namespace: window aggregates keep each window's state under its slice end (a Long) for the
// windows that slice (tumbling, hopping, cumulating); session windows and the legacy group
// windows keep TimeWindow namespaces (windowNamespace, statetypes_nodes.go). Every other SQL
// operator uses VoidNamespace.
func (n *Node) namespace() string {
	if !strings.HasSuffix(n.Name, "window-aggregate") {
		return "VoidNamespace"
	}
	return n.windowNamespace()
}

func sortedKeys(m map[string]ValueType) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// columnTypes are the SQL types of cols, "" for a type without a SQL string (never compared).
func columnTypes(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		if !strings.Contains(c.Type, "*") {
			out[i] = c.Type
		}
	}
	return out
}

// timeAttributeType renders a time attribute column's JSON type the way a savepoint's
// RowDataSerializer snapshot renders (serializer.LogicalTypeSQL): a time attribute is a
// TimestampType or LocalZonedTimestampType whose kind (ROWTIME, PROCTIME) Flink's
// LogicalType.equals leaves out, so it restores like the plain timestamp of that precision and
// nullability:
//
//	{"type": "TIMESTAMP_WITHOUT_TIME_ZONE", "precision": 3, "kind": "ROWTIME"}      -> TIMESTAMP(3)
//	{"type": "TIMESTAMP_WITH_LOCAL_TIME_ZONE", "nullable": false, "precision": 3,
//	 "kind": "PROCTIME"}                           -> TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL
//
// "" for any other JSON type (never compared).
func timeAttributeType(ft gjson.Result) string {
	p := ft.Get("precision")
	if !ft.IsObject() || p.Type != gjson.Number {
		return ""
	}
	var t string
	switch ft.Get("type").Str {
	case "TIMESTAMP_WITHOUT_TIME_ZONE":
		t = fmt.Sprintf("TIMESTAMP(%d)", p.Int())
	case "TIMESTAMP_WITH_LOCAL_TIME_ZONE":
		t = fmt.Sprintf("TIMESTAMP(%d) WITH LOCAL TIME ZONE", p.Int())
	default:
		return ""
	}
	if n := ft.Get("nullable"); n.Exists() && !n.Bool() {
		t += " NOT NULL"
	}
	return t
}

// joinRecordTypes: a regular join without upsert keys keeps each side's input rows with their
// multiplicity (Integer) on an inner side, with multiplicity and number of matches
// (Tuple2<Integer, Integer>) on an outer side. With upsert keys Flink picks other layouts,
// which statecraft does not derive.
func (n *Node) joinRecordTypes(vals map[string]ValueType) string {
	if gjson.Get(n.Raw, "leftUpsertKeys").Exists() || gjson.Get(n.Raw, "rightUpsertKeys").Exists() {
		return "the join's inputs have upsert keys: statecraft derives its record states only without them"
	}
	jt := gjson.Get(n.Raw, "joinSpec.joinType").Str
	outer := map[string][2]bool{"INNER": {false, false}, "LEFT": {true, false}, "RIGHT": {false, true}, "FULL": {true, true}}
	o, ok := outer[jt]
	if !ok {
		return fmt.Sprintf("joinSpec.joinType %q: statecraft derives record states of inner and outer joins only", jt)
	}
	for side, name := range []string{"left-records", "right-records"} {
		cols, why := n.inputColumns(side)
		if why != "" {
			return why
		}
		count := ValueType{Kind: "Integer"}
		if o[side] {
			count = shape("Tuple2", count, count)
		}
		vals[name] = shape("Map", RowOf(columnTypes(cols)), count)
	}
	return ""
}

// intervalJoinTypes: each side buffers rows by timestamp with an "emitted" flag, and keeps its
// next cleanup time.
func (n *Node) intervalJoinTypes(vals map[string]ValueType) string {
	for side, name := range []string{"Left", "Right"} {
		cols, why := n.inputColumns(side)
		if why != "" {
			return why
		}
		long := ValueType{Kind: "Long"}
		vals["IntervalJoin"+name+"Cache"] = shape("Map", long, shape("List", shape("Tuple2", RowOf(columnTypes(cols)), ValueType{Kind: "Boolean"})))
		vals["IntervalJoin"+name+"TimerState"] = long
	}
	return ""
}

// rankTypes: the append-only Top-N (strategy AppendFast) keeps the input rows per sort key;
// over an updating input (strategy Retract) it keeps them under "data-state" and counts the rows
// per sort key in a sorted map whose comparator (sort key positions, types, orders) takes part
// in the restore check. Flink picks the function as StreamExecRank does, first match wins:
//
//	strategy     rank range / sort key            function                  state
//	AppendFast   one ascending PROCTIME column    AppendOnlyFirstNFunction  counterState  Integer
//	AppendFast,  Constant 1..1 (Top-1)            FastTop1Function          Top1-Rank-State Row<input>
//	UpdateFast
//	AppendFast   any other                        AppendOnlyTopNFunction    data-state-with-append
//	UpdateFast   any other                        UpdatableTopNFunction     data-state-with-update
//	Retract      any (a Top-1 too)                RetractableTopNFunction   data-state, sorted-map
//
// Whether the row number is emitted (outputRowNumber) changes none of them. Checked against
// testdata/upgrades/types-savepoints/ranks (one job of each).
func (n *Node) rankTypes(vals map[string]ValueType) string {
	strategy := gjson.Get(n.Raw, "rankStrategy.type").Str
	if strategy != "AppendFast" && strategy != "Retract" && strategy != "UpdateFast" {
		return fmt.Sprintf("rankStrategy %q: statecraft derives the state of the AppendFast, UpdateFast and Retract Top-N only", strategy)
	}
	if strategy == "AppendFast" && n.firstN() {
		vals["counterState"] = ValueType{Kind: "Integer"}
		return ""
	}
	cols, why := n.inputColumns(0)
	if why != "" {
		return why
	}
	types := columnTypes(cols)
	if r := gjson.Get(n.Raw, "rankRange"); strategy != "Retract" && r.Get("type").Str == "Constant" && r.Get("start").Int() == 1 && r.Get("end").Int() == 1 {
		vals["Top1-Rank-State"] = RowOf(types)
		return ""
	}
	if strategy == "UpdateFast" {
		return n.updateFastRankTypes(vals, types)
	}
	var sortKey, pos, asc, nullsLast []string
	for k, f := range gjson.Get(n.Raw, "orderBy.fields").Array() {
		i := int(f.Get("index").Int())
		if i < 0 || i >= len(types) || types[i] == "" {
			return fmt.Sprintf("%s.orderBy: field %d is not a column of the input statecraft reads", n.Path(), i)
		}
		sortKey = append(sortKey, types[i])
		pos = append(pos, fmt.Sprint(k))
		asc = append(asc, fmt.Sprint(f.Get("isAscending").Bool()))
		nullsLast = append(nullsLast, fmt.Sprint(f.Get("nullIsLast").Bool()))
	}
	rows := shape("Map", RowOf(sortKey), shape("List", RowOf(types)))
	if strategy == "AppendFast" {
		vals["data-state-with-append"] = rows
		return ""
	}
	vals["data-state"] = rows
	list := func(x []string) string { return "[" + strings.Join(x, ", ") + "]" }
	sorted := shape("SortedMap", RowOf(sortKey), ValueType{Kind: "Long"})
	sorted.Comparator = fmt.Sprintf("positions %s types %s ascending %s nullsLast %s", list(pos), list(sortKey), list(asc), list(nullsLast))
	vals["sorted-map"] = sorted
	return ""
}

// dedupTypes: processing-time deduplication keeps the last row, or only that a first row was
// seen.
func (n *Node) dedupTypes(vals map[string]ValueType) string {
	if gjson.Get(n.Raw, "isRowtime").Bool() {
		cols, why := n.inputColumns(0)
		if why != "" {
			return why
		}
		if gjson.Get(n.Raw, "keepLastRow").Bool() || !gjson.Get(n.Raw, "outputInsertOnly").Bool() {
			return n.rowtimeDedupTypes(vals, cols)
		}
		// Keep first with insert-only output: the first row waits for the watermark, then a
		// flag says it was emitted.
		vals["waiting-to-emit-on-timer"] = RowOf(columnTypes(cols))
		vals["already-emitted-state-boolean"] = ValueType{Kind: "Boolean"}
		return ""
	}
	if !gjson.Get(n.Raw, "keepLastRow").Bool() {
		vals["deduplicate-state"] = ValueType{Kind: "Boolean"}
		return ""
	}
	cols, why := n.inputColumns(0)
	if why != "" {
		return why
	}
	vals["deduplicate-state"] = RowOf(columnTypes(cols))
	return ""
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
				} else {
					c.Type = timeAttributeType(ft)
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

// overTypes: a processing-time over aggregate with a bounded preceding window buffers its input
// rows by arrival time and keeps its accumulators, which retract the rows leaving the window and
// count the input (a COUNT(*) added): ROWS n PRECEDING counts the rows and keeps the oldest
// timestamp, RANGE ... PRECEDING keeps its next cleanup time.
func (n *Node) overTypes(vals map[string]ValueType) string {
	groups := gjson.Get(n.Raw, "overSpec.groups").Array()
	if len(groups) != 1 {
		return fmt.Sprintf("over aggregate with %d window groups: statecraft derives one group's state only", len(groups))
	}
	g := groups[0]
	order := g.Get("orderBy.fields.0.index")
	if g.Get("lowerBound.kind").Str != "BOUNDED_WINDOW" || !order.Exists() {
		return "statecraft derives the over aggregate's state for bounded preceding windows only"
	}
	proctime := false
	for _, e := range n.Inputs {
		if up := n.owner.Node(e.Source); e.Input == 0 && up != nil {
			proctime = gjson.Get(up.Raw, fmt.Sprintf("outputType.fields.%d.fieldType.kind", order.Int())).Str == "PROCTIME"
		}
	}
	if !proctime {
		return "statecraft derives the over aggregate's state for processing-time order only"
	}
	cols, why := n.inputColumns(0)
	if why != "" {
		return why
	}
	if why := n.aggregateStates(vals, "accState", "overSpec.groups.0.aggCalls", cols, true, true); why != "" {
		return why
	}
	long := ValueType{Kind: "Long"}
	vals["inputState"] = shape("Map", long, shape("List", RowOf(columnTypes(cols))))
	if g.Get("isRows").Bool() {
		vals["processedCountState"] = long
		vals["smallestTSState"] = long
	} else {
		vals["cleanupTsState"] = long
	}
	return ""
}
