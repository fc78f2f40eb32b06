package rocksdb

import (
	"fmt"
	"io"
	"strings"
)

// FS gives the reader the files of one database directory by their RocksDB names (CURRENT,
// MANIFEST-000005, 000012.sst, ...). A snapshot's files may live anywhere; the caller maps names.
type FS interface {
	Open(name string) (r io.ReaderAt, size int64, err error)
}

// DB is a database opened read-only: its MANIFEST replayed, its tables opened on demand.
type DB struct {
	fs       FS
	Manifest *Manifest
	// ManifestName is the MANIFEST file CURRENT names.
	ManifestName string
}

// maxCurrentSize bounds the CURRENT file, one line naming the MANIFEST.
const maxCurrentSize = 4096

// Open reads CURRENT and replays the MANIFEST it names.
func Open(fs FS) (*DB, error) {
	r, size, err := fs.Open("CURRENT")
	if err != nil {
		return nil, fmt.Errorf("CURRENT: %w", err)
	}
	if size <= 0 || size > maxCurrentSize {
		return nil, fmt.Errorf("CURRENT: %d bytes, want one line naming the MANIFEST", size)
	}
	b := make([]byte, size)
	if _, err := r.ReadAt(b, 0); err != nil {
		return nil, fmt.Errorf("CURRENT: %w", err)
	}
	name := strings.TrimSuffix(string(b), "\n")
	if !strings.HasPrefix(name, "MANIFEST-") || strings.ContainsAny(name, "/\\\n\x00") {
		return nil, fmt.Errorf("CURRENT: %q does not name a MANIFEST file", b)
	}
	mr, msize, err := fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s (named by CURRENT): %w", name, err)
	}
	m, err := ReadManifest(io.NewSectionReader(mr, 0, msize), name)
	if err != nil {
		return nil, err
	}
	if m.Comparator != "" && m.Comparator != "leveldb.BytewiseComparator" {
		return nil, fmt.Errorf("%s: comparator %q is not supported (leveldb.BytewiseComparator is)", name, m.Comparator)
	}
	return &DB{fs: fs, Manifest: m, ManifestName: name}, nil
}

// ColumnFamily returns the column family named name.
func (db *DB) ColumnFamily(name string) (ColumnFamily, bool) {
	for _, cf := range db.Manifest.ColumnFamilies {
		if cf.Name == name {
			return cf, true
		}
	}
	return ColumnFamily{}, false
}

// Tables opens the live tables of cf, checking each against what the MANIFEST says of it.
func (db *DB) Tables(cf ColumnFamily) ([]*Table, error) {
	var out []*Table
	for _, f := range cf.Files {
		name := f.FileName()
		r, size, err := db.fs.Open(name)
		if err != nil {
			return nil, fmt.Errorf("%s (live in column family %q): %w", name, cf.Name, err)
		}
		if uint64(size) != f.Size {
			return nil, fmt.Errorf("%s: %d bytes, the MANIFEST records %d", name, size, f.Size)
		}
		t, err := OpenTable(r, size, name)
		if err != nil {
			return nil, err
		}
		if got := t.props.String(PropColumnFamilyName); got != cf.Name {
			return nil, fmt.Errorf("%s: table of column family %q, the MANIFEST lists it under %q", name, got, cf.Name)
		}
		if t.external && t.globalSeq == 0 {
			// Ingested tables carry sequence number 0 in their keys; the MANIFEST holds the real one.
			if f.SmallestSeq != f.MaxSeq {
				return nil, fmt.Errorf("%s: ingested table with sequence range %d..%d in the MANIFEST (want one number)", name, f.SmallestSeq, f.MaxSeq)
			}
			t.globalSeq = f.MaxSeq
		}
		out = append(out, t)
	}
	return out, nil
}

// Iter merges the live tables of cf; see MergeIter.
func (db *DB) Iter(cf ColumnFamily, merge MergeFunc) (*MergeIter, error) {
	ts, err := db.Tables(cf)
	if err != nil {
		return nil, err
	}
	return NewMergeIter(ts, merge)
}
