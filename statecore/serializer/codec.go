package serializer

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"unicode/utf16"
)

// Decoded values are plain Go values that marshal to the JSON of the expectation schema:
//
//	Integer, Long, Short, Byte   int32, int64, int16, int8 (JSON numbers)
//	Float, Double                float32, float64 (NaN and infinities as strings)
//	String, Character            string
//	Boolean                      bool
//	byte[]                       []byte (base64)
//	null                         nil
//	Tuple, POJO, TimeWindow      Fields ({"f0": .., "f1": ..}, field names, {"start", "end"})
//	List (as a value), arrays    []any
//	Map (as a value)             []MapEntry
//	TTL-wrapped value            TTLValue (the caller usually splits it)
//	unknown serializer           Opaque
type (
	// Field is one named member of a structured value.
	Field struct {
		Name  string
		Value any
	}
	// Fields is a structured value whose members keep their serialization order.
	Fields []Field
	// MapEntry is one entry of a map serialized as a value.
	MapEntry struct {
		Key   any `json:"key"`
		Value any `json:"value"`
	}
	// TTLValue is a value wrapped by state TTL: the last access time and the user value.
	TTLValue struct {
		Timestamp int64
		Value     any
	}
	// Opaque stands for bytes whose serializer this package cannot decode.
	Opaque struct {
		Serializer string `json:"serializer"`
		Type       string `json:"type,omitempty"` // the serialized Java type, when known
		Base64     []byte `json:"base64"`
	}
	// Float is a floating-point value; it marshals NaN and infinities as strings.
	Float float64
)

// MarshalJSON writes the fields as a JSON object in serialization order.
func (f Fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, fl := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(fl.Name)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(fl.Value)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MarshalJSON writes the user value; the timestamp is reported separately.
func (t TTLValue) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]any{"ttlTimestamp": t.Timestamp, "value": t.Value})
}

// MarshalJSON writes finite numbers as numbers and the rest as strings.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

// Codec decodes the bytes one serializer writes.
type Codec interface {
	// Decode reads one value. Errors are recorded in in.
	Decode(in *Input) any
	// FixedLen is the serializer's getLength(): the byte length of every value, or -1.
	FixedLen() int
	// Known is false when the codec (or one nested in it) cannot decode its bytes.
	Known() bool
}

// NewCodec builds the codec of the serializer that wrote snapshot s. A serializer this package
// does not decode gets an opaque codec that takes all remaining bytes; it never fails.
//
// A structured value (tuple, POJO, row, list, map) with an undecodable part becomes opaque as a
// whole: the bytes after that part cannot be found, so a partial decode would misread them. TTL
// keeps its timestamp and makes only the user value opaque.
func NewCodec(s *Snapshot) Codec {
	c := newCodec(s)
	if _, isTTL := c.(ttlCodec); !c.Known() && !isTTL && s != nil {
		if _, ok := c.(opaqueCodec); !ok {
			return opaqueCodec{class: s.Class, typ: JavaType(s)}
		}
	}
	return c
}

func newCodec(s *Snapshot) Codec {
	if s == nil {
		return opaqueCodec{class: "<absent>"}
	}
	if c, ok := simpleCodecs[s.Class]; ok {
		return c
	}
	nested := func(i int) Codec {
		if i < len(s.Nested) {
			return NewCodec(s.Nested[i])
		}
		return opaqueCodec{class: s.Class + "[missing nested]"}
	}
	switch s.Class {
	case classTtl, classTtlV2:
		return ttlCodec{inner: nested(1)}
	case classList, classArrayList:
		return listValueCodec{elem: nested(0)}
	case classMap:
		return mapValueCodec{key: nested(0), val: nested(1)}
	case classGenericArray:
		return objectArrayCodec{elem: nested(0)}
	case classTuple:
		fs := make([]Codec, len(s.Nested))
		names := make([]string, len(s.Nested))
		for i := range s.Nested {
			fs[i] = nested(i)
			names[i] = "f" + strconv.Itoa(i)
		}
		return structCodec{class: s.Class, names: names, fields: fs}
	case classPojo:
		fs := make([]Codec, len(s.PojoFields))
		names := make([]string, len(s.PojoFields))
		for i, f := range s.PojoFields {
			names[i] = f.Name
			if f.Snapshot == nil {
				fs[i] = opaqueCodec{class: "missing POJO field " + f.Name}
			} else {
				fs[i] = NewCodec(f.Snapshot)
			}
		}
		return pojoCodec{class: s.TypeClass, names: names, fields: fs}
	case classEnum:
		return enumCodec{names: s.Enum}
	case classRow:
		fs := make([]Codec, len(s.Nested))
		for i := range s.Nested {
			fs[i] = nested(i)
		}
		return rowCodec{kind: s.RowKind, fields: fs}
	case classRowData:
		return newRowDataCodec(s)
	case classExternal:
		// ExternalSerializer converts to the internal structure and writes it with the
		// internal serializer: a data view's keys and values read as their internal values.
		return nested(0)
	case classDecimalData:
		return sqlDecimalCodec{s.Precision, s.Scale}
	case classTimestampData:
		return sqlTimestampCodec{s.Precision}
	case classKryo:
		return opaqueCodec{class: "org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer", typ: s.TypeClass}
	}
	return opaqueCodec{class: s.Class}
}

