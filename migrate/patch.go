package migrate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// Patch sets and deletes keyed entries named by the records of a JSONL file, in the shape `dump`
// prints without --operator (operator, state, key, namespace, userKey, value, ttlTimestamp):
//
//	{"operator":"uid:u","state":"count","key":4,"namespace":null,"value":9}      set (add or replace)
//	{"operator":"uid:u","state":"seen","key":4,"namespace":null,"userKey":"m1","value":2}   map entry
//	{"operator":"uid:u","state":"names","key":4,"namespace":null,"value":["a","b"]}  whole list
//	{"op":"delete","operator":"uid:u","state":"count","key":4,"namespace":null}  delete the entry
//	{"op":"delete", ... map state without "userKey"}                             every entry of the key
//
// Each record is encoded with the operator's serializers, its key group computed from the key's
// Java hashCode. Only subtasks holding a touched key group get a new file, and in it only the
// touched key groups are decoded and rebuilt; every other block is copied byte for byte, and
// every other subtask's file is linked as it is. Records apply in file order (a later record of
// the same entry wins).
type Patch struct {
	Data string
}

// Describe says what the step does.
func (p *Patch) Describe() string { return "patch entries from " + p.Data }

// patchOp is one record: set (value != nil) or delete the entry whose key past its prefix is
// rest; prefixOnly deletes every entry of the state whose key starts with rest (a map's key).
type patchOp struct {
	sid        int
	rest       []byte
	value      []byte
	del        bool
	prefixOnly bool
}

// patchCounts are what a patch did to one state.
type patchCounts struct{ set, added, deleted int }

