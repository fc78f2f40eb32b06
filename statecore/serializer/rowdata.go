package serializer

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/big"
	"strings"
)

// rowDataCodec decodes Flink SQL's RowDataSerializer, which writes every row as a BinaryRowData:
//
//	+------------------+--------------------------------------------------------------+
//	| i32 sizeInBytes  | BinaryRowData (sizeInBytes bytes)                            |
//	+------------------+--------------------------------------------------------------+
//
//	BinaryRowData (multi-byte values in the JVM's native order: little-endian on x86/ARM):
//	+---------------------------+-----------------------------+------------------------+
//	| header + null bits        | fixed part: 8 bytes a field | variable part          |
//	| ((arity+63+8)/64)*8 bytes | primitives in place, or     | strings, binaries, ... |
//	| byte 0 = RowKind,         | (offset<<32 | length), or   |                        |
//	| bit i+8 = field i is null | inline <= 7 bytes (top bit) |                        |
//	+---------------------------+-----------------------------+------------------------+
//
// Fields are decoded with the nested serializer snapshots of the RowData snapshot; a field
// type without a decoder here is shown as the base64 of its 8-byte slot.
type rowDataCodec struct {
	kinds   []rowFieldKind
	classes []string
	prec    []int32 // decimal and timestamp precision
	scale   []int32 // decimal scale
	nested  []rowDataCodec
	views   []string // a state-backed view field's data view class (MapView, ListView)
}

type rowFieldKind int

const (
	rfUnknown rowFieldKind = iota
	rfBool
	rfByte
	rfShort
	rfInt
	rfLong
	rfFloat
	rfDouble
	rfString
	rfBinary
	rfDecimal
	rfTimestamp
	rfRow
	rfView
)

// RowKind names, indexed by the RowKind byte value.
var rowKinds = []string{"+I", "-U", "+U", "-D"}

func newRowDataCodec(s *Snapshot) Codec {
	c := rowDataCodec{}
	for _, n := range s.Nested {
		k := rfUnknown
		switch n.Class {
		case "org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot":
			k = rfBool
		case "org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot":
			k = rfByte
		case "org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot":
			k = rfShort
		case "org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot":
			k = rfInt
		case "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot":
			k = rfLong
		case "org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot":
			k = rfFloat
		case "org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot":
			k = rfDouble
		case "org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot":
			k = rfString
		case "org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot":
			k = rfBinary
		case classDecimalData:
			k = rfDecimal
		case classTimestampData:
			k = rfTimestamp
		}
		var sub rowDataCodec
		if n.Class == classRowData {
			k, sub = rfRow, newRowDataCodec(n).(rowDataCodec)
		}
		view := ""
		if i := len(c.kinds); n.Class == classRawValueData && len(n.Nested) == 1 &&
			n.Nested[0].Class == nullSerializerClass+"$NullSerializerSnapshot" && i < len(s.LogicalTypes) {
			sql, _ := LogicalTypeSQL(s.LogicalTypes[i])
			if class, ok := stateBackedView(strings.TrimSuffix(sql, " NOT NULL")); ok {
				k, view = rfView, strings.TrimPrefix(class, dataViewPkg)
			}
		}
		c.views = append(c.views, view)
		c.nested = append(c.nested, sub)
		c.prec = append(c.prec, n.Precision)
		c.scale = append(c.scale, n.Scale)
		c.kinds = append(c.kinds, k)
		c.classes = append(c.classes, n.Class)
	}
	return c
}

func (c rowDataCodec) FixedLen() int { return -1 }
func (c rowDataCodec) Known() bool   { return true }

// BinaryRow is a decoded Flink SQL row: its RowKind, its fields, and the BinaryRowData bytes as
// stored (what Flink hashes for the key group of a RowData key). It marshals as the list of its
// fields, the shape of the oracle's expectations (SQL rows carry no field names in their
// serializer).
type BinaryRow struct {
	Kind   string // +I, -U, +U, -D
	Fields []any
	Raw    []byte
}

// MarshalJSON writes an insert's fields as a JSON array, and a row of another kind (Flink 1.20's
// and 2.3's keep-last dedup keep +U rows) as {"rowKind": "+U", "fields": [...]}, so that what
// dump prints, create and patch write back with the same header byte.
func (r BinaryRow) MarshalJSON() ([]byte, error) { return marshalRow(r.Kind, r.Fields) }

// marshalRow writes the JSON of a row of a kind: an insert's (+I) fields as an array, another
// kind's as {"rowKind": K, "fields": [...]}.
func marshalRow(kind string, fields []any) ([]byte, error) {
	if kind == "+I" || kind == "" {
		return json.Marshal(fields)
	}
	return json.Marshal(struct {
		RowKind string `json:"rowKind"`
		Fields  []any  `json:"fields"`
	}{kind, fields})
}

// Decode returns a BinaryRow.
func (c rowDataCodec) Decode(in *Input) any {
	n := in.Length("row size", 1)
	row := in.Bytes(n, "BinaryRowData")
	if in.Err() != nil {
		return nil
	}
	return c.decodeRow(in, row, in.Pos-n, 0)
}