// simpleCodecs maps parameterless snapshot classes to their codecs.
var simpleCodecs = map[string]Codec{
	"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot":         fixedCodec{4, func(in *Input) any { return in.I32("int") }},
	"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot":       fixedCodec{8, func(in *Input) any { return in.I64("long") }},
	"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot":     fixedCodec{2, func(in *Input) any { return in.I16("short") }},
	"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot":       fixedCodec{1, func(in *Input) any { return int8(in.U8("byte")) }},
	"org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot": fixedCodec{1, func(in *Input) any { return in.U8("boolean") != 0 }},
	"org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot":     fixedCodec{4, func(in *Input) any { return Float(in.F32("float")) }},
	"org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot":   fixedCodec{8, func(in *Input) any { return Float(in.F64("double")) }},
	"org.apache.flink.api.common.typeutils.base.CharSerializer$CharSerializerSnapshot": fixedCodec{2, func(in *Input) any {
		return utf16String([]uint16{uint16(in.I16("char"))})
	}},
	"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot": stringCodec{},
	"org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot": fixedCodec{0, func(in *Input) any {
		// getLength() says 0, but serialize writes one byte (0).
		in.U8("void namespace")
		return nil
	}},
	"org.apache.flink.streaming.api.windowing.windows.TimeWindow$Serializer$TimeWindowSerializerSnapshot": fixedCodec{16, decodeTimeWindow},
	"org.apache.flink.table.runtime.operators.window.TimeWindow$Serializer$TimeWindowSerializerSnapshot":  fixedCodec{16, decodeTimeWindow},
	"org.apache.flink.streaming.api.windowing.windows.GlobalWindow$Serializer$GlobalWindowSerializerSnapshot": fixedCodec{0, func(in *Input) any {
		in.U8("global window")
		return "GlobalWindow"
	}},
	"org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot": varCodec(func(in *Input) any {
		n := in.Length("byte[] length", 1)
		return bytes.Clone(in.Bytes(n, "byte[]"))
	}),
	"org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer$IntPrimitiveArraySerializerSnapshot":         primArray(4, func(in *Input) any { return in.I32("int") }),
	"org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer$LongPrimitiveArraySerializerSnapshot":       primArray(8, func(in *Input) any { return in.I64("long") }),
	"org.apache.flink.api.common.typeutils.base.array.ShortPrimitiveArraySerializer$ShortPrimitiveArraySerializerSnapshot":     primArray(2, func(in *Input) any { return in.I16("short") }),
	"org.apache.flink.api.common.typeutils.base.array.BooleanPrimitiveArraySerializer$BooleanPrimitiveArraySerializerSnapshot": primArray(1, func(in *Input) any { return in.U8("boolean") != 0 }),
	"org.apache.flink.api.common.typeutils.base.array.DoublePrimitiveArraySerializer$DoublePrimitiveArraySerializerSnapshot":   primArray(8, func(in *Input) any { return Float(in.F64("double")) }),
	"org.apache.flink.api.common.typeutils.base.array.FloatPrimitiveArraySerializer$FloatPrimitiveArraySerializerSnapshot":     primArray(4, func(in *Input) any { return Float(in.F32("float")) }),
	"org.apache.flink.api.common.typeutils.base.array.StringArraySerializer$StringArraySerializerSnapshot": primArray(1, func(in *Input) any {
		s, null := in.String("string")
		if null {
			return nil
		}
		return s
	}),
	"org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot": varCodec(func(in *Input) any {
		// BinaryStringData: i32 byte length, UTF-8 bytes.
		n := in.Length("string length", 1)
		return string(in.Bytes(n, "string"))
	}),
}

func decodeTimeWindow(in *Input) any {
	start := in.I64("window start")
	end := in.I64("window end")
	return Fields{{"start", start}, {"end", end}}
}

type fixedCodec struct {
	n int
	f func(*Input) any
}

func (c fixedCodec) Decode(in *Input) any { return c.f(in) }
func (c fixedCodec) FixedLen() int        { return c.n }
func (c fixedCodec) Known() bool          { return true }

type varCodec func(*Input) any

