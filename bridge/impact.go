package bridge

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/ttl"
)

// TTL impact answers "if I set this TTL now, how much of the savepoint's state is already
// expired?". Flink keeps, in front of each value of a state with TTL, the time (ms) it was last
// written (SQL operators use OnCreateAndWrite), and treats it as expired once
//
//	lastAccess + ttl <= now      (the sum capped at Long.MAX_VALUE; TtlUtils.expired in 2.3.0)
//
// so with the raw timestamps the count is exact for any proposed TTL and time. A state stored
// without TTL (the plan's TTL was 0 when the savepoint was taken: no TTL wrapper in its serializer
// snapshot) has no timestamps: how old its entries are cannot be known from the savepoint.
//
//	plan state entry --node--> state-holding transformation --Bridge--> savepoint operator
//	                                                                        |
//	                       keyed states of that operator (all of them when the node has one
//	                       state entry; the i-th expected name for the i-th entry otherwise)
//	                                                                        |
//	                    each entry: value      = [i64 lastAccess][value]
//	                                list elem  = [i64 lastAccess][element]
//	                                map value  = [bool isNull][i64 lastAccess][value]

// StateImpact is the impact of one proposed TTL on one keyed state of the savepoint.
type StateImpact struct {
	Node      int    `json:"node"`
	Type      string `json:"type"`
	PlanState string `json:"planState"` // the plan's state entry (name)
	UID       string `json:"uid,omitempty"`
	UIDHash   string `json:"uidHash,omitempty"`
	State     string `json:"state,omitempty"` // keyed state name in the savepoint
	Kind      string `json:"kind,omitempty"`
	PlanTTL   string `json:"planTtl"` // the TTL in the plan now
	NewTTL    string `json:"newTtl"`
	NewTTLMs  int64  `json:"newTtlMillis"`
	// Known is false when the state carries no TTL timestamps (or no savepoint operator holds the
	// node's state); Note says why.
	Known bool   `json:"known"`
	Note  string `json:"note,omitempty"`

	Entries      int64 `json:"entries"`
	Bytes        int64 `json:"bytes"` // key + value bytes as stored
	Expired      int64 `json:"expired"`
	ExpiredBytes int64 `json:"expiredBytes"`
	// Timestamps counts TTL timestamps (one per value, list element or map value); Oldest and
	// Newest are their range (0 when none).
	Timestamps        int64 `json:"timestamps"`
	ExpiredTimestamps int64 `json:"expiredTimestamps"`
	Oldest            int64 `json:"oldestMillis,omitempty"`
	Newest            int64 `json:"newestMillis,omitempty"`
}

// Expired reports whether a value last written at ts is expired at now under t, as Flink decides
// it: never for the zero TTL, else ts + ttl <= now with the sum saturating at math.MaxInt64.
func Expired(ts int64, t ttl.TTL, now int64) bool {
	if t.IsNever() {
		return false
	}
	exp := ts + t.Millis()
	if t.Millis() > 0 && exp < ts { // overflow
		exp = math.MaxInt64
	}
	return exp <= now
}

