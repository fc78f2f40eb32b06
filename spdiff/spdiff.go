// Package spdiff compares the state of two savepoints: per operator (matched by operator id) and
// state, the keys only in A, only in B and changed, and what the metadata says differently
// (UIDs, parallelism, max parallelism, serializers).
//
// Entries are compared by what they mean, never by where they are: a keyed entry is identified
// by its state, decoded key, namespace and map key (timers also by their timestamp), so a rescale
// that moves every key to another key group or subtask compares equal, and a retype whose values
// decode to the same numbers compares equal too (the serializer change is reported as metadata).
// Operator-state elements of split and union lists are compared as a multiset per state (a
// rescale redistributes them among subtasks), broadcast state by key (every subtask holds a copy).
//
// The reading is the caller's (statecraft's dump reader); this package only compares what it is
// given, so it has no decoder of its own.
package spdiff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/statecraft/statecraft/statecore/keyed"
)

// Record is one decoded entry of one side.
type Record struct {
	State string
	// Kind is the keyed state kind (value, list, map, reducing, aggregating, timer), or split,
	// union or broadcast for operator state.
	Kind      string
	Key       any
	Namespace any
	UserKey   any
	Timestamp int64 // timers
	Value     any
	TTL       any
}

func (r *Record) operator() bool {
	return r.Kind == "split" || r.Kind == "union" || r.Kind == "broadcast"
}

// Entry is a sample entry of a difference, decoded.
type Entry struct {
	Key       json.RawMessage `json:"key"`
	Namespace json.RawMessage `json:"namespace,omitempty"`
	UserKey   json.RawMessage `json:"userKey,omitempty"`
	Timestamp *int64          `json:"timestamp,omitempty"`
	Old       json.RawMessage `json:"old,omitempty"`
	New       json.RawMessage `json:"new,omitempty"`
}

// StateDiff is the difference of one state.
type StateDiff struct {
	Name     string  `json:"name"`
	Kind     string  `json:"kind"`
	EntriesA int64   `json:"entriesA"`
	EntriesB int64   `json:"entriesB"`
	OnlyA    int64   `json:"onlyInA"`
	OnlyB    int64   `json:"onlyInB"`
	Changed  int64   `json:"changed"`
	OnlyASam []Entry `json:"onlyInASample,omitempty"`
	OnlyBSam []Entry `json:"onlyInBSample,omitempty"`
	ChgSam   []Entry `json:"changedSample,omitempty"`

	a     map[string]string // identity -> value, side A, removed as B matches
	multi map[string]int64  // operator list state: element -> count in A less count in B
}

// Differs says whether the state's entries differ.
func (s *StateDiff) Differs() bool { return s.OnlyA+s.OnlyB+s.Changed > 0 }

// Comparison compares the entries of one operator (or one state of it) on both sides.
type Comparison struct {
	limit  int
	states map[string]*StateDiff
	order  []string
	buf    []byte
}

// NewComparison keeps up to limit sample entries of each kind of difference per state.
func NewComparison(limit int) *Comparison {
	return &Comparison{limit: limit, states: map[string]*StateDiff{}}
}

func (c *Comparison) state(name, kind string) *StateDiff {
	s := c.states[name]
	if s == nil {
		s = &StateDiff{Name: name, Kind: kind, a: map[string]string{}, multi: map[string]int64{}}
		c.states[name] = s
		c.order = append(c.order, name)
	}
	return s
}

// identity is what an entry is matched by; value what is compared once matched. Both are JSON
// arrays, so that they can be shown as they are.
func (c *Comparison) identity(r *Record) (id, val string, err error) {
	b := append(c.buf[:0], '[')
	parts := []any{r.Key, r.Namespace, r.UserKey}
	if r.Kind == "timer" {
		parts = append(parts, r.Timestamp)
	}
	if r.Kind == "split" || r.Kind == "union" {
		parts = []any{r.Value} // the element is its own identity
	}
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = keyed.AppendJSONValue(b, p); err != nil {
			return "", "", fmt.Errorf("state %s: %w", r.State, err)
		}
	}
	id = string(append(b, ']'))
	b = append(b[:0], '[')
	if b, err = keyed.AppendJSONValue(b, r.Value); err != nil {
		return "", "", fmt.Errorf("state %s: value: %w", r.State, err)
	}
	b = append(b, ',')
	if b, err = keyed.AppendJSONValue(b, r.TTL); err != nil {
		return "", "", fmt.Errorf("state %s: ttl: %w", r.State, err)
	}
	val = string(append(b, ']'))
	c.buf = b
	return id, val, nil
}

// Encoded is an entry as a comparison matches it: its state and kind, its identity and its
// value (JSON arrays made by identity). Sorter spills entries in this form.
type Encoded struct {
	State, Kind string
	ID, Val     string
}

// Encode spells r as the comparison matches it, and registers its state, so that states are
// reported in the order they were read even when entries are compared in another order.
func (c *Comparison) Encode(r Record) (Encoded, error) {
	id, val, err := c.identity(&r)
	if err != nil {
		return Encoded{}, err
	}
	c.state(r.State, r.Kind)
	return Encoded{State: r.State, Kind: r.Kind, ID: id, Val: val}, nil
}

// AddA records an entry of side A. All of A must be added before any of B.
func (c *Comparison) AddA(r Record) error {
	e, err := c.Encode(r)
	if err != nil {
		return err
	}
	c.addA(e)
	return nil
}

func (c *Comparison) addA(e Encoded) {
	s := c.state(e.State, e.Kind)
	if e.Kind == "split" || e.Kind == "union" {
		s.EntriesA++
		s.multi[e.ID]++
		return
	}
	if _, dup := s.a[e.ID]; dup && e.Kind == "broadcast" {
		return // the copy of another subtask
	}
	s.EntriesA++
	s.a[e.ID] = e.Val
}