func (c varCodec) Decode(in *Input) any { return c(in) }
func (c varCodec) FixedLen() int        { return -1 }
func (c varCodec) Known() bool          { return true }

// primArray decodes the primitive-array serializers: i32 length, then the elements.
func primArray(minElem int, elem func(*Input) any) Codec {
	return varCodec(func(in *Input) any {
		n := in.Length("array length", minElem)
		out := make([]any, 0, n)
		for i := 0; i < n && in.Err() == nil; i++ {
			out = append(out, elem(in))
		}
		return out
	})
}

type stringCodec struct{}

func (stringCodec) Decode(in *Input) any {
	s, null := in.String("string")
	if null {
		return nil
	}
	return s
}
func (stringCodec) FixedLen() int { return -1 }
func (stringCodec) Known() bool   { return true }

// opaqueCodec takes every remaining byte: with no idea of the serializer's layout, nothing after
// it can be found, so the value is shown as base64 under the serializer's class name.
type opaqueCodec struct{ class, typ string }

func (c opaqueCodec) Decode(in *Input) any {
	return Opaque{Serializer: c.class, Type: c.typ, Base64: bytes.Clone(in.Bytes(in.Remaining(), "opaque"))}
}
func (opaqueCodec) FixedLen() int { return -1 }
func (opaqueCodec) Known() bool   { return false }

// ttlCodec decodes TtlStateFactory.TtlSerializer: i64 last-access timestamp (ms), user value.
type ttlCodec struct{ inner Codec }

func (c ttlCodec) Decode(in *Input) any {
	ts := in.I64("ttl timestamp")
	return TTLValue{Timestamp: ts, Value: c.inner.Decode(in)}
}
func (c ttlCodec) FixedLen() int {
	if n := c.inner.FixedLen(); n >= 0 {
		return 8 + n
	}
	return -1
}
func (c ttlCodec) Known() bool { return c.inner.Known() }

// listValueCodec decodes ListSerializer used as a plain value: i32 size, elements back to back.
// (List *state* frames its elements differently; see ListElement.)
type listValueCodec struct{ elem Codec }

func (c listValueCodec) Decode(in *Input) any {
	// Every element takes at least one byte unless its serializer writes fixed zero-length values.
	m := c.elem.FixedLen()
	if m < 0 {
		m = 1
	}
	n := in.Length("list size", m)
	out := make([]any, 0, min(n, in.Remaining()+1))
	for i := 0; i < n && in.Err() == nil; i++ {
		out = append(out, c.elem.Decode(in))
	}
	return out
}
func (listValueCodec) FixedLen() int { return -1 }
func (c listValueCodec) Known() bool { return c.elem.Known() }

// objectArrayCodec decodes GenericArraySerializer (Integer[], ...: an object array other than
// String[]): i32 length, then per element bool isNonNull and the element when it is.
type objectArrayCodec struct{ elem Codec }

func (c objectArrayCodec) Decode(in *Input) any {
	n := in.Length("array length", 1) // at least the null flag
	out := make([]any, 0, min(n, in.Remaining()+1))
	for i := 0; i < n && in.Err() == nil; i++ {
		if in.U8("array element non-null flag") == 0 {
			out = append(out, nil)
			continue
		}
		out = append(out, c.elem.Decode(in))
	}
	return out
}
func (objectArrayCodec) FixedLen() int { return -1 }
func (c objectArrayCodec) Known() bool { return c.elem.Known() }

// mapValueCodec decodes MapSerializer used as a plain value: i32 size, then size x {key,
// bool isNull, [value]}. (Map *state* stores one entry per record instead.)
type mapValueCodec struct{ key, val Codec }

func (c mapValueCodec) Decode(in *Input) any {
	n := in.Length("map size", 2) // at least a key byte and the null flag
	out := make([]MapEntry, 0, min(n, in.Remaining()+1))
	for i := 0; i < n && in.Err() == nil; i++ {
		e := MapEntry{Key: c.key.Decode(in)}
		if in.U8("map value null flag") == 0 {
			e.Value = c.val.Decode(in)
		}
		out = append(out, e)
	}
	return out
}
func (mapValueCodec) FixedLen() int { return -1 }
func (c mapValueCodec) Known() bool { return c.key.Known() && c.val.Known() }

// structCodec decodes tuples: the fields back to back, no null flags.
type structCodec struct {
	class  string
	names  []string
	fields []Codec
}

func (c structCodec) Decode(in *Input) any {
	out := make(Fields, len(c.fields))
	for i, f := range c.fields {
		out[i] = Field{c.names[i], f.Decode(in)}
	}
	return out
}
func (c structCodec) FixedLen() int {
	n := 0
	for _, f := range c.fields {
		l := f.FixedLen()
		if l < 0 {
			return -1
		}
		n += l
	}
	return n
}
func (c structCodec) Known() bool {
	for _, f := range c.fields {
		if !f.Known() {
			return false
		}
	}
	return true
}

