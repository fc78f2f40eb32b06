package keyed

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/rocksdb"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Subtask is the keyed state of one subtask: its header and where its blocks are (Handle), or
// the RocksDB snapshot holding its entries (Native; Handle is then nil). Heap says the blocks
// are in the hashmap backend's own checkpoint layout (heap.go), not the canonical one.
type Subtask struct {
	Index   int32
	Name    string
	Header  *Header
	Handle  *metadata.KeyGroupsHandle
	Native  *metadata.IncrementalHandle
	Heap    bool
	Decoder *Decoder
	src     io.ReaderAt
	size    int64
	db      *rocksdb.DB
}

// OpenSubtasks opens the managed keyed state of every subtask of op that has some, in subtask
// order, and reads each header. Native RocksDB snapshots are opened through statecore/rocksdb
// (see native.go); any other handle that is not canonical (changelog) is refused with the
// savepoint package's explanation.
func OpenSubtasks(sp *savepoint.Savepoint, op *metadata.OperatorState) ([]*Subtask, func(), error) {
	var out []*Subtask
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	if err := CheckRanges(op); err != nil {
		return nil, nil, err
	}
	for _, st := range op.Subtasks {
		if st == nil || st.Finished || st.ManagedKeyed == nil {
			continue
		}
		if ih, ok := st.ManagedKeyed.(*metadata.IncrementalHandle); ok {
			s, closer, err := openNative(sp, op, st, ih)
			if err != nil {
				closeAll()
				return nil, nil, err
			}
			closers = append(closers, closer)
			out = append(out, s)
			continue
		}
		kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
		if !ok {
			err := sp.CheckCanonical()
			if err == nil {
				err = fmt.Errorf("operator %s subtask %d: keyed handle tag %d is not a canonical key-groups handle", op.ID, st.Index, st.ManagedKeyed.Tag())
			}
			closeAll()
			return nil, nil, err
		}
		if kh.Delegate == nil {
			continue
		}
		s, err := sp.OpenStream(kh.Delegate)
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("operator %s subtask %d keyed state: %w", op.ID, st.Index, err)
		}
		closers = append(closers, s.Close)
		h, err := ReadHeaderUpTo(io.NewSectionReader(s, 0, s.Size()), s.Name, HeaderEnd(kh, s.Size()))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		heap := false
		if kh.Tag() != metadata.TagSavepointKeyGroups {
			if heap, err = heapLayout(s, s.Name, kh); err != nil {
				closeAll()
				return nil, nil, err
			}
		}
		out = append(out, &Subtask{Index: st.Index, Name: s.Name, Header: h, Handle: kh, Heap: heap,
			Decoder: NewDecoder(h, s.Name, int(op.MaxParallelism)), src: s, size: s.Size()})
	}
	return out, closeAll, nil
}

// CheckRanges refuses key-groups handles of one operator whose ranges overlap or leave
// [0, max parallelism): Flink gives each subtask its own range, so a key group claimed twice (a
// handle repeated into another subtask) would be read twice, and its entries duplicated by a
// dump or a migration.
func CheckRanges(op *metadata.OperatorState) error {
	type claim struct{ start, end, sub int32 }
	var cs []claim
	for _, st := range op.Subtasks {
		if st == nil || st.Finished {
			continue
		}
		var r metadata.KeyGroupRange
		switch kh := st.ManagedKeyed.(type) {
		case *metadata.KeyGroupsHandle:
			r = kh.Range
		case *metadata.IncrementalHandle:
			r = kh.Range
		}
		if r.Num == 0 {
			continue
		}
		start, end := int64(r.Start), int64(r.Start)+int64(r.Num)
		if start < 0 || end > int64(op.MaxParallelism) {
			return fmt.Errorf("operator %s subtask %d: key groups [%d, %d) outside [0, %d) (the max parallelism)", op.ID, st.Index, start, end, op.MaxParallelism)
		}
		cs = append(cs, claim{int32(start), int32(end), st.Index})
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].start < cs[j].start })
	for i := 1; i < len(cs); i++ {
		if cs[i].start < cs[i-1].end {
			return fmt.Errorf("operator %s: subtasks %d and %d both claim key group %d (overlapping key-group ranges)", op.ID, cs[i-1].sub, cs[i].sub, cs[i].start)
		}
	}
	return nil
}