// AddB compares an entry of side B with side A. seenB (nil when B has no broadcast state)
// remembers the broadcast entries of B already counted.
func (c *Comparison) AddB(r Record, seenB map[string]bool) error {
	e, err := c.Encode(r)
	if err != nil {
		return err
	}
	c.addB(e, seenB)
	return nil
}

func (c *Comparison) addB(e Encoded, seenB map[string]bool) {
	s := c.state(e.State, e.Kind)
	if e.Kind == "split" || e.Kind == "union" {
		s.EntriesB++
		s.multi[e.ID]--
		return
	}
	if e.Kind == "broadcast" {
		if seenB[e.State+"\x00"+e.ID] {
			return
		}
		seenB[e.State+"\x00"+e.ID] = true
	}
	s.EntriesB++
	old, ok := s.a[e.ID]
	if !ok {
		s.OnlyB++
		if len(s.OnlyBSam) < c.limit {
			s.OnlyBSam = append(s.OnlyBSam, sampleOf(e.Kind, e.ID, "", e.Val))
		}
		return
	}
	delete(s.a, e.ID)
	if old != e.Val {
		s.Changed++
		if len(s.ChgSam) < c.limit {
			s.ChgSam = append(s.ChgSam, sampleOf(e.Kind, e.ID, old, e.Val))
		}
	}
}

// Settle counts the keyed entries A has and B lacked so far, and forgets them. A caller that
// feeds both sides one key group at a time calls it after each key group (a key lives in one key
// group on both sides when their max parallelism is the same), so that memory holds one key group.
func (c *Comparison) Settle() {
	for _, name := range c.order {
		s := c.states[name]
		if len(s.a) == 0 {
			continue
		}
		left := make([]string, 0, len(s.a))
		for id := range s.a {
			left = append(left, id)
		}
		s.OnlyA += int64(len(left))
		slices.Sort(left) // the sample must not depend on map order
		for _, id := range left[:min(len(left), c.limit-len(s.OnlyASam))] {
			s.OnlyASam = append(s.OnlyASam, sampleOf(s.Kind, id, s.a[id], ""))
		}
		clear(s.a)
	}
}

// Finish settles what is left and returns the states in the order first seen.
func (c *Comparison) Finish() []*StateDiff {
	c.Settle()
	out := make([]*StateDiff, 0, len(c.order))
	for _, name := range c.order {
		s := c.states[name]
		var elems []string
		for id, n := range s.multi {
			if n != 0 {
				elems = append(elems, id)
			}
		}
		slices.Sort(elems)
		for _, id := range elems {
			n := s.multi[id]
			if n > 0 {
				s.OnlyA += n
				if len(s.OnlyASam) < c.limit {
					s.OnlyASam = append(s.OnlyASam, sampleOf(s.Kind, id, "", ""))
				}
			} else {
				s.OnlyB -= n
				if len(s.OnlyBSam) < c.limit {
					s.OnlyBSam = append(s.OnlyBSam, sampleOf(s.Kind, id, "", ""))
				}
			}
		}
		s.a, s.multi = nil, nil
		out = append(out, s)
	}
	return out
}

// sampleOf spells an entry from its identity and values (JSON arrays made by identity).
func sampleOf(kind, id, old, val string) Entry {
	var parts []json.RawMessage
	json.Unmarshal([]byte(id), &parts)
	var e Entry
	if kind == "split" || kind == "union" {
		if len(parts) > 0 {
			e.Old = parts[0]
		}
		return e
	}
	get := func(i int) json.RawMessage {
		if i < len(parts) && string(parts[i]) != "null" {
			return parts[i]
		}
		return nil
	}
	e.Key, e.Namespace, e.UserKey = get(0), get(1), get(2)
	if e.Key == nil {
		e.Key = json.RawMessage("null")
	}
	if kind == "timer" && len(parts) > 3 {
		var ts int64
		json.Unmarshal(parts[3], &ts)
		e.Timestamp = &ts
		return e // a timer has no value
	}
	e.Old, e.New = valueOf(old), valueOf(val)
	return e
}

// valueOf is the value of a [value, ttl] array, with the TTL timestamp when there is one.
func valueOf(v string) json.RawMessage {
	if v == "" {
		return nil
	}
	var parts []json.RawMessage
	if json.Unmarshal([]byte(v), &parts) != nil || len(parts) != 2 {
		return json.RawMessage(v)
	}
	if string(parts[1]) == "null" {
		return parts[0]
	}
	return json.RawMessage(fmt.Sprintf(`{"value":%s,"ttlTimestamp":%s}`, parts[0], parts[1]))
}

// Spell is a one-line rendering of a sample entry for text output.
func (e Entry) Spell() string {
	if e.Key == nil {
		return "element " + string(e.Old) // an operator-state list element
	}
	var b strings.Builder
	b.WriteString("key=")
	b.Write(e.Key)
	if e.Namespace != nil {
		b.WriteString(" namespace=")
		b.Write(e.Namespace)
	}
	if e.UserKey != nil {
		b.WriteString(" userKey=")
		b.Write(e.UserKey)
	}
	if e.Timestamp != nil {
		fmt.Fprintf(&b, " timestamp=%d", *e.Timestamp)
	}
	switch {
	case e.Old != nil && e.New != nil:
		fmt.Fprintf(&b, ": %s -> %s", e.Old, e.New)
	case e.Old != nil:
		fmt.Fprintf(&b, ": %s", e.Old)
	case e.New != nil:
		fmt.Fprintf(&b, ": %s", e.New)
	}
	return b.String()
}
