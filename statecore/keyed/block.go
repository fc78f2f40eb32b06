package keyed

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/golang/snappy"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Block markers (FullSnapshotUtil).
const (
	// EndOfKeyGroup follows the last entry of the last state of a key-group block.
	EndOfKeyGroup = 0xFFFF
	// metaFollows is set on the first key byte of the last entry of a state's run.
	metaFollows = 0x80
)

// Entry is one record of a key-group block: the state it belongs to, its key (with the
// key-group prefix and the metadata-follows bit cleared) and its value, both as stored.
type Entry struct {
	KeyGroup int
	StateID  int
	Key      []byte
	Value    []byte
	// Offset is where the entry's key length starts: a file offset for uncompressed blocks, an
	// offset in the decompressed block for compressed ones (see Compressed); -1 for an entry of
	// a native RocksDB snapshot, which has none.
	Offset     int64
	Compressed bool
	// BlockOffset is the file offset of the entry's key-group block.
	BlockOffset int64
}

// PrefixLen is the key-group prefix width of keys: 1 byte up to 128 key groups, 2 above
// (CompositeKeySerializationUtils.computeRequiredBytesInKeyGroupPrefix).
func PrefixLen(maxParallelism int) int {
	if maxParallelism > 128 {
		return 2
	}
	return 1
}

// BlockReader reads key-group blocks. It reuses its buffers: an Entry passed to the callback is
// valid only during the call (copy Key and Value to keep them).
type BlockReader struct {
	// Name is the stream's name in errors (the state file's path inside the savepoint).
	Name string
	// Compressed says the blocks are Snappy-framed (Header.Compressed).
	Compressed bool
	// NumStates bounds state ids (len(Header.States)).
	NumStates int
	// PrefixLen is the key-group prefix width (PrefixLen(maxParallelism)); 0 skips the check
	// that every key carries its block's key group.
	PrefixLen int

	// End is set by a ReadBlock that returns nil: the stream offset just past the block.
	End int64

	br      *bufio.Reader
	sr      *snappy.Reader
	hint    hintReader
	cnt     countingReader
	key     []byte
	val     []byte
	scratch [4]byte
}

// blockCursor tracks the position inside one block for errors.
type blockCursor struct {
	b     *BlockReader
	r     io.Reader
	base  int64 // file offset of the block
	pos   int64 // bytes consumed in the (decompressed) block
	limit int64 // most bytes a length may claim (file bytes left for plain blocks)
	kg    int
	// win is the read buffer's unread bytes when last looked at, of which used are consumed by
	// peekEntry and not yet discarded from the buffer (see sync).
	win  []byte
	used int
}

// sync discards from the read buffer what peekEntry consumed, before anything else reads it.
func (c *blockCursor) sync() {
	if c.used > 0 {
		c.b.br.Discard(c.used)
		c.used = 0
	}
	c.win = nil
}

func (c *blockCursor) fail(field string, err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	off := c.base + c.pos
	if c.b.Compressed {
		field = fmt.Sprintf("keyGroup[%d] (Snappy block at offset %d, decompressed byte %d).%s", c.kg, c.base, c.pos, field)
		off = c.base
	} else {
		field = fmt.Sprintf("keyGroup[%d].%s", c.kg, field)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return &javaio.FormatError{Name: c.b.Name, Offset: off, Field: field, Msg: msg, Err: err}
}

func (c *blockCursor) full(field string, p []byte) error {
	n, err := io.ReadFull(c.r, p)
	if err != nil {
		return c.fail(field, err, "want %d bytes, block has %d", len(p), n)
	}
	c.pos += int64(n)
	return nil
}

func (c *blockCursor) u16(field string) (int, error) {
	p := c.b.scratch[:2]
	if err := c.full(field, p); err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(p)), nil
}

