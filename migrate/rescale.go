package migrate

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"
	"unsafe"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// spillDir holds a rescale's spill files inside the staging directory.
const spillDir = ".spill"

// defaultSpillBudget bounds what one spill chunk costs in memory when loaded. With Go's
// garbage collector letting the heap grow to about twice what is live, 48 MiB keeps a rescale
// of any size under 256 MiB of RSS (bench/migrate.sh measures it). A key group larger than a
// chunk's share of the budget is never loaded: it is streamed from its spill (spillChunk.stream).
const defaultSpillBudget = 48 << 20

// entryOverhead is what one loaded entry costs besides its bytes (a keyed.Entry).
const entryOverhead = int64(unsafe.Sizeof(keyed.Entry{}))

// Rescale moves keyed operators to a new max parallelism (and parallelism). Every key's key
// group is recomputed from its Java hashCode() (keyHasher), its key-group prefix rewritten (one
// byte up to 128 key groups, two above), and entries and timers are regrouped into one new
// keyed-state file per subtask, subtask i owning key groups
// [ceil(i*maxP/p), floor(((i+1)*maxP-1)/p)]. Values are copied as bytes.
//
// Operators is empty for every keyed operator (operators without any state also get the new max
// parallelism then, so that the job's vertices agree). Parallelism 0 keeps each operator's
// parallelism, capped at the new max. A parallelism change is refused for operators with
// operator state: Flink's metadata holds one operator-state handle per subtask, and merging or
// splitting them is Flink's own repartitioning, which statecraft does not reproduce; restore the
// savepoint with the new parallelism instead (Flink redistributes operator state itself).
type Rescale struct {
	Operators      []Selector
	MaxParallelism int32
	Parallelism    int32
}

// Describe implements Step.
func (r *Rescale) Describe() string {
	s := fmt.Sprintf("rescale max-parallelism=%d", r.MaxParallelism)
	if r.Parallelism > 0 {
		s += fmt.Sprintf(" parallelism=%d", r.Parallelism)
	}
	for _, o := range r.Operators {
		s += " " + o.String()
	}
	return s
}

func (r *Rescale) apply(s *session) (*StepReport, error) {
	if r.MaxParallelism < 1 || r.MaxParallelism > keygroup.UpperBoundMaxParallelism {
		return nil, fmt.Errorf("max parallelism %d: want 1..%d", r.MaxParallelism, keygroup.UpperBoundMaxParallelism)
	}
	ops, err := r.targets(s.m)
	if err != nil {
		return nil, err
	}
	rep := &StepReport{Step: r.Describe()}
	for _, op := range ops {
		ch, err := r.rescaleOperator(s, op)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		rep.Operators = append(rep.Operators, *ch)
	}
	if len(r.Operators) == 0 {
		for _, op := range s.m.Operators {
			if op.SubtaskStateCount() == 0 && op.Coordinator == nil && op.Parallelism <= r.MaxParallelism && op.MaxParallelism != r.MaxParallelism {
				rep.Operators = append(rep.Operators, OperatorChange{Operator: Label(op), UIDHashBefore: op.ID.String(), UIDHashAfter: op.ID.String(),
					ParallelismBefore: op.Parallelism, ParallelismAfter: op.Parallelism, MaxParBefore: op.MaxParallelism, MaxParAfter: r.MaxParallelism,
					Note: "no state: only the max parallelism changed"})
				op.MaxParallelism = r.MaxParallelism
			}
		}
	}
	return rep, nil
}

// targets returns the operators of m the step rescales: every keyed operator when no selector
// is given, else the selected ones (each once), which must have keyed state.
func (r *Rescale) targets(m *metadata.Metadata) ([]*metadata.OperatorState, error) {
	var ops []*metadata.OperatorState
	if len(r.Operators) == 0 {
		for _, op := range m.Operators {
			if hasKeyed(op) {
				ops = append(ops, op)
			}
		}
		if len(ops) == 0 {
			return nil, fmt.Errorf("the savepoint has no keyed operator")
		}
		return ops, nil
	}
	seen := map[*metadata.OperatorState]bool{}
	for _, sel := range r.Operators {
		op, err := sel.find(m)
		if err != nil {
			return nil, err
		}
		if !hasKeyed(op) {
			return nil, fmt.Errorf("operator %s has no keyed state to rescale", Label(op))
		}
		if !seen[op] {
			seen[op] = true
			ops = append(ops, op)
		}
	}
	return ops, nil
}