func (p *Patch) apply(s *session) (*StepReport, error) {
	rep := &StepReport{Step: p.Describe()}
	f, err := os.Open(p.Data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ops, labels, err := s.loadOps()
	if err != nil {
		return nil, err
	}
	patches := map[*loadOp]map[int32][]patchOp{}
	var in serializer.Input
	err = eachRecord(p.Data, f, func(b []byte, where string) error {
		lo, kg, po, err := patchRecord(ops, labels, b, where, &in)
		if err != nil {
			return err
		}
		if patches[lo] == nil {
			patches[lo] = map[int32][]patchOp{}
		}
		patches[lo][kg] = append(patches[lo][kg], po)
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, op := range s.m.Operators {
		lo := ops[Label(op)]
		if patches[lo] == nil {
			continue
		}
		if !canonicalKeyed(op) {
			return nil, fmt.Errorf("operator %s: keyed state in RocksDB's native format; convert it first (migrate convert)", Label(op))
		}
		counts := map[string]*patchCounts{}
		for _, m := range lo.header.States {
			counts[m.Name] = &patchCounts{}
		}
		before, after := map[string]int{}, map[string]int{}
		covered := 0
		for _, st := range op.Subtasks {
			kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
			if st.Finished || !ok || kh.Delegate == nil {
				continue
			}
			for kg := range patches[lo] {
				if kg >= kh.Range.Start && kg < kh.Range.Start+kh.Range.Num {
					covered++
				}
			}
			nh, err := s.patchSubtask(lo, kh, patches[lo], counts, before, after)
			if err != nil {
				return nil, fmt.Errorf("operator %s subtask %d: %w", Label(op), st.Index, err)
			}
			if nh != nil {
				st.ManagedKeyed = nh
			}
		}
		if covered != len(patches[lo]) {
			return nil, fmt.Errorf("operator %s: a patched key's key group lies in no subtask's keyed state (subtasks without a keyed-state file cannot be patched)", Label(op))
		}
		ch := change(op, nil, nil)
		ch.Set, ch.Added, ch.Deleted = map[string]int{}, map[string]int{}, map[string]int{}
		for n, c := range counts {
			ch.Set[n], ch.Added[n], ch.Deleted[n] = c.set, c.added, c.deleted
		}
		rep.Operators = append(rep.Operators, ch)
	}
	return rep, nil
}

// patchRecord reads one record into its operator, key group and operation.
func patchRecord(ops map[string]*loadOp, labels []string, line []byte, where string, in *serializer.Input) (*loadOp, int32, patchOp, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var rec map[string]any
	if err := d.Decode(&rec); err != nil {
		return nil, 0, patchOp{}, fmt.Errorf("%s: not a JSON object: %w", where, err)
	}
	label, _ := rec["operator"].(string)
	lo := ops[label]
	if lo == nil {
		return nil, 0, patchOp{}, fmt.Errorf("%s: operator %q: no such operator in the source savepoint (it has %s)", where, label, strings.Join(labels, ", "))
	}
	if lo.header == nil {
		return nil, 0, patchOp{}, fmt.Errorf("%s: operator %s has no keyed state", where, label)
	}
	name, _ := rec["state"].(string)
	var po patchOp
	var e keyed.Encoded
	var err error
	switch op, _ := rec["op"].(string); op {
	case "delete":
		_, hasUK := rec["userKey"]
		po.del = true
		po.prefixOnly = lo.enc.Kind(name) == "map" && !hasUK
		e, err = lo.enc.EncodeKey(rec, where, !po.prefixOnly)
	case "", "set":
		if lo.enc.Kind(name) == "timer" {
			return nil, 0, patchOp{}, fmt.Errorf("%s: state %q is a timer queue; timers are not patched", where, name)
		}
		e, err = lo.enc.Encode(rec, where)
	default:
		return nil, 0, patchOp{}, fmt.Errorf(`%s: op %q: want "set" (the default) or "delete"`, where, op)
	}
	if err != nil {
		return nil, 0, patchOp{}, err
	}
	po.sid, po.rest, po.value = e.StateID, bytes.Clone(e.Rest), bytes.Clone(e.Value)
	if lo.hasher == nil {
		return nil, 0, patchOp{}, fmt.Errorf("%s: %v", where, lo.hashErr)
	}
	in.Reset(e.Rest)
	h, err := lo.hasher.hash(in)
	if err != nil {
		return nil, 0, patchOp{}, fmt.Errorf("%s: key: %w", where, err)
	}
	return lo, modMax(keygroup.MurmurHash(h), lo.maxPar), po, nil
}

// patchSubtask writes the subtask's file anew when a patch touches one of its key groups
// (copying the blocks of the others), and returns its handle; nil when nothing is touched.
func (s *session) patchSubtask(lo *loadOp, kh *metadata.KeyGroupsHandle, patches map[int32][]patchOp, counts map[string]*patchCounts, before, after map[string]int) (*metadata.KeyGroupsHandle, error) {
	touched := false
	for kg := range patches {
		touched = touched || (kg >= kh.Range.Start && kg < kh.Range.Start+kh.Range.Num)
	}
	if !touched {
		return nil, nil
	}
	ra, size, name, c, err := s.openKeyed(kh.Delegate)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	h, err := keyed.ReadHeader(io.NewSectionReader(ra, 0, size), name)
	if err != nil {
		return nil, err
	}
	dg := s.digest[lo.op.ID]
	sum := func(state string) *Sum {
		if dg == nil {
			return &Sum{}
		}
		if dg.Keyed[state] == nil {
			dg.Keyed[state] = &Sum{}
		}
		return dg.Keyed[state]
	}
	br := &keyed.BlockReader{Name: name, Compressed: h.Compressed, NumStates: len(h.States), PrefixLen: lo.prefix}
	ends := keyed.BlockEnds(kh.Offsets, size)
	offsets := make([]int64, len(kh.Offsets))
	var w *keyed.Writer
	var f *os.File
	var bw *bufio.Writer
	file := ""
	if s.stage != "" {
		file = newStateFileName()
		if f, err = os.OpenFile(filepath.Join(s.stage, file), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644); err != nil {
			return nil, err
		}
		defer f.Close()
		s.fresh[file] = 0
		bw = bufio.NewWriterSize(f, 256<<10)
		if w, err = keyed.NewWriter(bw, h); err != nil {
			return nil, err
		}
	}
	for i, off := range kh.Offsets {
		kg := kh.Range.Start + int32(i)
		pp := patches[kg]
		if len(pp) == 0 {
			if off != 0 && w != nil {
				if offsets[i], err = w.CopyBlock(io.NewSectionReader(ra, off, ends[off]-off), ends[off]-off); err != nil {
					return nil, err
				}
			}
			continue
		}
		var group []keyed.Entry
		if off != 0 {
			err := br.ReadBlock(ra, size, off, int(kg), func(e *keyed.Entry) error {
				before[h.States[e.StateID].Name]++
				group = append(group, keyed.Entry{KeyGroup: int(kg), StateID: e.StateID, Key: bytes.Clone(e.Key), Value: bytes.Clone(e.Value)})
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
		for _, po := range pp {
			st := h.States[po.sid].Name
			if po.del {
				kept := group[:0]
				for _, e := range group {
					k := e.Key[lo.prefix:]
					if e.StateID == po.sid && (bytes.Equal(k, po.rest) || po.prefixOnly && bytes.HasPrefix(k, po.rest)) {
						counts[st].deleted++
						sm := sum(st)
						sm.Count--
						sm.Hash -= entryHash(e.Key, lo.prefix, e.Value)
						continue
					}
					kept = append(kept, e)
				}
				group = kept
				continue
			}
			key := appendKeyGroupPrefix(nil, kg, lo.prefix)
			key = append(key, po.rest...)
			found := false
			for j := range group {
				if group[j].StateID == po.sid && bytes.Equal(group[j].Key, key) {
					sm := sum(st)
					sm.Hash -= entryHash(group[j].Key, lo.prefix, group[j].Value)
					sm.Hash += entryHash(key, lo.prefix, po.value)
					group[j].Value = po.value
					counts[st].set++
					found = true
				}
			}
			if !found {
				group = append(group, keyed.Entry{KeyGroup: int(kg), StateID: po.sid, Key: key, Value: po.value})
				sum(st).add(entryHash(key, lo.prefix, po.value))
				counts[st].added++
			}
		}
		for _, e := range group {
			after[h.States[e.StateID].Name]++
		}
		if w != nil && len(group) > 0 {
			if offsets[i], err = w.WriteKeyGroup(group); err != nil {
				return nil, err
			}
		}
	}
	if w == nil {
		return nil, nil
	}
	if err := finishFile(bw, f); err != nil {
		return nil, err
	}
	s.fresh[file] = w.Offset()
	return &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups, Range: kh.Range, Offsets: offsets,
		Delegate: &metadata.RelativeFileHandle{Path: file, Size: w.Offset()}}, nil
}