// pojoCodec decodes PojoSerializer:
//
//	+----------+--------------------------------------------------+
//	| u8 flags | flags 2 (exact class): per field {bool isNull,   |
//	|          | [field bytes]} in snapshot field order           |
//	+----------+--------------------------------------------------+
//
// flags 1 is a null POJO; 4 (subclass, UTF class name follows) and 8 (registered subclass, u8
// tag follows) are written with the subclass's serializer, which the snapshot does not describe
// field by field: those values become opaque.
type pojoCodec struct {
	class  string
	names  []string
	fields []Codec
}

func (c pojoCodec) Decode(in *Input) any {
	start := in.Pos
	flags := in.U8("POJO flags")
	switch {
	case in.Err() != nil:
		return nil
	case flags&1 != 0:
		return nil
	case flags&(4|8) != 0:
		in.Pos = start
		return opaqueCodec{class: c.class + " (subclass)"}.Decode(in)
	case flags&2 == 0:
		in.Pos = start
		in.Failf("POJO %s: flags 0x%02x, want 1, 2, 4 or 8", c.class, flags)
		return nil
	}
	out := make(Fields, len(c.fields))
	for i, f := range c.fields {
		out[i].Name = c.names[i]
		if in.U8("POJO field null flag") == 0 {
			out[i].Value = f.Decode(in)
		}
	}
	return out
}
func (pojoCodec) FixedLen() int { return -1 }
func (c pojoCodec) Known() bool {
	for _, f := range c.fields {
		if !f.Known() {
			return false
		}
	}
	return true
}

// enumCodec decodes EnumSerializer: i32 ordinal into the snapshot's constant list.
type enumCodec struct{ names []string }

func (c enumCodec) Decode(in *Input) any {
	p := in.Pos
	o := in.I32("enum ordinal")
	if in.Err() != nil {
		return nil
	}
	if o < 0 || int(o) >= len(c.names) {
		in.Pos = p
		in.Failf("enum ordinal %d out of range [0, %d)", o, len(c.names))
		return nil
	}
	return c.names[o]
}
func (enumCodec) FixedLen() int { return 4 }
func (enumCodec) Known() bool   { return true }

// Base64 of b, for messages.
func Base64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func utf16String(units []uint16) string { return string(utf16.Decode(units)) }

// rowCodec decodes RowSerializer (position-based rows): a bit mask, then the non-null fields.
//
//	+------------------------------------------------+-----------------------------+
//	| mask: ceil((2? + arity) / 8) bytes, MSB first  | non-null fields back to back |
//	| [2 RowKind bits (kind&1, kind&2)] null bits    |                             |
//	+------------------------------------------------+-----------------------------+
//
// The two RowKind bits are present when the snapshot says the serializer supports RowKind
// (outer version >= 3): bit 0 is kind&1, bit 1 kind&2 (RowSerializer.fillMask), the kind being
// RowKind's byte value (0 +I, 1 -U, 2 +U, 3 -D). An insert is decoded as a list of its fields, a
// row of another kind as a JavaRow.
type rowCodec struct {
	kind   bool
	fields []Codec
}

func (c rowCodec) Decode(in *Input) any {
	off := 0
	if c.kind {
		off = 2
	}
	n := off + len(c.fields)
	mask := in.Bytes((n+7)/8, "row null mask")
	if in.Err() != nil {
		return nil
	}
	bit := func(j int) bool { return mask[j/8]&(0x80>>(j%8)) != 0 }
	out := make([]any, len(c.fields))
	for i, f := range c.fields {
		if !bit(off + i) {
			out[i] = f.Decode(in)
		}
	}
	if c.kind && (bit(0) || bit(1)) {
		k := byte(0)
		if bit(0) {
			k |= 1
		}
		if bit(1) {
			k |= 2
		}
		return JavaRow{Kind: RowKindOf(k), Fields: out}
	}
	return out
}

func (rowCodec) FixedLen() int { return -1 }
func (c rowCodec) Known() bool {
	for _, f := range c.fields {
		if !f.Known() {
			return false
		}
	}
	return true
}

// JavaRow is a decoded org.apache.flink.types.Row of another kind than an insert (-U, +U, -D);
// an insert is decoded as the plain list of its fields, as Rows were before Flink 1.11 gave them
// a kind. It marshals as {"rowKind": "-U", "fields": [...]}, as a SQL row of that kind does.
type JavaRow struct {
	Kind   string
	Fields []any
}

// MarshalJSON writes {"rowKind": K, "fields": [...]} (an insert's plain fields).
func (r JavaRow) MarshalJSON() ([]byte, error) { return marshalRow(r.Kind, r.Fields) }
