package serializer

import (
	"strconv"
	"strings"
)

// Shape describes, ahead of any value, the Go values NewCodec(s).Decode yields, so that a typed
// output format (Parquet) can declare its columns before the first entry is read. It follows
// NewCodec's decisions exactly: a structured value with an undecodable part is Opaque as a
// whole, as its codec is.
//
//	Kind         decoded as                 Kind        decoded as
//	Null         nil (void namespace)        Struct      Fields (tuple, POJO, time window)
//	Bool         bool                        Row         []any, JavaRow, BinaryRow
//	Int8..Int64  int8, int16, int32, int64   List        []any of Elem
//	Float32/64   Float                       Map         []MapEntry of Key, Value
//	String       string (also enum, char,    Decimal     json.Number (exact text)
//	             SQL timestamp text)         Opaque      anything (Opaque, or a value the
//	Bytes        []byte                                  serializer's snapshot does not describe)
type Shape struct {
	Kind       ShapeKind
	Fields     []NamedShape // Struct and Row (Row fields are named f0, f1, ...)
	Elem       *Shape       // List
	Key, Value *Shape       // Map
	SQLRow     bool         // Row: a SQL BinaryRow (decoded as BinaryRow, not []any)
	RowKind    bool         // Row: its values carry a RowKind (SQL rows, and Rows of Flink 1.11 on)
}

// NamedShape is one field of a Struct or Row.
type NamedShape struct {
	Name  string
	Shape *Shape
}

// ShapeKind is the kind of a Shape.
type ShapeKind int

// The kinds of Shape.
const (
	ShapeOpaque ShapeKind = iota
	ShapeNull
	ShapeBool
	ShapeInt8
	ShapeInt16
	ShapeInt32
	ShapeInt64
	ShapeFloat32
	ShapeFloat64
	ShapeString
	ShapeBytes
	ShapeDecimal
	ShapeStruct
	ShapeRow
	ShapeList
	ShapeMap
)

// simpleShapes are the shapes of the parameterless serializers, by the short name of their
// snapshot class (as javaTypes is keyed).
var simpleShapes = map[string]ShapeKind{
	"IntSerializer": ShapeInt32, "LongSerializer": ShapeInt64, "ShortSerializer": ShapeInt16,
	"ByteSerializer": ShapeInt8, "BooleanSerializer": ShapeBool, "FloatSerializer": ShapeFloat32,
	"DoubleSerializer": ShapeFloat64, "CharSerializer": ShapeString, "StringSerializer": ShapeString,
	"StringDataSerializer": ShapeString, "BytePrimitiveArraySerializer": ShapeBytes,
	"VoidNamespaceSerializer": ShapeNull, "GlobalWindow": ShapeString,
}

// primArrays are the primitive-array serializers (decoded as []any of their element).
var primArrays = map[string]ShapeKind{
	"IntPrimitiveArraySerializer": ShapeInt32, "LongPrimitiveArraySerializer": ShapeInt64,
	"ShortPrimitiveArraySerializer": ShapeInt16, "BooleanPrimitiveArraySerializer": ShapeBool,
	"DoublePrimitiveArraySerializer": ShapeFloat64, "FloatPrimitiveArraySerializer": ShapeFloat32,
	"StringArraySerializer": ShapeString,
}

// ShapeOf returns the shape of the values NewCodec(s) decodes.
func ShapeOf(s *Snapshot) *Shape {
	if s == nil || !NewCodec(s).Known() {
		return &Shape{Kind: ShapeOpaque}
	}
	return shapeOf(s)
}

func shapeOf(s *Snapshot) *Shape {
	if s == nil {
		return &Shape{Kind: ShapeOpaque}
	}
	if _, ok := simpleCodecs[s.Class]; ok {
		short := s.Short()
		if strings.Contains(s.Class, "TimeWindow$Serializer") {
			return &Shape{Kind: ShapeStruct, Fields: []NamedShape{{"start", &Shape{Kind: ShapeInt64}}, {"end", &Shape{Kind: ShapeInt64}}}}
		}
		if strings.Contains(s.Class, "GlobalWindow$Serializer") {
			return &Shape{Kind: ShapeString}
		}
		if i := strings.IndexByte(short, '$'); i > 0 {
			short = short[:i]
		}
		if k, ok := simpleShapes[short]; ok {
			return &Shape{Kind: k}
		}
		if k, ok := primArrays[short]; ok {
			return &Shape{Kind: ShapeList, Elem: &Shape{Kind: k}}
		}
		return &Shape{Kind: ShapeOpaque}
	}
	nested := func(i int) *Shape {
		if i < len(s.Nested) {
			return ShapeOf(s.Nested[i])
		}
		return &Shape{Kind: ShapeOpaque}
	}
	switch s.Class {
	case classTtl, classTtlV2:
		return nested(1) // the user value; the caller reports the timestamp
	case classList, classArrayList:
		return &Shape{Kind: ShapeList, Elem: nested(0)}
	case classMap:
		return &Shape{Kind: ShapeMap, Key: nested(0), Value: nested(1)}
	case classTuple:
		sh := &Shape{Kind: ShapeStruct}
		for i := range s.Nested {
			sh.Fields = append(sh.Fields, NamedShape{"f" + strconv.Itoa(i), nested(i)})
		}
		return sh
	case classPojo:
		sh := &Shape{Kind: ShapeStruct}
		for _, f := range s.PojoFields {
			sh.Fields = append(sh.Fields, NamedShape{f.Name, ShapeOf(f.Snapshot)})
		}
		return sh
	case classEnum:
		return &Shape{Kind: ShapeString}
	case classRow:
		sh := &Shape{Kind: ShapeRow, RowKind: s.RowKind}
		for i := range s.Nested {
			sh.Fields = append(sh.Fields, NamedShape{"f" + strconv.Itoa(i), nested(i)})
		}
		return sh
	case classRowData:
		return rowDataShape(s)
	case classExternal:
		return nested(0) // the internal value (newCodec)
	case classDecimalData:
		return &Shape{Kind: ShapeDecimal}
	case classTimestampData:
		return &Shape{Kind: ShapeString}
	}
	return &Shape{Kind: ShapeOpaque}
}

// rowFieldShapes are the shapes of the SQL row field kinds newRowDataCodec decodes; a kind not
// here (rfUnknown) is Opaque, and rfRow a row of its own.
var rowFieldShapes = map[rowFieldKind]ShapeKind{
	rfBool: ShapeBool, rfByte: ShapeInt8, rfShort: ShapeInt16, rfInt: ShapeInt32, rfLong: ShapeInt64,
	rfFloat: ShapeFloat32, rfDouble: ShapeFloat64, rfString: ShapeString, rfTimestamp: ShapeString,
	rfBinary: ShapeBytes, rfDecimal: ShapeDecimal,
}

// rowDataShape follows newRowDataCodec: fields of a kind it does not decode are Opaque.
func rowDataShape(s *Snapshot) *Shape {
	c := newRowDataCodec(s).(rowDataCodec)
	sh := &Shape{Kind: ShapeRow, SQLRow: true, RowKind: true}
	for i, k := range c.kinds {
		f := &Shape{Kind: rowFieldShapes[k]} // ShapeOpaque (0) when absent
		if k == rfRow {
			f = rowDataShape(s.Nested[i])
		}
		sh.Fields = append(sh.Fields, NamedShape{"f" + strconv.Itoa(i), f})
	}
	return sh
}