// bytes reads an i32 length and that many bytes into buf (grown as needed). A length larger than
// what the block can hold is refused before anything is allocated; in compressed blocks, where
// that is unknown, the buffer grows with the data actually read.
func (c *blockCursor) bytes(field, lengthField string, buf []byte) ([]byte, error) {
	start := c.pos
	p := c.b.scratch[:4]
	if err := c.full(lengthField, p); err != nil {
		return nil, err
	}
	n := int64(int32(binary.BigEndian.Uint32(p)))
	if n < 0 || n > c.limit-c.pos {
		c.pos = start
		return nil, c.fail(lengthField, nil, "length %d out of range [0, %d]", n, max(c.limit-c.pos-4, 0))
	}
	if int64(cap(buf)) >= n {
		buf = buf[:n]
		return buf, c.full(field, buf)
	}
	buf = buf[:0]
	for int64(len(buf)) < n {
		chunk := min(n-int64(len(buf)), 1<<20)
		s := len(buf)
		buf = append(buf, make([]byte, chunk)...)
		if err := c.full(field, buf[s:]); err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// ReadBlock reads the block of key group kg starting at off in src (size bytes long) and calls
// fn for each entry. The block grammar (FullSnapshotAsyncWriter):
//
//	+-------------+-----------------------------------------+-----+-------------+-----+---------+
//	| i16 stateId | entry ... entry* (last: key[0] | 0x80)  | ... | i16 stateId | ... | i16 FFFF|
//	+-------------+-----------------------------------------+-----+-------------+-----+---------+
//	entry := i32 keyLen, key, i32 valueLen, value
//
// With compression the whole block is one Snappy framed stream starting at off.
func (b *BlockReader) ReadBlock(src io.ReaderAt, size int64, off int64, kg int, fn func(*Entry) error) error {
	return b.ReadBlockTo(src, size, off, size, kg, fn)
}

// ReadBlockTo is ReadBlock for a block expected to end at end (the next block's offset, or the
// end of the stream; see BlockEnds). Reads are cut at end, so that reading many small blocks
// does not read 64 KiB past each; a block that runs past end is read on as ReadBlock reads it,
// with the same checks and errors.
func (b *BlockReader) ReadBlockTo(src io.ReaderAt, size int64, off int64, end int64, kg int, fn func(*Entry) error) error {
	c := &blockCursor{b: b, base: off, kg: kg, limit: size - off}
	if off <= 0 || off >= size {
		return c.fail("offset", nil, "key-group offset %d outside the stream of %d bytes", off, size)
	}
	var sec io.Reader = io.NewSectionReader(src, off, size-off)
	if end > off && end < size {
		b.hint = hintReader{r: src, off: off, end: end, size: size}
		sec = &b.hint
	}
	if b.Compressed {
		// The Snappy reader takes whole chunks and reads no further, so the bytes it consumed
		// are the block's length in the file.
		b.cnt = countingReader{r: sec}
		if b.sr == nil {
			b.sr = snappy.NewReader(&b.cnt)
		} else {
			b.sr.Reset(&b.cnt)
		}
		c.r = b.sr
		c.limit = 1<<62 - 1
	} else {
		if b.br == nil {
			b.br = bufio.NewReaderSize(sec, 64<<10)
		} else {
			b.br.Reset(sec)
		}
		c.r = b.br
	}
	sid, err := c.u16("stateId")
	if err != nil {
		return err
	}
	if sid >= b.NumStates {
		c.pos -= 2
		if sid == EndOfKeyGroup {
			return c.fail("stateId", nil, "empty key-group block (end mark where a state id belongs)")
		}
		return c.fail("stateId", nil, "state id %d, header has %d states", sid, b.NumStates)
	}
	e := Entry{KeyGroup: kg, Compressed: b.Compressed, BlockOffset: off}
	for {
		e.StateID = sid
		e.Offset = c.pos
		if !b.Compressed {
			e.Offset += off
		}
		if key, val, ok := c.peekEntry(); ok {
			// The common case: the whole entry sits in the read buffer and is well formed.
			last := key[0]&metaFollows != 0
			key[0] &^= metaFollows
			e.Key, e.Value = key, val
			if err := fn(&e); err != nil {
				return err
			}
			if !last {
				continue
			}
		} else {
			c.sync()
			if last, err := c.slowEntry(&e, off, kg); err != nil {
				return err
			} else if err := fn(&e); err != nil {
				return err
			} else if !last {
				continue
			}
		}
		c.sync()
		next, err := c.u16("nextStateId")
		if err != nil {
			return err
		}
		if next == EndOfKeyGroup {
			b.End = off + c.pos
			if b.Compressed {
				b.End = off + b.cnt.n
			}
			return nil
		}
		if next >= b.NumStates {
			c.pos -= 2
			return c.fail("nextStateId", nil, "state id %d, header has %d states", next, b.NumStates)
		}
		sid = next
	}
}

// peekEntry returns the next entry's key and value as slices of the read buffer, consumed, when
// the block is uncompressed, the entry fits the buffer and it passes every check slowEntry makes
// (lengths in range, a key-group prefix that matches). Otherwise it consumes nothing and returns
// false: slowEntry then reads the same bytes and reports what is wrong, at the same position.
// Entries are cut from the buffered bytes (win) without a call into the buffer per entry; the
// buffer is filled only when an entry runs past them. The slices stay valid until then.
func (c *blockCursor) peekEntry() (key, val []byte, ok bool) {
	b := c.b
	if b.Compressed {
		return nil, nil, false
	}
	br := b.br
	for filled := false; ; filled = true {
		p := c.win[c.used:]
		need := int64(4)
		if len(p) >= 4 {
			kl := int64(int32(binary.BigEndian.Uint32(p)))
			if kl < int64(max(b.PrefixLen, 1)) || kl > c.limit-c.pos-4 {
				break
			}
			need = 8 + kl
			if int64(len(p)) >= need {
				vl := int64(int32(binary.BigEndian.Uint32(p[4+kl:])))
				if vl < 0 || vl > c.limit-c.pos-8-kl {
					break
				}
				need += vl
				if int64(len(p)) >= need {
					key = p[4 : 4+kl]
					if b.PrefixLen > 0 && keyGroupPrefix(key, b.PrefixLen) != c.kg {
						break
					}
					c.used += int(need)
					c.pos += need
					return key, p[8+kl : need], true
				}
			}
		}
		if filled || need > int64(br.Size()) {
			break
		}
		// The entry runs past the buffered bytes: fill the buffer (moving what is unread to its
		// front) and look again.
		c.sync()
		if _, err := br.Peek(int(need)); err != nil {
			break
		}
		c.win, _ = br.Peek(br.Buffered())
	}
	c.sync()
	return nil, nil, false
}

// slowEntry reads one entry through io.ReadFull into the reader's own buffers, checking each
// field as it goes; it reports whether the entry is the last of its state's run.
func (c *blockCursor) slowEntry(e *Entry, off int64, kg int) (bool, error) {
	b := c.b
	var err error
	b.key, err = c.bytes("key", "key.length", b.key)
	if err != nil {
		return false, err
	}
	if len(b.key) < max(b.PrefixLen, 1) {
		c.pos = e.Offset - off*boolInt(!b.Compressed)
		return false, c.fail("key", nil, "key of %d bytes has no key-group prefix", len(b.key))
	}
	last := b.key[0]&metaFollows != 0
	b.key[0] &^= metaFollows
	if b.PrefixLen > 0 {
		if got := keyGroupPrefix(b.key, b.PrefixLen); got != kg {
			c.pos = e.Offset - off*boolInt(!b.Compressed) + 4
			return false, c.fail("key", nil, "key-group prefix %d in the block of key group %d", got, kg)
		}
	}
	b.val, err = c.bytes("value", "value.length", b.val)
	if err != nil {
		return false, err
	}
	e.Key, e.Value = b.key, b.val
	return last, nil
}

// keyGroupPrefix returns the key group a key's 1- or 2-byte prefix names (prefixLen bytes, the
// key at least that long), ignoring the metadata-follows bit on its first byte.
func keyGroupPrefix(key []byte, prefixLen int) int {
	kg := int(key[0] &^ metaFollows)
	if prefixLen == 2 {
		kg = kg<<8 | int(key[1])
	}
	return kg
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// hintReader reads src from off up to size, in reads that stop at end while end is ahead.
type hintReader struct {
	r              io.ReaderAt
	off, end, size int64
}

func (h *hintReader) Read(p []byte) (int, error) {
	if h.off >= h.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), h.size-h.off)
	if h.off < h.end {
		n = min(n, h.end-h.off)
	}
	m, err := h.r.ReadAt(p[:n], h.off)
	h.off += int64(m)
	if m > 0 && err == io.EOF {
		err = nil
	}
	return m, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
