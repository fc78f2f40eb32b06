package rocksdb

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// The native RocksDB snapshots the oracle made with real Flink: FRocksDB 8.10 (Flink 2.3.0, XXH3
// checksums) and FRocksDB 6.20.3 (Flink 1.20.0, CRC32c).
var nativeFixtures = []string{
	"../../testdata/savepoints/native-rocksdb",
	"../../testdata/savepoints/native-types-incremental",
	"../../testdata/savepoints/native-ttl-inline",
	"../../testdata/savepoints/native-window-maxpar-256",
	"../../testdata/savepoints/native-lz4",
	"../../testdata/savepoints/native-zstd",
	"../../testdata/savepoints/native-rescaled",
	"../../testdata/flink-1.20/savepoints/native-rocksdb",
	"../../testdata/flink-1.20/savepoints/native-types-incremental",
	"../../testdata/flink-1.20/savepoints/native-rescaled",
	"../../testdata/flink-1.20/savepoints/native-ttl-inline",
	"../../testdata/flink-1.20/savepoints/native-window-maxpar-256",
}

// handleFS serves the files of one native handle of a savepoint fixture by their RocksDB names
// (the handle's local paths). Only the tests know Flink's handles; the package does not.
type handleFS struct {
	name  string
	dir   string
	files map[string]metadata.StreamHandle
}

func (f handleFS) bytes(name string) ([]byte, error) {
	h, ok := f.files[name]
	if !ok {
		return nil, fmt.Errorf("no file %s in the handle", name)
	}
	switch h := h.(type) {
	case *metadata.ByteStreamHandle:
		return h.Data, nil
	case *metadata.RelativeFileHandle:
		return os.ReadFile(filepath.Join(f.dir, h.Path))
	case *metadata.FileHandle:
		// Absolute paths point where Flink wrote the snapshot: a savepoint's files sit beside
		// _metadata, a checkpoint's in its job directory's chk-N/ or shared/ (the parent of dir).
		p := strings.TrimPrefix(h.Path, "file:")
		if sub := filepath.Base(filepath.Dir(p)); sub == "shared" || sub == "taskowned" {
			return os.ReadFile(filepath.Join(f.dir, "..", sub, filepath.Base(p)))
		}
		return os.ReadFile(filepath.Join(f.dir, filepath.Base(p)))
	}
	return nil, fmt.Errorf("%s: handle %T not supported in tests", name, h)
}

func (f handleFS) Open(name string) (io.ReaderAt, int64, error) {
	b, err := f.bytes(name)
	return bytes.NewReader(b), int64(len(b)), err
}

// tables opens every SST file of the handle.
func (f handleFS) tables(t testing.TB) []*Table {
	t.Helper()
	var out []*Table
	for name := range f.files {
		if !strings.HasSuffix(name, ".sst") {
			continue
		}
		r, size, err := f.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := OpenTable(r, size, name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tb)
	}
	return out
}