// decodeRow decodes the BinaryRowData row, which starts at byte base of the input (for errors).
func (c rowDataCodec) decodeRow(in *Input, row []byte, base, depth int) any {
	if depth > maxNested {
		in.Pos = base
		in.Failf("rows nested deeper than %d", maxNested)
		return nil
	}
	n := len(row)
	arity := len(c.kinds)
	nullBytes := ((arity + 63 + 8) / 64) * 8
	if nullBytes+8*arity > n {
		in.Pos = base
		in.Failf("BinaryRowData of %d fields needs %d bytes, has %d", arity, nullBytes+8*arity, n)
		return nil
	}
	out := make([]any, arity)
	for i, k := range c.kinds {
		bit := i + 8
		if row[bit>>3]&(1<<(bit&7)) != 0 {
			continue
		}
		slot := row[nullBytes+8*i : nullBytes+8*i+8]
		switch k {
		case rfBool:
			out[i] = slot[0] != 0
		case rfByte:
			out[i] = int8(slot[0])
		case rfShort:
			out[i] = int16(binary.LittleEndian.Uint16(slot))
		case rfInt:
			out[i] = int32(binary.LittleEndian.Uint32(slot))
		case rfLong:
			out[i] = int64(binary.LittleEndian.Uint64(slot))
		case rfFloat:
			out[i] = Float(math.Float32frombits(binary.LittleEndian.Uint32(slot)))
		case rfDouble:
			out[i] = Float(math.Float64frombits(binary.LittleEndian.Uint64(slot)))
		case rfString, rfBinary:
			b, ok := varPart(row, slot)
			if !ok {
				in.Pos = base + nullBytes + 8*i
				in.Failf("BinaryRowData field %d: variable part outside the row", i)
				return nil
			}
			if k == rfString {
				out[i] = string(b)
			} else {
				out[i] = append([]byte(nil), b...)
			}
		case rfRow:
			// A nested row is a BinaryRowData of its own in the variable part.
			b, ok := varPart(row, slot)
			if !ok {
				in.Pos = base + nullBytes + 8*i
				in.Failf("BinaryRowData field %d: nested row outside the row", i)
				return nil
			}
			off := int(binary.LittleEndian.Uint64(slot) >> 32)
			out[i] = c.nested[i].decodeRow(in, b, base+off, depth+1)
		case rfView:
			// The view's entries are in states of their own; the field holds what
			// NullSerializer writes for it: one zero byte.
			b, ok := varPart(row, slot)
			if !ok || !bytes.Equal(b, []byte{0}) {
				out[i] = Opaque{Serializer: c.classes[i], Base64: append([]byte(nil), slot...)}
				break
			}
			out[i] = DataView{Class: c.views[i]}
		case rfDecimal:
			// Compact decimals (precision <= 18) keep the unscaled long in the slot; larger ones
			// keep big-endian two's-complement unscaled bytes in the variable part.
			if c.prec[i] <= 18 {
				out[i] = json.Number(formatDecimal(big.NewInt(int64(binary.LittleEndian.Uint64(slot))), c.scale[i]))
				break
			}
			b, ok := varPart(row, slot)
			if !ok {
				in.Pos = base + nullBytes + 8*i
				in.Failf("BinaryRowData field %d: decimal bytes outside the row", i)
				return nil
			}
			out[i] = json.Number(formatDecimal(signedBig(b), c.scale[i]))
		case rfTimestamp:
			// Compact timestamps (precision <= 3) keep epoch millis in the slot; others keep the
			// millis in the variable part and the nano-of-milli in the slot's low half.
			v := binary.LittleEndian.Uint64(slot)
			if c.prec[i] <= 3 {
				out[i] = formatLocalDateTime(int64(v), 0)
				break
			}
			off := int(v >> 32)
			if off < 0 || off+8 > len(row) {
				in.Pos = base + nullBytes + 8*i
				in.Failf("BinaryRowData field %d: timestamp bytes outside the row", i)
				return nil
			}
			out[i] = formatLocalDateTime(int64(binary.LittleEndian.Uint64(row[off:])), int32(uint32(v)))
		default:
			out[i] = Opaque{Serializer: c.classes[i], Base64: append([]byte(nil), slot...)}
		}
	}
	if in.Err() != nil {
		return nil
	}
	return BinaryRow{Kind: RowKindOf(row[0]), Fields: out, Raw: bytes.Clone(row)}
}

// DataView is an accumulator field holding a state-backed data view (MapView or ListView): its
// entries live in keyed states of their own (distinctAcc_0, agg2$map ...), and the field itself in
// the row is the one zero byte Flink's NullSerializer writes, in the variable part. It marshals as
// {"dataView": "MapView"}, the form create and patch take back.
type DataView struct{ Class string }

// MarshalJSON writes {"dataView": CLASS}.
func (v DataView) MarshalJSON() ([]byte, error) {
	return json.Marshal(map[string]string{"dataView": v.Class})
}

// RowKindOf returns the RowKind short string of a BinaryRowData value's first byte.
func RowKindOf(b byte) string {
	if int(b) < len(rowKinds) {
		return rowKinds[b]
	}
	return "?"
}

// varPart finds the bytes of a variable-length field: inline in the slot when the slot's top bit
// is set (length in the next 7 bits), else at (offset, length) from the row start.
func varPart(row, slot []byte) ([]byte, bool) {
	v := binary.LittleEndian.Uint64(slot)
	if v&(1<<63) != 0 {
		n := int((v >> 56) & 0x7f)
		if n > 7 {
			return nil, false
		}
		return slot[:n], true
	}
	off, n := int(v>>32), int(uint32(v))
	if off < 0 || n < 0 || off+n > len(row) {
		return nil, false
	}
	return row[off : off+n], true
}
