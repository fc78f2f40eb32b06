package plan

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/ttl"
)

// Severity of a finding. See the package documentation for what is an error and what a warning.
type Severity int

const (
	Warning Severity = iota + 1
	Error
)

func (s Severity) String() string {
	if s == Error {
		return "error"
	}
	return "warning"
}

// MarshalJSON writes "error" or "warning".
func (s Severity) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// UnmarshalJSON reads "error" or "warning".
func (s *Severity) UnmarshalJSON(b []byte) error {
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v {
	case "error":
		*s = Error
	case "warning":
		*s = Warning
	default:
		return fmt.Errorf("severity %q is neither error nor warning", v)
	}
	return nil
}

// StateRef names a state entry in a finding.
type StateRef struct {
	Node   int    `json:"node"`
	Type   string `json:"type"`
	Index  int    `json:"index"`
	Name   string `json:"name"`
	TTL    string `json:"ttl"`
	Millis int64  `json:"ttlMillis"`
}

func refOf(s *StateEntry) *StateRef {
	return &StateRef{Node: s.Node.ID, Type: s.Node.Type, Index: s.Index, Name: s.Name, TTL: s.TTLText, Millis: s.TTL.Millis()}
}

// Finding is one problem found in a plan.
type Finding struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`           // stable identifier, e.g. "ttl-order"
	Path     string   `json:"path,omitempty"` // where in the plan, e.g. nodes[id=7].state.0.ttl (nodes.4 when the node has no usable id)
	Message  string   `json:"message"`

	// For "ttl-order": the upstream state that outlives the downstream one, the route of
	// node ids between them (upstream first), and the smallest edit that fixes it.
	Upstream   *StateRef `json:"upstream,omitempty"`
	Downstream *StateRef `json:"downstream,omitempty"`
	Route      []int     `json:"route,omitempty"`
	Fix        string    `json:"fix,omitempty"`
}

// Report is the result of Validate.
type Report struct {
	File     string    `json:"file"`
	Findings []Finding `json:"findings"`
}

// Count returns the number of findings of severity s.
func (r *Report) Count(s Severity) int {
	c := 0
	for _, f := range r.Findings {
		if f.Severity == s {
			c++
		}
	}
	return c
}

// Validate checks structure, state entries and the TTL ordering rule.
func (p *Plan) Validate() *Report {
	r := &Report{File: p.File, Findings: []Finding{}}
	add := func(f Finding) { r.Findings = append(r.Findings, f) }
	r.Findings = append(r.Findings, p.Problems...)

	if len(p.Nodes) == 0 {
		add(Finding{Severity: Error, Code: "no-nodes", Path: "nodes", Message: `the plan has no nodes`})
	}
	if len(p.byID) > 1 && len(p.Edges) == 0 && !hasCode(p.Problems, "no-edges") {
		add(Finding{Severity: Error, Code: "no-edges", Path: "edges", Message: fmt.Sprintf("the plan has %d nodes but no edges", len(p.byID))})
	}
	if _, cycle, ok := p.TopoOrder(); !ok {
		add(Finding{Severity: Error, Code: "cycle", Path: "edges", Route: cycle,
			Message: "the edges form a cycle: " + route(cycle) + " (a compiled plan is a DAG)"})
	}

	for _, n := range p.Nodes {
		if p.byID[n.ID] != n {
			continue // a duplicate id, already reported
		}
		path := n.Path()
		if n.InputProperties >= 0 && n.InputProperties != len(n.Inputs) {
			add(Finding{Severity: Error, Code: "input-count", Path: path + ".inputProperties",
				Message: fmt.Sprintf("node %d (%s) declares %d inputProperties but has %s", n.ID, n.Type, n.InputProperties, english.Count(len(n.Inputs), "incoming edge"))})
		}
		if !n.HasState {
			continue
		}
		inputs := n.InputProperties
		if inputs < 0 {
			inputs = len(n.Inputs) // 2.2+ leaves out empty inputProperties: count edges
		}
		if len(n.State) != inputs {
			add(Finding{Severity: Error, Code: "state-count", Path: path + ".state",
				Message: fmt.Sprintf("node %d (%s) has %s for %s; Flink wants exactly one per input", n.ID, n.Type, english.Count(len(n.State), "state entry"), english.Count(inputs, "input"))})
		}
		seen := map[int]int{}
		for _, s := range n.State {
			if s.Index < 0 {
				continue // already a parse problem
			}
			if prev, dup := seen[s.Index]; dup {
				add(Finding{Severity: Error, Code: "state-index", Path: s.Path() + ".index",
					Message: fmt.Sprintf("node %d: state index %d appears twice (%s.%d and %s)", n.ID, s.Index, path+".state", prev, s.Path())})
				continue
			}
			seen[s.Index] = s.Pos
			if s.Index >= len(n.State) || s.Index >= inputs {
				add(Finding{Severity: Error, Code: "state-index", Path: s.Path() + ".index",
					Message: fmt.Sprintf("node %d: state index %d is out of range; indexes must be 0..%d", n.ID, s.Index, max(len(n.State), inputs)-1)})
			}
		}
		for _, s := range n.State {
			if s.TTLErr != nil {
				if s.HasTTLSpan() { // a missing or mistyped ttl is already a parse problem
					add(Finding{Severity: Error, Code: "ttl-syntax", Path: s.Path() + ".ttl",
						Message: fmt.Sprintf("node %d state %s: %v", n.ID, s.Name, s.TTLErr)})
				}
				continue
			}
			if s.TTLDur.SubMillis() {
				add(Finding{Severity: Warning, Code: "ttl-sub-millisecond", Path: s.Path() + ".ttl",
					Message: fmt.Sprintf("node %d state %s: ttl %q has digits below 1 ms; Flink applies %s (%s)", n.ID, s.Name, s.TTLText, s.TTL.Text(), s.TTL)})
			}
		}
	}
	p.checkOrder(add)
	sort.SliceStable(r.Findings, func(i, j int) bool { return r.Findings[i].Severity > r.Findings[j].Severity })
	return r
}

func hasCode(fs []Finding, code string) bool {
	for _, f := range fs {
		if f.Code == code {
			return true
		}
	}
	return false
}

// route renders node ids as "3 -> 4 -> 5".
func route(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, " -> ")
}

// compactTTL is a TTL in the form users type on the command line (Go style, "never").
func compactTTL(t ttl.TTL) string { return t.String() }

// checkOrder applies the TTL ordering rule: every TTL-carrying state upstream of a state's
// input (through stateless nodes) must expire no later than that state; 0 (never) is the
// largest. One warning per (upstream state, downstream state) pair that breaks it.
func (p *Plan) checkOrder(add func(Finding)) {
	for _, n := range p.Nodes {
		if p.byID[n.ID] != n {
			continue
		}
		for _, s := range n.State {
			if s.TTLErr != nil {
				continue
			}
			type bad struct {
				u     *StateEntry
				route []int
			}
			var bads []bad
			need := s.TTL // the smallest TTL for s that satisfies every upstream state
			for _, hit := range s.StatefulUpstream() {
				for _, u := range hit.Node.State {
					if u.TTLErr != nil || u.TTL.Compare(s.TTL) <= 0 {
						continue
					}
					r := append([]int(nil), hit.Path...)
					bads = append(bads, bad{u, r})
					if u.TTL.Compare(need) > 0 {
						need = u.TTL
					}
				}
			}
			for _, b := range bads {
				u := b.u
				msg := fmt.Sprintf("%s (%s, ttl %s) expires before %s (%s, ttl %s) upstream of it, via %s: "+
					"an update or retraction from node %d can reach a key that node %d has already forgotten",
					s.Label(), n.Type, describeTTL(s.TTL), u.Label(), u.Node.Type, describeTTL(u.TTL), route(b.route), u.Node.ID, n.ID)
				fix := fmt.Sprintf("raise %s to %s (--set %s=%s)", s.Label(), describeTTL(need), s.Label(), compactTTL(need))
				if !s.TTL.IsNever() {
					fix += fmt.Sprintf(", or lower %s to %s (--set %s=%s)", u.Label(), describeTTL(s.TTL), u.Label(), compactTTL(s.TTL))
				}
				add(Finding{Severity: Warning, Code: "ttl-order", Path: s.Path() + ".ttl", Message: msg,
					Upstream: refOf(u), Downstream: refOf(s), Route: b.route, Fix: fix})
			}
		}
	}
}

// describeTTL is "1 h" or "never" (for 0 ms).
func describeTTL(t ttl.TTL) string {
	if t.IsNever() {
		return "never"
	}
	return t.Text()
}
