package migrate

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
// the same entry wins). The records are spilled by key group like a load's entries and read
// back in key-group order (patchCursor), so that a patch of any size costs the spill budget
// plus one key group's records; a touched key group's block streams through its records
// (kgPatch).
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
	if s.stage == "" && !s.opt.DryRun {
		// The validation pass of a real run: the data is read, encoded and applied once, by
		// the run, before anything is published (a bad record removes the staging directory).
		return rep, nil
	}
	// The records are spilled by key group as a load's entries are (loadSpill), so that a
	// large patch costs the spill budget, not its size; a dry run spills into a directory of
	// its own.
	budget := s.opt.SpillBudget
	if budget <= 0 {
		budget = defaultSpillBudget
	}
	dir := s.stage
	if dir == "" {
		if dir, err = os.MkdirTemp("", "statecraft-patch-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	sp := &loadSpill{dir: filepath.Join(dir, spillDir), budget: budget}
	for _, lo := range ops {
		sp.parts += len(lo.parts)
	}
	patched := map[*loadOp]bool{}
	var in serializer.Input
	dec := newLineDecoder()
	var rec []byte
	err = eachRecord(p.Data, f, func(b []byte, where string) error {
		lo, kg, po, err := patchRecord(ops, labels, b, where, dec, &in)
		if err != nil {
			return err
		}
		patched[lo] = true
		rec = po.appendSpill(rec[:0], kg)
		lo.kgBytes[kg] += int64(len(rec)) + entryOverhead
		return sp.put(lo, &lo.parts[int(kg)*len(lo.parts)/int(lo.maxPar)], rec)
	})
	if err != nil {
		return nil, err
	}
	for _, op := range s.m.Operators {
		lo := ops[Label(op)]
		if !patched[lo] {
			continue
		}
		if !canonicalKeyed(op) {
			return nil, fmt.Errorf("operator %s: keyed state in RocksDB's native format; convert it first (migrate convert)", Label(op))
		}
		counts := map[string]*patchCounts{}
		for _, m := range lo.header.States {
			counts[m.Name] = &patchCounts{}
		}
		touched := 0
		for _, b := range lo.kgBytes {
			if b > 0 {
				touched++
			}
		}
		// Subtasks in key-group order: the records are read back in that order (patchCursor).
		subs := slices.Clone(op.Subtasks)
		slices.SortFunc(subs, func(a, b *metadata.SubtaskState) int {
			return int(rangeStart(a) - rangeStart(b))
		})
		cur := &patchCursor{lo: lo, sp: sp}
		covered := 0
		for _, st := range subs {
			kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
			if st.Finished || !ok || kh.Delegate == nil {
				continue
			}
			for kg := kh.Range.Start; kg < kh.Range.Start+kh.Range.Num && int(kg) < len(lo.kgBytes); kg++ {
				if kg >= 0 && lo.kgBytes[kg] > 0 {
					covered++
				}
			}
			nh, err := s.patchSubtask(lo, kh, cur, counts)
			if err != nil {
				return nil, fmt.Errorf("operator %s subtask %d: %w", Label(op), st.Index, err)
			}
			if nh != nil {
				st.ManagedKeyed = nh
			}
		}
		cur.close()
		if covered != touched {
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
func patchRecord(ops map[string]*loadOp, labels []string, line []byte, where string, dec *lineDecoder, in *serializer.Input) (*loadOp, int32, patchOp, error) {
	rec, err := dec.decode(line)
	if err != nil {
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
	po.sid, po.rest, po.value = e.StateID, e.Rest, e.Value // valid until the next record: spilled at once
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
// (copying the blocks of the others byte for byte, streaming the touched ones through their
// patches: kgPatch), and returns its handle; nil when nothing is touched.
func (s *session) patchSubtask(lo *loadOp, kh *metadata.KeyGroupsHandle, cur *patchCursor, counts map[string]*patchCounts) (*metadata.KeyGroupsHandle, error) {
	touched := false
	for kg := kh.Range.Start; kg < kh.Range.Start+kh.Range.Num && int(kg) < len(lo.kgBytes); kg++ {
		touched = touched || (kg >= 0 && lo.kgBytes[kg] > 0)
	}
	if !touched {
		return nil, nil
	}
	ra, size, name, c, err := s.openKeyed(kh.Delegate)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	h, err := keyed.ReadHeaderUpTo(io.NewSectionReader(ra, 0, size), name, keyed.HeaderEnd(kh, size))
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
		var pp []patchOp
		if int(kg) < len(lo.kgBytes) && lo.kgBytes[kg] > 0 {
			if pp, err = cur.take(kg); err != nil {
				return nil, err
			}
		}
		if len(pp) == 0 {
			if off != 0 && w != nil {
				if offsets[i], err = w.CopyBlock(io.NewSectionReader(ra, off, ends[off]-off), ends[off]-off); err != nil {
					return nil, err
				}
			}
			continue
		}
		kp := newKGPatch(pp, lo.prefix, kg, h, counts, sum)
		if offsets[i], err = kp.write(w, br, ra, size, off, ends[off]); err != nil {
			return nil, err
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
