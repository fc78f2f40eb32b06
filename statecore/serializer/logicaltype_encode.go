package serializer

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// This file writes what logicaltype.go reads: a SQL operator's RowDataSerializer snapshot keeps
// each field's LogicalType as a Java-serialized object, so declaring SQL state (`savepoint
// create --spec` with a plan) needs those objects written as Flink writes them. For the types
// below the stream is one object with no back reference (Java Object Serialization
// Specification, chapter 6; every class's serialVersionUID is 1, LogicalTypeRoot's and Enum's
// 0, as `serialver` reports for Flink 2.3.0's classes):
//
//	AC ED 00 05  TC_OBJECT
//	  TC_CLASSDESC <type class> suid 1, SC_SERIALIZABLE, its int fields (length | precision, scale)
//	    TC_ENDBLOCKDATA
//	    TC_CLASSDESC LogicalType suid 1, SC_SERIALIZABLE, fields Z isNullable, L typeRoot
//	                 (TC_STRING "Lorg/apache/flink/table/types/logical/LogicalTypeRoot;")
//	      TC_ENDBLOCKDATA TC_NULL
//	  u8 isNullable
//	  TC_ENUM TC_CLASSDESC LogicalTypeRoot suid 0, SC_SERIALIZABLE|SC_ENUM, no fields, TC_ENDBLOCKDATA
//	                 TC_CLASSDESC java.lang.Enum suid 0, SC_SERIALIZABLE|SC_ENUM, TC_ENDBLOCKDATA TC_NULL
//	          TC_STRING <root constant>
//	  i32 per int field of the type class, in name order
//
// TestLogicalTypeStreamsAreFlinks holds every stream to the bytes of each such type Flink wrote
// into the fixtures.

// sqlLogicalType is how one SQL type is written: its LogicalType class (in logicalPkg), its
// LogicalTypeRoot constant, the names of its int fields (Java's order: by name) and the
// serializer RowDataSerializer keeps the field's values with.
type sqlLogicalType struct {
	class, root string
	ints        []string
	field       *Snapshot
}

func simpleSnapshot(class string) *Snapshot {
	return &Snapshot{Class: class, Version: 3, Kind: KindSimple}
}

const stringDataSnapshot = "org.apache.flink.table.runtime.typeutils.StringDataSerializer$StringDataSerializerSnapshot"

// sqlLogicalTypes are the SQL types DeclareRowData declares, by name without parameters.
var sqlLogicalTypes = map[string]func() sqlLogicalType{
	"BOOLEAN":  func() sqlLogicalType { return sqlLogicalType{"BooleanType", "BOOLEAN", nil, basic("Boolean")} },
	"TINYINT":  func() sqlLogicalType { return sqlLogicalType{"TinyIntType", "TINYINT", nil, basic("Byte")} },
	"SMALLINT": func() sqlLogicalType { return sqlLogicalType{"SmallIntType", "SMALLINT", nil, basic("Short")} },
	"INT":      func() sqlLogicalType { return sqlLogicalType{"IntType", "INTEGER", nil, basic("Integer")} },
	"BIGINT":   func() sqlLogicalType { return sqlLogicalType{"BigIntType", "BIGINT", nil, basic("Long")} },
	"FLOAT":    func() sqlLogicalType { return sqlLogicalType{"FloatType", "FLOAT", nil, basic("Float")} },
	"DOUBLE":   func() sqlLogicalType { return sqlLogicalType{"DoubleType", "DOUBLE", nil, basic("Double")} },
	"VARCHAR": func() sqlLogicalType {
		return sqlLogicalType{"VarCharType", "VARCHAR", []string{"length"}, simpleSnapshot(stringDataSnapshot)}
	},
	"CHAR": func() sqlLogicalType {
		return sqlLogicalType{"CharType", "CHAR", []string{"length"}, simpleSnapshot(stringDataSnapshot)}
	},
	"BINARY": func() sqlLogicalType {
		return sqlLogicalType{"BinaryType", "BINARY", []string{"length"}, simpleSnapshot(declaredSimple["byte[]"])}
	},
	"VARBINARY": func() sqlLogicalType {
		return sqlLogicalType{"VarBinaryType", "VARBINARY", []string{"length"}, simpleSnapshot(declaredSimple["byte[]"])}
	},
}