func hasKeyed(op *metadata.OperatorState) bool {
	for _, st := range op.Subtasks {
		if st != nil && !st.Finished && st.ManagedKeyed != nil {
			return true
		}
	}
	return false
}

// source is one subtask's keyed-state stream being read.
type source struct {
	name   string
	r      io.ReaderAt
	size   int64
	closer io.Closer
	handle *metadata.KeyGroupsHandle
	header *keyed.Header
	ids    []int           // merged state id of each state id
	ends   map[int64]int64 // where each block should end (keyed.BlockEnds), to size reads
}

// blockReader returns a reader of the source's key-group blocks, whose keys carry prefix-byte
// key-group prefixes.
func (x *source) blockReader(prefix int) *keyed.BlockReader {
	return &keyed.BlockReader{Name: x.name, Compressed: x.header.Compressed, NumStates: len(x.header.States), PrefixLen: prefix}
}

// readBlock reads the block at off (key group kg) with br and, as keyed.Subtask.Entries does,
// refuses one that ends before the next block starts (bytes no key group owns).
func (x *source) readBlock(br *keyed.BlockReader, off int64, kg int, fn func(*keyed.Entry) error) error {
	if err := br.ReadBlockTo(x.r, x.size, off, x.ends[off], kg, fn); err != nil {
		return err
	}
	return br.CheckEnd(x.ends[off], kg)
}

// blockReaders returns one block reader per source (blockReader), for a task that reads several.
func blockReaders(srcs []*source, prefix int) []*keyed.BlockReader {
	rs := make([]*keyed.BlockReader, len(srcs))
	for i, x := range srcs {
		rs[i] = x.blockReader(prefix)
	}
	return rs
}

// openKeyed opens a stream handle of the working metadata: a file a previous step wrote into
// the staging directory, or anything in the source savepoint.
func (s *session) openKeyed(h metadata.StreamHandle) (io.ReaderAt, int64, string, io.Closer, error) {
	if rf, ok := h.(*metadata.RelativeFileHandle); ok {
		if _, fresh := s.fresh[rf.Path]; fresh {
			name := filepath.Join(s.stage, rf.Path)
			f, err := os.Open(name)
			if err != nil {
				return nil, 0, "", nil, err
			}
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				return nil, 0, "", nil, err
			}
			return f, fi.Size(), name, f, nil
		}
	}
	st, err := s.src.OpenStream(h)
	if err != nil {
		return nil, 0, "", nil, err
	}
	return st, st.Size(), st.Name, st, nil
}

