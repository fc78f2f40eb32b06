package plan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/ttl"
)

// Selector picks state entries of a plan. Exactly one of its forms is set.
//
//	all                 every state entry
//	5   node:5          every state of node 5
//	5:leftState  5:0    one state of node 5, by name or by index
//	type:stream-exec-join, type:join, type:stream-exec-join_1
//	                    every state of nodes of that exec node type (with or without the
//	                    version suffix and the "stream-exec-" prefix)
//	state:leftState     every state entry with that name, in any node
type Selector struct {
	Text string // as the user wrote it, for messages

	All       bool
	HasNode   bool
	Node      int
	StateName string // with HasNode: one state by name
	StateIdx  int    // with HasNode: one state by index; -1 when not given
	Type      string
	State     string
}

// ParseSelector reads the selector forms listed on Selector.
func ParseSelector(s string) (Selector, error) {
	sel := Selector{Text: s, StateIdx: -1}
	t := strings.TrimSpace(s)
	switch {
	case t == "":
		return sel, fmt.Errorf("empty selector")
	case t == "all" || t == "*":
		sel.All = true
		return sel, nil
	case strings.HasPrefix(t, "type:"):
		sel.Type = strings.TrimSpace(t[len("type:"):])
		if sel.Type == "" {
			return sel, fmt.Errorf("selector %q: no type after type:", s)
		}
		return sel, nil
	case strings.HasPrefix(t, "state:"):
		sel.State = strings.TrimSpace(t[len("state:"):])
		if sel.State == "" {
			return sel, fmt.Errorf("selector %q: no state name after state:", s)
		}
		return sel, nil
	}
	t = strings.TrimPrefix(t, "node:")
	return ParseNodeSelector(t, s)
}

// ParseNodeSelector reads "5", "5:leftState" or "5:0" (the --node flag's value).
func ParseNodeSelector(t, orig string) (Selector, error) {
	sel := Selector{Text: orig, StateIdx: -1, HasNode: true}
	id, rest, hasState := strings.Cut(t, ":")
	n, err := strconv.Atoi(strings.TrimSpace(id))
	if err != nil {
		return sel, fmt.Errorf("selector %q: want a node id (5), a node state (5:leftState or 5:0), type:TYPE, state:NAME or all", orig)
	}
	sel.Node = n
	if hasState {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return sel, fmt.Errorf("selector %q: no state after the colon", orig)
		}
		if i, err := strconv.Atoi(rest); err == nil {
			sel.StateIdx = i
		} else {
			sel.StateName = rest
		}
	}
	return sel, nil
}

// typeMatches reports whether a node type matches a --type value: exact ("stream-exec-join_1"),
// without version ("stream-exec-join"), or without the "stream-exec-" prefix ("join").
func typeMatches(n *Node, want string) bool {
	w := strings.ToLower(want)
	return n.Type == w || n.Name == w || n.Name == "stream-exec-"+w || n.Type == "stream-exec-"+w
}

