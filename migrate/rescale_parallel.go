package migrate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// The direct rescale: when one max parallelism is a multiple of the other, every new key group
// can be written straight from the few source blocks that can hold its keys, with no spill.
//
// A key's key group is murmur(hashCode) mod maxParallelism, murmur(...) >= 0. If newMax = c *
// oldMax, then (m mod newMax) mod oldMax = m mod oldMax: new key group k holds only keys of old
// key group k mod oldMax, and old key group g splits into g, g + oldMax, ..., g + (c-1)*oldMax.
// If oldMax = c * newMax, new key group k gathers old key groups k, k + newMax, ...
//
//	newMax = 2*oldMax (128 -> 256)          oldMax = 2*newMax (256 -> 128)
//	old kg:   0    1  ...  127              old kg:  0 .. 127   128 .. 255
//	          |\   |\       |\                        \    \     /    /
//	new kg:   0 128 1 129 .. 127 255        new kg:    0 .. 127 (k <- k, k+128)
//
// Each output subtask is then one task, run on the worker pool (parallel): it reads, for each of
// its key groups in order, the source blocks of that key group, keeps the entries whose key
// hashes to it, re-prefixes them and writes the block. Memory is one key group's entries per
// worker. A source block is read once per new key group it feeds (c times when scaling up), all
// from the page cache, instead of two passes over the source plus a spill written and read back;
// beyond c = maxDirectFactor that costs more than the spill path, which then does the work.
//
// The output is byte for byte what the spill path writes: the spill path orders a key group's
// entries as the sources are scanned (source by source, blocks in key-group order, entries in
// block order), and a task visits a new key group's blocks in that same order (directPlan).
// TestRescaleDirectSameBytes compares the two.

// spillOnly turns the direct path off, for tests that compare it with the spill path.
var spillOnly = false

// blockRef names one source block: srcs[src].handle.Offsets[idx].
type blockRef struct{ src, idx int }

// maxDirectFactor is the largest c = newMax/oldMax the direct path takes. Scaling up by c, each
// source block is read c times; the spill path reads it twice and writes and reads a spill.
// Measured on 800,000 entries (BenchmarkRescale's savepoint, parallelism 2): the direct path is
// faster at c = 2 (250 vs 320 ms) and 4 (485 vs 560 ms), slower at 8 (715 vs 385 ms).
const maxDirectFactor = 4

// directPlan returns, for each new key group, the source blocks that can hold its keys, in the
// order the spill path scans them; nil when neither max parallelism divides the other, when
// scaling up by more than maxDirectFactor, or when a block lies outside [0, oldMax) (the spill
// path then refuses its keys with the usual error).
func directPlan(srcs []*source, oldMax, newMax int32) [][]blockRef {
	if (newMax%oldMax != 0 && oldMax%newMax != 0) || newMax/oldMax > maxDirectFactor {
		return nil
	}
	byOld := make([][]blockRef, oldMax)
	for si, x := range srcs {
		for i, off := range x.handle.Offsets {
			if off == 0 {
				continue
			}
			kg := int64(x.handle.Range.Start) + int64(i)
			if kg < 0 || kg >= int64(oldMax) {
				return nil
			}
			byOld[kg] = append(byOld[kg], blockRef{si, i})
		}
	}
	plan := make([][]blockRef, newMax)
	for k := range plan {
		if newMax >= oldMax {
			plan[k] = byOld[int32(k)%oldMax]
			continue
		}
		var refs []blockRef
		for g := int32(k); g < oldMax; g += newMax {
			refs = append(refs, byOld[g]...)
		}
		slices.SortFunc(refs, func(a, b blockRef) int {
			if a.src != b.src {
				return a.src - b.src
			}
			return a.idx - b.idx
		})
		plan[k] = refs
	}
	return plan
}

// directTask is what one output subtask's task produced.
type directTask struct {
	name    string
	size    int64
	offsets []int64
	entries int
	counts  []int // entries by merged state id
}

