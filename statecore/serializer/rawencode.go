package serializer

import (
	"encoding/binary"
	"math"
	"strconv"
)

// RawEncoder is the fast path of an Encoder for one JSON token as it stands in the data: a
// number, a string with its quotes, true, false or null (nil: the field is absent, which
// decodes as null). The caller has checked the token against JSON's grammar and hands only
// strings of printable ASCII without escapes. It appends exactly what the Encoder appends for
// the decoded token, or reports false, having appended nothing that counts, for every token it
// does not take: an error, or a value it leaves to the Encoder, which then gives the answer
// (and the error message with its path). So the fast path never has an error of its own.
type RawEncoder func(b []byte, tok []byte) ([]byte, bool)

// NewRawEncoder is the fast path of NewEncoder(s) for Flink's basic types (nil for the others).
func NewRawEncoder(s *Snapshot) RawEncoder {
	if s == nil {
		return nil
	}
	if s.Class == classExternal && len(s.Nested) == 1 {
		return NewRawEncoder(s.Nested[0]) // the internal serializer's bytes (newCodec)
	}
	e := rawEncoders[s.Class]
	if e == nil {
		return nil
	}
	if _, ok := NewCodec(s).(opaqueCodec); ok {
		return nil
	}
	return e
}

// RawIntEncoder is a RawEncoder for an integer token its caller has already read (at most 18
// digits, no fraction or exponent: RawInteger reads it the same way): it appends what the
// RawEncoder appends for the token, or reports false where the RawEncoder would (out of range).
type RawIntEncoder func(b []byte, n int64) ([]byte, bool)

// NewRawIntEncoder is the RawIntEncoder of Flink's integer types (nil for the others).
func NewRawIntEncoder(s *Snapshot) RawIntEncoder {
	if NewRawEncoder(s) == nil {
		return nil
	}
	return rawIntEncoders[s.Class]
}

var rawIntEncoders = map[string]RawIntEncoder{
	"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot": func(b []byte, n int64) ([]byte, bool) {
		return binary.BigEndian.AppendUint32(b, uint32(n)), n >= math.MinInt32 && n <= math.MaxInt32
	},
	"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot": func(b []byte, n int64) ([]byte, bool) {
		return binary.BigEndian.AppendUint64(b, uint64(n)), true
	},
	"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot": func(b []byte, n int64) ([]byte, bool) {
		return binary.BigEndian.AppendUint16(b, uint16(n)), n >= math.MinInt16 && n <= math.MaxInt16
	},
	"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot": func(b []byte, n int64) ([]byte, bool) {
		return append(b, byte(n)), n >= math.MinInt8 && n <= math.MaxInt8
	},
}

var rawEncoders = map[string]RawEncoder{
	"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		i, ok := RawInteger(tok, math.MinInt32, math.MaxInt32)
		return binary.BigEndian.AppendUint32(b, uint32(i)), ok
	},
	"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		i, ok := RawInteger(tok, math.MinInt64, math.MaxInt64)
		return binary.BigEndian.AppendUint64(b, uint64(i)), ok
	},
	"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		i, ok := RawInteger(tok, math.MinInt16, math.MaxInt16)
		return binary.BigEndian.AppendUint16(b, uint16(i)), ok
	},
	"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		i, ok := RawInteger(tok, math.MinInt8, math.MaxInt8)
		return append(b, byte(i)), ok
	},
	"org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		switch string(tok) {
		case "true":
			return append(b, 1), true
		case "false":
			return append(b, 0), true
		}
		return b, false
	},
	"org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		f, ok := rawFloat(tok, 32)
		return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f))), ok
	},
	"org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		f, ok := rawFloat(tok, 64)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f)), ok
	},
	// StringValue.writeString of printable ASCII: each char one UTF-16 unit, one varint byte.
	"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		if tok == nil || string(tok) == "null" {
			return append(b, 0), true
		}
		s, ok := rawString(tok)
		if !ok {
			return b, false
		}
		b = appendVarint(b, uint32(len(s)+1))
		return append(b, s...), true
	},
	"org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		s, ok := rawString(tok)
		if !ok {
			return b, false
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...), true
	},
	"org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		if tok == nil || string(tok) == "null" {
			return append(b, 0), true
		}
		return b, false
	},
	"org.apache.flink.streaming.api.windowing.windows.GlobalWindow$Serializer$GlobalWindowSerializerSnapshot": func(b, tok []byte) ([]byte, bool) {
		if string(tok) == `"GlobalWindow"` {
			return append(b, 0), true
		}
		return b, false
	},
}

// rawString is the text of a string token (false for any other token).
func rawString(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	return tok[1 : len(tok)-1], true
}

// rawInteger reads an integer token as integer() reads its json.Number (strconv.ParseInt,
// base 10) within [lo, hi]; false for anything else (a fraction, an exponent, out of range).
func RawInteger(tok []byte, lo, hi int64) (int64, bool) {
	digits := tok
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) == 0 {
		return 0, false
	}
	if len(digits) > 18 {
		// Past what a uint64 accumulates without a check: strconv decides.
		i, err := strconv.ParseInt(string(tok), 10, 64)
		return i, err == nil && i >= lo && i <= hi
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, n >= lo && n <= hi
}

// rawFloat reads a number token as floatEncoder does, when strconv.ParseFloat takes it without
// an error (NaN, infinities and out-of-range numbers are the Encoder's).
func rawFloat(tok []byte, bits int) (float64, bool) {
	if len(tok) == 0 || tok[0] != '-' && (tok[0] < '0' || tok[0] > '9') {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(tok), bits)
	return f, err == nil
}