func (r *Rescale) rescaleOperator(s *session, op *metadata.OperatorState) (*OperatorChange, error) {
	newMax := r.MaxParallelism
	newPar := r.Parallelism
	if newPar == 0 {
		newPar = min(op.Parallelism, newMax)
	}
	if newPar < 1 || newPar > newMax {
		return nil, fmt.Errorf("parallelism %d: want 1..max parallelism %d", newPar, newMax)
	}
	oldMax := op.MaxParallelism
	if m, ok := s.srcMax[op]; ok {
		oldMax = m // an earlier step of this validation or dry run did not rewrite the files
	}
	ch := &OperatorChange{Operator: Label(op), UIDHashBefore: op.ID.String(), UIDHashAfter: op.ID.String(),
		ParallelismBefore: op.Parallelism, ParallelismAfter: newPar, MaxParBefore: op.MaxParallelism, MaxParAfter: newMax,
		EntriesBefore: map[string]int{}, EntriesAfter: map[string]int{}}
	if newMax == op.MaxParallelism && newPar == op.Parallelism {
		// Rewriting would produce the same key groups in the same subtasks: keep the files (they
		// are linked like any unchanged file) and say that this step changes nothing.
		ch.Note = fmt.Sprintf("unchanged: max parallelism already %d and parallelism %d; state files kept as they are", newMax, newPar)
		return ch, nil
	}

	// Checks that need no state file: the layout the rewrite supports.
	for _, st := range op.Subtasks {
		if st == nil || st.Finished {
			continue
		}
		if st.RawKeyed != nil {
			return nil, fmt.Errorf("subtask %d has raw keyed state (written by the operator itself), which statecraft cannot regroup", st.Index)
		}
		if len(st.InputChannels)+len(st.OutputChannels) > 0 {
			return nil, fmt.Errorf("subtask %d has in-flight channel state (an unaligned checkpoint); use a savepoint", st.Index)
		}
		if newPar != op.Parallelism && (st.ManagedOperator != nil || st.RawOperator != nil) {
			return nil, fmt.Errorf("parallelism change %d -> %d refused: the operator also has operator state, whose redistribution "+
				"(Flink's round-robin/union/broadcast repartitioning) statecraft does not reproduce; rescale with --parallelism %d "+
				"and let Flink change the parallelism when it restores", op.Parallelism, newPar, op.Parallelism)
		}
		if st.ManagedKeyed == nil {
			continue
		}
		kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
		if !ok {
			return nil, fmt.Errorf("subtask %d: keyed state is not in the canonical savepoint format (tag %d); take a canonical savepoint", st.Index, st.ManagedKeyed.Tag())
		}
		if kh.Tag() != metadata.TagSavepointKeyGroups {
			return nil, fmt.Errorf("subtask %d: key-groups handle tag %d is a checkpoint's; rescale works on savepoints (tag 7)", st.Index, kh.Tag())
		}
	}

	var srcs []*source
	defer func() {
		for _, x := range srcs {
			x.closer.Close()
		}
	}()
	var hs []*keyed.Header
	var names []string
	for _, st := range op.Subtasks {
		if st == nil || st.Finished || st.ManagedKeyed == nil {
			continue
		}
		kh := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
		if kh.Delegate == nil {
			continue
		}
		ra, size, name, c, err := s.openKeyed(kh.Delegate)
		if err != nil {
			return nil, fmt.Errorf("subtask %d keyed state: %w", st.Index, err)
		}
		x := &source{name: name, r: ra, size: size, closer: c, handle: kh, ends: keyed.BlockEnds(kh.Offsets, size)}
		srcs = append(srcs, x)
		if x.header, err = keyed.ReadHeaderUpTo(io.NewSectionReader(ra, 0, size), name, keyed.HeaderEnd(kh, size)); err != nil {
			return nil, err
		}
		hs = append(hs, x.header)
		names = append(names, name)
	}
	if len(srcs) == 0 {
		return nil, fmt.Errorf("no keyed state stream")
	}
	header, ids, err := unionHeader(hs, names)
	if err != nil {
		return nil, err
	}
	for i := range srcs {
		srcs[i].ids = ids[i]
	}
	hasher, err := newKeyHasher(header.KeySerializer)
	if err != nil {
		return nil, err
	}
	timer := make([]bool, len(header.States))
	for i, m := range header.States {
		timer[i] = m.Type == keyed.PriorityQueue
	}
	oldPrefix, newPrefix := keyed.PrefixLen(int(oldMax)), keyed.PrefixLen(int(newMax))
	ranges := make([]keygroup.Range, newPar)
	for i := range ranges {
		ranges[i], _ = keygroup.RangeForOperator(newMax, newPar, int32(i))
	}
	// A run that will not write (validation before the real run) stops here unless it is a dry
	// run that must report counts.
	if s.stage == "" && !s.opt.DryRun {
		s.srcMax[op] = oldMax
		op.MaxParallelism, op.Parallelism = newMax, newPar
		return ch, nil
	}

	// What a read of the source by keyed.Subtask.Entries refuses besides bad blocks (each read
	// below checks where its block ends): key-group ranges claimed twice, and bytes between the
	// header and the first block.
	if err := keyed.CheckRanges(op); err != nil {
		return nil, err
	}
	for _, x := range srcs {
		if err := keyed.CheckFirstBlock(x.name, x.header, x.handle.Offsets, x.size); err != nil {
			return nil, err
		}
	}
	rk := &rekeyer{hasher: hasher, header: header, timer: timer, oldPrefix: oldPrefix, oldMax: oldMax, newMax: newMax}
	var in serializer.Input
	newKG := func(x *source, e *keyed.Entry) (int32, error) { return rk.newKG(&in, x, e) }
	prog := newProgress(s.opt.Progress, "rescale "+Label(op), srcs)
	// The source's keyed digest, when verification still needs it (digestOf left it to this
	// first step), is summed during the split path's own read; other paths sum it first.
	var od *OpDigest
	if d := s.digest[op.ID]; d != nil && d.pendingKeyed {
		od = d
	}
	if s.stage != "" && !spillOnly {
		if plan := directPlan(srcs, oldMax, newMax); plan != nil {
			err := r.rescaleDirect(s, op, ch, rk, srcs, ranges, plan, prog, od)
			if err != nil {
				// Tasks run concurrently, so the error above is not necessarily the first a
				// sequential read meets; report the one the spill path would (pass 1 below).
				if serr := scanAll(srcs, oldPrefix, nil, 0, func(x *source, e *keyed.Entry) error {
					_, err := newKG(x, e)
					return err
				}); serr != nil {
					return nil, serr
				}
				return nil, err
			}
			return ch, nil
		}
	}
	if od != nil {
		if err := digestKeyed(s.src, op, od); err != nil {
			return nil, fmt.Errorf("checksum the source: %w", err)
		}
	}
	// Pass 1: the new key group of every entry; bytes per new key group size the spill chunks.
	// Sources are read concurrently, each into its own tallies, added up afterwards.
	kgBytesOf := make([][]int64, len(srcs))
	countsOf := make([][]int, len(srcs))
	err = parallel(len(srcs), func(si int) error {
		x, trk, in := srcs[si], rk.forTask(), &serializer.Input{}
		kgb, counts := make([]int64, newMax), make([]int, len(header.States))
		kgBytesOf[si], countsOf[si] = kgb, counts
		return scanSource(x, oldPrefix, prog, 1, func(e *keyed.Entry) error {
			kg, err := trk.newKG(in, x, e)
			if err != nil {
				return err
			}
			// A chunk costs its spilled bytes plus one keyed.Entry per entry when it is loaded.
			kgb[kg] += int64(len(e.Key)-oldPrefix+newPrefix+len(e.Value)+12) + entryOverhead
			counts[x.ids[e.StateID]]++
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	kgBytes := make([]int64, newMax)
	for si := range srcs {
		for kg, b := range kgBytesOf[si] {
			kgBytes[kg] += b
		}
		for id, n := range countsOf[si] {
			if n > 0 {
				ch.EntriesBefore[header.States[id].Name] += n
			}
		}
	}
	if s.stage == "" { // dry run: counts only
		perSub := make([]int, newPar)
		err = scanAll(srcs, oldPrefix, nil, 0, func(x *source, e *keyed.Entry) error {
			kg, err := newKG(x, e)
			if err == nil {
				perSub[keygroup.OperatorIndex(newMax, newPar, kg)]++
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		ch.EntriesAfter = ch.EntriesBefore
		ch.EntriesPerSubtask = perSub
		s.srcMax[op] = oldMax
		s.dryCount[op] = int(newPar) // installOutputs writes one subtask state per new subtask
		op.MaxParallelism, op.Parallelism = newMax, newPar
		return ch, nil
	}

	// Chunks: consecutive key groups of one subtask whose entries fit the budget together. The
	// output subtasks are written concurrently, each loading one chunk at a time, so a chunk
	// gets the budget shared by the workers.
	budget := s.opt.SpillBudget
	if budget <= 0 {
		budget = defaultSpillBudget
	}
	var total int64
	for _, b := range kgBytes {
		total += b
	}
	inMemory := total <= budget
	chunkBudget := max(budget/int64(workers(len(ranges))), 1)
	var chunks []*spillChunk
	chunkOf := make([]int32, newMax)
	if !inMemory {
		if err := os.MkdirAll(filepath.Join(s.stage, spillDir), 0o755); err != nil {
			return nil, err
		}
	}
	for i, rg := range ranges {
		var c *spillChunk
		var size int64
		for kg := rg.Start; kg <= rg.End; kg++ {
			if c == nil || (size > 0 && (size+kgBytes[kg] > chunkBudget || streamAllChunks)) {
				c = &spillChunk{sub: i, parts: make([]spillPart, len(srcs))}
				chunks = append(chunks, c)
				size = 0
			}
			size += kgBytes[kg]
			chunkOf[kg] = int32(len(chunks) - 1)
			if size > chunkBudget || (streamAllChunks && size > 0) {
				// Only one key group with entries gets past the budget: the next one starts a
				// chunk of its own. Loading it would cost more than the budget: it is streamed.
				c.big, c.kg = true, kg
			}
		}
	}
	defer func() {
		for _, c := range chunks {
			c.remove()
		}
	}()

	// Pass 2: spill every entry, re-prefixed, into its chunk. Each source is spilled by one
	// task into parts of its own (a file, or a buffer when everything fits the budget); a
	// chunk is its parts in source order, so its entries are in scan order whatever the
	// scheduling:
	//	+--------+-------------+-----------+-----------------+-----------+-------+
	//	| u16 kg | u16 stateId | u32 klen  | key (new prefix)| u32 vlen  | value |
	//	+--------+-------------+-----------+-----------------+-----------+-------+
	// A spilling task may hold a writer for every chunk: their buffers share 8 MiB (32 KiB
	// each at most, 4 KiB at least), so that a huge savepoint's many chunks stay cheap.
	spillBuf := min(max((8<<20)/max(len(chunks), 1), 4<<10), 32<<10)
	err = parallel(len(srcs), func(si int) error {
		x, trk, in := srcs[si], rk.forTask(), &serializer.Input{}
		ws := map[int32]*bufio.Writer{} // open parts of this source, by chunk
		var rec [10]byte
		err := scanSource(x, oldPrefix, prog, 2, func(e *keyed.Entry) error {
			kg, err := trk.newKG(in, x, e)
			if err != nil {
				return err
			}
			ci := chunkOf[kg]
			c := chunks[ci]
			w := ws[ci]
			if w == nil {
				if w, err = c.parts[si].open(s.stage, inMemory, spillBuf); err != nil {
					return err
				}
				ws[ci] = w
			}
			head := appendSpillHead(rec[:0], int(kg), x.ids[e.StateID], len(e.Key)-oldPrefix+newPrefix)
			n := len(appendKeyGroupPrefix(head, kg, newPrefix))
			part := &c.parts[si]
			part.count++
			part.size += int64(n + len(e.Key) - oldPrefix + 4 + len(e.Value))
			w.Write(rec[:n])
			w.Write(e.Key[oldPrefix:])
			binary.BigEndian.PutUint32(rec[:4], uint32(len(e.Value)))
			w.Write(rec[:4])
			_, err = w.Write(e.Value)
			return err
		})
		for ci, w := range ws {
			if ferr := chunks[ci].parts[si].close(w); ferr != nil && err == nil {
				err = fmt.Errorf("spill: %w", ferr)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}

	// Write: one file per new subtask, its chunks in key-group order; subtasks concurrently.
	outs := newOutputTasks(s, len(ranges))
	firstChunk := make([]int, len(ranges)+1) // chunks of subtask i: [firstChunk[i], firstChunk[i+1])
	for ci, c := range chunks {
		firstChunk[c.sub+1] = ci + 1
	}
	for i := 1; i < len(firstChunk); i++ {
		firstChunk[i] = max(firstChunk[i], firstChunk[i-1])
	}
	err = parallel(len(ranges), func(i int) error {
		rg := ranges[i]
		path := filepath.Join(s.stage, outs[i].name)
		of, err := createOutFile(path, header, 256<<10)
		if err != nil {
			return err
		}
		defer of.f.Close()
		f, bw, w := of.f, of.bw, of.w
		offsets := make([]int64, rg.Len())
		for _, c := range chunks[firstChunk[i]:firstChunk[i+1]] {
			if c.big {
				off, n, err := c.stream(w, path)
				if err != nil {
					return err
				}
				if n > 0 {
					offsets[c.kg-rg.Start] = off
					outs[i].entries += n
				}
				c.remove()
				continue
			}
			entries, err := c.loadEntries()
			if err != nil {
				return err
			}
			for a := 0; a < len(entries); {
				b := a
				for b < len(entries) && entries[b].KeyGroup == entries[a].KeyGroup {
					b++
				}
				off, err := w.WriteKeyGroup(entries[a:b])
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				offsets[int32(entries[a].KeyGroup)-rg.Start] = off
				outs[i].entries += b - a
				a = b
			}
			c.remove()
		}
		if err := finishFile(bw, f); err != nil {
			return err
		}
		outs[i].size, outs[i].offsets = w.Offset(), offsets
		return nil
	})
	if err != nil {
		return nil, err
	}
	prog.done()
	installOutputs(s, op, ch, newMax, ranges, outs)
	return ch, nil
}

// outputTask is what the task writing one output subtask's file produced.
type outputTask struct {
	name    string
	size    int64
	offsets []int64
	entries int
	counts  []int // entries by merged state id (the direct path's tally)
}

// newOutputTasks draws and registers the file names of n output subtasks before the tasks
// writing them start: s.fresh is not shared with the tasks.
func newOutputTasks(s *session, n int) []outputTask {
	tasks := make([]outputTask, n)
	for i := range tasks {
		tasks[i].name = newStateFileName()
		s.fresh[tasks[i].name] = 0
	}
	return tasks
}

// installOutputs gives op the subtasks the tasks wrote, one per range, and the new max
// parallelism, and completes ch's counts: a rescale moves entries, it keeps every one.
func installOutputs(s *session, op *metadata.OperatorState, ch *OperatorChange, newMax int32, ranges []keygroup.Range, tasks []outputTask) {
	newPar := int32(len(ranges))
	subs := make([]*metadata.SubtaskState, newPar)
	perSub := make([]int, newPar)
	for i, t := range tasks {
		s.fresh[t.name] = t.size
		subs[i] = newSubtaskState(op, newPar, i, ranges[i], t.offsets, t.name, t.size)
		perSub[i] = t.entries
	}
	op.Subtasks = subs
	op.MaxParallelism, op.Parallelism = newMax, newPar
	for k, v := range ch.EntriesBefore {
		ch.EntriesAfter[k] = v
	}
	ch.EntriesPerSubtask = perSub
}

// newSubtaskState is subtask i of the rescaled operator: its new keyed-state file (name, size,
// block offsets of the key groups rg), and, when the parallelism is unchanged, everything else
// the subtask had (operator state).
func newSubtaskState(op *metadata.OperatorState, newPar int32, i int, rg keygroup.Range, offsets []int64, name string, size int64) *metadata.SubtaskState {
	kh := &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups,
		Range:    metadata.KeyGroupRange{Start: rg.Start, Num: rg.Len()},
		Offsets:  offsets,
		Delegate: &metadata.RelativeFileHandle{Path: name, Size: size}}
	if newPar == op.Parallelism {
		if old := op.Subtask(int32(i)); old != nil && !old.Finished {
			cp := *old
			cp.ManagedKeyed = kh
			return &cp
		}
	}
	return &metadata.SubtaskState{Index: int32(i), ManagedKeyed: kh}
}

// rekeyer computes the new key group of an entry from its key's Java hashCode().
type rekeyer struct {
	hasher         *keyHasher
	header         *keyed.Header
	timer          []bool // by merged state id: a timer queue, whose keys start with a timestamp
	oldPrefix      int
	oldMax, newMax int32
}

// forTask returns a copy of rk for one concurrent task, with a key hasher of its own.
func (rk *rekeyer) forTask() *rekeyer {
	c := *rk
	if h, err := newKeyHasher(rk.header.KeySerializer); err == nil { // rk's was built the same way
		c.hasher = h
	}
	return &c
}

// newKG returns e's key group under the new max parallelism, and refuses a key whose hash does
// not give the key group it is stored in (a hashCode statecraft computes differently from the
// job would misplace keys). in is the caller's scratch input.
func (rk *rekeyer) newKG(in *serializer.Input, x *source, e *keyed.Entry) (int32, error) {
	start := rk.oldPrefix
	if rk.timer[x.ids[e.StateID]] {
		start += 8
	}
	h, ok := rk.hasher.hashFixed(e.Key, start)
	if !ok {
		in.Reset(e.Key)
		in.Pos = start
		var err error
		if h, err = rk.hasher.hash(in); err != nil {
			return 0, fmt.Errorf("%s: key group %d: key of state %q: %w", x.name, e.KeyGroup, rk.header.States[x.ids[e.StateID]].Name, err)
		}
	}
	m := keygroup.MurmurHash(h) // ForHash(h, max) is m % max: mixed once for both
	if old := modMax(m, rk.oldMax); int(old) != e.KeyGroup {
		return 0, fmt.Errorf("%s: a key of state %q in key group %d hashes to key group %d: statecraft's Java hashCode of %s "+
			"disagrees with the job's, so the key would be misplaced (refused)", x.name, rk.header.States[x.ids[e.StateID]].Name,
			e.KeyGroup, old, serializer.JavaType(rk.header.KeySerializer))
	}
	return modMax(m, rk.newMax), nil
}

// modMax is m % max for m >= 0 (a murmur hash): a mask when max is a power of two, as max
// parallelisms usually are, since a division per key and max parallelism is a good part of
// the CPU time of re-keying ten million entries.
func modMax(m, max int32) int32 {
	if max&(max-1) == 0 {
		return m & (max - 1)
	}
	return m % max
}

// appendKeyGroupPrefix appends key group kg as the prefixLen-byte (1 or 2, keyed.PrefixLen)
// big-endian prefix a key carries in a block.
func appendKeyGroupPrefix(dst []byte, kg int32, prefixLen int) []byte {
	if prefixLen == 2 {
		return append(dst, byte(kg>>8), byte(kg))
	}
	return append(dst, byte(kg))
}

// scanAll reads every entry of every source in key-group order.
func scanAll(srcs []*source, prefix int, prog *progress, pass int, fn func(*source, *keyed.Entry) error) error {
	for _, x := range srcs {
		if err := scanSource(x, prefix, prog, pass, func(e *keyed.Entry) error { return fn(x, e) }); err != nil {
			return err
		}
	}
	return nil
}

// scanSource reads every entry of one source in key-group order. Sources may be scanned
// concurrently: progress is counted per block.
func scanSource(x *source, prefix int, prog *progress, pass int, fn func(*keyed.Entry) error) error {
	br := x.blockReader(prefix)
	for i, off := range x.handle.Offsets {
		if off == 0 {
			continue
		}
		kg := int(x.handle.Range.Start) + i
		var bytes, records int64
		err := x.readBlock(br, off, kg, func(e *keyed.Entry) error {
			bytes += int64(len(e.Key) + len(e.Value) + 8)
			records++
			return fn(e)
		})
		if err != nil {
			return err
		}
		prog.add(pass, bytes, records)
	}
	return nil
}

// newStateFileName returns a random UUID, the way Flink names state files.
func newStateFileName() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// progress prints records, bytes, rate and time left to a terminal, at most twice a second.
// Concurrent scans report to it block by block.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	what    string
	total   int64 // stream bytes per pass
	done2   [3]int64
	records int64
	start   time.Time
	last    time.Time
}

func newProgress(w io.Writer, what string, srcs []*source) *progress {
	if w == nil {
		return nil
	}
	p := &progress{w: w, what: what, start: time.Now()}
	for _, x := range srcs {
		p.total += x.size
	}
	return p
}

// add counts n bytes and the given records read by pass 1 or 2 (pass 0 is not shown).
func (p *progress) add(pass int, n, records int64) {
	if p == nil || pass == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done2[pass] += n
	p.records += records
	now, show := p.due()
	if !show {
		return
	}
	doneBytes := p.done2[1] + p.done2[2]
	el := now.Sub(p.start).Seconds()
	rate := float64(doneBytes) / max(el, 1e-3)
	left := float64(2*p.total-doneBytes) / max(rate, 1)
	fmt.Fprintf(p.w, "\r%s: pass %d/2, %d records, %.1f MiB, %.1f MiB/s, ~%.0fs left   ", p.what, pass, p.records,
		float64(doneBytes)/(1<<20), rate/(1<<20), max(left, 0))
}

// due reports whether the progress line is to be printed now (at most twice a second), and
// when it is, notes the time. The caller holds p.mu.
func (p *progress) due() (time.Time, bool) {
	now := time.Now()
	if now.Sub(p.last) < 500*time.Millisecond {
		return now, false
	}
	p.last = now
	return now, true
}

// addBytes counts n bytes and records of the direct path, which reads in one pass.
func (p *progress) addBytes(n, records int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done2[1] += n
	p.records += records
	now, show := p.due()
	if !show {
		return
	}
	el := now.Sub(p.start).Seconds()
	rate := float64(p.done2[1]) / max(el, 1e-3)
	// A source block may be read by more than one output task, so the bytes read can pass the
	// total: time left then shows 0 until the writers finish.
	left := float64(p.total-p.done2[1]) / max(rate, 1)
	fmt.Fprintf(p.w, "\r%s: %d records written, %.1f MiB read, %.1f MiB/s, ~%.0fs left   ", p.what, p.records,
		float64(p.done2[1])/(1<<20), rate/(1<<20), max(left, 0))
}

func (p *progress) done() {
	if p == nil || p.last.IsZero() {
		return
	}
	fmt.Fprintf(p.w, "\r%s: %d records in %.1fs%30s\n", p.what, p.records, time.Since(p.start).Seconds(), "")
}

// finishFile makes a state file durable before its handle can reach _metadata: the buffered
// bytes are flushed and fsynced (not in a scratch stage, see markScratch), and the file is
// closed whatever happens.
func finishFile(bw *bufio.Writer, f *os.File) error {
	err := bw.Flush()
	if err == nil && !inScratch(f.Name()) {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
