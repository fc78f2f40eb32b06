package migrate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// The sort of a load (see Load): records are partitioned by key group as they are read, then
// written partition by partition. What it holds in memory at once is bounded by the spill
// budget, whatever the size of the data:
//
//	reading    buffers of every partition together < budget/2 (a buffer's spare capacity at
//	           most doubles that), then, for good, one fixed buffer per partition file
//	           (budget/4 shared, 4-64 KiB each)
//	writing    one partition, or one chunk of it, loaded: bytes plus entryOverhead a record
//	           < budget; a key group larger than that is streamed one record at a time

// loadPart is the records of one partition of an operator's key groups, in data order: a
// buffer while the load fits in memory, then a spill file written through w.
type loadPart struct {
	buf   *bytes.Buffer
	file  string
	w     *bufio.Writer
	size  int64
	count int
}

// loadSpill is where a load's partitions go: memory, until what is buffered passes half the
// budget, then files in dir.
type loadSpill struct {
	dir      string
	budget   int64
	parts    int   // partitions of every operator
	buffered int64 // bytes in buffers, while !files
	files    bool
	ops      []*loadOp // operators with buffered partitions, to move them to files
}

// put appends one spill record to partition p of lo.
func (sp *loadSpill) put(lo *loadOp, p *loadPart, rec []byte) error {
	return sp.putParts(lo, p, rec[:spillHeadLen-4], rec[spillHeadLen-4:])
}

// spillHeadLen is the length of a spill record's head: key group and state id, then the
// entry as a block holds it (its key's length first).
const spillHeadLen = 8

// putRun appends the spill records of a run of entries of key group kg and state sid, laid out
// as a block holds them (see loadBatch), to partition p of lo.
func (sp *loadSpill) putRun(lo *loadOp, p *loadPart, kg, sid int, run []byte) error {
	head := binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(make([]byte, 0, 4), uint16(kg)), uint16(sid))
	return walkEntries(run, func(entry []byte) error { return sp.putParts(lo, p, head, entry) })
}

// putParts appends one spill record, given as its key group and state id (head) and its entry,
// to partition p of lo.
func (sp *loadSpill) putParts(lo *loadOp, p *loadPart, head, entry []byte) error {
	n := int64(len(head) + len(entry))
	p.size += n
	p.count++
	if sp.files {
		if p.w == nil {
			if err := sp.open(p); err != nil {
				return err
			}
		}
		p.w.Write(head) // a bufio.Writer's error stays: the next Write returns it
		if _, err := p.w.Write(entry); err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		return nil
	}
	if p.buf == nil {
		p.buf = &bytes.Buffer{}
		if !slices.Contains(sp.ops, lo) {
			sp.ops = append(sp.ops, lo)
		}
	}
	p.buf.Write(head)
	p.buf.Write(entry)
	if sp.buffered += n; sp.buffered > sp.budget/2 {
		return sp.toFiles()
	}
	return nil
}

// walkEntries calls fn with each entry of a run laid out as a block holds them (u32 key
// length, key, u32 value length, value), and checks that the entries tile it.
func walkEntries(run []byte, fn func(entry []byte) error) error {
	for p := 0; p < len(run); {
		if len(run)-p < 4 {
			return fmt.Errorf("run of entries: truncated entry at byte %d", p)
		}
		e := p + 4 + int(binary.BigEndian.Uint32(run[p:]))
		if e > len(run)-4 || e < p {
			return fmt.Errorf("run of entries: key at byte %d overruns the run", p)
		}
		e += 4 + int(binary.BigEndian.Uint32(run[e:]))
		if e > len(run) || e < p {
			return fmt.Errorf("run of entries: value of the entry at byte %d overruns the run", p)
		}
		if err := fn(run[p:e]); err != nil {
			return err
		}
		p = e
	}
	return nil
}

// toFiles moves every buffered partition into its file, and makes every later record go to
// the files.
func (sp *loadSpill) toFiles() error {
	sp.files = true
	if err := os.MkdirAll(sp.dir, 0o755); err != nil {
		return err
	}
	for _, lo := range sp.ops {
		for i := range lo.parts {
			p := &lo.parts[i]
			if p.buf == nil {
				continue
			}
			if err := sp.open(p); err != nil {
				return err
			}
			if _, err := p.w.Write(p.buf.Bytes()); err != nil {
				return fmt.Errorf("spill: %w", err)
			}
			p.buf = nil
		}
	}
	sp.ops, sp.buffered = nil, 0
	return nil
}

// open gives p its spill file and the buffered writer to it.
func (sp *loadSpill) open(p *loadPart) error {
	f, err := os.CreateTemp(sp.dir, "load-*")
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	p.file = f.Name()
	if err := f.Close(); err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	size := min(max(sp.budget/4/int64(max(sp.parts, 1)), 4<<10), 64<<10)
	p.w = bufio.NewWriterSize(appendFile(p.file), int(size))
	return nil
}

