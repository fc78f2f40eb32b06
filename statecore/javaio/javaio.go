// Package javaio reads and writes the primitives of Java's DataInputStream/DataOutputStream, the
// encoding under every Flink state file: big-endian fixed-width integers, booleans as one byte,
// and writeUTF strings.
//
//	writeInt(i)    4 bytes, big-endian two's complement
//	writeLong(l)   8 bytes, big-endian two's complement
//	writeShort(s)  2 bytes, big-endian
//	writeBoolean   1 byte, 0x01 true, 0x00 false (readers take any non-zero as true)
//	writeUTF(s)    +--------+--------------------------+
//	               | u16 BE | n bytes of modified UTF-8 |
//	               +--------+--------------------------+
//
// Modified UTF-8 differs from UTF-8 in two places: U+0000 is written as C0 80, and a character
// above U+FFFF is written as its two UTF-16 surrogates, 3 bytes each.
//
// Reader and Writer keep the first error ("sticky"): after a failure every read returns zero
// values and Err reports what went wrong, where (the stream's name and byte offset) and which
// field was being read. Codecs read a whole record and check Err once, which keeps them short
// without losing the position of the failure.
package javaio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf16"
	"unicode/utf8"
)

// FormatError says where a stream stopped making sense.
type FormatError struct {
	Name   string // the file or stream, e.g. "savepoint/_metadata"
	Offset int64  // byte offset where the field starts
	Field  string // what was being read, e.g. "operator[2].parallelism"
	Msg    string // what was expected
	Err    error  // underlying cause, e.g. io.ErrUnexpectedEOF
}

func (e *FormatError) Error() string {
	s := fmt.Sprintf("%s: offset %d", e.Name, e.Offset)
	if e.Field != "" {
		s += ": " + e.Field
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *FormatError) Unwrap() error { return e.Err }

// MaxUTFLen is the largest byte length writeUTF can produce.
const MaxUTFLen = 65535

// Reader reads Java data-stream primitives from an io.Reader, counting the offset.
type Reader struct {
	r    *bufio.Reader
	data []byte // NewBytesReader: the whole stream, read from pos (r is nil)
	pos  int
	name string
	off  int64
	err  error
	buf  [8]byte
}

// NewReader reads from r; name and base (the offset of r's first byte in its file) make errors
// point at the right place.
func NewReader(r io.Reader, name string, base int64) *Reader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		// Buffer no more than the input holds when it knows its length (bytes.Reader wrapping a
		// small record is common), else 16 KiB: readers are created per state file, and zeroing
		// large buffers showed up in profiles of wide savepoints.
		size := 16 << 10
		if l, ok := r.(interface{ Len() int }); ok {
			size = min(max(l.Len(), 16), 64<<10)
		}
		br = bufio.NewReaderSize(r, size)
	}
	return &Reader{r: br, name: name, off: base}
}

// NewBytesReader reads from data held in memory, which is faster than going through a
// bufio.Reader; name and base are as for NewReader. Slices returned by Bytes and Rest are copies.
func NewBytesReader(data []byte, name string, base int64) *Reader {
	return &Reader{data: data, name: name, off: base}
}

// short records that the stream ended inside a field of n bytes after got of them.
func (r *Reader) short(field string, n, got int) {
	r.err = &FormatError{Name: r.name, Offset: r.off, Field: field,
		Msg: fmt.Sprintf("want %d bytes, file has %d", n, got), Err: io.ErrUnexpectedEOF}
}

// Name is the stream's name as used in errors.
func (r *Reader) Name() string { return r.name }

// Offset is the position of the next byte to read.
func (r *Reader) Offset() int64 { return r.off }

// Err is the first error met, or nil.
func (r *Reader) Err() error { return r.err }

// Failf records a format error at the current offset (unless an error is already recorded) and
// returns the recorded error.
func (r *Reader) Failf(field, format string, args ...any) error {
	return r.FailAt(r.off, field, format, args...)
}

