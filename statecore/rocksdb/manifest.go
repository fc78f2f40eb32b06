package rocksdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sort"
)

const (
	logBlockSize  = 32 << 10
	logHeaderSize = 7

	// MaxManifestRecord bounds one reassembled MANIFEST record: a VersionEdit lists the files of
	// one flush or compaction, kilobytes in practice.
	MaxManifestRecord = 16 << 20
	// maxColumnFamilies and maxLiveFiles bound the replayed state against hostile input.
	maxColumnFamilies = 1 << 16
	maxLiveFiles      = 1 << 20
)

// Record types of the log framing.
const (
	recZero   = 0
	recFull   = 1
	recFirst  = 2
	recMiddle = 3
	recLast   = 4
)

// logReader reassembles the records of a LevelDB-framed log read from r.
type logReader struct {
	r     io.Reader
	name  string
	block []byte // current block
	pos   int    // read position in block
	off   int64  // file offset of block[0]
	eof   bool
}

func newLogReader(r io.Reader, name string) *logReader {
	return &logReader{r: r, name: name, block: make([]byte, 0, logBlockSize)}
}

// next returns the next whole record (valid until the next call), or io.EOF after the last.
func (l *logReader) next(buf []byte) ([]byte, int64, error) {
	buf = buf[:0]
	inRecord := false
	var start int64
	for {
		if len(l.block)-l.pos < logHeaderSize {
			if l.eof {
				if inRecord {
					return nil, start, fmt.Errorf("%s: offset %d: log ends inside a record", l.name, l.off+int64(l.pos))
				}
				return nil, 0, io.EOF
			}
			// The rest of the block is padding; read the next one.
			l.off += int64(len(l.block))
			n, err := io.ReadFull(l.r, l.block[:logBlockSize])
			l.block, l.pos = l.block[:n], 0
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				l.eof = true
			} else if err != nil {
				return nil, 0, fmt.Errorf("%s: reading at offset %d: %w", l.name, l.off, err)
			}
			continue
		}
		h := l.block[l.pos:]
		length := int(binary.LittleEndian.Uint16(h[4:]))
		typ := h[6]
		at := l.off + int64(l.pos)
		if typ == recZero && length == 0 {
			// Preallocated or padded tail: nothing more in this block.
			l.pos = len(l.block)
			continue
		}
		if logHeaderSize+length > len(h) {
			return nil, at, fmt.Errorf("%s: offset %d: record of %d bytes runs past its 32 KiB block", l.name, at, length)
		}
		payload := h[logHeaderSize : logHeaderSize+length]
		want := binary.LittleEndian.Uint32(h)
		got := maskCRC(crc32.Update(crc32.Checksum(h[6:7], castagnoli), castagnoli, payload))
		if got != want {
			return nil, at, fmt.Errorf("%s: offset %d: record checksum mismatch (stored %#08x, computed %#08x)", l.name, at, want, got)
		}
		l.pos += logHeaderSize + length
		switch typ {
		case recFull:
			if inRecord {
				return nil, at, fmt.Errorf("%s: offset %d: full record inside a fragmented one", l.name, at)
			}
			return append(buf, payload...), at, nil
		case recFirst:
			if inRecord {
				return nil, at, fmt.Errorf("%s: offset %d: first fragment inside a fragmented record", l.name, at)
			}
			inRecord, start = true, at
			buf = append(buf, payload...)
		case recMiddle, recLast:
			if !inRecord {
				return nil, at, fmt.Errorf("%s: offset %d: %s fragment without a first one", l.name, at, map[byte]string{recMiddle: "middle", recLast: "last"}[typ])
			}
			if len(buf)+len(payload) > MaxManifestRecord {
				return nil, start, fmt.Errorf("%s: offset %d: record exceeds %d bytes", l.name, start, MaxManifestRecord)
			}
			buf = append(buf, payload...)
			if typ == recLast {
				return buf, start, nil
			}
		default:
			return nil, at, fmt.Errorf("%s: offset %d: record type %d is not supported (1 to 4 are; recyclable logs are not)", l.name, at, typ)
		}
	}
}