// appendFile writes by appending to the file it names, opened for each write, so that an
// operator's partitions hold no file descriptors between their buffers' flushes (a savepoint's
// many keyed operators would otherwise need 64 open files each).
type appendFile string

func (a appendFile) Write(b []byte) (int, error) {
	f, err := os.OpenFile(string(a), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return 0, err
	}
	n, err := f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// chunk is the partition as a spill chunk of one part (flushed to its file first), to be
// loaded, walked or streamed like a rescale's.
func (p *loadPart) chunk() (*spillChunk, error) {
	if p.w != nil {
		if err := p.w.Flush(); err != nil {
			return nil, fmt.Errorf("spill: %w", err)
		}
		p.w = nil
	}
	return &spillChunk{parts: []spillPart{{buf: p.buf, file: p.file, size: p.size, count: p.count}}}, nil
}

// kgRange is the key groups [lo, hi) partition i of n holds, of maxPar: those with kg*n/maxPar == i.
func kgRange(i, n int, maxPar int32) (lo, hi int32) {
	first := func(i int) int32 { return int32((int64(i)*int64(maxPar) + int64(n) - 1) / int64(n)) }
	return first(i), first(i + 1)
}

// split re-spills a partition larger than the budget into chunks of its consecutive key groups
// [lo, hi), each within the budget (by lo.kgBytes) or one key group by itself (big: streamed).
func (sp *loadSpill) split(lo *loadOp, c *spillChunk, from, to int32) ([]*spillChunk, error) {
	var chunks []*spillChunk
	chunkOf := make([]int, to-from)
	var size int64
	for kg := from; kg < to; kg++ {
		b := lo.kgBytes[kg]
		if len(chunks) == 0 || (size > 0 && size+b > sp.budget) {
			chunks = append(chunks, &spillChunk{parts: make([]spillPart, 1)})
			size = 0
		}
		size += b
		chunkOf[kg-from] = len(chunks) - 1
		if size > sp.budget {
			// Only a key group with no entries before it in the chunk gets past the budget.
			chunks[len(chunks)-1].big, chunks[len(chunks)-1].kg = true, kg
		}
	}
	ws := make([]*bufio.Writer, len(chunks))
	bufSize := int(min(max(sp.budget/4/int64(len(chunks)), 4<<10), 64<<10))
	var rec []byte
	err := c.walk(func(kg, sid int, key, value []byte) error {
		if kg < int(from) || kg >= int(to) {
			return fmt.Errorf("spill: a record of key group %d in the partition of key groups %d..%d", kg, from, to-1)
		}
		ci := chunkOf[kg-int(from)]
		p := &chunks[ci].parts[0]
		if ws[ci] == nil {
			f, err := os.CreateTemp(sp.dir, "load-chunk-*")
			if err != nil {
				return fmt.Errorf("spill: %w", err)
			}
			p.file = f.Name()
			f.Close()
			ws[ci] = bufio.NewWriterSize(appendFile(p.file), bufSize)
		}
		rec = appendSpillRecord(rec[:0], kg, sid, key, value)
		n, err := ws[ci].Write(rec)
		p.size += int64(n)
		p.count++
		return err
	})
	for _, w := range ws {
		if w != nil {
			if ferr := w.Flush(); err == nil {
				err = ferr
			}
		}
	}
	if err != nil {
		for _, ch := range chunks {
			ch.remove()
		}
		return nil, fmt.Errorf("spill: %w", err)
	}
	for _, ch := range chunks {
		if !ch.big {
			splitLoaded.Add(1)
		}
	}
	return chunks, nil
}

// splitLoaded counts the chunks of split partitions that were loaded (not streamed), so that a
// test can tell the path was taken.
var splitLoaded atomic.Int64

// appendSpillRecord appends one record in the layout of the spill files (see Load).
func appendSpillRecord(dst []byte, kg, sid int, key, value []byte) []byte {
	dst = appendSpillHead(dst, kg, sid, len(key))
	dst = append(dst, key...)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(value)))
	return append(dst, value...)
}

// loadedOut is the keyed-state file of one subtask being written by writeLoaded.
type loadedOut struct {
	name    string
	f       *os.File
	bw      *bufio.Writer
	w       *keyed.Writer
	rg      keygroup.Range
	offsets []int64
}

