package rocksdb

import (
	"bytes"
	"container/heap"
	"fmt"
	"sort"
)

// MergeFunc combines a key's Merge operands (oldest first) with its base value; hasBase is false
// when the key had no Put older than the operands (or a deletion hid it).
type MergeFunc func(base []byte, hasBase bool, operands [][]byte) []byte

// StringAppend is RocksDB's StringAppendTESTOperator (and StringAppendOperator): the base value
// and the operands joined by delim, oldest first. Flink installs it with ',' for list state.
func StringAppend(delim byte) MergeFunc {
	return func(base []byte, hasBase bool, operands [][]byte) []byte {
		var out []byte
		if hasBase {
			out = append(out, base...)
		}
		for i, op := range operands {
			if hasBase || i > 0 {
				out = append(out, delim)
			}
			out = append(out, op...)
		}
		return out
	}
}

// MergeIter merges the tables of one column family into the live key/value pairs, in user-key
// order. It holds one data block per table, the range tombstones, and one key's merge operands.
type MergeIter struct {
	iters      []*TableIter
	h          iterHeap
	tombstones []RangeTombstone // sorted by Start
	merge      MergeFunc
	key, value []byte
	operands   [][]byte
	started    bool
	err        error
}

// NewMergeIter merges tables (any order; sequence numbers decide). merge may be nil when the
// tables hold no Merge entries; meeting one is then an error.
func NewMergeIter(tables []*Table, merge MergeFunc) (*MergeIter, error) {
	m := &MergeIter{merge: merge}
	for _, t := range tables {
		ts, err := t.RangeTombstones()
		if err != nil {
			return nil, err
		}
		m.tombstones = append(m.tombstones, ts...)
		m.iters = append(m.iters, t.Iter())
	}
	sort.SliceStable(m.tombstones, func(a, b int) bool { return bytes.Compare(m.tombstones[a].Start, m.tombstones[b].Start) < 0 })
	return m, nil
}

// deleted reports whether a range tombstone newer than seq covers key.
func (m *MergeIter) deleted(key []byte, seq uint64) bool {
	n := sort.Search(len(m.tombstones), func(i int) bool { return bytes.Compare(m.tombstones[i].Start, key) > 0 })
	for _, t := range m.tombstones[:n] {
		if t.Seq > seq && bytes.Compare(key, t.End) < 0 {
			return true
		}
	}
	return false
}

// Next moves to the next live key; false at the end or on error (Err).
func (m *MergeIter) Next() bool {
	if m.err != nil {
		return false
	}
	if !m.started {
		m.started = true
		for i, it := range m.iters {
			if it.Next() {
				m.h = append(m.h, heapItem{it, i})
			} else if it.Err() != nil {
				m.err = it.Err()
				return false
			}
		}
		heap.Init(&m.h)
	}
	for len(m.h) > 0 {
		top := m.h[0].it.Entry()
		m.key = append(m.key[:0], top.UserKey...)
		m.operands = m.operands[:0]
		var opBytes []byte // the operands' bytes, copied: table iterators move on
		var opEnds []int
		done, live := false, false
		for len(m.h) > 0 {
			it := m.h[0].it
			e := it.Entry()
			if !bytes.Equal(e.UserKey, m.key) {
				break
			}
			if !done {
				switch {
				case m.deleted(m.key, e.Seq):
					done = true
					live = m.finish(nil, false, opBytes, opEnds)
				case e.Kind == KindPut:
					done = true
					live = m.finish(e.Value, true, opBytes, opEnds)
				case e.Kind == KindDelete || e.Kind == KindSingleDelete:
					done = true
					live = m.finish(nil, false, opBytes, opEnds)
				case e.Kind == KindMerge:
					if m.merge == nil {
						m.err = fmt.Errorf("%s: Merge entry for key %x but no merge operator given", it.t.name, m.key)
						return false
					}
					opBytes = append(opBytes, e.Value...)
					opEnds = append(opEnds, len(opBytes))
				}
			}
			if it.Next() {
				heap.Fix(&m.h, 0)
			} else {
				if it.Err() != nil {
					m.err = it.Err()
					return false
				}
				heap.Pop(&m.h)
			}
		}
		if !done {
			live = m.finish(nil, false, opBytes, opEnds)
		}
		if live {
			return true
		}
	}
	return false
}

// finish computes the key's value from its base and the operands collected newest first; false
// when the key is deleted.
func (m *MergeIter) finish(base []byte, hasBase bool, opBytes []byte, opEnds []int) bool {
	if len(opEnds) == 0 {
		if !hasBase {
			return false
		}
		m.value = append(m.value[:0], base...)
		return true
	}
	m.operands = m.operands[:0]
	for i := len(opEnds) - 1; i >= 0; i-- { // oldest first
		start := 0
		if i > 0 {
			start = opEnds[i-1]
		}
		m.operands = append(m.operands, opBytes[start:opEnds[i]])
	}
	m.value = m.merge(base, hasBase, m.operands)
	return true
}

// Key is the current user key; valid until the next call to Next.
func (m *MergeIter) Key() []byte { return m.key }

// Value is the current value; valid until the next call to Next.
func (m *MergeIter) Value() []byte { return m.value }

// Err is the error that ended the iteration, if any.
func (m *MergeIter) Err() error { return m.err }

type heapItem struct {
	it  *TableIter
	ord int // tie-break: table order
}

// iterHeap orders table iterators by their current entry: user key ascending, sequence number
// descending (the newest version of a key first).
type iterHeap []heapItem

func (h iterHeap) Len() int { return len(h) }
func (h iterHeap) Less(i, j int) bool {
	a, b := h[i].it.entry, h[j].it.entry
	if c := bytes.Compare(a.UserKey, b.UserKey); c != 0 {
		return c < 0
	}
	if a.Seq != b.Seq {
		return a.Seq > b.Seq
	}
	if a.Kind != b.Kind {
		return a.Kind > b.Kind
	}
	return h[i].ord < h[j].ord
}
func (h iterHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *iterHeap) Push(x any)   { *h = append(*h, x.(heapItem)) }
func (h *iterHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
