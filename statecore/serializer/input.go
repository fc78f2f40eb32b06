package serializer

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Input reads the bytes of one serialized value (a state key, value or element). Like
// javaio.Reader it keeps the first error; Pos is the offset within the value, which the caller
// turns into a file offset.
type Input struct {
	B   []byte
	Pos int
	err *DecodeError
}

// DecodeError says where in a value decoding failed and what was expected there.
type DecodeError struct {
	Pos int    // offset within the value bytes
	Msg string // what was expected
}

func (e *DecodeError) Error() string { return fmt.Sprintf("value byte %d: %s", e.Pos, e.Msg) }

// NewInput reads b.
func NewInput(b []byte) *Input { return &Input{B: b} }

// Reset points the input at b, clearing any error (so one Input can serve many values).
func (in *Input) Reset(b []byte) { in.B, in.Pos, in.err = b, 0, nil }

// Err is the first error, or nil.
func (in *Input) Err() error {
	if in.err == nil {
		return nil
	}
	return in.err
}

// Remaining is the number of unread bytes.
func (in *Input) Remaining() int { return len(in.B) - in.Pos }

// Failf records an error at the current position.
func (in *Input) Failf(format string, args ...any) {
	if in.err == nil {
		in.err = &DecodeError{Pos: in.Pos, Msg: fmt.Sprintf(format, args...)}
	}
}

func (in *Input) take(n int, what string) []byte {
	if in.err != nil {
		return nil
	}
	if n < 0 || n > len(in.B)-in.Pos {
		in.Failf("%s: want %d bytes, %d left", what, n, len(in.B)-in.Pos)
		return nil
	}
	b := in.B[in.Pos : in.Pos+n]
	in.Pos += n
	return b
}

// U8 reads one byte.
func (in *Input) U8(what string) byte {
	if b := in.take(1, what); b != nil {
		return b[0]
	}
	return 0
}

// I16 reads a big-endian short.
func (in *Input) I16(what string) int16 {
	if b := in.take(2, what); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

// I32 reads a big-endian int.
func (in *Input) I32(what string) int32 {
	if b := in.take(4, what); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

// I64 reads a big-endian long.
func (in *Input) I64(what string) int64 {
	if b := in.take(8, what); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

// F32 reads a big-endian float.
func (in *Input) F32(what string) float32 { return math.Float32frombits(uint32(in.I32(what))) }

// F64 reads a big-endian double.
func (in *Input) F64(what string) float64 { return math.Float64frombits(uint64(in.I64(what))) }

// Bytes reads n bytes (a sub-slice, not a copy).
func (in *Input) Bytes(n int, what string) []byte { return in.take(n, what) }

// Length reads an i32 length and checks it against the bytes left, each element taking at least
// minElem bytes, so no caller allocates for a length the value cannot hold.
func (in *Input) Length(what string, minElem int) int {
	p := in.Pos
	n := in.I32(what)
	if in.err != nil {
		return 0
	}
	if n < 0 || (minElem > 0 && int64(n)*int64(minElem) > int64(len(in.B)-in.Pos)) {
		in.Pos = p
		in.Failf("%s: length %d does not fit the %d bytes left", what, n, len(in.B)-in.Pos-4)
		return 0
	}
	return int(n)
}

// varint reads StringValue's variable-length int: 7 bits per byte, low group first, high bit set
// while more bytes follow.
func (in *Input) varint(what string) int {
	var v, shift uint
	for i := 0; i < 5; i++ {
		c := in.U8(what)
		if in.err != nil {
			return 0
		}
		v |= uint(c&0x7f) << shift
		if c < 0x80 {
			return int(v)
		}
		shift += 7
	}
	in.Failf("%s: variable-length int longer than 5 bytes", what)
	return 0
}

// String reads StringValue.writeString (StringSerializer): varint(len+1), 0 meaning null, then
// len UTF-16 code units, each a varint.
//
//	+--------------------+------------------------------------------+
//	| varint (len + 1)   | len x varint UTF-16 code unit            |
//	+--------------------+------------------------------------------+
func (in *Input) String(what string) (s string, null bool) {
	n := in.varint(what + ".length")
	if in.err != nil {
		return "", false
	}
	if n == 0 {
		return "", true
	}
	n--
	if n > len(in.B)-in.Pos {
		in.Failf("%s: %d characters do not fit the %d bytes left", what, n, len(in.B)-in.Pos)
		return "", false
	}
	// Fast path: ASCII is one byte per character.
	ascii := true
	for _, c := range in.B[in.Pos : in.Pos+n] {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		s = string(in.B[in.Pos : in.Pos+n])
		in.Pos += n
		return s, false
	}
	units := make([]uint16, n)
	for i := range units {
		units[i] = uint16(in.varint(what))
	}
	if in.err != nil {
		return "", false
	}
	return utf16String(units), false
}