// writeLoaded writes one canonical keyed-state file per subtask of lo.op from its partitions,
// installs their handles and makes the operator's digest what was written.
func (s *session) writeLoaded(lo *loadOp, sp *loadSpill) error {
	outs, err := s.openLoaded(lo)
	defer closeLoaded(outs)
	if err != nil {
		return err
	}
	outOf := outputOf(lo, outs)
	for i := range lo.parts {
		p := &lo.parts[i]
		if p.count == 0 {
			continue
		}
		c, err := p.chunk()
		if err != nil {
			return err
		}
		from, to := kgRange(i, len(lo.parts), lo.maxPar)
		chunks := []*spillChunk{c}
		if p.size+int64(p.count)*entryOverhead > sp.budget {
			if chunks, err = sp.split(lo, c, from, to); err != nil {
				return err
			}
			c.remove()
		}
		for _, ch := range chunks {
			err := writeChunk(ch, outOf)
			ch.remove()
			if err != nil {
				return err
			}
		}
		*p = loadPart{}
	}
	return s.finishLoaded(lo, outs)
}

// openLoaded creates the keyed-state files of lo.op's subtasks in the staging directory, each
// with its header written.
func (s *session) openLoaded(lo *loadOp) ([]*loadedOut, error) {
	outs := make([]*loadedOut, 0, len(lo.ranges))
	for _, rg := range lo.ranges {
		o := &loadedOut{name: newStateFileName(), rg: rg, offsets: make([]int64, rg.Len())}
		path := filepath.Join(s.stage, o.name)
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return outs, err
		}
		outs = append(outs, o)
		// Written to disk as it goes (writebackFile), so the fsync before _metadata waits for
		// the last chunk only.
		o.f, o.bw = f, bufio.NewWriterSize(&writebackFile{f: f, scratch: inScratch(path)}, 256<<10)
		s.fresh[o.name] = 0
		if o.w, err = keyed.NewWriter(o.bw, lo.header); err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// closeLoaded closes the files of outs that are still open.
func closeLoaded(outs []*loadedOut) {
	for _, o := range outs {
		if o != nil && o.f != nil {
			o.f.Close()
			o.f = nil
		}
	}
}

// outputOf gives the output whose range holds a key group, for key groups in increasing order.
func outputOf(lo *loadOp, outs []*loadedOut) func(kg int32) *loadedOut {
	sub := 0
	return func(kg int32) *loadedOut {
		for !lo.ranges[sub].Contains(kg) {
			sub++
		}
		return outs[sub]
	}
}

// finishLoaded syncs and closes the files of lo.op's subtasks, installs their handles and makes
// the operator's digest what was written.
func (s *session) finishLoaded(lo *loadOp, outs []*loadedOut) error {
	for i, o := range outs {
		if err := finishFile(o.bw, o.f); err != nil {
			return err
		}
		o.f = nil
		size := o.w.Offset()
		s.fresh[o.name] = size
		kh := &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups,
			Range:    metadata.KeyGroupRange{Start: o.rg.Start, Num: o.rg.Len()},
			Offsets:  o.offsets,
			Delegate: &metadata.RelativeFileHandle{Path: o.name, Size: size}}
		if st := lo.op.Subtask(int32(i)); st != nil {
			st.ManagedKeyed = kh
		} else {
			lo.op.Subtasks = append(lo.op.Subtasks, &metadata.SubtaskState{Index: int32(i), ManagedKeyed: kh})
			slices.SortFunc(lo.op.Subtasks, func(a, b *metadata.SubtaskState) int { return int(a.Index - b.Index) })
		}
	}
	if dg := s.digest[lo.op.ID]; dg != nil {
		dg.Keyed = lo.sums
		dg.pendingKeyed = false
	}
	return nil
}

// writeChunk writes the key groups of one chunk, in order, each to the output holding it:
// loaded and sorted, or streamed when the chunk is one key group too large to load.
func writeChunk(c *spillChunk, outOf func(kg int32) *loadedOut) error {
	if c.big {
		o := outOf(c.kg)
		off, _, err := c.stream(o.w, o.name)
		if err != nil {
			return err
		}
		o.offsets[c.kg-o.rg.Start] = off
		return nil
	}
	entries, err := c.loadEntries()
	if err != nil {
		return err
	}
	for len(entries) > 0 {
		kg := entries[0].KeyGroup
		n := 1
		for n < len(entries) && entries[n].KeyGroup == kg {
			n++
		}
		o := outOf(int32(kg))
		off, err := o.w.WriteKeyGroup(entries[:n])
		if err != nil {
			return err
		}
		o.offsets[int32(kg)-o.rg.Start] = off
		entries = entries[n:]
	}
	return nil
}

// loadEntries loads the chunk and returns its records ordered by key group (parseSpill).
func (c *spillChunk) loadEntries() ([]keyed.Entry, error) {
	data, count, err := c.load()
	if err != nil {
		return nil, err
	}
	return parseSpill(data, count)
}