// FailAt records a format error at a given offset, typically the start of the offending field.
func (r *Reader) FailAt(off int64, field, format string, args ...any) error {
	if r.err == nil {
		r.err = &FormatError{Name: r.name, Offset: off, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	return r.err
}

// FailWith records err as the cause of a format error at off (unless an error is already
// recorded), for callers that need to recognise it (errors.As); its text is the message.
func (r *Reader) FailWith(off int64, field string, err error) error {
	if r.err == nil {
		r.err = &FormatError{Name: r.name, Offset: off, Field: field, Err: err}
	}
	return r.err
}

func (r *Reader) fill(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if r.r == nil {
		if len(r.data)-r.pos < n {
			r.short(field, n, len(r.data)-r.pos)
			return nil
		}
		b := r.data[r.pos : r.pos+n]
		r.pos += n
		r.off += int64(n)
		return b
	}
	b := r.buf[:n]
	if r.r.Buffered() >= n {
		// Fast path: the bytes are already buffered (almost always); skip io.ReadFull.
		p, _ := r.r.Peek(n)
		copy(b, p)
		r.r.Discard(n)
		r.off += int64(n)
		return b
	}
	got, err := io.ReadFull(r.r, b)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = &FormatError{Name: r.name, Offset: r.off, Field: field,
			Msg: fmt.Sprintf("want %d bytes, file has %d", n, got), Err: err}
		return nil
	}
	r.off += int64(n)
	return b
}

// U8 reads one unsigned byte.
func (r *Reader) U8(field string) uint8 {
	if b := r.fill(field, 1); b != nil {
		return b[0]
	}
	return 0
}

// I8 reads one signed byte (Java readByte).
func (r *Reader) I8(field string) int8 { return int8(r.U8(field)) }

// Bool reads a Java boolean.
func (r *Reader) Bool(field string) bool { return r.U8(field) != 0 }

// U16 reads a big-endian unsigned short.
func (r *Reader) U16(field string) uint16 {
	if b := r.fill(field, 2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

// I16 reads a big-endian short.
func (r *Reader) I16(field string) int16 { return int16(r.U16(field)) }

// I32 reads a big-endian int.
func (r *Reader) I32(field string) int32 {
	if b := r.fill(field, 4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// I64 reads a big-endian long.
func (r *Reader) I64(field string) int64 {
	if b := r.fill(field, 8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// I64s fills dst with big-endian longs (a long[] written element by element); in memory mode
// the bounds are checked once for the whole array.
func (r *Reader) I64s(field string, dst []int64) {
	if r.err != nil {
		return
	}
	if r.r == nil {
		n := 8 * len(dst)
		if len(r.data)-r.pos < n {
			whole := (len(r.data) - r.pos) / 8
			r.pos += 8 * whole
			r.off += int64(8 * whole)
			r.short(field, 8, len(r.data)-r.pos)
			return
		}
		b := r.data[r.pos : r.pos+n]
		for i := range dst {
			dst[i] = int64(binary.BigEndian.Uint64(b[8*i:]))
		}
		r.pos += n
		r.off += int64(n)
		return
	}
	for i := range dst {
		dst[i] = r.I64(field)
	}
}

// Count reads an int32 element count and checks 0 <= n <= max before anyone allocates for it.
func (r *Reader) Count(field string, max int) int {
	off := r.off
	n := r.I32(field)
	if r.err != nil {
		return 0
	}
	if n < 0 || int64(n) > int64(max) {
		r.FailAt(off, field, "count %d out of range [0, %d]", n, max)
		return 0
	}
	return int(n)
}

// Bytes reads exactly n raw bytes; n must already be bounded by the caller.
func (r *Reader) Bytes(field string, n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 {
		r.Failf(field, "negative length %d", n)
		return nil
	}
	if r.r == nil {
		if len(r.data)-r.pos < n {
			r.short(field, n, len(r.data)-r.pos)
			return nil
		}
		out := make([]byte, n)
		copy(out, r.data[r.pos:])
		r.pos += n
		r.off += int64(n)
		return out
	}
	out := make([]byte, 0, min(n, 1<<20))
	// Grow as data arrives, so a lying length cannot make us allocate more than the file holds.
	for len(out) < n {
		chunk := min(n-len(out), 1<<20)
		start := len(out)
		out = append(out, make([]byte, chunk)...)
		got, err := io.ReadFull(r.r, out[start:])
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			r.err = &FormatError{Name: r.name, Offset: r.off, Field: field,
				Msg: fmt.Sprintf("want %d bytes, file has %d", n, start+got), Err: err}
			return nil
		}
		r.off += int64(chunk)
	}
	return out
}

// UTF reads a writeUTF string and decodes its modified UTF-8.
func (r *Reader) UTF(field string) string {
	off := r.off
	n := int(r.U16(field))
	if r.err != nil {
		return ""
	}
	// Decode straight from the buffer when it holds the whole string (nearly always), saving a
	// copy per string; longer strings take the Bytes path.
	var peek []byte
	var err error
	if r.r == nil {
		if len(r.data)-r.pos < n {
			r.short(field, n, len(r.data)-r.pos)
			return ""
		}
		peek = r.data[r.pos : r.pos+n]
		r.pos += n
	} else if peek, err = r.r.Peek(n); err == nil {
		r.r.Discard(n)
	}
	if err == nil {
		s, derr := DecodeModifiedUTF8(peek)
		r.off += int64(n)
		if derr != nil {
			r.FailAt(off, field, "%v", derr)
			return ""
		}
		return s
	}
	raw := r.Bytes(field, n)
	if r.err != nil {
		return ""
	}
	s, err := DecodeModifiedUTF8(raw)
	if err != nil {
		r.FailAt(off, field, "%v", err)
		return ""
	}
	return s
}

// Skip discards n bytes.
func (r *Reader) Skip(field string, n int64) {
	if r.err != nil {
		return
	}
	if r.r == nil {
		if n < 0 || int64(len(r.data)-r.pos) < n {
			r.err = &FormatError{Name: r.name, Offset: r.off, Field: field,
				Msg: fmt.Sprintf("want to skip %d bytes, file has %d", n, len(r.data)-r.pos), Err: io.ErrUnexpectedEOF}
			return
		}
		r.pos += int(n)
		r.off += n
		return
	}
	got, err := io.CopyN(io.Discard, r.r, n)
	r.off += got
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		r.err = &FormatError{Name: r.name, Offset: r.off, Field: field,
			Msg: fmt.Sprintf("want to skip %d bytes, file has %d", n, got), Err: err}
	}
}

// AtEOF reports whether the stream has no more bytes (without consuming any).
func (r *Reader) AtEOF() bool {
	if r.err != nil {
		return false
	}
	if r.r == nil {
		return r.pos >= len(r.data)
	}
	_, err := r.r.Peek(1)
	return err == io.EOF
}

// Peek1 returns the next byte without consuming it, or -1 at the end of the stream or after an
// error. Grammars with a terminator byte (Java serialization's TC_ENDBLOCKDATA) need it.
func (r *Reader) Peek1() int {
	if r.err != nil {
		return -1
	}
	if r.r == nil {
		if r.pos >= len(r.data) {
			return -1
		}
		return int(r.data[r.pos])
	}
	b, err := r.r.Peek(1)
	if err != nil {
		return -1
	}
	return int(b[0])
}

// Rest reads everything up to the end of the stream, at most max bytes.
func (r *Reader) Rest(field string, max int64) []byte {
	if r.err != nil {
		return nil
	}
	if r.r == nil {
		if int64(len(r.data)-r.pos) > max {
			r.Failf(field, "more than %d bytes", max)
			return nil
		}
		b := make([]byte, len(r.data)-r.pos)
		copy(b, r.data[r.pos:])
		r.pos = len(r.data)
		r.off += int64(len(b))
		return b
	}
	b, err := io.ReadAll(io.LimitReader(r.r, max+1))
	if err != nil {
		r.err = &FormatError{Name: r.name, Offset: r.off, Field: field, Err: err}
		return nil
	}
	if int64(len(b)) > max {
		r.Failf(field, "more than %d bytes", max)
		return nil
	}
	r.off += int64(len(b))
	return b
}

// Writer writes Java data-stream primitives; like Reader it keeps the first error.
type Writer struct {
	w   io.Writer
	n   int64
	err error
	buf [8]byte
}

// NewWriter writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Offset is the number of bytes written so far.
func (w *Writer) Offset() int64 { return w.n }

// Err is the first error met, or nil.
func (w *Writer) Err() error { return w.err }

// Raw writes b as is.
func (w *Writer) Raw(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.n += int64(n)
	if err != nil {
		w.err = err
	}
}

// U8 writes one byte.
func (w *Writer) U8(v uint8) { w.buf[0] = v; w.Raw(w.buf[:1]) }

// Bool writes a Java boolean.
func (w *Writer) Bool(v bool) {
	if v {
		w.U8(1)
	} else {
		w.U8(0)
	}
}

// U16 writes a big-endian unsigned short.
func (w *Writer) U16(v uint16) { binary.BigEndian.PutUint16(w.buf[:2], v); w.Raw(w.buf[:2]) }

// I16 writes a big-endian short.
func (w *Writer) I16(v int16) { w.U16(uint16(v)) }

// I32 writes a big-endian int.
func (w *Writer) I32(v int32) { binary.BigEndian.PutUint32(w.buf[:4], uint32(v)); w.Raw(w.buf[:4]) }

// I64 writes a big-endian long.
func (w *Writer) I64(v int64) { binary.BigEndian.PutUint64(w.buf[:8], uint64(v)); w.Raw(w.buf[:8]) }

// UTF writes s as Java's writeUTF does; like Java it refuses strings longer than 65535 bytes.
func (w *Writer) UTF(s string) {
	b := EncodeModifiedUTF8(s)
	if len(b) > MaxUTFLen {
		if w.err == nil {
			w.err = fmt.Errorf("writeUTF: encoded string is %d bytes, more than %d", len(b), MaxUTFLen)
		}
		return
	}
	w.U16(uint16(len(b)))
	w.Raw(b)
}

// EncodeModifiedUTF8 encodes s as Java's modified UTF-8.
func EncodeModifiedUTF8(s string) []byte {
	out := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r == 0:
			out = append(out, 0xC0, 0x80)
		case r < 0x80:
			out = append(out, byte(r))
		case r < 0x800:
			out = append(out, 0xC0|byte(r>>6), 0x80|byte(r&0x3F))
		case r < 0x10000:
			out = append(out, 0xE0|byte(r>>12), 0x80|byte((r>>6)&0x3F), 0x80|byte(r&0x3F))
		default:
			hi, lo := utf16.EncodeRune(r)
			for _, c := range []rune{hi, lo} {
				out = append(out, 0xE0|byte(c>>12), 0x80|byte((c>>6)&0x3F), 0x80|byte(c&0x3F))
			}
		}
	}
	return out
}

// DecodeModifiedUTF8 decodes Java's modified UTF-8. Surrogate pairs are joined; a lone surrogate
// becomes U+FFFD, as Go strings cannot hold it.
func DecodeModifiedUTF8(b []byte) (string, error) {
	// Fast path: ASCII without NUL (nearly every name Flink writes) is the same in both encodings.
	ascii := true
	for _, c := range b {
		if c == 0 || c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return string(b), nil
	}
	units := make([]uint16, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c < 0x80:
			if c == 0 {
				return "", fmt.Errorf("modified UTF-8: raw NUL byte at %d", i)
			}
			units = append(units, uint16(c))
			i++
		case c&0xE0 == 0xC0:
			if i+1 >= len(b) || b[i+1]&0xC0 != 0x80 {
				return "", fmt.Errorf("modified UTF-8: bad 2-byte sequence at %d", i)
			}
			units = append(units, uint16(c&0x1F)<<6|uint16(b[i+1]&0x3F))
			i += 2
		case c&0xF0 == 0xE0:
			if i+2 >= len(b) || b[i+1]&0xC0 != 0x80 || b[i+2]&0xC0 != 0x80 {
				return "", fmt.Errorf("modified UTF-8: bad 3-byte sequence at %d", i)
			}
			units = append(units, uint16(c&0x0F)<<12|uint16(b[i+1]&0x3F)<<6|uint16(b[i+2]&0x3F))
			i += 3
		default:
			return "", fmt.Errorf("modified UTF-8: invalid byte 0x%02x at %d", c, i)
		}
	}
	runes := utf16.Decode(units)
	out := make([]byte, 0, len(b))
	for _, r := range runes {
		out = utf8.AppendRune(out, r)
	}
	return string(out), nil
}
