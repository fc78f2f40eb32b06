package rocksdb

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"

	"github.com/zeebo/xxh3"
)

// fixtureFile returns the bytes of one file (by RocksDB name suffix) of the first handle of the
// 2.3.0 native fixture.
func fixtureFile(t testing.TB, suffix string) []byte {
	t.Helper()
	fs := nativeHandles(t, "../../testdata/savepoints/native-rocksdb")[0]
	for name := range fs.files {
		if strings.HasSuffix(name, suffix) || strings.HasPrefix(name, suffix) {
			b, err := fs.bytes(name)
			if err != nil {
				t.Fatal(err)
			}
			return bytes.Clone(b)
		}
	}
	t.Fatalf("no %s file in the fixture", suffix)
	return nil
}

// scanTable opens and reads a whole table, returning the first error.
func scanTable(b []byte) error {
	tb, err := OpenTable(bytes.NewReader(b), int64(len(b)), "t.sst")
	if err != nil {
		return err
	}
	if _, err := tb.RangeTombstones(); err != nil {
		return err
	}
	it := tb.Iter()
	for it.Next() {
	}
	return it.Err()
}

// TestHostileTables: damaged copies of a table Flink wrote are refused with an error naming the
// file, offset and what was expected; features this reader lacks are refused by name.
func TestHostileTables(t *testing.T) {
	orig := fixtureFile(t, ".sst")
	if err := scanTable(orig); err != nil {
		t.Fatal(err)
	}
	foot := len(orig) - footerSize
	cases := []struct {
		name  string
		patch func(b []byte) []byte
		want  string
	}{
		{"data byte flipped", func(b []byte) []byte { b[3] ^= 0x40; return b }, "checksum mismatch"},
		// a codec FRocksDB can be built with but this reader lacks, with a valid checksum
		{"zlib-compressed block", func(b []byte) []byte { return retype(t, b, compressionZlib) }, "zlib compression is not supported"},
		{"format version 6", func(b []byte) []byte { binary.LittleEndian.PutUint32(b[len(b)-12:], 6); return b }, "table format version 6 is not supported"},
		{"xxHash64 checksums", func(b []byte) []byte { b[foot] = checksumXXHash64; return b }, "xxHash64 block checksums are not supported"},
		{"legacy footer", func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[len(b)-8:], legacyTableMagic)
			return b
		}, "legacy (format version 0)"},
		{"not a table", func(b []byte) []byte { b[len(b)-1] = 0; return b }, "is not a block-based table's"},
		{"truncated", func(b []byte) []byte { return b[:40] }, "too short for a table footer"},
		{"cut before the footer", func(b []byte) []byte { return append(b[:200:200], b[foot:]...) }, "runs past the end of the file"},
		{"metaindex handle past the file", func(b []byte) []byte {
			// footer: checksum byte, then the metaindex handle's offset varint: make it huge
			b[foot+1] |= 0x80
			b[foot+2] = 0xff
			b[foot+3] = 0x7f
			return b
		}, "t.sst"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.patch(bytes.Clone(orig))
			var err error
			bounded(t, len(b), func() { err = scanTable(b) })
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "t.sst") {
				t.Fatalf("error %v, want one naming t.sst with %q", err, c.want)
			}
		})
	}
}

