package bridge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/statecraft/statecraft/plan"
)

// CheckOptions describe the new job beyond its plan.
type CheckOptions struct {
	// MaxParallelism is the new job's explicitly configured max parallelism
	// (pipeline.max-parallelism), 0 when it is not set: then each operator adopts the
	// savepoint's value and no mismatch can fail the restore.
	MaxParallelism int
	// AllowNonRestoredState is Flink's --allowNonRestoredState: state of operators the new job
	// does not have is skipped instead of failing the restore.
	AllowNonRestoredState bool
}

// Severities of check findings.
const (
	SevError   = "error"   // the restore fails
	SevWarning = "warning" // it restores, but state is lost or unread
	SevInfo    = "info"
)

// Finding is one observation of Check.
type Finding struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Node     int    `json:"node,omitempty"` // plan node id, 0 when none
	UID      string `json:"uid,omitempty"`
	UIDHash  string `json:"uidHash,omitempty"`
	Message  string `json:"message"`
}

// NodeState is what a plan node finds in the savepoint.
type NodeState struct {
	ID             int    `json:"id"`
	Type           string `json:"type"`
	Transformation string `json:"transformation"`
	UID            string `json:"uid,omitempty"`
	UIDHash        string `json:"uidHash,omitempty"`
	// Status: "restored" (the savepoint has state for it), "starts-empty" (nothing under its
	// ID: it starts with empty state), "no-uid" (Flink would generate its ID from the job
	// graph, which statecraft cannot reproduce).
	Status   string    `json:"status"`
	State    *Operator `json:"state,omitempty"`
	Expected []string  `json:"expectedStates,omitempty"` // keyed state names its operator uses (Flink 2.3.0)
	// Types are the per-state type verdicts of a restored node with keyed state (types.go).
	Types []TypeVerdict `json:"types,omitempty"`
}

// Report is the result of Check.
type Report struct {
	Nodes     []NodeState `json:"nodes"`
	Unclaimed []*Operator `json:"unclaimed"`
	Findings  []Finding   `json:"findings"`
	// Restores is false when Flink would refuse to restore the savepoint into the plan's job.
	Restores bool `json:"restores"`
	// TypesNotChecked counts restored nodes with a state whose type statecraft could not
	// compare: for those, Restores rests on names and ids only.
	TypesNotChecked int `json:"typesNotChecked"`
}

// Count returns the number of findings of a severity.
func (r *Report) Count(sev string) int {
	n := 0
	for _, f := range r.Findings {
		if f.Severity == sev {
			n++
		}
	}
	return n
}

// expectedKeyedStates are the keyed state names the runtime operators of an exec node register
// in Flink 2.3.0, over all variants of the node (mini-batch, keep-first/last, the rank
// strategies): StateDescriptor names read with javap from flink-table-runtime-2.3.0.jar, and
// names seen in savepoints Flink 2.3.0 wrote for the oracle's catalogue plans. Nodes not listed
// are not checked by name. When open is set the list may be incomplete (aggregates with data
// views such as DISTINCT or LISTAGG add states of their own; sink upsert-materialize strategies
// other than the default were not observed), so an extra name is only information.
var expectedKeyedStates = map[string]struct {
	names []string
	open  bool
}{
	"stream-exec-group-aggregate":         {[]string{"accState"}, true},
	"stream-exec-global-group-aggregate":  {[]string{"accState"}, true},
	"stream-exec-join":                    {[]string{"left-records", "right-records"}, false},
	"stream-exec-deduplicate":             {[]string{"already-emitted-state-boolean", "deduplicate-state", "waiting-to-emit-on-timer"}, false},
	"stream-exec-changelog-normalize":     {[]string{"deduplicate-state"}, false},
	"stream-exec-rank":                    {rankStates, false},
	"stream-exec-limit":                   {rankStates, false},
	"stream-exec-sort-limit":              {rankStates, false},
	"stream-exec-interval-join":           {[]string{"IntervalJoinLeftCache", "IntervalJoinLeftTimerState", "IntervalJoinRightCache", "IntervalJoinRightTimerState"}, false},
	"stream-exec-global-window-aggregate": {[]string{"window-aggs"}, true},
	"stream-exec-sink":                    {[]string{"values"}, true},
	"stream-exec-over-aggregate":          {[]string{"accState", "cleanupTsState", "inputState", "processedCountState", "smallestTSState"}, true},
	"stream-exec-temporal-join":           {[]string{"left", "next-index", "right", "timer"}, true},
}

var rankStates = []string{"Top1-Rank-State", "data-state", "data-state-with-append", "data-state-with-update", "rankEnd", "sorted-map"}