// Select returns the state entries sel picks, in file order. A selector that picks nothing, or
// that names a node whose TTL cannot be set, is an error that says what is available.
func (p *Plan) Select(sel Selector) ([]*StateEntry, error) {
	var out []*StateEntry
	switch {
	case !p.HasAnyState() && !sel.HasNode && sel.Type == "":
		return nil, fmt.Errorf("selector %q: nothing to set: %s", sel.Text, p.NoStateNote())
	case sel.All:
		out = p.States()
	case sel.HasNode:
		n := p.byID[sel.Node]
		if n == nil {
			return nil, fmt.Errorf("selector %q: node %d does not exist; nodes with TTL state: %s", sel.Text, sel.Node, p.availableNodes())
		}
		if c, why := n.Classify(); c != TTLConfigurable {
			if c == Stateless {
				why = "it keeps no TTL-governed state"
			}
			return nil, fmt.Errorf("selector %q: node %d (%s) has no per-operator TTL: %s; nodes with TTL state: %s", sel.Text, n.ID, n.Type, why, p.availableNodes())
		}
		for _, s := range n.State {
			switch {
			case sel.StateName != "" && s.Name != sel.StateName:
			case sel.StateIdx >= 0 && s.Index != sel.StateIdx:
			default:
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("selector %q: node %d (%s) has no such state; its states: %s", sel.Text, n.ID, n.Type, statesOf(n))
		}
	case sel.Type != "":
		var refused []string
		for _, n := range p.Nodes {
			if !typeMatches(n, sel.Type) {
				continue
			}
			if c, why := n.Classify(); c != TTLConfigurable {
				if c == StatefulNoTTL {
					refused = append(refused, fmt.Sprintf("node %d (%s): %s", n.ID, n.Type, why))
				}
				continue
			}
			out = append(out, n.State...)
		}
		if len(out) == 0 {
			if len(refused) > 0 {
				return nil, fmt.Errorf("selector %q: no per-operator TTL for this type: %s", sel.Text, strings.Join(refused, "; "))
			}
			if !p.HasAnyState() {
				return nil, fmt.Errorf("selector %q: nothing to set: %s", sel.Text, p.NoStateNote())
			}
			return nil, fmt.Errorf("selector %q: no node of that type has TTL state; types with TTL state: %s", sel.Text, p.availableTypes())
		}
	case sel.State != "":
		for _, s := range p.States() {
			if s.Name == sel.State {
				out = append(out, s)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("selector %q: no state is named %q; state names in this plan: %s", sel.Text, sel.State, p.availableNames())
		}
	default:
		return nil, fmt.Errorf("selector %q selects nothing", sel.Text)
	}
	return out, nil
}

func statesOf(n *Node) string {
	var parts []string
	for _, s := range n.State {
		parts = append(parts, fmt.Sprintf("%d:%s", s.Index, s.Name))
	}
	return strings.Join(parts, ", ")
}

func (p *Plan) availableNodes() string {
	var parts []string
	for _, n := range p.Nodes {
		if n.HasState {
			parts = append(parts, fmt.Sprintf("%d (%s: %s)", n.ID, n.Type, statesOf(n)))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	if len(parts) > 20 {
		parts = append(parts[:20], fmt.Sprintf("... %d more (see 'statecraft plan ttl list')", len(parts)-20))
	}
	return strings.Join(parts, ", ")
}

func (p *Plan) availableTypes() string {
	seen := map[string]bool{}
	var out []string
	for _, n := range p.Nodes {
		if n.HasState && !seen[n.Name] {
			seen[n.Name] = true
			out = append(out, n.Name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func (p *Plan) availableNames() string {
	seen := map[string]bool{}
	var out []string
	for _, s := range p.States() {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Change sets one state entry's TTL.
type Change struct {
	Entry *StateEntry
	TTL   ttl.TTL
}

// Edit is a change as applied: the entry, its old and new "ttl" text. Unchanged entries (the
// new TTL equals what the old text means) are left byte for byte as they were.
type Edit struct {
	Entry   *StateEntry
	Old     string
	New     string
	Changed bool
}

// Apply returns a copy of the plan's bytes with the changes spliced in: each changed entry's
// "ttl" string token is replaced by the new TTL in Flink's text form (ttl.TTL.Text); no other
// byte differs. When several changes name the same entry, the last one wins. An entry whose
// current text already means the new TTL keeps its text.
func (p *Plan) Apply(changes []Change) ([]byte, []Edit, error) {
	last := map[*StateEntry]int{}
	for i, c := range changes {
		if c.Entry == nil || c.Entry.Node == nil || c.Entry.Node.owner != p {
			return nil, nil, fmt.Errorf("change %d does not name a state entry of %s", i, p.File)
		}
		if !c.Entry.HasTTLSpan() {
			return nil, nil, fmt.Errorf("%s: %s: no \"ttl\" string to edit", p.File, c.Entry.Path())
		}
		if c.TTL < 0 {
			return nil, nil, fmt.Errorf("%s: %s: negative TTL", p.File, c.Entry.Path())
		}
		last[c.Entry] = i
	}
	var edits []Edit
	for i, c := range changes {
		if last[c.Entry] != i {
			continue
		}
		e := Edit{Entry: c.Entry, Old: c.Entry.TTLText, New: c.TTL.Text()}
		e.Changed = c.Entry.TTLErr != nil || c.Entry.TTL != c.TTL || c.Entry.TTLDur.SubMillis()
		if !e.Changed {
			e.New = e.Old
		}
		edits = append(edits, e)
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].Entry.ttlStart < edits[j].Entry.ttlStart })
	out := make([]byte, 0, len(p.Raw)+16*len(edits))
	at := 0
	for _, e := range edits {
		if !e.Changed {
			continue
		}
		out = append(out, p.Raw[at:e.Entry.ttlStart]...)
		out = strconv.AppendQuote(out, e.New) // ASCII digits, a space and a unit: no escapes
		at = e.Entry.ttlEnd
	}
	out = append(out, p.Raw[at:]...)
	return out, edits, nil
}

// Edited returns the model of the plan Apply produced (out, from these edits) without parsing
// it again: nodes, edges and state entries are copied, the edited entries carry their new TTL,
// and every byte offset and raw text is moved to where it now lies in out. It equals
// Parse(p.File, out) (TestEditedEqualsReparse), at a fraction of the cost.
func (p *Plan) Edited(out []byte, edits []Edit) *Plan {
	type shift struct{ at, delta int } // bytes at or after 'at' in p.Raw move by delta
	var shifts []shift
	newTTL := map[*StateEntry]Edit{}
	total := 0
	for _, e := range edits { // sorted by position by Apply
		if !e.Changed {
			continue
		}
		newTTL[e.Entry] = e
		total += len(strconv.Quote(e.New)) - (e.Entry.ttlEnd - e.Entry.ttlStart)
		shifts = append(shifts, shift{e.Entry.ttlEnd, total})
	}
	// moved maps an offset of p.Raw to out: the sum of deltas of edits that end at or before it.
	moved := func(off int) int {
		i := sort.Search(len(shifts), func(i int) bool { return shifts[i].at > off })
		if i == 0 {
			return off
		}
		return off + shifts[i-1].delta
	}
	q := &Plan{File: p.File, Raw: out, FlinkVersion: p.FlinkVersion, Problems: p.Problems,
		byID: make(map[int]*Node, len(p.byID)), anyState: p.anyState}
	nodeOf := make(map[*Node]*Node, len(p.Nodes))
	for _, n := range p.Nodes {
		m := *n
		m.owner = q
		m.Offset = moved(n.Offset)
		m.Raw = string(out[m.Offset:moved(n.Offset+len(n.Raw))])
		m.Inputs, m.Outputs = nil, nil
		m.State = make([]*StateEntry, len(n.State))
		for i, s := range n.State {
			c := *s
			c.Node = &m
			if e, ok := newTTL[s]; ok {
				c.TTLText = e.New
				c.TTL, c.TTLDur, c.TTLErr = ttl.ParseFlinkTTL(e.New)
				c.ttlStart = moved(s.ttlStart)
				c.ttlEnd = c.ttlStart + len(strconv.Quote(e.New))
			} else if s.ttlStart >= 0 {
				c.ttlStart, c.ttlEnd = moved(s.ttlStart), moved(s.ttlEnd)
			}
			m.State[i] = &c
		}
		nodeOf[n] = &m
		q.Nodes = append(q.Nodes, &m)
		if p.byID[n.ID] == n {
			q.byID[n.ID] = &m
		}
	}
	for _, e := range p.Edges {
		c := *e
		q.Edges = append(q.Edges, &c)
		t, s := q.byID[c.Target], q.byID[c.Source]
		t.Inputs = append(t.Inputs, &c)
		s.Outputs = append(s.Outputs, &c)
	}
	return q
}
