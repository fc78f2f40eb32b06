package plan

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// State types of the exec nodes added after the first set (statetypes.go), each read from Flink
// 2.3.0's runtime operators and checked against the serializer snapshots of savepoints Flink
// took of them (testdata/upgrades/types-savepoints: top-n-update, dedup-rowtime-last,
// window-session, group-window, count-window, count-window-slide):
//
//	node                          state                      value (TTL wrappers aside)
//	rank (UpdateFast)             data-state-with-update     Map<Row<row key>, Tuple2<Row<input>, Integer>>
//	                                                         (UpdatableTopNFunction: each row by its
//	                                                         unique key, with its inner rank)
//	deduplicate (event time,      deduplicate-state          Row<input> (RowTimeDeduplicateFunction:
//	keep last, or emitting                                   the row kept so far)
//	updates)
//	window-aggregate (window TVF  window-aggs                Row<accumulators>, under TimeWindow
//	SESSION)                      session-window-mapping     Map<TimeWindow, TimeWindow>, under
//	                                                         VoidNamespace (MergingWindowSet: each
//	                                                         merged window's state window)
//	group-window-aggregate        window-aggs                Row<accumulators> (every call retracts
//	(GROUP BY TUMBLE/HOP/SESSION)                            and a COUNT(*) is added when the input
//	                                                         updates), under TimeWindow;
//	                              session-window-mapping     SESSION: as above
//	group-window-aggregate        window-aggs,               Row<accumulators>, Long, under CountWindow;
//	(Table API row-count windows) trigger-count-<size>       (groupWindowTypes)
//	                              {tumble,slide}-count-assigner Long, under VoidNamespace
//
// A merging window (SESSION) looks every window of its state up in session-window-mapping: state
// a non-merging window wrote (window-aggs without a mapping) makes the restored job fail
// (observed: GROUP BY TUMBLE -> SESSION, "NullPointerException: Namespace must not be null"), so
// the mapping is Required alongside window-aggs.

// updateFastRankTypes: the Top-N over an updating input whose sort key moves one way only keeps
// every row by its unique key ("rankStrategy.primaryKeys", fields of the input) with the row
// and its inner rank (UpdatableTopNFunction's RankRow; the sorted buffer is rebuilt on restore).
func (n *Node) updateFastRankTypes(vals map[string]ValueType, types []string) string {
	pk := gjson.Get(n.Raw, "rankStrategy.primaryKeys")
	if !pk.IsArray() || len(pk.Array()) == 0 {
		return fmt.Sprintf("%s.rankStrategy: an UpdateFast strategy without primaryKeys", n.Path())
	}
	var rowKey []string
	for _, f := range pk.Array() {
		i := int(f.Int())
		if f.Type != gjson.Number || i < 0 || i >= len(types) || types[i] == "" {
			return fmt.Sprintf("%s.rankStrategy.primaryKeys: field %s is not a column of the input statecraft reads", n.Path(), f.Raw)
		}
		rowKey = append(rowKey, types[i])
	}
	vals["data-state-with-update"] = shape("Map", RowOf(rowKey), shape("Tuple2", RowOf(types), ValueType{Kind: "Integer"}))
	return ""
}

// rowtimeDedupTypes: event-time deduplication that keeps the last row, or emits updates, keeps
// the row it kept so far (keep first with insert-only output is statetypes.go's dedupTypes).
func (n *Node) rowtimeDedupTypes(vals map[string]ValueType, cols []column) string {
	vals["deduplicate-state"] = RowOf(columnTypes(cols))
	return ""
}

// windowNamespace: the window TVF aggregates that slice keep their state under the slice end
// (Long), session windows under a TimeWindow; the legacy group window aggregate keeps a
// TimeWindow for time windows, a CountWindow for row-count windows.
func (n *Node) windowNamespace() string {
	switch n.Name {
	case "stream-exec-window-aggregate", "stream-exec-global-window-aggregate":
		switch gjson.Get(n.Raw, "windowing.window.type").Str {
		case "TumblingWindow", "HoppingWindow", "CumulativeWindow":
			return "Long"
		case "SessionWindow":
			return "TimeWindow"
		}
	case "stream-exec-group-window-aggregate":
		w := gjson.Get(n.Raw, "window")
		if w.Get("kind").Str == "SESSION" || w.Get("isTimeWindow").Bool() {
			return "TimeWindow"
		}
		if _, _, ok := n.countWindow(); ok {
			return "CountWindow"
		}
	}
	return ""
}