// nativeHandles returns every native handle of a fixture savepoint (skips when it is absent).
func nativeHandles(t testing.TB, dir string) []handleFS {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "_metadata"))
	if os.IsNotExist(err) {
		t.Skipf("no fixture %s", dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	md, err := metadata.DecodeBytes(b, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []handleFS
	for _, op := range md.Operators {
		for _, st := range op.Subtasks {
			h, ok := st.ManagedKeyed.(*metadata.IncrementalHandle)
			if !ok {
				continue
			}
			fs := handleFS{name: fmt.Sprintf("%s op %s subtask %d", dir, op.ID, st.Index), dir: dir, files: map[string]metadata.StreamHandle{}}
			for _, p := range append(append([]metadata.PathHandle{}, h.Shared...), h.Private...) {
				fs.files[p.LocalPath] = p.Handle
			}
			out = append(out, fs)
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no native handles", dir)
	}
	return out
}

// onlyCheckpoint returns the one chk-N directory of the oracle's checkpoint fixture
// testdata/checkpoints/name (skips when it is absent).
func onlyCheckpoint(t testing.TB, name string) string {
	t.Helper()
	chks, _ := filepath.Glob(filepath.Join("../../testdata/checkpoints", name, "chk-*"))
	if len(chks) != 1 {
		t.Skipf("fixture testdata/checkpoints/%s: %d chk-N directories, want 1", name, len(chks))
	}
	return chks[0]
}

// TestFixtureDatabases: in every native handle Flink wrote, CURRENT names a MANIFEST whose live
// files are exactly the handle's SST files, each table opens with verified block checksums, its
// properties name the column family the MANIFEST lists it under, its entries are in internal-key
// order, and the merge of each column family yields strictly increasing user keys.
func TestFixtureDatabases(t *testing.T) {
	for _, dir := range nativeFixtures {
		t.Run(filepath.Base(filepath.Dir(filepath.Dir(dir)))+"/"+filepath.Base(dir), func(t *testing.T) {
			for _, fs := range nativeHandles(t, dir) {
				db, err := Open(fs)
				if err != nil {
					t.Fatalf("%s: %v", fs.name, err)
				}
				var live, ssts []string
				for _, cf := range db.Manifest.ColumnFamilies {
					for _, f := range cf.Files {
						live = append(live, f.FileName())
					}
					tables, err := db.Tables(cf)
					if err != nil {
						t.Fatalf("%s: %v", fs.name, err)
					}
					for _, tb := range tables {
						n := 0
						it := tb.Iter()
						for it.Next() {
							n++
						}
						if it.Err() != nil {
							t.Fatalf("%s: %v", fs.name, it.Err())
						}
						// rocksdb.num.entries counts range tombstones too
						ts, err := tb.RangeTombstones()
						if err != nil {
							t.Fatal(err)
						}
						if want, ok := tb.Properties().Uint(PropNumEntries); !ok || want != uint64(n+len(ts)) {
							t.Errorf("%s: %s: %d entries and %d range tombstones read, properties say %d entries", fs.name, tb.Name(), n, len(ts), want)
						}
						if want, _ := tb.Properties().Uint("rocksdb.num.range-deletions"); want != uint64(len(ts)) {
							t.Errorf("%s: %s: %d range tombstones read, properties say %d", fs.name, tb.Name(), len(ts), want)
						}
					}
					it, err := db.Iter(cf, StringAppend(','))
					if err != nil {
						t.Fatal(err)
					}
					var prev []byte
					for it.Next() {
						if prev != nil && bytes.Compare(prev, it.Key()) >= 0 {
							t.Fatalf("%s: column family %q: key %x after %x", fs.name, cf.Name, it.Key(), prev)
						}
						prev = append(prev[:0], it.Key()...)
					}
					if it.Err() != nil {
						t.Fatal(it.Err())
					}
				}
				for name := range fs.files {
					if strings.HasSuffix(name, ".sst") {
						ssts = append(ssts, name)
					}
				}
				sort.Strings(live)
				sort.Strings(ssts)
				if strings.Join(live, " ") != strings.Join(ssts, " ") {
					t.Errorf("%s: live files %v, handle has SSTs %v", fs.name, live, ssts)
				}
			}
		})
	}
}

// TestFixtureCompression: the block codecs Flink's RocksDB options can choose, as FRocksDB 8.10
// wrote them, are met: every table of each fixture names the codec in its properties and holds
// data blocks compressed with it (blocks that do not shrink enough are stored raw).
func TestFixtureCompression(t *testing.T) {
	for _, c := range []struct {
		dir, name string
		ctype     byte
	}{
		{"../../testdata/savepoints/native-rocksdb", "Snappy", compressionSnappy},
		{"../../testdata/savepoints/native-lz4", "LZ4", compressionLZ4},
		{"../../testdata/savepoints/native-zstd", "ZSTD", compressionZSTD},
	} {
		seen := 0
		for _, fs := range nativeHandles(t, c.dir) {
			for _, tb := range fs.tables(t) {
				if got := tb.Properties().String(PropCompression); got != c.name {
					t.Errorf("%s %s: compression property %q, want %q", c.dir, tb.Name(), got, c.name)
				}
				seen += tb.countCompressed(t, c.ctype)
			}
		}
		if seen == 0 {
			t.Errorf("%s: no %s-compressed block read", c.dir, c.name)
		}
	}
}

// countCompressed reads every data block of the table and counts those stored with ctype.
func (t *Table) countCompressed(tb testing.TB, ctype byte) int {
	ib, err := t.block(t.footer.index, "index")
	if err != nil {
		tb.Fatal(err)
	}
	it, err := newBlockIter(ib, "index", t.deltaIndex)
	if err != nil {
		tb.Fatal(err)
	}
	n := 0
	for it.next() {
		h := it.handle
		if !t.deltaIndex {
			h, _, _ = decodeHandle(it.value)
		}
		var trailer [1]byte
		if _, err := t.r.ReadAt(trailer[:], int64(h.offset+h.size)); err != nil {
			tb.Fatal(err)
		}
		if _, err := t.block(h, "data"); err != nil {
			tb.Fatal(err)
		}
		if trailer[0] == ctype {
			n++
		}
	}
	return n
}

// TestFixtureChecksums: both checksum types Flink's RocksDB versions write are met and verified.
func TestFixtureChecksums(t *testing.T) {
	for _, c := range []struct {
		dir      string
		checksum byte
	}{
		{"../../testdata/savepoints/native-rocksdb", checksumXXH3},
		{"../../testdata/flink-1.20/savepoints/native-rocksdb", checksumCRC32c},
	} {
		for _, tb := range nativeHandles(t, c.dir)[0].tables(t) {
			if tb.footer.checksum != c.checksum || tb.FormatVersion() != 5 {
				t.Errorf("%s %s: checksum %s, format version %d; want %s, 5", c.dir, tb.Name(),
					checksumName(tb.footer.checksum), tb.FormatVersion(), checksumName(c.checksum))
			}
		}
	}
}

// TestFixtureRangeTombstones: the native savepoints Flink (2.3.0 and 1.20.0) took after a
// rescaled restore, and the latest incremental checkpoint each retained after one, hold
// range tombstones (deleteRange of the key groups a subtask lost) over keys still in their
// tables; the merge yields none of the covered keys and all the others.
func TestFixtureRangeTombstones(t *testing.T) {
	for _, dir := range []string{"../../testdata/savepoints/native-rescaled", "../../testdata/flink-1.20/savepoints/native-rescaled",
		"../../testdata/checkpoints/native-chain-rescaled", "../../testdata/flink-1.20/checkpoints/native-chain-rescaled"} {
		t.Run(strings.TrimPrefix(dir, "../../testdata/"), func(t *testing.T) {
			// a checkpoint directory: its latest complete chk-N
			if metas, _ := filepath.Glob(filepath.Join(dir, "chk-*", "_metadata")); len(metas) > 0 {
				sort.Slice(metas, func(i, j int) bool { return chkID(filepath.Dir(metas[i])) < chkID(filepath.Dir(metas[j])) })
				dir = filepath.Dir(metas[len(metas)-1])
			}
			checkRangeTombstones(t, dir)
		})
	}
}

// chkID is the N of a chk-N directory.
func chkID(dir string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(dir), "chk-"))
	return n
}

func checkRangeTombstones(t *testing.T, dir string) {
	covered, kept, tombstones := 0, 0, 0
	eachColumnFamily(t, nativeHandles(t, dir), func(fs handleFS, cf ColumnFamily, tables []*Table) {
		var ts []RangeTombstone
		raw := map[string]bool{} // user keys with a Put or Merge, before the merge
		for _, tb := range tables {
			x, err := tb.RangeTombstones()
			if err != nil {
				t.Fatal(err)
			}
			ts = append(ts, x...)
			it := tb.Iter()
			for it.Next() {
				if e := it.Entry(); e.Kind == KindPut || e.Kind == KindMerge {
					raw[string(e.UserKey)] = true
				}
			}
		}
		tombstones += len(ts)
		inTomb := func(k string) bool {
			for _, r := range ts {
				if k >= string(r.Start) && k < string(r.End) {
					return true
				}
			}
			return false
		}
		got := mergedKeys(t, tables)
		for k := range raw {
			switch {
			case inTomb(k) && got[k]:
				t.Errorf("%s %s: key %x under a range tombstone was merged in", fs.name, cf.Name, k)
			case inTomb(k):
				covered++
			case !got[k]:
				t.Errorf("%s %s: key %x (no tombstone) is missing from the merge", fs.name, cf.Name, k)
			default:
				kept++
			}
		}
	})
	if tombstones == 0 || covered == 0 || kept == 0 {
		t.Errorf("%d tombstones, %d covered keys, %d kept: the fixture should have all three", tombstones, covered, kept)
	}
}

// eachColumnFamily opens the database of every handle and calls fn with each column family's
// tables, so that a test can look at the records of each table before the merge.
func eachColumnFamily(t testing.TB, handles []handleFS, fn func(fs handleFS, cf ColumnFamily, tables []*Table)) {
	t.Helper()
	for _, fs := range handles {
		db, err := Open(fs)
		if err != nil {
			t.Fatalf("%s: %v", fs.name, err)
		}
		for _, cf := range db.Manifest.ColumnFamilies {
			tables, err := db.Tables(cf)
			if err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			fn(fs, cf, tables)
		}
	}
}

// mergedKeys returns the user keys the merge of tables yields (list operands joined as Flink's
// operator joins them).
func mergedKeys(t testing.TB, tables []*Table) map[string]bool {
	t.Helper()
	it, err := NewMergeIter(tables, StringAppend(','))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for it.Next() {
		got[string(it.Key())] = true
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	return got
}

// TestFixtureCheckpointChain: in the retained incremental checkpoints Flink wrote (2.3.0 with
// FRocksDB 8.10, 1.20.0 with FRocksDB 6.20.3), later checkpoints reuse SST files an earlier one
// uploaded (the same shared file, by path), and every checkpoint's databases open and merge.
func TestFixtureCheckpointChain(t *testing.T) {
	for _, job := range []string{"../../testdata/checkpoints/native-chain", "../../testdata/flink-1.20/checkpoints/native-chain"} {
		t.Run(job[len("../../testdata/"):], func(t *testing.T) { checkpointChain(t, job) })
	}
}

func checkpointChain(t *testing.T, job string) {
	chks, _ := filepath.Glob(filepath.Join(job, "chk-*"))
	if len(chks) == 0 {
		t.Fatalf("no fixture %s", job)
	}
	sort.Slice(chks, func(i, j int) bool { return chkID(chks[i]) < chkID(chks[j]) })
	usedBy := map[string]int{} // shared file (base name) -> checkpoints referencing it
	for _, chk := range chks {
		fss := nativeHandles(t, chk)
		for _, fs := range fss {
			for name, h := range fs.files {
				if fh, ok := h.(*metadata.FileHandle); ok && strings.Contains(fh.Path, "/shared/") && strings.HasSuffix(name, ".sst") {
					usedBy[filepath.Base(fh.Path)]++
				}
			}
			db, err := Open(fs)
			if err != nil {
				t.Fatalf("%s: %v", fs.name, err)
			}
			for _, cf := range db.Manifest.ColumnFamilies {
				it, err := db.Iter(cf, StringAppend(','))
				if err != nil {
					t.Fatal(err)
				}
				for it.Next() {
				}
				if it.Err() != nil {
					t.Fatalf("%s: %v", fs.name, it.Err())
				}
			}
		}
	}
	reused := 0
	for _, n := range usedBy {
		if n > 1 {
			reused++
		}
	}
	t.Logf("%d checkpoints, %d shared SST files, %d of them referenced by more than one checkpoint", len(chks), len(usedBy), reused)
	if len(chks) < 3 || reused == 0 {
		t.Errorf("want at least 3 retained checkpoints sharing SST files; have %d checkpoints, %d reused files", len(chks), reused)
	}
}
