package migrate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

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
// worker, except that a key group fed by one large block is streamed (streamBlockBytes). A
// source block is read once per new key group it feeds (c times when scaling up), all
// from the page cache, instead of two passes over the source plus a spill written and read back;
// beyond c = maxDirectFactor that costs more than the spill path, which then does the work.
// When scaling up with every output subtask inside one band of oldMax key groups, the split
// path (writeSplit, below) reads each block only once.
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

// streamBlockBytes is the size (stream bytes, Snappy-framed or not) above which a source block
// is streamed instead of gathered: its entries go one by one from the block reader through the
// writer's streamed key group (keyed.Writer.BeginKeyGroup/Add/EndKeyGroup) to the output file,
// so a hot key's millions of entries are never held (issue #6: peak memory bounded whatever the
// savepoint). Smaller blocks keep the gathered path. The output bytes are the same either way:
// a streamed block is the only source of its new key groups (scaling up, or the same max
// parallelism), and a Flink-written block holds each state in one run, which filtering keeps,
// so the streamed writer emits the runs WriteKeyGroup would. A new key group fed by several
// source blocks (scaling down) is never streamed: one state's entries would come in one run per
// source block, which Flink's reader may accept but no oracle case has proven; it is gathered
// as before, so a hot key still costs its key group's bytes there. A variable so that tests can
// stream every block.
var streamBlockBytes int64 = defaultStreamBlockBytes

const defaultStreamBlockBytes = 8 << 20

// summedAsRead counts the operators whose source digest the split path summed as it read them,
// so that a test can tell the path was taken.
var summedAsRead atomic.Int64

// streamedBlocks counts the source blocks streamed, so that a test can tell the path was taken.
var streamedBlocks atomic.Int64

// streamable reports whether the new key group fed by refs is written by streaming.
func streamable(srcs []*source, refs []blockRef) bool {
	if len(refs) != 1 {
		return false
	}
	x := srcs[refs[0].src]
	off := x.handle.Offsets[refs[0].idx]
	return x.ends[off]-off > streamBlockBytes
}

// streamEntries reads the source block ref and hands each entry to sink with its new key group
// nk, its merged state id and its key re-prefixed for nk (valid only during the call). It returns
// the entry bytes read, for progress.
func streamEntries(br *keyed.BlockReader, x *source, ref blockRef, trk *rekeyer, in *serializer.Input, newPrefix int, sums []Sum,
	sink func(nk int32, sid int, key, value []byte) error) (int64, error) {
	var read int64
	var key []byte
	oldKG := int(x.handle.Range.Start) + ref.idx
	off := x.handle.Offsets[ref.idx]
	streamedBlocks.Add(1)
	err := x.readBlock(br, off, oldKG, func(e *keyed.Entry) error {
		read += int64(len(e.Key) + len(e.Value) + 8)
		nk, err := trk.newKG(in, x, e)
		if err != nil {
			return err
		}
		if sums != nil {
			sums[x.ids[e.StateID]].add(entryHash(e.Key, trk.oldPrefix, e.Value))
		}
		key = append(appendKeyGroupPrefix(key[:0], nk, newPrefix), e.Key[trk.oldPrefix:]...)
		return sink(nk, x.ids[e.StateID], key, e.Value)
	})
	return read, err
}

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

// rescaleDirect writes every output subtask of op from the sources by plan (see above): by the
// split path when it applies, else one task per subtask on the worker pool; then it updates op
// and ch as the spill path does.
//
// When od is not nil, the source's keyed entries are summed into it: by the split path as it
// reads each block (once), else by a read of their own first (digestKeyed).
func (r *Rescale) rescaleDirect(s *session, op *metadata.OperatorState, ch *OperatorChange, rk *rekeyer,
	srcs []*source, ranges []keygroup.Range, plan [][]blockRef, prog *progress, od *OpDigest) error {
	tasks := newOutputTasks(s, len(ranges))
	if bandAligned(ranges, rk.oldMax, rk.newMax) {
		var sums []Sum
		if od != nil {
			sums = make([]Sum, len(rk.header.States))
		}
		if err := writeSplit(s, rk, srcs, ranges, plan, tasks, prog, sums); err != nil {
			return err
		}
		if od != nil {
			od.addKeyed(rk.header, sums)
			od.pendingKeyed = false
			summedAsRead.Add(1)
		}
	} else {
		if od != nil {
			if err := digestKeyed(s.src, op, od); err != nil {
				return fmt.Errorf("checksum the source: %w", err)
			}
		}
		if err := writePerSubtask(s, rk, srcs, ranges, plan, tasks, prog); err != nil {
			return err
		}
	}
	prog.done()
	for _, t := range tasks {
		for sid, n := range t.counts {
			if n > 0 {
				ch.EntriesBefore[rk.header.States[sid].Name] += n
			}
		}
	}
	installOutputs(s, op, ch, rk.newMax, ranges, tasks)
	return nil
}

