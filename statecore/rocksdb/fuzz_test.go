package rocksdb

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzBlock: any bytes given as a data, meta or delta-encoded index block end in entries or one
// error; never a panic, never an allocation beyond the block.
func FuzzBlock(f *testing.F) {
	f.Add(cat([]byte{0, 1, 1, 'a', 'b'}, binary.LittleEndian.AppendUint32(nil, 0), binary.LittleEndian.AppendUint32(nil, 1)), false)
	f.Add(cat([]byte{0, 1, 'a', 0, 10, 1, 0, 'b', 4}, binary.LittleEndian.AppendUint32(nil, 0), binary.LittleEndian.AppendUint32(nil, 1)), true)
	// the blocks of a table Flink wrote
	if b := fixtureFileMaybe(f, ".sst"); b != nil {
		tb, err := OpenTable(bytes.NewReader(b), int64(len(b)), "seed.sst")
		if err == nil {
			if ib, err := tb.block(tb.footer.index, "index"); err == nil {
				f.Add(ib, tb.deltaIndex)
			}
			if mb, err := tb.block(tb.footer.metaindex, "metaindex"); err == nil {
				f.Add(mb, false)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, delta bool) {
		it, err := newBlockIter(b, "fuzz", delta)
		if err != nil {
			return
		}
		n := 0
		for it.next() {
			if len(it.key) > len(b) || len(it.value) > len(b) {
				t.Fatalf("entry larger than its block")
			}
			n++
		}
		if n > len(b) {
			t.Fatalf("%d entries from %d bytes", n, len(b))
		}
	})
}

// FuzzManifest: any bytes read as a MANIFEST replay to column families or one error.
func FuzzManifest(f *testing.F) {
	f.Add(logRecord(newFile4(0, 7)))
	f.Add(cat(logRecord(cat(uv(tagColumnFamily, 1, tagColumnFamilyAdd), str("x"))), logRecord(cat(uv(tagColumnFamily, 1), newFile4(0, 7)))))
	if b := fixtureFileMaybe(f, "MANIFEST-"); b != nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadManifest(bytes.NewReader(b), "fuzz")
		if err != nil {
			return
		}
		files := 0
		for _, cf := range m.ColumnFamilies {
			files += len(cf.Files)
		}
		if files > len(b) {
			t.Fatalf("%d live files from %d bytes", files, len(b))
		}
	})
}

// fixtureFileMaybe is fixtureFile without failing when the fixture is absent.
func fixtureFileMaybe(f *testing.F, suffix string) []byte {
	fs := nativeHandles(f, "../../testdata/savepoints/native-rocksdb")
	for name := range fs[0].files {
		if len(name) >= len(suffix) && (name[len(name)-len(suffix):] == suffix || name[:min(len(name), len(suffix))] == suffix) {
			b, err := fs[0].bytes(name)
			if err == nil {
				return b
			}
		}
	}
	return nil
}
