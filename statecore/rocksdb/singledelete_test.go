package rocksdb

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dirFS serves a plain RocksDB database directory.
type dirFS string

func (d dirFS) Open(name string) (io.ReaderAt, int64, error) {
	b, err := os.ReadFile(filepath.Join(string(d), name))
	return bytes.NewReader(b), int64(len(b)), err
}

// TestFixtureSingleDelete: databases with SingleDelete records, written by FRocksDB's own Java
// API (the oracle's rocksdb-single-delete, with the RocksDB of Flink 2.3.0 and of 1.20.0; Flink
// itself never writes a SingleDelete), merge to exactly the keys and values RocksDB's iterator
// returned: a SingleDelete hides the Put of an older table and the Put a snapshot kept beside
// it in its own table, a Put newer than a SingleDelete is live, a SingleDelete of a key never
// written hides nothing. The fixtures must hold each of those cases, or the test proves nothing.
func TestFixtureSingleDelete(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/rocksdb/single-delete-*.expect.json")
	if len(dirs) < 2 {
		t.Fatalf("%d single-delete fixtures in testdata/rocksdb, want one per RocksDB version of Flink (2.3.0, 1.20.0)", len(dirs))
	}
	for _, ef := range dirs {
		dir := strings.TrimSuffix(ef, ".expect.json")
		t.Run(filepath.Base(dir), func(t *testing.T) {
			raw, err := os.ReadFile(ef)
			if err != nil {
				t.Fatal(err)
			}
			var exp struct {
				ColumnFamilies map[string][][2]string `json:"columnFamilies"`
			}
			if err := json.Unmarshal(raw, &exp); err != nil {
				t.Fatalf("%s: %v", ef, err)
			}
			db, err := Open(dirFS(dir))
			if err != nil {
				t.Fatal(err)
			}
			var overOlder, sameTable, reput int
			for _, cf := range db.Manifest.ColumnFamilies {
				tables, err := db.Tables(cf)
				if err != nil {
					t.Fatal(err)
				}
				o, s, r := singleDeleteCases(t, tables)
				overOlder, sameTable, reput = overOlder+o, sameTable+s, reput+r
				want, ok := exp.ColumnFamilies[cf.Name]
				if !ok {
					t.Fatalf("column family %q is not in %s", cf.Name, ef)
				}
				it, err := NewMergeIter(tables, nil)
				if err != nil {
					t.Fatal(err)
				}
				var got [][2]string
				for it.Next() {
					got = append(got, [2]string{hex.EncodeToString(it.Key()), hex.EncodeToString(it.Value())})
				}
				if it.Err() != nil {
					t.Fatal(it.Err())
				}
				if g, w := pairsText(got), pairsText(want); g != w {
					t.Errorf("column family %q: merged\n%s\nRocksDB's iterator returned\n%s", cf.Name, g, w)
				}
			}
			if len(db.Manifest.ColumnFamilies) != len(exp.ColumnFamilies) {
				t.Errorf("%d column families in the MANIFEST, %d in %s", len(db.Manifest.ColumnFamilies), len(exp.ColumnFamilies), ef)
			}
			t.Logf("SingleDeletes: %d over a Put of an older table, %d beside their Put in one table, %d under a newer Put", overOlder, sameTable, reput)
			if overOlder == 0 || sameTable == 0 || reput == 0 {
				t.Error("the fixture should hold SingleDeletes of each kind")
			}
		})
	}
}

// singleDeleteCases counts the column family's SingleDelete records that hide a Put of an older
// table, that share their table with the Put they hide, and that a newer Put overrides.
func singleDeleteCases(t *testing.T, tables []*Table) (overOlder, sameTable, reput int) {
	t.Helper()
	type rec struct {
		table int
		seq   uint64
		kind  Kind
	}
	recs := map[string][]rec{}
	for i, tb := range tables {
		it := tb.Iter()
		for it.Next() {
			e := it.Entry()
			recs[string(e.UserKey)] = append(recs[string(e.UserKey)], rec{i, e.Seq, e.Kind})
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
	}
	for _, rs := range recs {
		for _, sd := range rs {
			if sd.kind != KindSingleDelete {
				continue
			}
			for _, r := range rs {
				switch {
				case r.kind != KindPut:
				case r.seq > sd.seq:
					reput++
				case r.table == sd.table:
					sameTable++
				default:
					overOlder++
				}
			}
		}
	}
	return overOlder, sameTable, reput
}

func pairsText(kvs [][2]string) string {
	var b strings.Builder
	for _, kv := range kvs {
		b.WriteString(kv[0] + " -> " + kv[1] + "\n")
	}
	return b.String()
}