// Range is the key-group range the subtask's handle claims.
func (s *Subtask) Range() metadata.KeyGroupRange {
	if s.Native != nil {
		return s.Native.Range
	}
	return s.Handle.Range
}

// StreamSize is the size of the stream holding the subtask's header and key-group blocks; 0 for
// a native RocksDB snapshot, which has no such stream.
func (s *Subtask) StreamSize() int64 {
	if s.Native != nil {
		return 0
	}
	return s.size
}

// blockReader returns a reader of the subtask's key-group blocks.
func (s *Subtask) blockReader() *BlockReader {
	return &BlockReader{Name: s.Name, Compressed: s.Header.Compressed, NumStates: len(s.Header.States), PrefixLen: s.Decoder.PrefixLen}
}

// Entries reads every block of the subtask in key-group order and calls fn with each raw entry.
//
// Flink writes the header and then the blocks back to back to the end of the stream, so the
// blocks must tile it exactly: the first block starts where the header ends and each one ends
// where the next one (in file order) starts, or at the end of the stream. A gap means bytes no
// key group owns — typically an offset zeroed in _metadata, which would otherwise hide that key
// group's entries silently — and is refused.
func (s *Subtask) Entries(fn func(*Entry) error) error {
	if s.Native != nil {
		return s.nativeEntries(nil, fn)
	}
	if s.Heap {
		return s.heapEntries(fn)
	}
	br := s.blockReader()
	ends := BlockEnds(s.Handle.Offsets, s.size)
	if err := CheckFirstBlock(s.Name, s.Header, s.Handle.Offsets, s.size); err != nil {
		return err
	}
	for i, off := range s.Handle.Offsets {
		if off == 0 {
			continue
		}
		kg := int(s.Handle.Range.Start) + i
		if err := br.ReadBlockTo(s.src, s.size, off, ends[off], kg, fn); err != nil {
			return err
		}
		if err := br.CheckEnd(ends[off], kg); err != nil {
			return err
		}
	}
	return nil
}

// CheckFirstBlock refuses a stream of size bytes whose first key-group block (offsets: a
// handle's) does not start where header h ends: the bytes between belong to no key group.
func CheckFirstBlock(name string, h *Header, offsets []int64, size int64) error {
	start := size
	for _, off := range offsets {
		if off > 0 && off < start {
			start = off
		}
	}
	if start != h.Size() && start < size {
		return &javaio.FormatError{Name: name, Offset: h.Size(), Field: "key-group blocks",
			Msg: fmt.Sprintf("the header ends at %d but the first key-group block starts at %d: %d bytes belong to no key group (an offset changed in _metadata?)",
				h.Size(), start, start-h.Size())}
	}
	return nil
}

// CheckEnd refuses the block of key group kg the reader has just read when it ended (b.End)
// anywhere but at want, where the next block (or the end of the stream) starts (BlockEnds).
func (b *BlockReader) CheckEnd(want int64, kg int) error {
	if b.End != want {
		return &javaio.FormatError{Name: b.Name, Offset: b.End, Field: fmt.Sprintf("keyGroup[%d]", kg),
			Msg: fmt.Sprintf("the block ends at %d but the next block (or the end of the stream) is at %d: %d bytes belong to no key group (an offset zeroed or changed in _metadata?)",
				b.End, want, want-b.End)}
	}
	return nil
}