// countWindow: a legacy group window of a number of rows (the Table API's
// Tumble.over(rowInterval(n)), "isTimeWindow": false, "size": n, or Slide.over(rowInterval(n))
// .every(rowInterval(m)), also "slide": m) counts the key's rows in its assigner's state and
// fires a window once `every` rows reached it: the size, for a sliding window too
// (WindowOperatorBuilder.countWindow gives both ElementTriggers.count(size)).
func (n *Node) countWindow() (assigner string, every int64, ok bool) {
	w := gjson.Get(n.Raw, "window")
	if t := w.Get("isTimeWindow"); !t.Exists() || t.Bool() || w.Get("size").Type != gjson.Number {
		return "", 0, false
	}
	switch w.Get("kind").Str {
	case "TUMBLING":
		return "tumble-count-assigner", w.Get("size").Int(), true
	case "SLIDING":
		if w.Get("slide").Type == gjson.Number {
			return "slide-count-assigner", w.Get("size").Int(), true
		}
	}
	return "", 0, false
}

// mergingWindowStates adds a session window's window mapping.
func (n *Node) mergingWindowStates(st *StateTypes) {
	const mapping = "session-window-mapping"
	tw := ValueType{Kind: "TimeWindow"}
	st.Values[mapping] = shape("Map", tw, tw)
	if st.StateNamespaces == nil {
		st.StateNamespaces = map[string]string{}
	}
	st.StateNamespaces[mapping] = "VoidNamespace"
	if st.Requires == nil {
		st.Requires = map[string]Requirement{}
	}
	st.Requires[mapping] = Requirement{With: "window-aggs",
		Why: "the savepoint's windows were not written by a merging (session) window: Flink finds no window mapping for them and the job fails (NullPointerException: Namespace must not be null)"}
}

// groupWindowTypes: the legacy group window aggregate (WindowOperator) keeps its accumulators
// per window; every call retracts when the input updates (needRetraction), which also adds a
// COUNT(*). A session window adds its window mapping, a row-count window its counters:
//
//	state                    value               namespace
//	window-aggs              Row<accumulators>   CountWindow (the window's number, a long)
//	trigger-count-<size>     Long                CountWindow (the window's rows since it fired;
//	                                             the size, sliding windows too)
//	tumble-count-assigner,   Long                VoidNamespace (the key's rows so far)
//	slide-count-assigner
//
// "previous-aggs" (early or late firing) is not derived either: Flink keeps it when the job runs
// with table.exec.emit.early-fire/late-fire enabled, which the compiled plan does not record
// (StreamExecGroupWindowAggregate reads the emit strategy from the job's configuration).
func (n *Node) groupWindowTypes(st *StateTypes) string {
	args, why := n.inputColumns(0)
	if why != "" {
		return why
	}
	retract := gjson.Get(n.Raw, "needRetraction").Bool()
	if why := n.aggregateStates(st.Values, "window-aggs", "aggCalls", args, retract, retract); why != "" {
		return why
	}
	if gjson.Get(n.Raw, "window.kind").Str == "SESSION" {
		n.mergingWindowStates(st)
	}
	if assigner, every, ok := n.countWindow(); ok {
		// Count{Tumbling,Sliding}WindowAssigner counts the key's rows (under VoidNamespace)
		// to number its windows; the count trigger (ElementTriggers.CountElement) counts each
		// window's.
		long := ValueType{Kind: "Long"}
		st.Values[assigner] = long
		st.Values[fmt.Sprintf("trigger-count-%d", every)] = long
		if st.StateNamespaces == nil {
			st.StateNamespaces = map[string]string{}
		}
		st.StateNamespaces[assigner] = "VoidNamespace"
	}
	return ""
}

// firstN: an append-only Top-N sorted by one processing-time column ascending keeps only a
// counter (AppendOnlyFirstNFunction), not the rows.
func (n *Node) firstN() bool {
	fields := gjson.Get(n.Raw, "orderBy.fields").Array()
	if len(fields) != 1 || !fields[0].Get("isAscending").Bool() {
		return false
	}
	for _, e := range n.Inputs {
		if up := n.owner.Node(e.Source); e.Input == 0 && up != nil {
			return gjson.Get(up.Raw, fmt.Sprintf("outputType.fields.%d.fieldType.kind", fields[0].Get("index").Int())).Str == "PROCTIME"
		}
	}
	return false
}
