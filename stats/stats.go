// Package stats measures the keyed state of one operator of a savepoint: entries and bytes per
// state, key group and subtask, distinct keys, value sizes and the keys holding the most bytes.
//
// It reads the entries keyed.Subtask.Entries yields and decodes each with the subtask's
// keyed.Decoder (so a damaged entry is refused as `savepoint dump` refuses it); it has no decoder
// of its own.
//
// # What a byte is
//
// Bytes are those of the canonical key-group block (see package keyed), uncompressed:
//
//	block := { i16 stateId  { i32 keyLen | key | i32 valueLen | value }+ }+  i16 0xFFFF
//	         '---- 2 ----'  '--- 4 ---'  'kb'  '---- 4 -----'  'vb'         '-- 2 --'
//
// An entry counts keyLen+valueLen+8 bytes to its state, key group and subtask; each run of a
// state in a block adds 2 (its state id) to that state, and each block adds 2 (the end marker) to
// its key group. So the bytes of an operator's key groups add up to the bytes of its blocks: for
// an uncompressed savepoint, the state files' sizes less their headers. Entries of a native
// RocksDB snapshot have no framing and count their key and value bytes only.
//
// # Memory
//
// A key belongs to one key group, and a subtask yields its key groups one after the other, so
// distinct keys and per-key totals are counted in a map that is emptied at the end of each key
// group: memory is bounded by the largest key group, not the savepoint. The top keys are kept in a
// heap of N per state.
package stats