// FileMeta is a live table of a column family, as the MANIFEST records it.
type FileMeta struct {
	Level               int
	Number              uint64
	Size                uint64
	Smallest, Largest   []byte // internal keys
	SmallestSeq, MaxSeq uint64
}

// FileName is the table's name in the database directory, e.g. 000012.sst.
func (f FileMeta) FileName() string { return fmt.Sprintf("%06d.sst", f.Number) }

// ColumnFamily is one column family with its live files, by level then number.
type ColumnFamily struct {
	ID    uint32
	Name  string
	Files []FileMeta
}

// Manifest is the replayed state of a MANIFEST: the live column families and their files.
type Manifest struct {
	Comparator     string
	LastSequence   uint64
	ColumnFamilies []ColumnFamily // by ID
}

// VersionEdit tags.
const (
	tagComparator      = 1
	tagLogNumber       = 2
	tagNextFileNumber  = 3
	tagLastSequence    = 4
	tagCompactPointer  = 5
	tagDeletedFile     = 6
	tagNewFile         = 7
	tagPrevLogNumber   = 9
	tagMinLogToKeep    = 10
	tagNewFile2        = 100
	tagNewFile3        = 102
	tagNewFile4        = 103
	tagColumnFamily    = 200
	tagColumnFamilyAdd = 201
	tagColumnFamilyDel = 202
	tagMaxColumnFamily = 203
	tagInAtomicGroup   = 300
	tagSafeIgnoreMask  = 1 << 13

	newFileTerminate       = 1
	newFileCustomNonIgnore = 1 << 6
	newFilePathID          = 65
)

type cfState struct {
	name  string
	files map[uint64]FileMeta
}

// ReadManifest replays the MANIFEST read from r. name is used in error messages.
func ReadManifest(r io.Reader, name string) (*Manifest, error) {
	lr := newLogReader(r, name)
	cfs := map[uint32]*cfState{0: {name: "default", files: map[uint64]FileMeta{}}}
	m := &Manifest{}
	var buf []byte
	live := 0
	for i := 0; ; i++ {
		rec, at, err := lr.next(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		buf = rec
		if err := applyEdit(rec, cfs, m, &live); err != nil {
			return nil, fmt.Errorf("%s: version edit %d at offset %d: %w", name, i, at, err)
		}
	}
	ids := make([]uint32, 0, len(cfs))
	for id := range cfs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		c := cfs[id]
		cf := ColumnFamily{ID: id, Name: c.name}
		for _, f := range c.files {
			cf.Files = append(cf.Files, f)
		}
		sort.Slice(cf.Files, func(a, b int) bool {
			x, y := cf.Files[a], cf.Files[b]
			if x.Level != y.Level {
				return x.Level < y.Level
			}
			return x.Number < y.Number
		})
		m.ColumnFamilies = append(m.ColumnFamilies, cf)
	}
	return m, nil
}

// editReader decodes the fields of one VersionEdit.
type editReader struct {
	b   []byte
	err error
}

func (e *editReader) uvarint(what string) uint64 {
	if e.err != nil {
		return 0
	}
	v, n := binary.Uvarint(e.b)
	if n <= 0 {
		e.err = fmt.Errorf("%s: bad varint", what)
		return 0
	}
	e.b = e.b[n:]
	return v
}

func (e *editReader) bytes(what string) []byte {
	n := e.uvarint(what + " length")
	if e.err != nil {
		return nil
	}
	if n > uint64(len(e.b)) {
		e.err = fmt.Errorf("%s: %d bytes, only %d left in the edit", what, n, len(e.b))
		return nil
	}
	v := e.b[:n:n]
	e.b = e.b[n:]
	return v
}

