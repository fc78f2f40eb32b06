package serializer

import (
	"fmt"
	"strconv"
	"strings"
)

// This file writes what logicaltype.go reads: a SQL operator's RowDataSerializer snapshot keeps
// each field's LogicalType as a Java-serialized object, so declaring SQL state (`savepoint
// create --spec` with a plan) needs those objects written as Flink writes them. For the types
// below the stream is one object with no back reference but TimestampKind's to Enum (Java
// Object Serialization Specification, chapter 6; every class's serialVersionUID is 1,
// LogicalTypeRoot's and Enum's 0, as `serialver` reports for Flink 2.3.0's classes):
//
//	AC ED 00 05  TC_OBJECT
//	  TC_CLASSDESC <type class> suid 1, SC_SERIALIZABLE, its int fields (length | precision, scale)
//	               (TimestampType: I precision, L kind "Lorg/apache/flink/table/types/logical/TimestampKind;")
//	    TC_ENDBLOCKDATA
//	    TC_CLASSDESC LogicalType suid 1, SC_SERIALIZABLE, fields Z isNullable, L typeRoot
//	                 (TC_STRING "Lorg/apache/flink/table/types/logical/LogicalTypeRoot;")
//	      TC_ENDBLOCKDATA TC_NULL
//	  u8 isNullable
//	  TC_ENUM TC_CLASSDESC LogicalTypeRoot suid 0, SC_SERIALIZABLE|SC_ENUM, no fields, TC_ENDBLOCKDATA
//	                 TC_CLASSDESC java.lang.Enum suid 0, SC_SERIALIZABLE|SC_ENUM, TC_ENDBLOCKDATA TC_NULL
//	          TC_STRING <root constant>
//	  i32 per int field of the type class, in name order
//	  (TimestampType: then its kind, TC_ENUM TC_CLASSDESC TimestampKind suid 0,
//	   SC_SERIALIZABLE|SC_ENUM, super Enum by reference; TC_STRING "REGULAR")
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
	// DecimalDataSerializer's snapshot (version 3) and TimestampDataSerializer's (version 1)
	// hold the precision (and scale): logicalType fills them in. TimestampType has an object
	// field after its int, the kind: written as TimestampKind.REGULAR (a time attribute, ROWTIME
	// or PROCTIME, renders as TIMESTAMP(p) *ROWTIME* in a plan and is not declared).
	"DECIMAL": func() sqlLogicalType {
		return sqlLogicalType{"DecimalType", "DECIMAL", []string{"precision", "scale"}, &Snapshot{Class: classDecimalData, Version: 3, Kind: KindDecimalData}}
	},
	"TIMESTAMP": func() sqlLogicalType {
		return sqlLogicalType{"TimestampType", "TIMESTAMP_WITHOUT_TIME_ZONE", []string{"precision"}, &Snapshot{Class: classTimestampData, Version: 1, Kind: KindTimestampData}}
	},
}

// timestampKindEnum is TimestampType's kind.
var timestampKindEnum = &javaClass{name: logicalPkg + "TimestampKind", flags: scSerializable | scEnum, super: javaEnumClass}

func basic(name string) *Snapshot {
	s, _ := BasicSnapshot(name)
	return s
}

// DeclareRowData returns the snapshot of the RowDataSerializer Flink's SQL operators use for a
// row of the given field types, each written as LogicalTypeSQL renders it: BOOLEAN, TINYINT,
// SMALLINT, INT, BIGINT, FLOAT, DOUBLE, VARCHAR(n), CHAR(n), BINARY(n), VARBINARY(n),
// DECIMAL(p, s), TIMESTAMP(p) (regular, not a time attribute), each optionally NOT NULL.
func DeclareRowData(fields []string) (*Snapshot, error) { return declareRow(fields, 0) }

func declareRow(fields []string, depth int) (*Snapshot, error) {
	s := &Snapshot{Class: classRowData, Version: 3, Kind: KindRowData}
	for i, f := range fields {
		w := newJavaStream()
		field, err := w.logicalType(f, depth)
		if err != nil {
			return nil, fmt.Errorf("field %d: %w", i, err)
		}
		s.LogicalTypes = append(s.LogicalTypes, w.b)
		s.Nested = append(s.Nested, field)
	}
	return s, nil
}

// logicalType returns the Java-serialized LogicalType of a SQL type and the serializer of its
// values.
func logicalType(sql string) (stream []byte, field *Snapshot, err error) {
	w := newJavaStream()
	field, err = w.logicalType(sql, 0)
	if err != nil {
		return nil, nil, err
	}
	return w.b, field, nil
}