// rescaleDirect writes every output subtask of op from the sources by plan (see above), one task
// per subtask on the worker pool, then updates op and ch as the spill path does.
func (r *Rescale) rescaleDirect(s *session, op *metadata.OperatorState, ch *OperatorChange, rk *rekeyer,
	srcs []*source, ranges []keygroup.Range, plan [][]blockRef, prog *progress) error {
	newPar := int32(len(ranges))
	newPrefix := keyed.PrefixLen(int(rk.newMax))
	tasks := make([]directTask, len(ranges))
	for i := range tasks {
		// Names are drawn and registered before the tasks start: s.fresh is not shared with them.
		tasks[i].name = newStateFileName()
		s.fresh[tasks[i].name] = 0
	}
	err := parallel(len(ranges), func(i int) error {
		t := &tasks[i]
		rg := ranges[i]
		trk := rk.forTask()
		path := filepath.Join(s.stage, t.name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<20)
		w, err := keyed.NewWriter(bw, rk.header)
		if err != nil {
			return err
		}
		readers := make([]*keyed.BlockReader, len(srcs))
		for si, x := range srcs {
			readers[si] = &keyed.BlockReader{Name: x.name, Compressed: x.header.Compressed, NumStates: len(x.header.States), PrefixLen: rk.oldPrefix}
		}
		t.offsets = make([]int64, rg.Len())
		t.counts = make([]int, len(rk.header.States))
		// One key group's entries: their bytes (new prefix, key, value) back to back in arena,
		// their bounds in spans; entries alias arena once the key group is complete.
		type span struct {
			sid          int
			keyEnd, vEnd int
		}
		var arena []byte
		var spans []span
		var entries []keyed.Entry
		var in serializer.Input
		for kg := rg.Start; kg <= rg.End; kg++ {
			arena, spans = arena[:0], spans[:0]
			var read int64
			for _, ref := range plan[kg] {
				x := srcs[ref.src]
				oldKG := int(x.handle.Range.Start) + ref.idx
				off := x.handle.Offsets[ref.idx]
				err := readers[ref.src].ReadBlockTo(x.r, x.size, off, x.ends[off], oldKG, func(e *keyed.Entry) error {
					read += int64(len(e.Key) + len(e.Value) + 8)
					nk, err := trk.newKG(&in, x, e)
					if err != nil || nk != kg {
						return err
					}
					sid := x.ids[e.StateID]
					if newPrefix == 2 {
						arena = append(arena, byte(kg>>8), byte(kg))
					} else {
						arena = append(arena, byte(kg))
					}
					arena = append(arena, e.Key[rk.oldPrefix:]...)
					keyEnd := len(arena)
					arena = append(arena, e.Value...)
					spans = append(spans, span{sid, keyEnd, len(arena)})
					return nil
				})
				if err != nil {
					return err
				}
			}
			prog.addBytes(read, int64(len(spans)))
			if len(spans) == 0 {
				continue
			}
			entries = entries[:0]
			start := 0
			for _, sp := range spans {
				entries = append(entries, keyed.Entry{KeyGroup: int(kg), StateID: sp.sid, Key: arena[start:sp.keyEnd], Value: arena[sp.keyEnd:sp.vEnd]})
				t.counts[sp.sid]++
				start = sp.vEnd
			}
			off, err := w.WriteKeyGroup(entries)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			t.offsets[kg-rg.Start] = off
			t.entries += len(entries)
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		t.size = w.Offset()
		return nil
	})
	if err != nil {
		return err
	}
	prog.done()
	subs := make([]*metadata.SubtaskState, newPar)
	perSub := make([]int, newPar)
	for i, t := range tasks {
		s.fresh[t.name] = t.size
		subs[i] = newSubtaskState(op, newPar, i, ranges[i], t.offsets, t.name, t.size)
		perSub[i] = t.entries
		for sid, n := range t.counts {
			if n > 0 {
				ch.EntriesBefore[rk.header.States[sid].Name] += n
			}
		}
	}
	op.Subtasks = subs
	op.MaxParallelism, op.Parallelism = rk.newMax, newPar
	for k, v := range ch.EntriesBefore {
		ch.EntriesAfter[k] = v
	}
	ch.EntriesPerSubtask = perSub
	return nil
}