// Check decides whether the savepoint in b would restore into the job of b's plan.
func Check(b *Bridge, opts CheckOptions) *Report {
	r := &Report{Unclaimed: []*Operator{}, Findings: []Finding{}, Nodes: []NodeState{}}
	claimedByNode := map[int]bool{}

	// 1. Every stateful node: what it finds.
	for i := range b.Nodes {
		n := &b.Nodes[i]
		holder := stateHolder(n)
		if holder == nil {
			continue
		}
		ns := NodeState{ID: n.ID, Type: n.Type, Transformation: holder.Transformation, UID: holder.UID, UIDHash: holder.Hash}
		if e, ok := expectedKeyedStates[n.Node.Name]; ok {
			ns.Expected = e.names
		}
		switch op := b.Operator(holder); {
		case holder.Hash == "":
			ns.Status = "no-uid"
			r.add(SevWarning, "no-uid", n.ID, "", "", fmt.Sprintf("node %d (%s): %s gets no UID (%s); Flink derives its ID from the job graph, so statecraft cannot tell whether it finds its state",
				n.ID, n.Type, holder.Transformation, n.NoUID))
		case op == nil || !op.HasState:
			ns.Status = "starts-empty"
			ns.State = op
			r.add(SevInfo, "starts-empty", n.ID, holder.UID, holder.Hash, fmt.Sprintf("node %d (%s): no state under %s (%s): starts empty",
				n.ID, n.Type, holder.UID, holder.Hash))
		default:
			ns.Status = "restored"
			ns.State = op
			claimedByNode[n.ID] = true
			checkNames(r, n, op)
			if hasKeyed(op.op) || op.StateError != "" {
				ns.Types = checkTypes(n.Node, op)
				typeFindings(r, n, op, ns.Types)
			}
		}
		r.Nodes = append(r.Nodes, ns)
	}

	// 2. Operators of stateless nodes that still have state (a connector's source offsets,
	// an async operator's buffer): they restore too.
	for _, m := range b.Matches {
		if claimedByNode[m.Node.ID] || stateHolder(m.Node) == m.Transformation || !m.Operator.HasState {
			continue
		}
		r.Nodes = append(r.Nodes, NodeState{ID: m.Node.ID, Type: m.Node.Type, Transformation: m.Transformation.Transformation,
			UID: m.Transformation.UID, UIDHash: m.Transformation.Hash, Status: "restored", State: m.Operator})
	}
	sort.SliceStable(r.Nodes, func(i, j int) bool { return r.Nodes[i].ID < r.Nodes[j].ID })

	// 3. Max parallelism of every matched operator (Flink checks all of them, with or without
	// state).
	for _, m := range b.Matches {
		o := m.Operator
		if opts.MaxParallelism > 0 && int(o.MaxParallelism) != opts.MaxParallelism {
			r.add(SevError, "max-parallelism", m.Node.ID, m.Transformation.UID, o.Hash, fmt.Sprintf(
				"node %d %s: the savepoint has max parallelism %d, the new job sets %d: Flink refuses the restore (\"Max parallelism mismatch between checkpoint/savepoint state and new program\"); drop the setting or rescale the savepoint's key groups",
				m.Node.ID, m.Transformation.UID, o.MaxParallelism, opts.MaxParallelism))
		}
	}

	// 4. Savepoint operators the plan does not produce.
	for _, o := range b.Unclaimed {
		r.Unclaimed = append(r.Unclaimed, o)
		label := operatorLabel(o)
		switch {
		case !o.HasState:
			r.add(SevInfo, "unclaimed-empty", 0, o.UID, o.Hash, fmt.Sprintf("savepoint operator %s is not in the plan; it holds no state, so Flink skips it", label))
		case opts.AllowNonRestoredState:
			r.add(SevWarning, "dropped", 0, o.UID, o.Hash, fmt.Sprintf("savepoint operator %s (%s) is not in the plan: its state is dropped (non-restored state allowed)%s",
				label, stateSummary(o), hint(b, o)))
		default:
			r.add(SevError, "dropped", 0, o.UID, o.Hash, fmt.Sprintf("savepoint operator %s (%s) is not in the plan: would be dropped: restore fails unless non-restored state is allowed%s",
				label, stateSummary(o), hint(b, o)))
		}
	}
	r.Restores = r.Count(SevError) == 0
	return r
}

func (r *Report) add(sev, code string, node int, uid, hash, msg string) {
	r.Findings = append(r.Findings, Finding{Severity: sev, Code: code, Node: node, UID: uid, UIDHash: hash, Message: msg})
}

