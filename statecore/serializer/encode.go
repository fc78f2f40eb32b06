package serializer

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
)

// This file is the inverse of codec.go: an Encoder writes a value, given as JSON decodes it
// (encoding/json with UseNumber: json.Number, string, bool, nil, []any, map[string]any), in the
// bytes the snapshotted serializer writes, so that whatever a dump prints can be written back.
// Each JSON shape is the one the codec's decoded value marshals to:
//
//	Integer, Long, Short, Byte   number (integral, in range)
//	Float, Double                number, or "NaN", "+Inf", "-Inf"
//	String, Character            string (null for a null String)
//	Boolean                      true / false
//	byte[]                       base64 string
//	primitive arrays, List       array
//	object arrays (Integer[] ..) array (null for a null element)
//	Map (as a value)             [{"key": .., "value": ..}]
//	Tuple, POJO, TimeWindow      object {"f0": ..}, {field: ..} (null for a null POJO), {"start", "end"}
//	Row                          array of the fields (null for a null field)
//	SQL RowData                  array of the fields (rowdata_encode.go)
//	SQL DecimalData              number (12.50), as in a RowData (a DISTINCT view's key)
//	SQL TimestampData            local date-time string ("2024-01-02T03:04:05.123")
//	Enum                         the constant's name
//	VoidNamespace, GlobalWindow  null, "GlobalWindow"
//	unknown serializer           {"serializer": .., "base64": ..}: the bytes as they were
//
// Errors name the path of the offending part (the caller's prefix, then .f0, [2], .key ...)
// and what was expected there.

// Encoder appends the serialized form of one JSON value to b; path names the value in errors.
type Encoder func(b []byte, v any, path string) ([]byte, error)

// NewEncoder builds the encoder of the serializer that wrote snapshot s. A value whose codec is
// opaque (an unknown serializer, or a structure with an unknown part) is taken back from the
// {"serializer", "base64"} object its dump shows.
func NewEncoder(s *Snapshot) (Encoder, error) {
	if _, ok := NewCodec(s).(opaqueCodec); ok {
		return encodeOpaque, nil
	}
	return newEncoder(s)
}

func newEncoder(s *Snapshot) (Encoder, error) {
	if e, ok := simpleEncoders[s.Class]; ok {
		return e, nil
	}
	nested := func(i int) (Encoder, error) {
		if i >= len(s.Nested) {
			return nil, fmt.Errorf("%s: nested serializer %d missing", s.Short(), i)
		}
		return NewEncoder(s.Nested[i])
	}
	switch s.Class {
	case classTtl, classTtlV2:
		inner, err := nested(1)
		if err != nil {
			return nil, err
		}
		return func(b []byte, v any, path string) ([]byte, error) {
			m, err := object(v, path)
			if err != nil {
				return nil, err
			}
			ts, err := intField(m, "ttlTimestamp", path, math.MinInt64, math.MaxInt64)
			if err != nil {
				return nil, err
			}
			b = binary.BigEndian.AppendUint64(b, uint64(ts))
			return inner(b, m["value"], path+".value")
		}, nil
	case classList, classArrayList:
		elem, err := nested(0)
		if err != nil {
			return nil, err
		}
		return elementsEncoder(elem, "an array (List)", false), nil
	case classGenericArray:
		elem, err := nested(0)
		if err != nil {
			return nil, err
		}
		return elementsEncoder(elem, "an array (object array)", true), nil
	case classMap:
		ke, err := nested(0)
		if err != nil {
			return nil, err
		}
		ve, err := nested(1)
		if err != nil {
			return nil, err
		}
		return func(b []byte, v any, path string) ([]byte, error) {
			xs, ok := v.([]any)
			if !ok {
				return nil, want(path, `an array of {"key", "value"} (Map)`, v)
			}
			b = binary.BigEndian.AppendUint32(b, uint32(len(xs)))
			for i, x := range xs {
				p := path + "[" + strconv.Itoa(i) + "]"
				m, err := object(x, p)
				if err != nil {
					return nil, err
				}
				if b, err = ke(b, m["key"], p+".key"); err != nil {
					return nil, err
				}
				if m["value"] == nil {
					b = append(b, 1)
					continue
				}
				b = append(b, 0)
				if b, err = ve(b, m["value"], p+".value"); err != nil {
					return nil, err
				}
			}
			return b, nil
		}, nil
	case classTuple:
		fs := make([]Encoder, len(s.Nested))
		names := make([]string, len(s.Nested))
		for i := range s.Nested {
			var err error
			if fs[i], err = nested(i); err != nil {
				return nil, err
			}
			names[i] = "f" + strconv.Itoa(i)
		}
		return structEncoder(names, fs, false), nil
	case classPojo:
		fs := make([]Encoder, len(s.PojoFields))
		names := make([]string, len(s.PojoFields))
		for i, f := range s.PojoFields {
			if f.Snapshot == nil {
				return nil, fmt.Errorf("POJO %s field %s has no serializer snapshot", s.TypeClass, f.Name)
			}
			var err error
			if fs[i], err = NewEncoder(f.Snapshot); err != nil {
				return nil, err
			}
			names[i] = f.Name
		}
		return structEncoder(names, fs, true), nil
	case classEnum:
		names := s.Enum
		return func(b []byte, v any, path string) ([]byte, error) {
			c, ok := v.(string)
			i := slices.Index(names, c)
			if !ok || i < 0 {
				return nil, want(path, fmt.Sprintf("one of the enum constants %v", names), v)
			}
			return binary.BigEndian.AppendUint32(b, uint32(i)), nil
		}, nil
	case classRowData:
		return newRowDataEncoder(s)
	case classExternal:
		return nested(0) // the internal serializer's bytes (newCodec)
	case classDecimalData:
		// DecimalDataSerializer: the unscaled value as an i64 up to precision 18, else i32
		// length + its two's-complement bytes (a DISTINCT view's key: sqlDecimalCodec).
		precision, scale := s.Precision, s.Scale
		return func(b []byte, v any, path string) ([]byte, error) {
			u, err := unscaled(v, path, precision, scale)
			if err != nil {
				return nil, err
			}
			if precision <= 18 {
				return binary.BigEndian.AppendUint64(b, uint64(u.Int64())), nil
			}
			raw := twosComplement(u)
			b = binary.BigEndian.AppendUint32(b, uint32(len(raw)))
			return append(b, raw...), nil
		}, nil
	case classTimestampData:
		// TimestampDataSerializer: i64 epoch millis, and above precision 3 the i32
		// nano-of-millisecond (sqlTimestampCodec).
		precision := s.Precision
		return func(b []byte, v any, path string) ([]byte, error) {
			ms, nano, err := timestampOf(v, path, precision)
			if err != nil {
				return nil, err
			}
			b = binary.BigEndian.AppendUint64(b, uint64(ms))
			if precision <= 3 {
				return b, nil
			}
			return binary.BigEndian.AppendUint32(b, uint32(nano)), nil
		}, nil
	case classRow:
		fs := make([]Encoder, len(s.Nested))
		for i := range s.Nested {
			var err error
			if fs[i], err = nested(i); err != nil {
				return nil, err
			}
		}
		return rowEncoder(s.RowKind, fs), nil
	}
	return nil, fmt.Errorf("writing values of serializer %s (%s) is not supported", s.Short(), JavaType(s))
}

