package keyed

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/golang/snappy"
)

// Snappy framing parameters of Flink's SnappyStreamCompressionDecorator (xerial
// SnappyFramedOutputStream with its defaults).
const (
	snappyBlockSize        = 64 << 10
	snappyMinCompressRatio = 0.85
)

// snappyStreamID opens every Snappy framed stream: chunk type 0xFF, length 6, "sNaPpY".
var snappyStreamID = []byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// SnappyFramer writes one Snappy framed stream the way xerial's SnappyFramedOutputStream does:
//
//	+--------------------------------+   +---------+---------------+----------------+--------+
//	| FF 06 00 00 73 4E 61 50 70 59  |   | u8 type | u24 LE length | u32 LE masked  | data   |
//	| stream identifier ("sNaPpY")   |   | 00 / 01 | (4 + data)    | CRC-32C of raw |        |
//	+--------------------------------+   +---------+---------------+----------------+--------+
//	                                      one chunk per <= 64 KiB of input; type 01 (stored)
//	                                      when compressed/raw > 0.85
//
// Chunk boundaries are chosen here (not by golang/snappy's Writer) so that operator-state offsets
// can be taken at chunk boundaries, as Flink does.
type SnappyFramer struct {
	w   io.Writer
	buf []byte
	enc []byte
	err error
}

// NewSnappyFramer writes the stream identifier to w and returns the framer.
func NewSnappyFramer(w io.Writer) *SnappyFramer {
	f := &SnappyFramer{w: w, buf: make([]byte, 0, snappyBlockSize)}
	_, f.err = w.Write(snappyStreamID)
	return f
}

// Write buffers p, emitting a chunk for every full 64 KiB.
func (f *SnappyFramer) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 && f.err == nil {
		k := min(len(p), snappyBlockSize-len(f.buf))
		f.buf = append(f.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(f.buf) == snappyBlockSize {
			f.Flush()
		}
	}
	return n, f.err
}

// Flush emits the buffered bytes as one chunk (nothing when the buffer is empty).
func (f *SnappyFramer) Flush() error {
	if f.err != nil || len(f.buf) == 0 {
		return f.err
	}
	f.enc = snappy.Encode(f.enc[:cap(f.enc)], f.buf)
	typ, data := byte(0x00), f.enc
	if float64(len(f.enc))/float64(len(f.buf)) > snappyMinCompressRatio {
		typ, data = 0x01, f.buf
	}
	c := crc32.Checksum(f.buf, crc32c)
	masked := ((c >> 15) | (c << 17)) + 0xa282ead8
	var hdr [8]byte
	n := len(data) + 4
	hdr[0], hdr[1], hdr[2], hdr[3] = typ, byte(n), byte(n>>8), byte(n>>16)
	binary.LittleEndian.PutUint32(hdr[4:], masked)
	if _, f.err = f.w.Write(hdr[:]); f.err == nil {
		_, f.err = f.w.Write(data)
	}
	f.buf = f.buf[:0]
	return f.err
}

