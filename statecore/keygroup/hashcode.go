package keygroup

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf16"
)

// Char is a Java char (java.lang.Character key): one UTF-16 code unit.
type Char uint16

// Tuple is a Flink TupleN (Tuple1..Tuple25); nil fields are allowed inside.
type Tuple []any

// RowKind is org.apache.flink.types.RowKind's byte value.
type RowKind int8

// Row kinds.
const (
	Insert       RowKind = 0
	UpdateBefore RowKind = 1
	UpdateAfter  RowKind = 2
	Delete       RowKind = 3
)

// Row is a positional org.apache.flink.types.Row (Row.of / Row.ofKind).
type Row struct {
	Kind   RowKind
	Fields []any
}

// BinaryRow is the bytes of a Flink SQL BinaryRowData (the key of every keyed SQL operator):
// header and null bits, fixed-length part, variable part, without the serializer's 4-byte
// length prefix. Its length is a multiple of 8 (4 at least, as hashByWords requires).
type BinaryRow []byte

// JavaHasher is implemented by key values that know their own Java hashCode(), so that readers
// of other key types can plug into ForKey and HashCode.
type JavaHasher interface {
	JavaHashCode() (int32, error)
}

// HashCode returns Java's hashCode() of a key value given as a Go value:
//
//	int32 Integer     int64 Long       int16 Short     int8 Byte     bool Boolean
//	Char  Character   float64 Double   float32 Float   string String
//	Tuple TupleN      Row Row          BinaryRow BinaryRowData       JavaHasher (anything else)
//
// A nil key is refused (Flink rejects null keys). Other Go types are refused rather than guessed.
func HashCode(key any) (int32, error) {
	if key == nil {
		return 0, fmt.Errorf("a key must not be null")
	}
	return hashCode(key)
}

func hashCode(v any) (int32, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int32:
		return v, nil
	case int64:
		return LongHash(v), nil
	case int16:
		return int32(v), nil
	case int8:
		return int32(v), nil
	case bool:
		if v {
			return 1231, nil
		}
		return 1237, nil
	case Char:
		return int32(v), nil
	case float64:
		return DoubleHash(v), nil
	case float32:
		return FloatHash(v), nil
	case string:
		return StringHash(v), nil
	case Tuple:
		return tupleHash(v)
	case Row:
		return rowHash(v)
	case *Row:
		return rowHash(*v)
	case BinaryRow:
		return BinaryRowHash(v)
	case JavaHasher:
		return v.JavaHashCode()
	}
	return 0, fmt.Errorf("no Java hashCode for Go type %T (want int32, int64, int16, int8, bool, keygroup.Char, float64, float32, string, Tuple, Row or BinaryRow)", v)
}

// LongHash is Long.hashCode: (int)(v ^ (v >>> 32)).
func LongHash(v int64) int32 { return int32(uint64(v) ^ uint64(v)>>32) }

// DoubleHash is Double.hashCode over doubleToLongBits (every NaN is 0x7ff8000000000000).
func DoubleHash(v float64) int32 {
	b := math.Float64bits(v)
	if v != v {
		b = 0x7ff8000000000000
	}
	return LongHash(int64(b))
}

// FloatHash is Float.hashCode, floatToIntBits (every NaN is 0x7fc00000).
func FloatHash(v float32) int32 {
	if v != v {
		return 0x7fc00000
	}
	return int32(math.Float32bits(v))
}

// StringHash is String.hashCode: h = 31*h + c over the UTF-16 code units.
func StringHash(s string) int32 {
	var h int32
	for _, r := range s {
		if r >= 0x10000 {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + int32(hi)
			h = 31*h + int32(lo)
			continue
		}
		h = 31*h + int32(r)
	}
	return h
}

// tupleHash is TupleN.hashCode: f0's hash, then h = 31*h + hash(fi), null fields hashing to 0.
func tupleHash(t Tuple) (int32, error) {
	var h int32
	for i, f := range t {
		fh, err := hashCode(f)
		if err != nil {
			return 0, fmt.Errorf("tuple field f%d: %w", i, err)
		}
		if i == 0 {
			h = fh
		} else {
			h = 31*h + fh
		}
	}
	return h, nil
}

// rowHash is Row.hashCode (RowUtils.deepHashCodeRow) for a positional row:
// 31*kind + deep(fields), where deep of an Object[] is r=1; r = 31*r + deep(e), and deep of a
// plain object o is Arrays.deepHashCode(new Object[]{o}) = 31 + hash(o).
func rowHash(r Row) (int32, error) {
	var acc int32 = 1
	for i, f := range r.Fields {
		d, err := deepHash(f)
		if err != nil {
			return 0, fmt.Errorf("row field %d: %w", i, err)
		}
		acc = 31*acc + d
	}
	return 31*int32(r.Kind) + acc, nil
}

func deepHash(v any) (int32, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case []any: // Object[]
		var acc int32 = 1
		for _, e := range v {
			d, err := deepHash(e)
			if err != nil {
				return 0, err
			}
			acc = 31*acc + d
		}
		return acc, nil
	case []byte: // byte[]: Arrays.hashCode
		var acc int32 = 1
		for _, b := range v {
			acc = 31*acc + int32(int8(b))
		}
		return 31 + acc, nil
	}
	h, err := hashCode(v)
	if err != nil {
		return 0, err
	}
	return 31 + h, nil
}

// BinaryRowHash is BinaryRowData.hashCode: MurmurHashUtils.hashBytesByWords with seed 42 over
// the row's bytes read as little-endian int32 words (MemorySegment's native order on every
// platform Flink runs on), then fmix32(h ^ length).
func BinaryRowHash(b BinaryRow) (int32, error) {
	if len(b)%4 != 0 {
		return 0, fmt.Errorf("BinaryRowData of %d bytes: want a multiple of 4", len(b))
	}
	h := uint32(42)
	for i := 0; i+4 <= len(b); i += 4 {
		k := binary.LittleEndian.Uint32(b[i:])
		k *= 0xcc9e2d51
		k = bits.RotateLeft32(k, 15)
		k *= 0x1b873593
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	return int32(fmix32(h ^ uint32(len(b)))), nil
}