// structEncoder writes tuples (fields back to back) and, with pojo, POJOs (u8 flags: 1 null,
// 2 exact class; then per field bool isNull [+ field]).
func structEncoder(names []string, fs []Encoder, pojo bool) Encoder {
	return func(b []byte, v any, path string) ([]byte, error) {
		if v == nil && pojo {
			return append(b, 1), nil
		}
		m, err := object(v, path)
		if err != nil {
			return nil, err
		}
		if !allIn(m, names) {
			// the first unknown field by name, so that the message is the same every time
			for _, k := range slices.Sorted(maps.Keys(m)) {
				if !slices.Contains(names, k) {
					return nil, fmt.Errorf("%s: unknown field %q (the type has %v)", path, k, names)
				}
			}
		}
		if pojo {
			b = append(b, 2)
		}
		for i, f := range fs {
			x, ok := m[names[i]]
			if !ok {
				return nil, fmt.Errorf("%s: field %q missing", path, names[i])
			}
			if pojo {
				if x == nil {
					b = append(b, 1)
					continue
				}
				b = append(b, 0)
			}
			if b, err = f(b, x, path+"."+names[i]); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
}

// allIn says every field of m is one of names.
func allIn(m map[string]any, names []string) bool {
	for k := range m {
		if !slices.Contains(names, k) {
			return false
		}
	}
	return true
}

// rowEncoder writes RowSerializer rows (layout at rowCodec): the mask, then non-null fields. A
// row is an array of its fields, written as an insert (RowKind 0), or, as dump prints a row of
// another kind, {"rowKind": "+U", "fields": [...]}, whose kind goes to the mask's first two bits
// (refused when the serializer writes no kind: a Row of Flink before 1.11).
func rowEncoder(kind bool, fs []Encoder) Encoder {
	return func(b []byte, v any, path string) ([]byte, error) {
		rk := byte(0)
		if m, ok := v.(map[string]any); ok {
			if !kind {
				return nil, want(path, fmt.Sprintf("an array of %d fields (Row; its serializer writes no RowKind)", len(fs)), v)
			}
			k, err := rowKindOfJSON(m, path)
			if err != nil {
				return nil, err
			}
			rk, v, path = k, m["fields"], path+".fields"
		}
		xs, ok := v.([]any)
		if !ok || len(xs) != len(fs) {
			return nil, want(path, fmt.Sprintf("an array of %d fields (Row)", len(fs)), v)
		}
		off := 0
		if kind {
			off = 2
		}
		mask := make([]byte, (off+len(fs)+7)/8)
		if kind {
			mask[0] |= (rk&1)<<7 | (rk&2)<<5 // bit 0: kind&1, bit 1: kind&2
		}
		for i, x := range xs {
			if x == nil {
				mask[(off+i)/8] |= 0x80 >> ((off + i) % 8)
			}
		}
		b = append(b, mask...)
		var err error
		for i, x := range xs {
			if x == nil {
				continue
			}
			if b, err = fs[i](b, x, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
}

// simpleEncoders are the encoders of the parameterless serializers of simpleCodecs.
var simpleEncoders = map[string]Encoder{
	"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot":     encodeInt,
	"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot":   encodeLong,
	"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot": encodeShort,
	"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot": intEncoder(math.MinInt8, math.MaxInt8, func(b []byte, i int64) []byte {
		return append(b, byte(i))
	}),
	"org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot": encodeBool,
	"org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot":     encodeFloat,
	"org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot":   encodeDouble,
	"org.apache.flink.api.common.typeutils.base.CharSerializer$CharSerializerSnapshot": func(b []byte, v any, path string) ([]byte, error) {
		s, ok := v.(string)
		u := utf16.Encode([]rune(s))
		if !ok || len(u) != 1 {
			return nil, want(path, "a string of one UTF-16 code unit (Character)", v)
		}
		return binary.BigEndian.AppendUint16(b, u[0]), nil
	},
	"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot": encodeString,
	"org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot": func(b []byte, v any, path string) ([]byte, error) {
		if v != nil {
			return nil, want(path, "null (VoidNamespace)", v)
		}
		return append(b, 0), nil
	},
	"org.apache.flink.streaming.api.windowing.windows.TimeWindow$Serializer$TimeWindowSerializerSnapshot": encodeTimeWindow,
	"org.apache.flink.table.runtime.operators.window.TimeWindow$Serializer$TimeWindowSerializerSnapshot":  encodeTimeWindow,
	"org.apache.flink.streaming.api.windowing.windows.GlobalWindow$Serializer$GlobalWindowSerializerSnapshot": func(b []byte, v any, path string) ([]byte, error) {
		if v != "GlobalWindow" {
			return nil, want(path, `"GlobalWindow"`, v)
		}
		return append(b, 0), nil
	},
	"org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot": func(b []byte, v any, path string) ([]byte, error) {
		raw, err := base64Of(v, path, "a base64 string (byte[])")
		if err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(raw)))
		return append(b, raw...), nil
	},
	"org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer$IntPrimitiveArraySerializerSnapshot":         arrayEncoder(encodeInt),
	"org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer$LongPrimitiveArraySerializerSnapshot":       arrayEncoder(encodeLong),
	"org.apache.flink.api.common.typeutils.base.array.ShortPrimitiveArraySerializer$ShortPrimitiveArraySerializerSnapshot":     arrayEncoder(encodeShort),
	"org.apache.flink.api.common.typeutils.base.array.BooleanPrimitiveArraySerializer$BooleanPrimitiveArraySerializerSnapshot": arrayEncoder(encodeBool),
	"org.apache.flink.api.common.typeutils.base.array.DoublePrimitiveArraySerializer$DoublePrimitiveArraySerializerSnapshot":   arrayEncoder(encodeDouble),
	"org.apache.flink.api.common.typeutils.base.array.FloatPrimitiveArraySerializer$FloatPrimitiveArraySerializerSnapshot":     arrayEncoder(encodeFloat),
	"org.apache.flink.api.common.typeutils.base.array.StringArraySerializer$StringArraySerializerSnapshot":                     arrayEncoder(encodeString),
	"org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot": func(b []byte, v any, path string) ([]byte, error) {
		s, ok := v.(string)
		if !ok {
			return nil, want(path, "a string (StringData)", v)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...), nil
	},
}

// The basic types' encoders, also the elements of their primitive arrays.
var (
	encodeInt = intEncoder(math.MinInt32, math.MaxInt32, func(b []byte, i int64) []byte {
		return binary.BigEndian.AppendUint32(b, uint32(i))
	})
	encodeLong = intEncoder(math.MinInt64, math.MaxInt64, func(b []byte, i int64) []byte {
		return binary.BigEndian.AppendUint64(b, uint64(i))
	})
	encodeShort = intEncoder(math.MinInt16, math.MaxInt16, func(b []byte, i int64) []byte {
		return binary.BigEndian.AppendUint16(b, uint16(i))
	})
	encodeFloat = floatEncoder(32, func(b []byte, f float64) []byte {
		return binary.BigEndian.AppendUint32(b, math.Float32bits(float32(f)))
	})
	encodeDouble = floatEncoder(64, func(b []byte, f float64) []byte {
		return binary.BigEndian.AppendUint64(b, math.Float64bits(f))
	})
)

func arrayEncoder(elem Encoder) Encoder { return elementsEncoder(elem, "an array", false) }

// elementsEncoder writes a JSON array as Flink's List, array and object-array serializers do: an
// i32 count, then each element; with nullMarkers (GenericArraySerializer) a byte before each, 0
// for null (nothing follows) or 1. Its err is its own: one encoder serves every worker of a
// parallel load at once (the List and object-array encoders once shared the err of the function
// that built them, a data race under savepoint create's two workers).
func elementsEncoder(elem Encoder, what string, nullMarkers bool) Encoder {
	return func(b []byte, v any, path string) ([]byte, error) {
		xs, ok := v.([]any)
		if !ok {
			return nil, want(path, what, v)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(xs)))
		var err error
		for i, x := range xs {
			if nullMarkers {
				if x == nil {
					b = append(b, 0)
					continue
				}
				b = append(b, 1)
			}
			if b, err = elem(b, x, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
}

func intEncoder(lo, hi int64, put func([]byte, int64) []byte) Encoder {
	return func(b []byte, v any, path string) ([]byte, error) {
		i, err := integer(v, path, lo, hi)
		if err != nil {
			return nil, err
		}
		return put(b, i), nil
	}
}

func floatEncoder(bits int, put func([]byte, float64) []byte) Encoder {
	return func(b []byte, v any, path string) ([]byte, error) {
		var text string
		switch x := v.(type) {
		case json.Number:
			text = string(x)
		case string: // NaN and infinities, as Float marshals them
			if x != "NaN" && x != "+Inf" && x != "-Inf" {
				return nil, want(path, `a number, "NaN", "+Inf" or "-Inf"`, v)
			}
			text = x
		default:
			return nil, want(path, "a number", v)
		}
		f, err := strconv.ParseFloat(text, bits)
		if err != nil && !math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: %q is not a float%d", path, text, bits)
		}
		return put(b, f), nil
	}
}

func encodeBool(b []byte, v any, path string) ([]byte, error) {
	x, ok := v.(bool)
	if !ok {
		return nil, want(path, "true or false", v)
	}
	if x {
		return append(b, 1), nil
	}
	return append(b, 0), nil
}

// encodeString writes StringValue.writeString (layout at Input.String).
func encodeString(b []byte, v any, path string) ([]byte, error) {
	if v == nil {
		return append(b, 0), nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, want(path, "a string", v)
	}
	units := utf16.Encode([]rune(s))
	b = appendVarint(b, uint32(len(units)+1))
	for _, u := range units {
		b = appendVarint(b, uint32(u))
	}
	return b, nil
}

// appendVarint writes 7 bits a byte, least significant first, the top bit saying more follow.
func appendVarint(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func encodeTimeWindow(b []byte, v any, path string) ([]byte, error) {
	m, err := object(v, path)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"start", "end"} {
		i, err := intField(m, k, path, math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint64(b, uint64(i))
	}
	return b, nil
}

// encodeOpaque writes back the bytes of a value shown as {"serializer", "base64"}.
func encodeOpaque(b []byte, v any, path string) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok || m["serializer"] == nil {
		return nil, want(path, `{"serializer", "base64"} (a value statecraft cannot decode is written back from its bytes)`, v)
	}
	raw, err := base64Of(m["base64"], path+".base64", "a base64 string")
	if err != nil {
		return nil, err
	}
	return append(b, raw...), nil
}

func base64Of(v any, path, what string) ([]byte, error) {
	s, ok := v.(string)
	if !ok {
		return nil, want(path, what, v)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return raw, nil
}

func object(v any, path string) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, want(path, "an object", v)
	}
	return m, nil
}

func intField(m map[string]any, k, path string, lo, hi int64) (int64, error) {
	x, ok := m[k]
	if !ok {
		return 0, fmt.Errorf("%s: field %q missing", path, k)
	}
	return integer(x, path+"."+k, lo, hi)
}

// integer reads an integral JSON number within [lo, hi].
func integer(v any, path string, lo, hi int64) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, want(path, "an integer", v)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || i < lo || i > hi {
		return 0, fmt.Errorf("%s: %s is not an integer in [%d, %d]", path, n, lo, hi)
	}
	return i, nil
}

// want is the error for a value of the wrong JSON shape.
func want(path, what string, got any) error {
	g, _ := json.Marshal(got)
	if len(g) > 60 {
		g = append(g[:57], "..."...)
	}
	return fmt.Errorf("%s: want %s, got %s", path, what, g)
}