import (
	"container/heap"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Operator is the measure of one operator's keyed state.
type Operator struct {
	ID             string   `json:"hash"`
	UID            string   `json:"uid,omitempty"`
	Name           string   `json:"name,omitempty"`
	Parallelism    int32    `json:"parallelism"`
	MaxParallelism int32    `json:"maxParallelism"`
	Native         bool     `json:"native,omitempty"` // a native RocksDB snapshot: no block framing
	Entries        int64    `json:"entries"`
	DistinctKeys   int64    `json:"distinctKeys"`
	Bytes          int64    `json:"bytes"`       // sum of the key groups' bytes
	StoredBytes    int64    `json:"storedBytes"` // state streams less their headers, as stored (compressed or not)
	States         []*State `json:"states"`
	KeyGroups      Groups   `json:"keyGroups"`
	Subtasks       Groups   `json:"subtasks"`
}

// State is the measure of one keyed state (timers included).
type State struct {
	Name         string   `json:"name"`
	Kind         string   `json:"kind"`
	Entries      int64    `json:"entries"`
	DistinctKeys int64    `json:"distinctKeys"`
	KeyBytes     int64    `json:"keyBytes"`
	ValueBytes   int64    `json:"valueBytes"`
	FrameBytes   int64    `json:"frameBytes"` // lengths and state ids
	MeanValue    float64  `json:"meanValue"`
	MaxValue     int      `json:"maxValue"`
	Top          []TopKey `json:"topKeys,omitempty"`
	// TTL: the ages of the last-access timestamps at Options.At (TTL states only).
	TTL *TTLAges `json:"ttl,omitempty"`
	// Timers: when the timers fire relative to Options.At (timer states only).
	Timers *TimerSpread `json:"timers,omitempty"`

	top topHeap
	cur map[string]*keyTotal // this key group's keys
}

// Bytes is everything the state occupies in the blocks.
func (s *State) Bytes() int64 { return s.KeyBytes + s.ValueBytes + s.FrameBytes }

// TopKey is one of the keys holding the most bytes of a state: all its entries (every list
// element, map entry and namespace) together.
type TopKey struct {
	Key     json.RawMessage `json:"key"`
	Bytes   int64           `json:"bytes"`
	Entries int64           `json:"entries"`
}

// Group is the entries and bytes of one key group or subtask.
type Group struct {
	Index   int   `json:"index"`
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// Groups are key groups or subtasks, with their skew.
type Groups struct {
	All []Group `json:"all"`
	// Skew is the largest bytes over the mean bytes of All (1 when even, 0 when all are empty).
	Skew float64 `json:"skew"`
}

type keyTotal struct{ bytes, entries int64 }

// Options say what to measure besides sizes.
type Options struct {
	Top int   // keys to keep per state, by bytes
	At  int64 // the time (epoch milliseconds) TTL ages and timer spreads are taken at
}

// Measure reads the keyed state of op and measures it.
func Measure(sp *savepoint.Savepoint, op *metadata.OperatorState, opt Options) (*Operator, error) {
	o := &Operator{ID: op.ID.String(), UID: op.UID, Name: op.Name, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	o.KeyGroups.All = make([]Group, op.MaxParallelism)
	for i := range o.KeyGroups.All {
		o.KeyGroups.All[i].Index = i
	}
	for i := range op.Parallelism {
		o.Subtasks.All = append(o.Subtasks.All, Group{Index: int(i)})
	}
	byName := map[string]*State{}
	for _, s := range subs {
		if err := o.measureSubtask(s, byName, opt); err != nil {
			return nil, err
		}
	}
	for _, st := range o.States {
		if st.Entries > 0 {
			st.MeanValue = float64(st.ValueBytes) / float64(st.Entries)
		}
		st.Top = st.top.sorted()
	}
	for _, g := range o.KeyGroups.All {
		o.Bytes += g.Bytes
	}
	o.KeyGroups.Skew = skew(o.KeyGroups.All)
	o.Subtasks.Skew = skew(o.Subtasks.All)
	return o, nil
}

func (o *Operator) measureSubtask(s *keyed.Subtask, byName map[string]*State, opt Options) error {
	if s.Native != nil {
		o.Native = true
	} else {
		o.StoredBytes += s.StreamSize() - s.Header.Size()
	}
	// The subtask's states, by state id (names repeat across subtasks; ids need not).
	states := make([]*State, len(s.Header.States))
	for i, m := range s.Header.States {
		st := byName[m.Name]
		if st == nil {
			st = &State{Name: m.Name, Kind: s.Decoder.States[i].Kind, top: topHeap{max: opt.Top}}
			byName[m.Name] = st
			o.States = append(o.States, st)
		}
		states[i] = st
	}
	sub := o.subtask(int(s.Index))
	kg, lastBlock, lastState := -1, int64(-1), -1
	opKeys := map[string]struct{}{}
	var keyBuf []byte
	endGroup := func() {
		o.DistinctKeys += int64(len(opKeys))
		clear(opKeys)
		for _, st := range states {
			st.endGroup()
		}
	}
	err := s.Entries(func(e *keyed.Entry) error {
		if e.KeyGroup != kg {
			if kg >= 0 {
				endGroup()
			}
			kg = e.KeyGroup
			if kg < 0 || kg >= len(o.KeyGroups.All) {
				return fmt.Errorf("%s: key group %d outside [0, %d)", s.Name, kg, len(o.KeyGroups.All))
			}
		}
		r, err := s.Decoder.Decode(e)
		if err != nil {
			return err
		}
		st := states[e.StateID]
		n := int64(len(e.Key) + len(e.Value))
		frame := int64(0)
		if e.Offset >= 0 {
			frame = 8
			if e.BlockOffset != lastBlock {
				// A new block: its end marker, and the first state id.
				o.KeyGroups.All[kg].Bytes += 2
				sub.Bytes += 2
				frame += 2
			} else if e.StateID != lastState {
				frame += 2
			}
			lastBlock, lastState = e.BlockOffset, e.StateID
		}
		st.Entries++
		st.KeyBytes += int64(len(e.Key))
		st.ValueBytes += int64(len(e.Value))
		st.FrameBytes += frame
		st.MaxValue = max(st.MaxValue, len(e.Value))
		st.observeTime(&r, opt.At)
		g := &o.KeyGroups.All[kg]
		g.Entries++
		g.Bytes += n + frame
		sub.Entries++
		sub.Bytes += n + frame
		o.Entries++

		if keyBuf, err = keyed.AppendJSONValue(keyBuf[:0], r.Key); err != nil {
			return fmt.Errorf("%s: key group %d state %s: key: %w", s.Name, kg, st.Name, err)
		}
		if _, ok := opKeys[string(keyBuf)]; !ok {
			opKeys[string(keyBuf)] = struct{}{}
		}
		st.add(keyBuf, n+frame)
		return nil
	})
	if err != nil {
		return err
	}
	if kg >= 0 {
		endGroup()
	}
	return nil
}

// subtask returns the group of subtask i, growing the list for a savepoint whose handles name a
// subtask beyond the parallelism (OpenSubtasks has checked the ranges already).
func (o *Operator) subtask(i int) *Group {
	for len(o.Subtasks.All) <= i {
		o.Subtasks.All = append(o.Subtasks.All, Group{Index: len(o.Subtasks.All)})
	}
	return &o.Subtasks.All[i]
}

func (s *State) add(key []byte, n int64) {
	if s.cur == nil {
		s.cur = map[string]*keyTotal{}
	}
	t := s.cur[string(key)]
	if t == nil {
		t = &keyTotal{}
		s.cur[string(key)] = t
	}
	t.bytes += n
	t.entries++
}

// endGroup folds the key group's keys into the distinct count and the top keys.
func (s *State) endGroup() {
	s.DistinctKeys += int64(len(s.cur))
	for k, t := range s.cur {
		s.top.offer(k, *t)
	}
	clear(s.cur)
}

func skew(gs []Group) float64 {
	if len(gs) == 0 {
		return 0
	}
	var sum, most int64
	for _, g := range gs {
		sum += g.Bytes
		most = max(most, g.Bytes)
	}
	if sum == 0 {
		return 0
	}
	return float64(most) / (float64(sum) / float64(len(gs)))
}

// topHeap keeps the max keys with the most bytes: a min-heap whose root is the smallest kept.
type topHeap struct {
	max   int
	items []topItem
}

type topItem struct {
	key string
	keyTotal
}

// less orders by bytes, then by key (descending), so that the result does not depend on map
// iteration order when totals tie.
func (h *topHeap) less(a, b topItem) bool {
	if a.bytes != b.bytes {
		return a.bytes < b.bytes
	}
	return a.key > b.key
}

func (h *topHeap) Len() int           { return len(h.items) }
func (h *topHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *topHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *topHeap) Push(x any)         { h.items = append(h.items, x.(topItem)) }
func (h *topHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

func (h *topHeap) offer(key string, t keyTotal) {
	if h.max <= 0 {
		return
	}
	it := topItem{key, t}
	if len(h.items) < h.max {
		heap.Push(h, it)
		return
	}
	if h.less(h.items[0], it) {
		h.items[0] = it
		heap.Fix(h, 0)
	}
}

func (h *topHeap) sorted() []TopKey {
	items := append([]topItem(nil), h.items...)
	sort.Slice(items, func(i, j int) bool { return h.less(items[j], items[i]) })
	out := make([]TopKey, len(items))
	for i, it := range items {
		out[i] = TopKey{Key: json.RawMessage(it.key), Bytes: it.bytes, Entries: it.entries}
	}
	return out
}