// Impact computes, for every change (a plan state entry and its proposed TTL), what share of the
// savepoint's entries would already be expired at now (ms since the epoch).
func Impact(b *Bridge, sp *savepoint.Savepoint, changes []plan.Change, now int64) ([]StateImpact, error) {
	var out []StateImpact
	for _, ch := range changes {
		e := ch.Entry
		base := StateImpact{Node: e.Node.ID, Type: e.Node.Type, PlanState: e.Name, PlanTTL: e.TTLText,
			NewTTL: ch.TTL.Text(), NewTTLMs: ch.TTL.Millis()}
		n := b.node(e.Node.ID)
		var t *plan.TransformationUID
		if n != nil {
			t = stateHolder(n)
		}
		var o *Operator
		if t != nil {
			o = b.Operator(t)
			base.UID, base.UIDHash = t.UID, t.Hash
		}
		if o == nil || !o.HasState {
			base.Note = "the savepoint holds no state for this node (it would start empty)"
			if t == nil || t.Hash == "" {
				base.Note = "the node's operator has no UID statecraft can compute: not matched to the savepoint"
			}
			out = append(out, base)
			continue
		}
		names := statesOf(e, n, o)
		if len(names) == 0 {
			base.Note = "no keyed state of operator " + operatorLabel(o) + " belongs to this plan state"
			out = append(out, base)
			continue
		}
		rows, err := measure(sp, o, names, ch.TTL, now, base)
		if err != nil {
			return nil, fmt.Errorf("ttl impact: node %d state %s: %w", e.Node.ID, e.Name, err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// node returns the plan node with id, or nil.
func (b *Bridge) node(id int) *plan.NodeUIDs {
	for i := range b.Nodes {
		if b.Nodes[i].ID == id {
			return &b.Nodes[i]
		}
	}
	return nil
}

// statesOf picks the savepoint's keyed states that a plan state entry stands for: every keyed
// state of the operator when the node has a single entry; with several (a join's left and right
// side), the entry's position in Flink's expected names for the node type.
func statesOf(e *plan.StateEntry, n *plan.NodeUIDs, o *Operator) []string {
	if len(e.Node.State) <= 1 {
		return o.KeyedStates
	}
	exp, ok := expectedKeyedStates[n.Node.Name]
	if !ok || len(exp.names) != len(e.Node.State) {
		return nil
	}
	i := e.Index // the plan's "index" is the operator input the state belongs to
	if i < 0 {
		i = e.Pos
	}
	if i >= len(exp.names) {
		return nil
	}
	want := exp.names[i]
	for _, s := range o.KeyedStates {
		if s == want {
			return []string{s}
		}
	}
	return nil
}

// measure reads every entry of the named states of o and counts what is expired at now.
func measure(sp *savepoint.Savepoint, o *Operator, names []string, t ttl.TTL, now int64, base StateImpact) ([]StateImpact, error) {
	subs, closeAll, err := keyed.OpenSubtasks(sp, o.op)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	rows := make(map[string]*StateImpact, len(names))
	for _, n := range names {
		r := base
		r.State = n
		rows[n] = &r
	}
	for _, sub := range subs {
		for _, sd := range sub.Decoder.States {
			if r := rows[sd.Meta.Name]; r != nil {
				r.Kind = sd.Kind
				r.Known = sd.TTL
			}
		}
		err := sub.Entries(func(en *keyed.Entry) error {
			if en.StateID < 0 || en.StateID >= len(sub.Decoder.States) {
				return fmt.Errorf("%s: entry at offset %d names state %d of %d", sub.Name, en.Offset, en.StateID, len(sub.Decoder.States))
			}
			sd := sub.Decoder.States[en.StateID]
			r := rows[sd.Meta.Name]
			if r == nil {
				return nil
			}
			size := int64(len(en.Key) + len(en.Value))
			r.Entries++
			r.Bytes += size
			if !sd.TTL {
				return nil
			}
			stamps, err := ttlStamps(sub.Decoder, en, sd)
			if err != nil {
				return fmt.Errorf("%s: state %s, key group %d, entry at offset %d: %w", sub.Name, sd.Meta.Name, en.KeyGroup, en.Offset, err)
			}
			all := len(stamps) > 0
			for _, ts := range stamps {
				r.Timestamps++
				if r.Oldest == 0 || ts < r.Oldest {
					r.Oldest = ts
				}
				if ts > r.Newest {
					r.Newest = ts
				}
				if Expired(ts, t, now) {
					r.ExpiredTimestamps++
				} else {
					all = false
				}
			}
			// An entry is gone when every value in it is expired (a list keeps its live elements).
			if all {
				r.Expired++
				r.ExpiredBytes += size
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make([]StateImpact, 0, len(names))
	for _, n := range names {
		r := rows[n]
		if !r.Known {
			r.Note = "stored without TTL (no TTL wrapper in the serializer snapshot): entries carry no timestamps, their age cannot be known"
			r.Expired, r.ExpiredBytes = 0, 0
		}
		out = append(out, *r)
	}
	return out, nil
}

// ttlStamps returns the last-access timestamps of one entry. Value-like states hold one in the
// first 8 bytes of the value (big-endian, as Java's DataOutput writes a long); lists and maps are
// decoded by the keyed reader, which knows where each element's timestamp sits.
func ttlStamps(d *keyed.Decoder, en *keyed.Entry, sd *keyed.StateDecoder) ([]int64, error) {
	switch sd.Kind {
	case "value", "reducing", "aggregating":
		if len(en.Value) < 8 {
			return nil, fmt.Errorf("TTL value of %d bytes: want at least the 8-byte timestamp", len(en.Value))
		}
		return []int64{int64(binary.BigEndian.Uint64(en.Value))}, nil
	case "map":
		// [bool isNull][i64 lastAccess][value]: a null user value carries no timestamp.
		if len(en.Value) >= 1 && en.Value[0] != 0 {
			return nil, nil
		}
		if len(en.Value) < 9 {
			return nil, fmt.Errorf("TTL map value of %d bytes: want the null flag and the 8-byte timestamp", len(en.Value))
		}
		return []int64{int64(binary.BigEndian.Uint64(en.Value[1:]))}, nil
	}
	// A list's elements have no lengths: the keyed reader's codecs find each one's timestamp.
	rec, err := d.Decode(en)
	if err != nil {
		return nil, err
	}
	switch v := rec.TTL.(type) {
	case int64:
		return []int64{v}, nil
	case []int64:
		return v, nil
	case nil:
		return nil, nil // a state without TTL: measure does not ask (null map values return above)
	}
	return nil, fmt.Errorf("TTL timestamp of type %T", rec.TTL)
}
