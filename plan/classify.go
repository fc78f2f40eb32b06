package plan

import (
	"fmt"
	"strconv"
	"strings"
)

// Class says what a node's state is and whether its TTL can be set in the plan.
type Class int

const (
	// Stateless nodes keep no state governed by a TTL (calc, exchange, source, plain sink, ...).
	Stateless Class = iota
	// TTLConfigurable nodes carry a "state" array: their TTL is set per operator in the plan.
	TTLConfigurable
	// StatefulNoTTL nodes keep state but have no per-operator TTL in the plan: window
	// operators, interval join, match, over aggregate, ... (Reason says why), or nodes of a
	// plan compiled before Flink 1.18.
	StatefulNoTTL
)

func (c Class) String() string {
	switch c {
	case TTLConfigurable:
		return "ttl"
	case StatefulNoTTL:
		return "stateful-no-ttl"
	}
	return "stateless"
}

// retentionOnly: Flink 2.3.0's exec nodes for these read table.exec.state.ttl from the
// configuration (checked in flink-table-planner 2.3.0) and write no "state" array.
const retentionOnly = "its state is cleaned with the pipeline-wide table.exec.state.ttl; Flink writes no per-operator TTL for this node in the plan"

// statefulNoTTL lists exec node names (version suffix removed) that keep state without a
// per-operator TTL in the plan, with the reason shown to a user who targets one.
var statefulNoTTL = map[string]string{
	"stream-exec-window-aggregate":              "window state is dropped when the window fires (watermark or processing time), not by a TTL",
	"stream-exec-global-window-aggregate":       "window state is dropped when the window fires (watermark or processing time), not by a TTL",
	"stream-exec-group-window-aggregate":        "window state is dropped when the window fires (watermark or processing time), not by a TTL",
	"stream-exec-python-group-window-aggregate": "window state is dropped when the window fires (watermark or processing time), not by a TTL",
	"stream-exec-window-join":                   "window join state is dropped when the window fires, not by a TTL",
	"stream-exec-window-rank":                   "window rank state is dropped when the window fires, not by a TTL",
	"stream-exec-window-deduplicate":            "window deduplicate state is dropped when the window fires, not by a TTL",
	"stream-exec-interval-join":                 "interval join state is dropped by the time bounds of the join condition, not by a TTL",
	"stream-exec-temporal-join":                 "temporal join state is cleaned by timers (event-time versions) or by the pipeline-wide table.exec.state.ttl; the plan has no per-operator TTL for it",
	"stream-exec-over-aggregate":                "over aggregate state is cleaned by timers from the pipeline-wide table.exec.state.ttl; the plan has no per-operator TTL for it",
	"stream-exec-python-over-aggregate":         "over aggregate state is cleaned by timers from the pipeline-wide table.exec.state.ttl; the plan has no per-operator TTL for it",
	"stream-exec-match":                         "MATCH_RECOGNIZE state is bounded by the pattern (WITHIN) and the watermark, not by a TTL",
	"stream-exec-temporal-sort":                 "a sort on a time attribute buffers rows until the watermark passes them, not by a TTL",
	"stream-exec-sort":                          "a non-temporal sort keeps all rows; its state has no per-operator TTL in the plan",
	"stream-exec-group-table-aggregate":         retentionOnly,
	"stream-exec-python-group-aggregate":        retentionOnly,
	"stream-exec-python-group-table-aggregate":  retentionOnly,
	"stream-exec-process-table-function":        "a process table function's state TTL is declared by the function (its state TTL argument), not in the plan",
	"stream-exec-python-process-table-function": "a process table function's state TTL is declared by the function (its state TTL argument), not in the plan",
}

// flip292 lists the exec nodes that got a "state" array in Flink 1.18 (FLIP-292). In a plan
// compiled earlier they are stateful but their TTL cannot be set per operator. Sinks and lookup
// joins are only stateful in some configurations, so they are not listed.
var flip292 = map[string]bool{
	"stream-exec-changelog-normalize":         true,
	"stream-exec-deduplicate":                 true,
	"stream-exec-global-group-aggregate":      true,
	"stream-exec-group-aggregate":             true,
	"stream-exec-incremental-group-aggregate": true,
	"stream-exec-join":                        true,
	"stream-exec-limit":                       true,
	"stream-exec-rank":                        true,
	"stream-exec-sort-limit":                  true,
}

// PreTTLVersion reports whether v (a "flinkVersion" such as "1.17") predates per-operator
// TTL in plans (Flink 1.18). Unknown versions are not assumed to be old.
func PreTTLVersion(v string) bool {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major == 1 && minor < 18
}

// OldPlanNote explains why a plan compiled before Flink 1.18 has no per-operator TTLs.
const OldPlanNote = `per-operator state TTL needs a plan compiled by Flink 1.18 or later (FLIP-292 added the "state" entries); recompile the query with COMPILE PLAN on Flink 1.18+, or set the pipeline-wide table.exec.state.ttl`

// NoStateNote explains a plan without any "state" array.
func (p *Plan) NoStateNote() string {
	if PreTTLVersion(p.FlinkVersion) {
		return fmt.Sprintf("this plan was compiled by Flink %s and has no \"state\" entries: %s", p.FlinkVersion, OldPlanNote)
	}
	return `no node of this plan carries a "state" array: none of its operators has a per-operator state TTL (window operators, interval joins and the like are cleaned up by time, not by TTL)`
}

// Classify returns the node's class and, for StatefulNoTTL, the reason its TTL cannot be set
// in the plan. The plan decides first: a node with a "state" array is TTL-configurable
// whatever its type, so exec nodes added in later Flink versions are handled.
func (n *Node) Classify() (Class, string) {
	if n.HasState {
		return TTLConfigurable, ""
	}
	if r, ok := statefulNoTTL[n.Name]; ok {
		return StatefulNoTTL, r
	}
	if flip292[n.Name] {
		if n.owner != nil && PreTTLVersion(n.owner.FlinkVersion) {
			return StatefulNoTTL, "this plan (flinkVersion " + n.owner.FlinkVersion + ") has no \"state\" entries: " + OldPlanNote
		}
		return StatefulNoTTL, `this node has no "state" array, so the plan does not say its TTL; the pipeline-wide table.exec.state.ttl applies`
	}
	return Stateless, ""
}

// Stateful reports whether the node keeps state (with or without a configurable TTL).
func (n *Node) Stateful() bool {
	c, _ := n.Classify()
	return c != Stateless
}