// writePerSubtask writes each output subtask as one task on the worker pool: for each of its
// key groups, the blocks plan names are read and the entries hashing to it kept.
func writePerSubtask(s *session, rk *rekeyer, srcs []*source, ranges []keygroup.Range, plan [][]blockRef, tasks []outputTask, prog *progress) error {
	newPrefix := keyed.PrefixLen(int(rk.newMax))
	return parallel(len(ranges), func(i int) error {
		t := &tasks[i]
		rg := ranges[i]
		trk := rk.forTask()
		path := filepath.Join(s.stage, t.name)
		of, err := createOutFile(path, rk.header, 1<<20)
		if err != nil {
			return err
		}
		defer of.f.Close()
		f, bw, w := of.f, of.bw, of.w
		readers := blockReaders(srcs, rk.oldPrefix)
		t.offsets = make([]int64, rg.Len())
		t.counts = make([]int, len(rk.header.States))
		var kgb kgBuffer
		var entries []keyed.Entry
		var in serializer.Input
		for kg := rg.Start; kg <= rg.End; kg++ {
			if refs := plan[kg]; streamable(srcs, refs) {
				if err := w.BeginKeyGroup(int(kg)); err != nil {
					return err
				}
				read, err := streamEntries(readers[refs[0].src], srcs[refs[0].src], refs[0], trk, &in, newPrefix, nil,
					func(nk int32, sid int, key, value []byte) error {
						if nk != kg {
							return nil
						}
						t.counts[sid]++
						if err := w.Add(sid, key, value); err != nil {
							return fmt.Errorf("%s: %w", path, err)
						}
						return nil
					})
				if err != nil {
					return err
				}
				off, n, err := w.EndKeyGroup()
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				prog.addBytes(read, int64(n))
				t.offsets[kg-rg.Start] = off
				t.entries += n
				continue
			}
			kgb.reset()
			var read int64
			for _, ref := range plan[kg] {
				x := srcs[ref.src]
				oldKG := int(x.handle.Range.Start) + ref.idx
				off := x.handle.Offsets[ref.idx]
				err := x.readBlock(readers[ref.src], off, oldKG, func(e *keyed.Entry) error {
					read += int64(len(e.Key) + len(e.Value) + 8)
					nk, err := trk.newKG(&in, x, e)
					if err != nil || nk != kg {
						return err
					}
					kgb.add(kg, newPrefix, x.ids[e.StateID], e.Key[rk.oldPrefix:], e.Value)
					return nil
				})
				if err != nil {
					return err
				}
			}
			prog.addBytes(read, int64(len(kgb.spans)))
			if len(kgb.spans) == 0 {
				continue
			}
			entries = kgb.entries(kg, entries, t.counts)
			off, err := w.WriteKeyGroup(entries)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			t.offsets[kg-rg.Start] = off
			t.entries += len(entries)
		}
		if err := finishFile(bw, f); err != nil {
			return err
		}
		t.size = w.Offset()
		return nil
	})
}

// kgBuffer holds one new key group's entries: their bytes (new prefix, key, value) back to back
// in arena, their bounds in spans; entries alias arena once the key group is complete.
type kgBuffer struct {
	arena []byte
	spans []entrySpan
}

type entrySpan struct {
	sid          int
	keyEnd, vEnd int
}

func (b *kgBuffer) reset() { b.arena, b.spans = b.arena[:0], b.spans[:0] }