// BlockEnds maps each non-zero block offset to where the block must end: the next larger offset,
// or size for the last block.
func BlockEnds(offsets []int64, size int64) map[int64]int64 {
	sorted := make([]int64, 0, len(offsets))
	for _, o := range offsets {
		if o > 0 {
			sorted = append(sorted, o)
		}
	}
	slices.Sort(sorted)
	ends := make(map[int64]int64, len(sorted))
	for i, o := range sorted {
		if i+1 < len(sorted) {
			ends[o] = sorted[i+1]
		} else {
			ends[o] = size
		}
	}
	return ends
}

// CheckBlocks reads the start of every key-group block, up to and including its first entry:
// each offset must lie inside the stream, the block must start with a state id of the header,
// and its first key must carry the block's key-group prefix. It is the structural check of a
// source whose files are passed on unread (a UID rename links them), costing one small read per
// key group instead of a read of every entry.
func (s *Subtask) CheckBlocks() error {
	if s.Native != nil {
		return s.nativeCheck()
	}
	if s.Heap {
		return s.heapCheck()
	}
	br := s.blockReader()
	stop := func(*Entry) error { return ErrStop }
	ends := BlockEnds(s.Handle.Offsets, s.size)
	for i, off := range s.Handle.Offsets {
		if off == 0 {
			continue
		}
		kg := int(s.Handle.Range.Start) + i
		if err := br.ReadBlockTo(s.src, s.size, off, ends[off], kg, stop); err != nil && !errors.Is(err, ErrStop) {
			return err
		}
	}
	return nil
}

// ErrStop can be returned by a callback to end a scan early without error.
var ErrStop = errors.New("stop")

// Records decodes every entry of the subtask; only states for which want returns true (all when
// want is nil) are decoded.
func (s *Subtask) Records(want func(state string) bool, fn func(Record) error) error {
	entries := s.Entries
	if s.Native != nil && want != nil {
		// Each state is a column family of its own files: the others are not read at all.
		entries = func(fn func(*Entry) error) error {
			return s.nativeEntries(func(id int) bool { return want(s.Header.States[id].Name) }, fn)
		}
	}
	err := entries(func(e *Entry) error {
		if want != nil && !want(s.Header.States[e.StateID].Name) {
			return nil
		}
		r, err := s.Decoder.Decode(e)
		if err != nil {
			return err
		}
		return fn(r)
	})
	if errors.Is(err, ErrStop) {
		return nil
	}
	return err
}

// heapLayout tells the two layouts a non-savepoint key-groups handle (tag 12 or 3, a
// checkpoint) may point at. A RocksDB full checkpoint uses the canonical blocks; a heap-backend
// checkpoint uses the heap's own layout (heap.go), whose blocks start with an i32 key-group
// number:
//
//	canonical:   i16 stateId (< numStates), i32 keyLen, ...   or the Snappy stream id FF 06 00 00
//	heap native: i32 keyGroup, then per state {i16 stateId, state table}
func heapLayout(r io.ReaderAt, name string, kh *metadata.KeyGroupsHandle) (bool, error) {
	// Up to four blocks are looked at, so that one damaged key-group number does not make a heap
	// checkpoint read as canonical (its error then names that block).
	looked := 0
	for i, off := range kh.Offsets {
		if looked == 4 {
			break
		}
		// Key group 0 cannot tell them apart: a canonical block of state 0 with a key shorter
		// than 64 KiB also starts with 00 00 00 00. For any other key group the canonical first
		// four bytes read as stateId<<16, never a key group below 32768 other than 0. The heap
		// gives every key group a block, so a range of two or more always has such a block; a
		// range of key group 0 alone (max parallelism 1) is taken as canonical.
		if off == 0 || kh.Range.Start+int32(i) == 0 {
			continue
		}
		var b [4]byte
		if _, err := r.ReadAt(b[:], off); err != nil {
			return false, fmt.Errorf("%s: offset %d: key group %d: %w", name, off, int(kh.Range.Start)+i, err)
		}
		if int32(b[0])<<24|int32(b[1])<<16|int32(b[2])<<8|int32(b[3]) == kh.Range.Start+int32(i) {
			return true, nil
		}
		looked++
	}
	return false, nil
}