// stateHolder is the transformation of n that holds its state, or nil for a stateless node.
func stateHolder(n *plan.NodeUIDs) *plan.TransformationUID {
	for i := range n.Transformations {
		if n.Transformations[i].State {
			return &n.Transformations[i]
		}
	}
	return nil
}

// checkNames compares the keyed state names found with those the node's operator registers.
func checkNames(r *Report, n *plan.NodeUIDs, o *Operator) {
	e, ok := expectedKeyedStates[n.Node.Name]
	if !ok || o.StateError != "" {
		return
	}
	want := map[string]bool{}
	for _, s := range e.names {
		want[s] = true
	}
	// The states whose types the plan implies (a DISTINCT aggregate's views) are its own too.
	for s := range n.Node.StateTypes().Values {
		want[s] = true
	}
	var unknown []string
	for _, s := range o.KeyedStates {
		if !want[s] {
			unknown = append(unknown, s)
		}
	}
	if len(unknown) == 0 {
		return
	}
	sev, what := SevWarning, "its operator does not use them: they are restored but nothing reads them (was the UID reused for another operator?)"
	if e.open {
		sev, what = SevInfo, "the list statecraft knows may be incomplete for this node (data views, other strategies)"
	}
	r.add(sev, "state-names", n.ID, o.UID, o.Hash, fmt.Sprintf("node %d (%s): savepoint state %s not among %s's (%s): %s",
		n.ID, n.Type, strings.Join(unknown, ", "), n.Node.Name, strings.Join(e.names, ", "), what))
}

func operatorLabel(o *Operator) string {
	var parts []string
	if o.UID != "" {
		parts = append(parts, "uid "+o.UID)
	}
	parts = append(parts, "hash "+o.Hash)
	s := strings.Join(parts, ", ")
	if o.Name != "" {
		s = fmt.Sprintf("%q (%s)", o.Name, s)
	}
	return s
}

func stateSummary(o *Operator) string {
	var parts []string
	if len(o.KeyedStates) > 0 {
		parts = append(parts, "keyed: "+strings.Join(o.KeyedStates, ", "))
	}
	if len(o.OperatorStates) > 0 {
		parts = append(parts, "operator state: "+strings.Join(o.OperatorStates, ", "))
	}
	parts = append(parts, fmt.Sprintf("%d bytes", o.Size))
	return strings.Join(parts, "; ")
}

// hint names plan transformations that may be the dropped operator's successor: same
// transformation name (the part after the first "_" of a plan-style UID), stateful, finding no
// state of their own, and declaring state types the dropped state does not contradict (a rename
// cannot help a node whose layout changed). Renumbered node ids change UIDs; `statecraft migrate
// uid` can give the savepoint operator the new UID.
func hint(b *Bridge, o *Operator) string {
	_, name, ok := strings.Cut(o.UID, "_")
	if !ok {
		return ""
	}
	var cands, candUIDs, changed []string
	for i := range b.Nodes {
		t := stateHolder(&b.Nodes[i])
		if t == nil || t.Transformation != name || t.Hash == "" {
			continue
		}
		if op := b.Operator(t); op != nil && op.HasState {
			continue
		}
		if why := incompatibleTypes(b.Nodes[i].Node, o); why != "" {
			changed = append(changed, fmt.Sprintf("node %d (%s)", b.Nodes[i].ID, why))
			continue
		}
		cands = append(cands, fmt.Sprintf("node %d (uid %s)", b.Nodes[i].ID, t.UID))
		candUIDs = append(candUIDs, t.UID)
	}
	switch len(cands) {
	case 0:
		if len(changed) > 0 {
			return "; the same kind of operator in the plan starts empty, but its state types differ from this state's, so a new UID cannot help: " + strings.Join(changed, ", ")
		}
		return ""
	case 1:
		return fmt.Sprintf("; the same kind of operator in the plan starts empty: %s; if it is the same operator renumbered, give the state its UID: statecraft migrate uid SAVEPOINT NEW_SAVEPOINT --rename uid:%s=uid:%s",
			cands[0], o.UID, candUIDs[0])
	}
	return "; the same kind of operator in the plan starts empty: " + strings.Join(cands, ", ") + " (if one is this operator renumbered, statecraft migrate uid can give the state its UID)"
}

// incompatibleTypes says how node n's declared state types contradict operator o's stored ones,
// "" when they do not (or cannot be compared).
func incompatibleTypes(n *plan.Node, o *Operator) string {
	if n == nil || o.metas == nil {
		return ""
	}
	for _, v := range checkTypes(n, o) {
		if v.Verdict == TypesIncompatible {
			return v.State + ": " + v.Detail
		}
	}
	return ""
}