func applyEdit(rec []byte, cfs map[uint32]*cfState, m *Manifest, live *int) error {
	e := &editReader{b: rec}
	cf := uint32(0)
	var added []FileMeta
	var deleted [][2]uint64 // level, number
	var addName *string
	drop := false
	for len(e.b) > 0 && e.err == nil {
		tag := e.uvarint("tag")
		switch tag {
		case tagComparator:
			m.Comparator = string(e.bytes("comparator"))
		case tagLogNumber, tagNextFileNumber, tagPrevLogNumber, tagMinLogToKeep:
			e.uvarint(fmt.Sprintf("tag %d", tag))
		case tagLastSequence:
			m.LastSequence = e.uvarint("last sequence")
		case tagMaxColumnFamily, tagInAtomicGroup:
			e.uvarint(fmt.Sprintf("tag %d", tag))
		case tagCompactPointer:
			e.uvarint("compact pointer level")
			e.bytes("compact pointer key")
		case tagDeletedFile:
			lvl := e.uvarint("deleted file level")
			num := e.uvarint("deleted file number")
			deleted = append(deleted, [2]uint64{lvl, num})
		case tagNewFile, tagNewFile2, tagNewFile3, tagNewFile4:
			f := FileMeta{Level: int(e.uvarint("new file level"))}
			f.Number = e.uvarint("new file number")
			if tag == tagNewFile3 {
				e.uvarint("new file path id")
			}
			f.Size = e.uvarint("new file size")
			// The record buffer is reused for the next record: keep copies.
			f.Smallest = bytes.Clone(e.bytes("smallest key"))
			f.Largest = bytes.Clone(e.bytes("largest key"))
			if tag != tagNewFile {
				f.SmallestSeq = e.uvarint("smallest seqno")
				f.MaxSeq = e.uvarint("largest seqno")
			}
			if tag == tagNewFile4 {
				for e.err == nil {
					ct := e.uvarint("new file custom tag")
					if ct == newFileTerminate || e.err != nil {
						break
					}
					e.bytes(fmt.Sprintf("new file custom field %d", ct))
					if ct&newFileCustomNonIgnore != 0 && ct != newFilePathID {
						return fmt.Errorf("new file %d: custom field %d must be understood and is not supported", f.Number, ct)
					}
				}
			}
			if f.Level < 0 || f.Level > 64 {
				return fmt.Errorf("new file %d: level %d", f.Number, f.Level)
			}
			added = append(added, f)
		case tagColumnFamily:
			cf = uint32(e.uvarint("column family"))
		case tagColumnFamilyAdd:
			n := string(e.bytes("column family name"))
			addName = &n
		case tagColumnFamilyDel:
			drop = true
		default:
			if tag&tagSafeIgnoreMask != 0 {
				e.bytes(fmt.Sprintf("tag %d", tag))
				continue
			}
			return fmt.Errorf("tag %d is not supported", tag)
		}
	}
	if e.err != nil {
		return e.err
	}
	if addName != nil {
		if _, ok := cfs[cf]; ok {
			return fmt.Errorf("column family %d (%q) added twice", cf, *addName)
		}
		if len(cfs) >= maxColumnFamilies {
			return fmt.Errorf("more than %d column families", maxColumnFamilies)
		}
		cfs[cf] = &cfState{name: *addName, files: map[uint64]FileMeta{}}
	}
	c, ok := cfs[cf]
	if !ok {
		if len(added)+len(deleted) == 0 && !drop {
			return nil
		}
		return fmt.Errorf("edit of column family %d, which was never added", cf)
	}
	for _, d := range deleted {
		f, ok := c.files[d[1]]
		if !ok || uint64(f.Level) != d[0] {
			return fmt.Errorf("column family %q: deletes file %d at level %d, which is not live there", c.name, d[1], d[0])
		}
		delete(c.files, d[1])
		*live--
	}
	for _, f := range added {
		if _, ok := c.files[f.Number]; ok {
			return fmt.Errorf("column family %q: file %d added twice", c.name, f.Number)
		}
		if *live >= maxLiveFiles {
			return fmt.Errorf("more than %d live files", maxLiveFiles)
		}
		c.files[f.Number] = f
		*live++
	}
	if drop {
		*live -= len(c.files)
		delete(cfs, cf)
	}
	return nil
}