func basic(name string) *Snapshot {
	s, _ := BasicSnapshot(name)
	return s
}

// DeclareRowData returns the snapshot of the RowDataSerializer Flink's SQL operators use for a
// row of the given field types, each written as LogicalTypeSQL renders it: BOOLEAN, TINYINT,
// SMALLINT, INT, BIGINT, FLOAT, DOUBLE, VARCHAR(n), CHAR(n), BINARY(n), VARBINARY(n), each
// optionally NOT NULL.
func DeclareRowData(fields []string) (*Snapshot, error) {
	s := &Snapshot{Class: classRowData, Version: 3, Kind: KindRowData}
	for i, f := range fields {
		stream, field, err := logicalType(f)
		if err != nil {
			return nil, fmt.Errorf("field %d: %w", i, err)
		}
		s.LogicalTypes = append(s.LogicalTypes, stream)
		s.Nested = append(s.Nested, field)
	}
	return s, nil
}

// logicalType returns the Java-serialized LogicalType of a SQL type and the serializer of its
// values.
func logicalType(sql string) (stream []byte, field *Snapshot, err error) {
	t, nullable := strings.CutSuffix(strings.TrimSpace(sql), " NOT NULL")
	nullable = !nullable
	name, params, hasParams := strings.Cut(t, "(")
	name = strings.TrimSpace(name)
	mk, ok := sqlLogicalTypes[name]
	if !ok {
		return nil, nil, fmt.Errorf("SQL type %q: statecraft declares BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, "+
			"VARCHAR(n), CHAR(n), BINARY(n), VARBINARY(n) (each optionally NOT NULL)", sql)
	}
	lt := mk()
	var vals []int32
	if hasParams {
		p, closed := strings.CutSuffix(strings.TrimSpace(params), ")")
		for _, a := range strings.Split(p, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(a), 10, 32)
			if err != nil || !closed || n < 1 {
				return nil, nil, fmt.Errorf("SQL type %q: parameters must be positive integers in parentheses", sql)
			}
			vals = append(vals, int32(n))
		}
	}
	if len(vals) != len(lt.ints) {
		return nil, nil, fmt.Errorf("SQL type %q: %s takes %d parameters, not %d", sql, name, len(lt.ints), len(vals))
	}
	var b []byte
	u16 := func(v int) { b = binary.BigEndian.AppendUint16(b, uint16(v)) }
	utf := func(s string) { u16(len(s)); b = append(b, s...) }
	classDesc := func(name string, suid int64, flags byte, fields func()) {
		b = append(b, tcClassDesc)
		utf(name)
		b = binary.BigEndian.AppendUint64(b, uint64(suid))
		b = append(b, flags)
		fields()
		b = append(b, tcEndBlockData)
	}
	const scEnum = 0x10
	b = append(b, 0xAC, 0xED, 0x00, 0x05, tcObject)
	classDesc(logicalPkg+lt.class, 1, scSerializable, func() {
		u16(len(lt.ints))
		for _, f := range lt.ints {
			b = append(b, 'I')
			utf(f)
		}
	})
	classDesc(logicalPkg+"LogicalType", 1, scSerializable, func() {
		u16(2)
		b = append(b, 'Z')
		utf("isNullable")
		b = append(b, 'L')
		utf("typeRoot")
		b = append(b, tcString)
		utf("L" + strings.ReplaceAll(logicalPkg, ".", "/") + "LogicalTypeRoot;")
	})
	b = append(b, tcNull)
	if nullable {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = append(b, tcEnum)
	classDesc(logicalPkg+"LogicalTypeRoot", 0, scSerializable|scEnum, func() { u16(0) })
	classDesc("java.lang.Enum", 0, scSerializable|scEnum, func() { u16(0) })
	b = append(b, tcNull, tcString)
	utf(lt.root)
	for _, v := range vals {
		b = binary.BigEndian.AppendUint32(b, uint32(v))
	}
	return b, lt.field, nil
}
