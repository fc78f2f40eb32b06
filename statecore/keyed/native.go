package keyed

import (
	"fmt"
	"io"
	"strings"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/rocksdb"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// Native RocksDB snapshots (incremental handles, tags 11 and 5) hold the backend's own files:
//
//	IncrementalHandle
//	  meta state handle -> the same header as a canonical file (KeyedBackendSerializationProxy)
//	  shared / private  -> {local path, stream}: *.sst, MANIFEST-*, CURRENT, OPTIONS-*
//
// One RocksDB column family per state, named like the state. Keys and values are byte for byte
// the canonical entries' (key-group prefix, key, namespace, [map user key]; list elements joined
// by ',' through the string-append merge operator), so the entries of the merged column families
// go through the same Decoder. Keys outside the handle's key-group range are dropped, as Flink
// drops them when it restores a rescaled snapshot.

// nativeFS serves a handle's files to the RocksDB reader by their local names, opening each
// through the savepoint (relative, absolute or inline handles alike).
type nativeFS struct {
	sp     *savepoint.Savepoint
	files  map[string]metadata.StreamHandle
	opened []*savepoint.Stream
	label  string
}

func (f *nativeFS) Open(name string) (io.ReaderAt, int64, error) {
	h, ok := f.files[name]
	if !ok {
		return nil, 0, fmt.Errorf("%s: the snapshot has no file %s", f.label, name)
	}
	s, err := f.sp.OpenStream(h)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: file %s: %w", f.label, name, err)
	}
	f.opened = append(f.opened, s)
	return s, s.Size(), nil
}

func (f *nativeFS) Close() error {
	for _, s := range f.opened {
		s.Close()
	}
	f.opened = nil
	return nil
}

// openNative opens the native snapshot of one subtask: its header from the meta state handle,
// and its RocksDB database.
func openNative(sp *savepoint.Savepoint, op *metadata.OperatorState, st *metadata.SubtaskState, h *metadata.IncrementalHandle) (*Subtask, func() error, error) {
	label := fmt.Sprintf("%s: operator %s subtask %d (native RocksDB snapshot)", sp.MetadataPath, op.ID, st.Index)
	if h.MetaData == nil {
		return nil, nil, fmt.Errorf("%s: no meta state handle", label)
	}
	fs := &nativeFS{sp: sp, files: map[string]metadata.StreamHandle{}, label: label}
	for _, list := range [][]metadata.PathHandle{h.Shared, h.Private} {
		for _, p := range list {
			if p.LocalPath == "" || strings.ContainsAny(p.LocalPath, "/\\\x00") || p.LocalPath == "." || p.LocalPath == ".." {
				return nil, nil, fmt.Errorf("%s: file name %q is not a plain RocksDB file name", label, p.LocalPath)
			}
			if _, dup := fs.files[p.LocalPath]; dup {
				return nil, nil, fmt.Errorf("%s: file %s listed twice", label, p.LocalPath)
			}
			fs.files[p.LocalPath] = p.Handle
		}
	}
	ms, err := sp.OpenStream(h.MetaData)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: meta state: %w", label, err)
	}
	// The meta data file holds the header alone.
	hdr, err := ReadHeaderUpTo(io.NewSectionReader(ms, 0, ms.Size()), ms.Name, ms.Size())
	ms.Close()
	if err != nil {
		return nil, nil, err
	}
	db, err := rocksdb.Open(fs)
	if err != nil {
		fs.Close()
		return nil, nil, fmt.Errorf("%s: %w", label, err)
	}
	// Every column family but RocksDB's default one must be a state of the header: one that is not
	// would be state dropped without a word.
	for _, cf := range db.Manifest.ColumnFamilies {
		if cf.Name == "default" {
			continue
		}
		if hdr.stateID(cf.Name) < 0 {
			fs.Close()
			return nil, nil, fmt.Errorf("%s: column family %q is not a state of the snapshot's meta data", label, cf.Name)
		}
	}
	s := &Subtask{Index: st.Index, Name: label, Header: hdr, Native: h,
		Decoder: NewDecoder(hdr, label, int(op.MaxParallelism)), db: db}
	return s, fs.Close, nil
}

// stateID is the index of the named state, or -1.
func (h *Header) stateID(name string) int {
	for i, m := range h.States {
		if m.Name == name {
			return i
		}
	}
	return -1
}

// nativeEntries merges each state's column family and emits the entries in the canonical order:
// key group by key group, and inside one key group state by state, keys ascending. Each column
// family is sorted by key, whose first bytes are the key group, so the merge streams: memory is
// one data block per live table plus one key's merge operands, whatever the snapshot's size.
// want, when not nil, selects the states (by id) to read; the others' files are left unread.
func (s *Subtask) nativeEntries(want func(id int) bool, fn func(*Entry) error) error {
	return pipelined(func(fn func(*Entry) error) error { return s.nativeMerge(want, fn) }, fn)
}

// nativeMerge is nativeEntries in the calling goroutine.
func (s *Subtask) nativeMerge(want func(id int) bool, fn func(*Entry) error) error {
	prefix := s.Decoder.PrefixLen
	rng := s.Native.Range
	iters := make([]*rocksdb.MergeIter, len(s.Header.States))
	live := make([]bool, len(iters))
	kgOf := func(key []byte) int {
		if prefix == 1 {
			return int(key[0])
		}
		return int(key[0])<<8 | int(key[1])
	}
	// advance moves state i to its next key inside the handle's key-group range.
	advance := func(i int) error {
		for {
			if live[i] = iters[i].Next(); !live[i] {
				return iters[i].Err()
			}
			k := iters[i].Key()
			if len(k) < prefix {
				return fmt.Errorf("%s: column family %q: key %x is shorter than the %d-byte key-group prefix", s.Name, s.Header.States[i].Name, k, prefix)
			}
			if rng.Contains(int32(kgOf(k))) {
				return nil
			}
		}
	}
	for i, m := range s.Header.States {
		cf, ok := s.db.ColumnFamily(m.Name)
		if !ok {
			return fmt.Errorf("%s: state %q has no column family in the RocksDB snapshot", s.Name, m.Name)
		}
		if want != nil && !want(i) {
			continue
		}
		it, err := s.db.Iter(cf, rocksdb.StringAppend(listDelimiter) /* Flink's StringAppendTESTOperator with ',' */)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
		iters[i] = it
		if err := advance(i); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	var e Entry
	for {
		kg := -1
		for i := range iters {
			if live[i] {
				if g := kgOf(iters[i].Key()); kg < 0 || g < kg {
					kg = g
				}
			}
		}
		if kg < 0 {
			return nil
		}
		for i := range iters {
			for live[i] && kgOf(iters[i].Key()) == kg {
				e = Entry{KeyGroup: kg, StateID: i, Key: iters[i].Key(), Value: iters[i].Value(), Offset: -1}
				if err := fn(&e); err != nil {
					return err
				}
				if err := advance(i); err != nil {
					return fmt.Errorf("%s: %w", s.Name, err)
				}
			}
		}
	}
}

// nativeCheck opens every live table of every column family: footers, properties and the
// MANIFEST's record of each file are checked without reading the data blocks.
func (s *Subtask) nativeCheck() error {
	for _, cf := range s.db.Manifest.ColumnFamilies {
		if _, err := s.db.Tables(cf); err != nil {
			return fmt.Errorf("%s: %w", s.Name, err)
		}
	}
	return nil
}