// add appends an entry of key group kg: the new prefix (prefix bytes), the key past its old
// prefix, the value.
func (b *kgBuffer) add(kg int32, prefix, sid int, key, value []byte) {
	b.arena = append(appendKeyGroupPrefix(b.arena, kg, prefix), key...)
	keyEnd := len(b.arena)
	b.arena = append(b.arena, value...)
	b.spans = append(b.spans, entrySpan{sid, keyEnd, len(b.arena)})
}

// entries returns the buffered entries (in dst's storage) and counts them by state id.
func (b *kgBuffer) entries(kg int32, dst []keyed.Entry, counts []int) []keyed.Entry {
	dst = dst[:0]
	start := 0
	for _, sp := range b.spans {
		dst = append(dst, keyed.Entry{KeyGroup: int(kg), StateID: sp.sid, Key: b.arena[start:sp.keyEnd], Value: b.arena[sp.keyEnd:sp.vEnd]})
		counts[sp.sid]++
		start = sp.vEnd
	}
	return dst
}

// The split path: scaling up by c when no output subtask's key groups cross a multiple of
// oldMax (every subtask lies in one band [j*oldMax, (j+1)*oldMax), as with parallelism 2 at
// 128 -> 256). Then, walking the old key groups g in order, each band's subtasks receive their
// key groups g + j*oldMax in order too, so every source block can be read once and split into
// its c new key groups:
//
//	readers (one per CPU)                      writer (one goroutine, in g order)
//	take g = 0, 1, 2, ... in turn;     --->    for g in order: wait for g's result, append
//	read g's blocks, hash each key,            bucket j to the file of the subtask owning
//	put it in bucket (newKG - g)/oldMax        g + j*oldMax; a subtask's file is opened at its
//	                                           first key group and synced at its last
//
// At most splitAhead results per reader (fewer when key groups are large) are read and not yet
// written: a reader takes a token before it takes the next g, the writer gives one back per g
// written, so the results in flight are always the lowest unwritten g and the writer can
// always go on.

// splitAhead bounds the key groups each reader may have read ahead of the writer.
const splitAhead = 2

// splitBufSize is the write buffer of the split path's output files. Blocks are assembled whole
// (keyed.BlockBuilder); a block larger than what the buffer has free goes to the file from the
// builder's memory once the buffer is flushed, so a small buffer saves copying large blocks,
// while small blocks still leave in large writes.
const splitBufSize = 64 << 10

// bandAligned reports whether the split path applies to these output ranges.
func bandAligned(ranges []keygroup.Range, oldMax, newMax int32) bool {
	if newMax <= oldMax || newMax%oldMax != 0 {
		return false
	}
	for _, rg := range ranges {
		if rg.Start/oldMax != rg.End/oldMax {
			return false
		}
	}
	return true
}

// splitResult is one old key group read and split by band: bucket j is the block of new key
// group g + j*oldMax, assembled as it is read (keyed.BlockBuilder), so that each entry is copied
// once on its way from the source's read buffer to the output file.
type splitResult struct {
	buckets []keyed.BlockBuilder
	read    int64
	err     error
	// stream says the old key group's block is large (streamable): the readers leave it to the
	// writer, which streams it into the c output files at once, in its turn.
	stream bool
}

