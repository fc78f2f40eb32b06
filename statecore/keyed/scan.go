package keyed

import (
	"errors"
	"fmt"
	"io"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Subtask is the keyed state of one subtask: its header and where its blocks are.
type Subtask struct {
	Index   int32
	Name    string
	Header  *Header
	Handle  *metadata.KeyGroupsHandle
	Decoder *Decoder
	src     io.ReaderAt
	size    int64
}

// OpenSubtasks opens the managed keyed state of every subtask of op that has some, in subtask
// order, and reads each header. A handle that is not canonical (RocksDB native, changelog) is
// refused with the savepoint package's explanation.
func OpenSubtasks(sp *savepoint.Savepoint, op *metadata.OperatorState) ([]*Subtask, func(), error) {
	var out []*Subtask
	var closers []func() error
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for _, st := range op.Subtasks {
		if st == nil || st.Finished || st.ManagedKeyed == nil {
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
		h, err := ReadHeader(io.NewSectionReader(s, 0, s.Size()), s.Name)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		out = append(out, &Subtask{Index: st.Index, Name: s.Name, Header: h, Handle: kh,
			Decoder: NewDecoder(h, s.Name, int(op.MaxParallelism)), src: s, size: s.Size()})
	}
	return out, closeAll, nil
}

// Entries reads every block of the subtask in key-group order and calls fn with each raw entry.
func (s *Subtask) Entries(fn func(*Entry) error) error {
	br := &BlockReader{Name: s.Name, Compressed: s.Header.Compressed, NumStates: len(s.Header.States), PrefixLen: s.Decoder.PrefixLen}
	for i, off := range s.Handle.Offsets {
		if off == 0 {
			continue
		}
		kg := int(s.Handle.Range.Start) + i
		if err := br.ReadBlock(s.src, s.size, off, kg, fn); err != nil {
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
	err := s.Entries(func(e *Entry) error {
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