// logicalType writes the LogicalType object of a SQL type (as LogicalTypeSQL renders it) and
// returns the serializer RowDataSerializer keeps its values with.
func (w *javaStream) logicalType(sql string, depth int) (*Snapshot, error) {
	if depth > maxTypeNesting {
		return nil, fmt.Errorf("SQL type %q: nested deeper than %d", sql, maxTypeNesting)
	}
	t, nullable := strings.CutSuffix(strings.TrimSpace(sql), " NOT NULL")
	nullable = !nullable
	if class, ok := stateBackedView(t); ok {
		w.object(rawTypeClass, func() {
			w.boolean(nullable)
			w.enum(logicalTypeRootEnum, "RAW")
			w.class(plainClass(class))
			w.singleton(nullSerializerJava)
		})
		return &Snapshot{Class: classRawValueData, Version: 3, Kind: KindComposite,
			Nested: []*Snapshot{simpleSnapshot(nullSerializerClass + "$NullSerializerSnapshot")}}, nil
	}
	if strings.HasPrefix(t, "STRUCTURED<") {
		return w.structured(sql, t, nullable, depth)
	}
	name, params, hasParams := strings.Cut(t, "(")
	name = strings.TrimSpace(name)
	mk, ok := sqlLogicalTypes[name]
	if !ok {
		return nil, fmt.Errorf("SQL type %q: statecraft declares BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, "+
			"VARCHAR(n), CHAR(n), BINARY(n), VARBINARY(n), DECIMAL(p, s), TIMESTAMP(p) (each optionally NOT NULL), the RAW fields of state-backed "+
			"MapViews and ListViews and the STRUCTURED accumulators of built-in functions of them", sql)
	}
	lt := mk()
	var vals []int32
	if hasParams {
		p, closed := strings.CutSuffix(strings.TrimSpace(params), ")")
		for _, a := range strings.Split(p, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(a), 10, 32)
			// A DECIMAL's scale and a TIMESTAMP's precision may be 0.
			if err != nil || !closed || n < 1 && !(name == "DECIMAL" && len(vals) == 1 || name == "TIMESTAMP") || n < 0 {
				return nil, fmt.Errorf("SQL type %q: parameters must be positive integers in parentheses (a DECIMAL's scale and a TIMESTAMP's precision may be 0)", sql)
			}
			vals = append(vals, int32(n))
		}
	}
	if len(vals) != len(lt.ints) {
		return nil, fmt.Errorf("SQL type %q: %s takes %d parameters, not %d", sql, name, len(lt.ints), len(vals))
	}
	c := &javaClass{name: logicalPkg + lt.class, suid: 1, flags: scSerializable, super: logicalTypeClass}
	for _, f := range lt.ints {
		c.fields = append(c.fields, javaField{code: 'I', name: f})
	}
	timestamp := lt.class == "TimestampType"
	if timestamp {
		c.fields = append(c.fields, javaField{'L', "kind", "L" + slashed(logicalPkg) + "TimestampKind;"})
	}
	w.object(c, func() {
		w.boolean(nullable)
		w.enum(logicalTypeRootEnum, lt.root)
		for _, v := range vals {
			w.i32(v)
		}
		if timestamp {
			w.enum(timestampKindEnum, "REGULAR")
		}
	})
	switch lt.field.Kind {
	case KindDecimalData:
		lt.field.Precision, lt.field.Scale = vals[0], vals[1]
	case KindTimestampData:
		lt.field.Precision = vals[0]
	}
	return lt.field, nil
}

// stateBackedView reports the data view class of a state-backed view's RAW type (StateBackedView
// in package plan): RAW('org.apache.flink.table.api.dataview.MapView', NullSerializer).
func stateBackedView(t string) (string, bool) {
	rest, ok := strings.CutPrefix(t, "RAW('")
	if !ok {
		return "", false
	}
	class, ok := strings.CutSuffix(rest, "', NullSerializer)")
	if !ok || (class != dataViewPkg+"MapView" && class != dataViewPkg+"ListView") {
		return "", false
	}
	return class, true
}

const dataViewPkg = "org.apache.flink.table.api.dataview."

// structured writes the StructuredType DataTypes.STRUCTURED(class, FIELD(name, type)...) builds
// for a built-in function's accumulator (renderStructured's form: final, instantiable, EQUALS,
// no super type, identifier or description), its attributes in a List.of (java.util.CollSer,
// tag 1), the implementation class a Class object of a non-serializable class. Its values are
// kept by a RowDataSerializer of the attributes' types.
func (w *javaStream) structured(sql, t string, nullable bool, depth int) (*Snapshot, error) {
	body, ok := strings.CutSuffix(strings.TrimPrefix(t, "STRUCTURED<"), ">")
	parts := splitTopLevel(body)
	if !ok || len(parts) < 2 || !strings.HasPrefix(parts[0], "'") || !strings.HasSuffix(parts[0], "'") {
		return nil, fmt.Errorf("SQL type %q: want STRUCTURED<'class', `name` TYPE, ...>", sql)
	}
	class := strings.Trim(parts[0], "'")
	type attr struct{ name, typ string }
	var attrs []attr
	for _, p := range parts[1:] {
		name, typ, ok := strings.Cut(strings.TrimPrefix(p, "`"), "` ")
		if !ok || !strings.HasPrefix(p, "`") || name == "" {
			return nil, fmt.Errorf("SQL type %q: attribute %q: want `name` TYPE", sql, p)
		}
		attrs = append(attrs, attr{name, typ})
	}
	var fields []string
	var err error
	w.object(structuredClass, func() {
		w.boolean(nullable)
		w.enum(logicalTypeRootEnum, "STRUCTURED_TYPE")
		w.boolean(true) // isFinal
		w.null()        // description
		w.null()        // objectIdentifier
		w.boolean(true) // isInstantiable
		w.object(collSerClass, func() {
			w.i32(1) // tag: an immutable list
			w.b = append(w.b, tcBlockData, 4)
			w.i32(int32(len(attrs)))
			for _, a := range attrs {
				w.object(structuredAttrClass, func() {
					w.null() // description
					w.str(a.name)
					if _, e := w.logicalType(a.typ, depth+1); e != nil && err == nil {
						err = e
					}
				})
				fields = append(fields, a.typ)
			}
			w.b = append(w.b, tcEndBlockData)
		})
		w.str(class)
		w.enum(structuredComparisonEnum, "EQUALS")
		w.class(plainClass(class))
		w.null() // superType
	})
	if err != nil {
		return nil, fmt.Errorf("SQL type %q: %w", sql, err)
	}
	return declareRow(fields, depth+1)
}

// splitTopLevel splits a type list at the commas outside <>, () and quotes.
func splitTopLevel(s string) []string {
	var out []string
	depth, quote, start := 0, byte(0), 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`':
			quote = c
		case c == '<' || c == '(':
			depth++
		case c == '>' || c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
