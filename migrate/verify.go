package migrate

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Sum is an order-independent digest of a multiset of entries: their number and the sum (mod
// 2^64) of a 64-bit hash of each. Unlike XOR, a sum does not cancel duplicated entries.
type Sum struct {
	Count int64  `json:"count"`
	Hash  uint64 `json:"hash"`
}

func (s *Sum) add(h uint64) { s.Count++; s.Hash += h }

// OpDigest holds the sums of one operator: keyed states (timers included, under their
// "_timer_state/..." names) by name, and operator states by name.
type OpDigest struct {
	Label   string
	Keyed   map[string]*Sum
	OpState map[string]*Sum
}

// Digest is the sums of every operator of a savepoint, by operator id.
type Digest map[metadata.OperatorID]*OpDigest

// entryHash hashes one keyed entry: the key without its key-group prefix and the value, each
// with its length, so that (key "ab", value "c") and (key "a", value "bc") differ.
func entryHash(key []byte, prefix int, value []byte) uint64 {
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(key)-prefix))
	h := fnv1a(fnvOffset, n[:])
	h = fnv1a(h, key[prefix:])
	binary.BigEndian.PutUint32(n[:], uint32(len(value)))
	h = fnv1a(h, n[:])
	return fnv1a(h, value)
}

func bytesHash(b []byte) uint64 { return fnv1a(fnvOffset, b) }

// FNV-1a, 64 bit (hash/fnv's, without a hasher allocation per entry).
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func fnv1a(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return h
}

// DigestOf reads every keyed entry and operator-state element of sp and sums them. Operators
// whose keyed state is not canonical (RocksDB native) are summed over their operator state only.
func DigestOf(sp *savepoint.Savepoint) (Digest, error) {
	d := Digest{}
	for _, op := range sp.Metadata.Operators {
		od := &OpDigest{Label: Label(op), Keyed: map[string]*Sum{}, OpState: map[string]*Sum{}}
		d[op.ID] = od
		if canonicalKeyed(op) {
			subs, closeAll, err := keyed.OpenSubtasks(sp, op)
			if err != nil {
				return nil, err
			}
			for _, st := range subs {
				prefix := st.Decoder.PrefixLen
				names := st.Header.States
				for _, m := range names {
					if od.Keyed[m.Name] == nil {
						od.Keyed[m.Name] = &Sum{}
					}
				}
				err := st.Entries(func(e *keyed.Entry) error {
					od.Keyed[names[e.StateID].Name].add(entryHash(e.Key, prefix, e.Value))
					return nil
				})
				if err != nil {
					closeAll()
					return nil, err
				}
			}
			closeAll()
		} else {
			// Native (RocksDB) keyed state is not readable here; its files are only linked or
			// copied, so their names and sizes are what must arrive unchanged.
			sum := &Sum{}
			od.Keyed[nativeFiles] = sum
			for _, st := range op.Subtasks {
				if h, ok := st.ManagedKeyed.(*metadata.IncrementalHandle); ok && !st.Finished {
					for _, p := range append(append([]metadata.PathHandle{{LocalPath: "meta", Handle: h.MetaData}}, h.Shared...), h.Private...) {
						sum.add(bytesHash([]byte(fmt.Sprintf("%d %s %d", st.Index, p.LocalPath, sizeOfStream(p.Handle)))))
					}
				}
			}
		}
		for _, st := range op.Subtasks {
			if st == nil || st.Finished {
				continue
			}
			oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
			if !ok || oh.Delegate == nil {
				continue
			}
			str, err := sp.OpenStream(oh.Delegate)
			if err != nil {
				return nil, err
			}
			os, err := opstate.Open(str, str.Size(), str.Name, oh)
			if err == nil {
				err = os.Read(func(e opstate.Element) error {
					if od.OpState[e.State] == nil {
						od.OpState[e.State] = &Sum{}
					}
					od.OpState[e.State].add(bytesHash(e.Raw))
					return nil
				})
			}
			str.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}

// nativeFiles is the digest entry of an operator's native keyed-state files.
const nativeFiles = "(native keyed-state files)"

func sizeOfStream(h metadata.StreamHandle) int64 {
	if h == nil {
		return -1
	}
	return h.StateSize()
}

func canonicalKeyed(op *metadata.OperatorState) bool {
	for _, st := range op.Subtasks {
		if st == nil || st.Finished || st.ManagedKeyed == nil {
			continue
		}
		if _, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); !ok {
			return false
		}
	}
	return true
}

// VerifyRow is one compared sum, for the report.
type VerifyRow struct {
	Operator string `json:"operator"`
	Kind     string `json:"kind"` // keyed | operator
	State    string `json:"state"`
	Expected Sum    `json:"expected"`
	Actual   Sum    `json:"actual"`
}

// Compare checks the output's digest against the expected one; it returns every compared row
// and a description of the first difference ("" when equal).
func Compare(want, got Digest) ([]VerifyRow, string) {
	var rows []VerifyRow
	first := ""
	note := func(s string) {
		if first == "" {
			first = s
		}
	}
	ids := make([]metadata.OperatorID, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].String() < ids[j].String() })
	for _, id := range ids {
		w := want[id]
		g := got[id]
		if g == nil {
			note(fmt.Sprintf("operator %s (%s) is missing from the output", w.Label, id))
			continue
		}
		cmp := func(kind string, ws, gs map[string]*Sum) {
			for _, name := range sortedKeys(ws, gs) {
				a, b := ws[name], gs[name]
				var av, bv Sum
				if a != nil {
					av = *a
				}
				if b != nil {
					bv = *b
				}
				rows = append(rows, VerifyRow{Operator: w.Label, Kind: kind, State: name, Expected: av, Actual: bv})
				switch {
				case a == nil:
					note(fmt.Sprintf("operator %s: %s state %q is in the output but not expected", w.Label, kind, name))
				case b == nil:
					note(fmt.Sprintf("operator %s: %s state %q is missing from the output", w.Label, kind, name))
				case av.Count != bv.Count:
					note(fmt.Sprintf("operator %s: %s state %q: %d entries expected, %d in the output", w.Label, kind, name, av.Count, bv.Count))
				case av.Hash != bv.Hash:
					note(fmt.Sprintf("operator %s: %s state %q: %d entries but their checksum differs (%016x expected, %016x in the output)", w.Label, kind, name, av.Count, av.Hash, bv.Hash))
				}
			}
		}
		cmp("keyed", w.Keyed, g.Keyed)
		cmp("operator", w.OpState, g.OpState)
	}
	for id, g := range got {
		if want[id] == nil {
			note(fmt.Sprintf("operator %s (%s) is in the output but not expected", g.Label, id))
		}
	}
	return rows, first
}

func sortedKeys(a, b map[string]*Sum) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]*Sum{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}