// Writer writes a canonical keyed-state stream: a header, then one block per non-empty key
// group. It is the inverse of ReadHeader + BlockReader; migrate uses it to rewrite key groups
// (for example with new prefixes) without decoding values.
type Writer struct {
	w          *countingWriter
	compressed bool
	stateIDs   []int
	buf        []byte // the block being assembled

	// A streamed key group (stream.go): open, its key group, entries added, its offset, where
	// its bytes go, the state ids begun so far, and the entry held back.
	streaming  bool
	skg, sn    int
	soff       int64
	sout       io.Writer
	framer     *SnappyFramer
	seen       []int
	pending    bool
	psid       int
	pkey, pval []byte
	scratch    []byte
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// NewWriter writes the header h (Header.Encode: states, options and compression flag as they are
// in h now, serializer snapshots copied from the header h was read from).
func NewWriter(w io.Writer, h *Header) (*Writer, error) {
	cw := &countingWriter{w: w}
	raw, err := h.Encode()
	if err != nil {
		return nil, fmt.Errorf("keyed writer: %w", err)
	}
	if _, err := cw.Write(raw); err != nil {
		return nil, fmt.Errorf("keyed writer: header: %w", err)
	}
	return &Writer{w: cw, compressed: h.Compressed}, nil
}

// Offset is the number of bytes written so far: the offset the next block will start at.
func (w *Writer) Offset() int64 { return w.w.n }

// WriteKeyGroup writes the block of one key group and returns its offset (for the handle's
// offset table). entries must be non-empty and carry keys with their key-group prefix; they are
// grouped by state id, keeping their order within a state. The metadata-follows bit is set on
// the last entry of each state's run. The block is assembled in one reused buffer and written
// (or Snappy-framed: the framer cuts the same 64 KiB chunks however it is fed) in one call.
func (w *Writer) WriteKeyGroup(entries []Entry) (int64, error) {
	if w.streaming {
		return 0, fmt.Errorf("keyed writer: WriteKeyGroup while streamed key group %d is open", w.skg)
	}
	if len(entries) == 0 {
		return 0, fmt.Errorf("keyed writer: empty key group (Flink cannot read an empty block; leave its offset 0)")
	}
	buf, ids, err := appendBlock(w.buf[:0], entries, w.stateIDs[:0])
	w.buf, w.stateIDs = buf, ids
	if err != nil {
		return 0, err
	}
	return w.emit(buf)
}

// appendBlock appends the block of entries (see WriteKeyGroup) to buf; ids is scratch for the
// order of states, returned for reuse.
func appendBlock(buf []byte, entries []Entry, ids []int) ([]byte, []int, error) {
	// Order of states: by first appearance (entries usually come in runs of one state).
	prev := -1
	for i := range entries {
		if sid := entries[i].StateID; sid != prev {
			prev = sid
			if !slices.Contains(ids, sid) {
				ids = append(ids, sid)
			}
		}
	}
	for i, sid := range ids {
		// The first id opens the block; later ones follow the previous run's flagged entry.
		buf = binary.BigEndian.AppendUint16(buf, uint16(sid))
		last := len(entries) - 1
		for entries[last].StateID != sid {
			last--
		}
		for j := range entries {
			e := &entries[j]
			if e.StateID != sid {
				continue
			}
			if len(e.Key) == 0 {
				return buf, ids, fmt.Errorf("keyed writer: key group %d state %d: empty key", e.KeyGroup, sid)
			}
			buf = appendEntry(buf, e.Key, e.Value, j == last)
		}
		if i == len(ids)-1 {
			buf = binary.BigEndian.AppendUint16(buf, EndOfKeyGroup)
		}
	}
	return buf, ids, nil
}

// emit writes one assembled block (Snappy-framed when the stream is compressed: the framer
// cuts the same 64 KiB chunks however it is fed) and returns its offset.
func (w *Writer) emit(block []byte) (int64, error) {
	off := w.w.n
	if w.compressed {
		fr := NewSnappyFramer(w.w)
		if _, err := fr.Write(block); err != nil {
			return 0, err
		}
		if err := fr.Flush(); err != nil {
			return 0, err
		}
		return off, nil
	}
	if _, err := w.w.Write(block); err != nil {
		return 0, err
	}
	return off, nil
}

// appendEntry appends one entry as a block holds it: key length, key (with the metadata-follows
// bit on its first byte when it is the last of its state's run), value length, value. Both
// WriteKeyGroup and the streamed writer use it, so their bytes cannot drift apart.
func appendEntry(buf, key, value []byte, last bool) []byte {
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(key)))
	k := len(buf)
	buf = append(buf, key...)
	if last {
		buf[k] |= metaFollows
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(value)))
	return append(buf, value...)
}

// CopyBlock writes n bytes of r as they are, one block of another stream of the same header
// (compression and state ids alike), and returns its offset: a key group that does not change is
// passed on without being decoded.
func (w *Writer) CopyBlock(r io.Reader, n int64) (int64, error) {
	if w.streaming {
		return 0, fmt.Errorf("keyed writer: CopyBlock while streamed key group %d is open", w.skg)
	}
	off := w.w.n
	if _, err := io.CopyN(w.w, r, n); err != nil {
		return 0, fmt.Errorf("keyed writer: copy a block of %d bytes: %w", n, err)
	}
	return off, nil
}