// TestHostileBlocks: block-level corruption (bytes made up for the purpose) is refused.
func TestHostileBlocks(t *testing.T) {
	u32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	cases := []struct {
		name  string
		block []byte
		delta bool
		want  string
	}{
		{"restart outside the block", cat([]byte{0, 1, 1, 'a', 'b'}, u32(99), u32(1)), false, "restart point 0 at offset 99 is outside"},
		{"restart count too large", cat([]byte{0, 1, 1, 'a', 'b'}, u32(0), u32(1000)), false, "restart count 1000 needs"},
		{"no restarts", u32(0), false, "restart count 0"},
		{"hash index", cat(u32(0), u32(1|1<<31)), false, "data block hash index"},
		{"huge varint", cat([]byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, u32(0), u32(1)), false, "bad key-length varint"},
		{"key past the block", cat([]byte{0, 50, 1, 'a'}, u32(0), u32(1)), false, "key of 50 bytes runs past"},
		{"value past the block", cat([]byte{0, 1, 60, 'a'}, u32(0), u32(1)), false, "value of 60 bytes runs past"},
		{"shared beyond previous key", cat([]byte{0, 1, 0, 'a', 5, 1, 0, 'b'}, u32(0), u32(1)), false, "shares 5 bytes with a previous key of 1 bytes"},
		{"bad delta handle", cat([]byte{0, 1, 'a', 0x80}, u32(0), u32(1)), true, "index value"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			bounded(t, len(c.block), func() {
				var it *blockIter
				if it, err = newBlockIter(c.block, "blk", c.delta); err == nil {
					for it.next() {
					}
					err = it.err
				}
			})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// logRecord frames payload as one full record of a MANIFEST log.
func logRecord(payload []byte) []byte {
	h := make([]byte, logHeaderSize)
	binary.LittleEndian.PutUint16(h[4:], uint16(len(payload)))
	h[6] = recFull
	c := crc32.Update(crc32.Checksum(h[6:7], castagnoli), castagnoli, payload)
	binary.LittleEndian.PutUint32(h, maskCRC(c))
	return append(h, payload...)
}

func uv(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

func str(s string) []byte { return append(uv(uint64(len(s))), s...) }

// newFile4 is a VersionEdit adding file num at level lvl (keys "a" and "b" as internal keys).
func newFile4(lvl, num uint64) []byte {
	ik := func(k string) string { return k + "\x01\x00\x00\x00\x00\x00\x00\x00" }
	return bytes.Join([][]byte{uv(tagNewFile4, lvl, num, 100), str(ik("a")), str(ik("b")), uv(1, 2), uv(newFileTerminate)}, nil)
}

// TestHostileManifests: damaged MANIFEST logs and impossible edit sequences are refused.
func TestHostileManifests(t *testing.T) {
	orig := fixtureFile(t, "MANIFEST-")
	if _, err := ReadManifest(bytes.NewReader(orig), "M"); err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(orig)
	flipped[20] ^= 1
	cases := []struct {
		name string
		log  []byte
		want string
	}{
		{"byte flipped", flipped, "record checksum mismatch"},
		{"cut inside a record", orig[:len(orig)-3], "runs past its 32 KiB block"},
		{"unknown tag", logRecord(uv(77, 1)), "tag 77 is not supported"},
		{"delete of a file never added", logRecord(uv(tagDeletedFile, 0, 9)), "deletes file 9 at level 0, which is not live"},
		{"file added twice", cat(logRecord(newFile4(0, 7)), logRecord(newFile4(1, 7))), "file 7 added twice"},
		{"deleted at the wrong level", cat(logRecord(newFile4(0, 7)), logRecord(uv(tagDeletedFile, 3, 7))), "deletes file 7 at level 3"},
		{"unknown column family", logRecord(cat(uv(tagColumnFamily, 5), newFile4(0, 7))), "column family 5, which was never added"},
		{"column family added twice", cat(logRecord(cat(uv(tagColumnFamily, 1, tagColumnFamilyAdd), str("x"))),
			logRecord(cat(uv(tagColumnFamily, 1, tagColumnFamilyAdd), str("y")))), "column family 1 (\"y\") added twice"},
		{"huge varint", logRecord([]byte{4, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), "bad varint"},
		{"string past the edit", logRecord(cat(uv(tagComparator, 1000), []byte("abc"))), "1000 bytes, only 3 left"},
		{"must-understand custom field", logRecord(bytes.Join([][]byte{uv(tagNewFile4, 0, 7, 100), str("a\x01\x00\x00\x00\x00\x00\x00\x00"),
			str("b\x01\x00\x00\x00\x00\x00\x00\x00"), uv(1, 2, 66), str("x"), uv(1)}, nil)), "custom field 66 must be understood"},
		{"middle fragment first", func() []byte { r := logRecord(uv(4, 1)); r[6] = recMiddle; return fixCRC(r) }(), "middle fragment without a first one"},
		{"recyclable record", func() []byte { r := logRecord(uv(4, 1)); r[6] = 5; return fixCRC(r) }(), "record type 5 is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			bounded(t, len(c.log), func() { _, err = ReadManifest(bytes.NewReader(c.log), "M") })
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "M: ") {
				t.Fatalf("error %v, want one starting with M: and containing %q", err, c.want)
			}
		})
	}
	// A safe-to-ignore tag is skipped, a dropped column family's files are gone.
	m, err := ReadManifest(bytes.NewReader(cat(
		logRecord(cat(uv(tagColumnFamily, 1, tagColumnFamilyAdd), str("x"), uv(tagSafeIgnoreMask|9), str("whatever"))),
		logRecord(cat(uv(tagColumnFamily, 1), newFile4(0, 7))),
		logRecord(cat(uv(tagColumnFamily, 2, tagColumnFamilyAdd), str("y"))),
		logRecord(cat(uv(tagColumnFamily, 2), newFile4(0, 8))),
		logRecord(uv(tagColumnFamily, 1, tagColumnFamilyDel)),
	)), "M")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ColumnFamilies) != 2 || m.ColumnFamilies[1].Name != "y" || len(m.ColumnFamilies[1].Files) != 1 {
		t.Fatalf("column families %+v, want default and y (x dropped)", m.ColumnFamilies)
	}
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// bounded runs f and fails the test if it allocated more than 1 MiB plus four times the input's
// size: a hostile length, count or varint must never size an allocation.
func bounded(t *testing.T, input int, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20+4*uint64(input) {
		t.Errorf("allocated %d bytes for a %d-byte input", grew, input)
	}
}

// retype gives the table's first data block the compression type ctype in its trailer and
// re-seals the block's checksum, so that only the codec is wrong.
func retype(t *testing.T, b []byte, ctype byte) []byte {
	t.Helper()
	tb, err := OpenTable(bytes.NewReader(b), int64(len(b)), "t.sst")
	if err != nil {
		t.Fatal(err)
	}
	ib, err := tb.block(tb.footer.index, "index")
	if err != nil {
		t.Fatal(err)
	}
	it, err := newBlockIter(ib, "index", tb.deltaIndex)
	if err != nil || !it.next() {
		t.Fatalf("no first index entry: %v", err)
	}
	h := it.handle
	if !tb.deltaIndex {
		h, _, _ = decodeHandle(it.value)
	}
	if tb.footer.checksum != checksumXXH3 {
		t.Fatalf("fixture table checksum %s, want XXH3", checksumName(tb.footer.checksum))
	}
	data := b[h.offset : h.offset+h.size]
	b[h.offset+h.size] = ctype
	binary.LittleEndian.PutUint32(b[h.offset+h.size+1:], uint32(xxh3.Hash(data))^uint32(ctype)*0x6b9083d9)
	return b
}

// logFile lays the edits out as RocksDB's log writer does: records in 32 KiB blocks, split into
// first, middle and last fragments where one does not fit, a block's tail under a header's
// size left as zeros.
func logFile(edits ...[]byte) []byte {
	var out []byte
	for _, e := range edits {
		first := true
		for {
			left := logBlockSize - len(out)%logBlockSize
			if left < logHeaderSize {
				out = append(out, make([]byte, left)...)
				left = logBlockSize
			}
			n := min(len(e), left-logHeaderSize)
			typ := byte(recFull)
			switch {
			case first && n < len(e):
				typ = recFirst
			case !first && n < len(e):
				typ = recMiddle
			case !first:
				typ = recLast
			}
			r := logRecord(e[:n])
			r[6] = typ
			out = append(out, fixCRC(r)...)
			e, first = e[n:], false
			if len(e) == 0 {
				break
			}
		}
	}
	return out
}

// TestHostileManifestCycle: a MANIFEST whose edits go round in a cycle (a column family added
// and dropped, a file added and deleted, over and over: each edit valid after the one before)
// replays to the state its last edits leave, holding only that state: the memory kept after the
// replay does not grow with the number of edits.
func TestHostileManifestCycle(t *testing.T) {
	round := [][]byte{
		cat(uv(tagColumnFamily, 1, tagColumnFamilyAdd), str("x")),
		cat(uv(tagColumnFamily, 1), newFile4(0, 7)),
		cat(uv(tagColumnFamily, 1), uv(tagDeletedFile, 0, 7), newFile4(1, 7)), // a move down a level
		uv(tagColumnFamily, 1, tagColumnFamilyDel),
		newFile4(0, 8),
		uv(tagDeletedFile, 0, 8),
	}
	held := func(rounds int) (uint64, *Manifest) {
		var edits [][]byte
		for range rounds {
			edits = append(edits, round...)
		}
		log := logFile(append(edits, newFile4(2, 9))...)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m, err := ReadManifest(bytes.NewReader(log), "M")
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(log)
		if err != nil {
			t.Fatalf("%d rounds: %v", rounds, err)
		}
		return after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc), m
	}
	for _, rounds := range []int{10, 20_000} {
		grew, m := held(rounds)
		if len(m.ColumnFamilies) != 1 || len(m.ColumnFamilies[0].Files) != 1 || m.ColumnFamilies[0].Files[0].Number != 9 {
			t.Errorf("%d rounds: column families %+v, want default with file 9 only", rounds, m.ColumnFamilies)
		}
		if grew > 1<<20 {
			t.Errorf("%d rounds (%d edits): %d bytes held after the replay", rounds, 6*rounds+1, grew)
		}
		runtime.KeepAlive(m)
	}
}

func fixCRC(r []byte) []byte {
	c := crc32.Update(crc32.Checksum(r[6:7], castagnoli), castagnoli, r[logHeaderSize:])
	binary.LittleEndian.PutUint32(r, maskCRC(c))
	return r
}