// writeSplit writes every output subtask by the split path (see above). With sums (one per
// merged state id), it also sums every source entry as it is read (entryHash), for verification:
// each block is read exactly once here, so the sums cover the source as DigestOf would.
func writeSplit(s *session, rk *rekeyer, srcs []*source, ranges []keygroup.Range, plan [][]blockRef, tasks []outputTask, prog *progress, sums []Sum) error {
	oldMax, newMax := rk.oldMax, rk.newMax
	c := int(newMax / oldMax)
	newPrefix := keyed.PrefixLen(int(newMax))
	subOf := make([]int, newMax)
	for i, rg := range ranges {
		for k := rg.Start; k <= rg.End; k++ {
			subOf[k] = i
		}
	}
	nw := workers(int(oldMax))
	// Results in flight cost about their blocks' bytes each: as many as the spill budget holds
	// for the largest old key group (Snappy blocks counted four times over), between one and
	// splitAhead per reader. A huge key group is then read while nothing else is held.
	ahead := splitAhead * nw
	budget := s.opt.SpillBudget
	if budget <= 0 {
		budget = defaultSpillBudget
	}
	var largest int64
	for g := int32(0); g < oldMax; g++ {
		if streamable(srcs, plan[g]) {
			continue // never held: the writer streams it
		}
		var n int64
		for _, ref := range plan[g] {
			x := srcs[ref.src]
			off := x.handle.Offsets[ref.idx]
			size := max(x.ends[off]-off, 0)
			if x.header.Compressed {
				size *= 4
			}
			n += size
		}
		largest = max(largest, n)
	}
	if largest > 0 {
		ahead = int(min(max(budget/largest, 1), int64(ahead)))
	}
	tokens := make(chan struct{}, ahead)
	free := make(chan *splitResult, ahead+1)
	results := make([]chan *splitResult, oldMax)
	for g := range results {
		results[g] = make(chan *splitResult, 1)
	}
	var next atomic.Int32
	var stop atomic.Bool
	var wg sync.WaitGroup
	nStates := len(rk.header.States)
	// Each reader counts entries by output subtask and state, and sums them by state, in tallies
	// of its own, added up once the readers are done.
	counts := make([][]int, nw)
	readSums := make([][]Sum, nw)
	for r := range nw {
		wg.Add(1)
		counts[r] = make([]int, len(ranges)*nStates)
		if sums != nil {
			readSums[r] = make([]Sum, nStates)
		}
		go func(cnt []int, sum []Sum) {
			defer wg.Done()
			trk := rk.forTask()
			var in serializer.Input
			readers := blockReaders(srcs, rk.oldPrefix)
			for {
				tokens <- struct{}{}
				g := next.Add(1) - 1
				if g >= oldMax {
					<-tokens
					return
				}
				var res *splitResult
				select {
				case res = <-free:
					res.read, res.err = 0, nil
				default:
					res = &splitResult{buckets: make([]keyed.BlockBuilder, c)}
				}
				for j := range res.buckets {
					res.buckets[j].Reset()
				}
				res.stream = streamable(srcs, plan[g])
				for _, ref := range plan[g] {
					if stop.Load() || res.stream {
						break
					}
					x := srcs[ref.src]
					off := x.handle.Offsets[ref.idx]
					res.err = x.readBlock(readers[ref.src], off, int(g), func(e *keyed.Entry) error {
						res.read += int64(len(e.Key) + len(e.Value) + 8)
						nk, err := trk.newKG(&in, x, e)
						if err != nil {
							return err
						}
						sid := x.ids[e.StateID]
						if sum != nil {
							sum[sid].add(entryHash(e.Key, rk.oldPrefix, e.Value))
						}
						cnt[subOf[nk]*nStates+sid]++
						// nk mod oldMax is the stored key group g (newKG checked it).
						res.buckets[nk/oldMax].AddPrefixed(sid, int(nk), newPrefix, e.Key[rk.oldPrefix:], e.Value)
						return nil
					})
					if res.err != nil {
						break
					}
				}
				results[g] <- res
			}
		}(counts[r], readSums[r])
	}

	open := make([]*outFile, len(ranges))
	var firstErr error
	fail := func(err error) {
		if firstErr == nil {
			firstErr = err
			stop.Store(true)
		}
	}
	// What the writer needs to stream a large old key group itself.
	wrk := rk.forTask()
	var win serializer.Input
	wreaders := blockReaders(srcs, rk.oldPrefix)
	for g := int32(0); g < oldMax; g++ {
		res := <-results[g]
		if res.err != nil {
			fail(res.err)
		}
		var written int64
		// Open the files of g's c new key groups, then stream g's block into them if it is large.
		for j := 0; j < c && firstErr == nil; j++ {
			k := g + int32(j)*oldMax
			i := subOf[k]
			t, rg := &tasks[i], ranges[i]
			of := open[i]
			if of == nil {
				var err error
				if of, err = createOutFile(filepath.Join(s.stage, t.name), rk.header, splitBufSize); err != nil {
					fail(err)
					break
				}
				open[i] = of
				t.offsets = make([]int64, rg.Len())
				t.counts = make([]int, len(rk.header.States))
			}
		}
		if res.stream && firstErr == nil {
			if err := streamSplit(wreaders, srcs, plan[g], wrk, &win, newPrefix, g, c, subOf, open, tasks, ranges, &res.read, &written, sums); err != nil {
				fail(err)
			}
		}
		for j := 0; j < c && firstErr == nil; j++ {
			k := g + int32(j)*oldMax
			i := subOf[k]
			t, rg := &tasks[i], ranges[i]
			of := open[i]
			if b := &res.buckets[j]; !res.stream && b.Len() > 0 {
				off, err := of.w.WriteBlock(b)
				if err != nil {
					fail(fmt.Errorf("%s: %w", of.f.Name(), err))
					break
				}
				t.offsets[k-rg.Start] = off
				t.entries += b.Len()
				written += int64(b.Len())
			}
			if k == rg.End { // the subtask's last key group
				err := finishFile(of.bw, of.f)
				open[i] = nil
				if err != nil {
					fail(err)
					break
				}
				t.size = of.w.Offset()
			}
		}
		if firstErr == nil {
			prog.addBytes(res.read, written)
		}
		select {
		case free <- res:
		default:
		}
		<-tokens
	}
	wg.Wait()
	for _, of := range open {
		if of != nil {
			of.f.Close()
		}
	}
	if firstErr != nil {
		return firstErr
	}
	for r := range nw {
		for i := range tasks {
			for sid, n := range counts[r][i*nStates : (i+1)*nStates] {
				tasks[i].counts[sid] += n
			}
		}
		for sid, v := range readSums[r] {
			sums[sid].Count += v.Count
			sums[sid].Hash += v.Hash
		}
	}
	return nil
}

// outFile is an output subtask's file being written: the file, its buffer, the keyed writer.
type outFile struct {
	f  *os.File
	bw *bufio.Writer
	w  *keyed.Writer
}

// createOutFile creates a new state file at path (refusing one that exists) and writes the
// header h through a buffer of bufSize bytes; finishFile completes it.
func createOutFile(path string, h *keyed.Header, bufSize int) (*outFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	of := &outFile{f: f, bw: bufio.NewWriterSize(&writebackFile{f: f, scratch: inScratch(path)}, bufSize)}
	if of.w, err = keyed.NewWriter(of.bw, h); err != nil {
		f.Close()
		return nil, err
	}
	return of, nil
}

// streamSplit streams the one block of old key group g into its c new key groups g + j*oldMax,
// each a streamed key group of its subtask's open file, in one read of the block.
func streamSplit(readers []*keyed.BlockReader, srcs []*source, refs []blockRef, rk *rekeyer, in *serializer.Input, newPrefix int,
	g int32, c int, subOf []int, open []*outFile, tasks []outputTask, ranges []keygroup.Range, read, written *int64, sums []Sum) error {
	oldMax := rk.oldMax
	for j := range c {
		k := g + int32(j)*oldMax
		if err := open[subOf[k]].w.BeginKeyGroup(int(k)); err != nil {
			return err
		}
	}
	ref := refs[0]
	n, err := streamEntries(readers[ref.src], srcs[ref.src], ref, rk, in, newPrefix, sums, func(nk int32, sid int, key, value []byte) error {
		// nk mod oldMax is g (newKG checked the stored key group).
		i := subOf[nk]
		tasks[i].counts[sid]++
		if err := open[i].w.Add(sid, key, value); err != nil {
			return fmt.Errorf("%s: %w", open[i].f.Name(), err)
		}
		return nil
	})
	*read += n
	if err != nil {
		return err
	}
	for j := range c {
		k := g + int32(j)*oldMax
		i := subOf[k]
		off, n, err := open[i].w.EndKeyGroup()
		if err != nil {
			return fmt.Errorf("%s: %w", open[i].f.Name(), err)
		}
		if n > 0 {
			tasks[i].offsets[k-ranges[i].Start] = off
			tasks[i].entries += n
			*written += int64(n)
		}
	}
	return nil
}
