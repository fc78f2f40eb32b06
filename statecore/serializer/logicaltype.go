package serializer

import (
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// A RowDataSerializer snapshot keeps its fields' LogicalTypes as Java-serialized objects, and
// Flink 2.3.0's RowDataSerializerSnapshot.resolveSchemaCompatibility declares the new serializer
// incompatible unless Arrays.equals(newTypes, oldTypes) holds: LogicalType.equals compares
// nullability and type root, and each subclass its own fields (VARCHAR length, DECIMAL precision
// and scale, ...). So restore predictions need those objects as types. A serialized leaf type
// looks like this (superclass fields first, names as in the class descriptors):
//
//	TC_OBJECT classDesc(org.apache.flink.table.types.logical.VarCharType, fields: I length)
//	          super classDesc(LogicalType, fields: Z isNullable, L typeRoot)
//	values:   [bool isNullable][TC_ENUM LogicalTypeRoot "VARCHAR"][i32 length]
//
// LogicalTypeSQL renders such an object the way a compiled plan writes types
// (LogicalType.asSerializableString: "VARCHAR(2147483647)", "BIGINT NOT NULL"), so the types a
// plan implies and the types a savepoint holds compare as strings.

const logicalPkg = "org.apache.flink.table.types.logical."

// nullSerializerClass serializes a state-backed data view in an accumulator row to nothing.
const nullSerializerClass = "org.apache.flink.table.dataview.NullSerializer"

// leafTypes are the parameterless logical types and their SQL names.
var leafTypes = map[string]string{
	"BooleanType": "BOOLEAN", "TinyIntType": "TINYINT", "SmallIntType": "SMALLINT", "IntType": "INT",
	"BigIntType": "BIGINT", "FloatType": "FLOAT", "DoubleType": "DOUBLE", "DateType": "DATE",
}

// LogicalTypeSQL decodes one Java-serialized LogicalType (an element of Snapshot.LogicalTypes)
// and renders it as SQL. ok is false for a type it does not render (rows, collections, RAW
// types other than a state-backed view's, structured types): the caller must treat that field as unchecked, never as
// equal.
func LogicalTypeSQL(stream []byte) (sql string, ok bool) {
	r := javaio.NewBytesReader(stream, "logical type", 0)
	s := &javaSerSkipper{r: r, field: "logicalType"}
	if m, v := s.u16(), s.u16(); !s.ok() || m != 0xACED || v != 5 {
		return "", false
	}
	o, _ := s.content().(*jsObject)
	if !s.ok() || o == nil {
		return "", false
	}
	return renderLogicalType(o)
}

// maxTypeNesting bounds how deep ROW and STRUCTURED types nest: a hostile stream can make an
// object its own field through a back reference.
const maxTypeNesting = 16

func renderLogicalType(o *jsObject) (string, bool) { return renderNested(o, 0) }

func renderNested(o *jsObject, depth int) (string, bool) {
	if depth > maxTypeNesting {
		return "", false
	}
	name, found := strings.CutPrefix(o.class, logicalPkg)
	nullable, okN := o.fields["isNullable"].(bool)
	if !found || !okN {
		return "", false
	}
	num := func(f string) (int64, bool) {
		v, ok := o.fields[f].(int64)
		return v, ok
	}
	var t string
	if leaf, ok := leafTypes[name]; ok {
		t = leaf
	} else {
		switch name {
		case "VarCharType", "CharType", "BinaryType", "VarBinaryType":
			n, ok := num("length")
			if !ok {
				return "", false
			}
			t = fmt.Sprintf("%s(%d)", strings.ToUpper(strings.TrimSuffix(name, "Type")), n)
		case "DecimalType":
			p, ok1 := num("precision")
			sc, ok2 := num("scale")
			if !ok1 || !ok2 {
				return "", false
			}
			t = fmt.Sprintf("DECIMAL(%d, %d)", p, sc)
		case "TimeType":
			p, ok := num("precision")
			if !ok {
				return "", false
			}
			t = fmt.Sprintf("TIME(%d)", p)
		case "TimestampType", "LocalZonedTimestampType":
			// A time attribute (kind ROWTIME or PROCTIME) renders as the plain timestamp:
			// TimestampType.equals and LocalZonedTimestampType.equals compare nullability and
			// precision, never the kind, so a rowtime column restores into a regular one.
			p, ok := num("precision")
			kind, _ := o.fields["kind"].(*jsEnum)
			if !ok || kind == nil {
				return "", false
			}
			t = fmt.Sprintf("TIMESTAMP(%d)", p)
			if name == "LocalZonedTimestampType" {
				t += " WITH LOCAL TIME ZONE"
			}
		case "RawType":
			// RawType.equals compares the class and the serializer. Rendered only with the
			// stateless NullSerializer (a singleton, equal to any other instance): the field of
			// an accumulator whose data view lives in state of its own.
			clazz, ok1 := o.fields["clazz"].(jsClassValue)
			ser, ok2 := o.fields["serializer"].(*jsObject)
			if !ok1 || !ok2 || ser.class != nullSerializerClass {
				return "", false
			}
			t = fmt.Sprintf("RAW('%s', NullSerializer)", clazz.name)
		case "RowType":
			fields, ok := jsList(o.fields["fields"])
			if !ok {
				return "", false
			}
			if t, ok = renderFields("ROW", "", fields, depth); !ok {
				return "", false
			}
		case "StructuredType":
			if t, ok = renderStructured(o, depth); !ok {
				return "", false
			}
		default:
			return "", false
		}
	}
	if !nullable {
		t += " NOT NULL"
	}
	return t, true
}

// RowFieldTypes renders the logical types of a RowDataSerializer snapshot's fields; known[i] is
// false for a field LogicalTypeSQL does not render.
func (s *Snapshot) RowFieldTypes() (types []string, known []bool) {
	for _, b := range s.LogicalTypes {
		t, ok := LogicalTypeSQL(b)
		types = append(types, t)
		known = append(known, ok)
	}
	return types, known
}

// SortedMapComparator renders the comparator of a SortedMapSerializer snapshot (the retracting
// Top-N's sorted-map) the way plan.ValueType.Comparator spells it. Flink resolves the snapshot
// as incompatible unless the comparators are equal, and ComparableRecordComparator.equals
// compares its sort key positions, their logical types, the orders and the null orders (not
// the generated code):
//
//	positions [0] types [INT] ascending [false] nullsLast [true]
//
// ok is false for another comparator class or a field it does not render.
func SortedMapComparator(s *Snapshot) (string, bool) {
	if s == nil || s.Class != classSortedMap || len(s.LogicalTypes) != 1 {
		return "", false
	}
	r := javaio.NewBytesReader(s.LogicalTypes[0], "comparator", 0)
	js := &javaSerSkipper{r: r, field: "comparator"}
	if m, v := js.u16(), js.u16(); !js.ok() || m != 0xACED || v != 5 {
		return "", false
	}
	o, _ := js.content().(*jsObject)
	if !js.ok() || o == nil || o.class != "org.apache.flink.table.runtime.operators.rank.ComparableRecordComparator" {
		return "", false
	}
	list := func(field string, render func(any) (string, bool)) (string, bool) {
		arr, ok := o.fields[field].([]any)
		if !ok {
			return "", false
		}
		parts := make([]string, len(arr))
		for i, e := range arr {
			if parts[i], ok = render(e); !ok {
				return "", false
			}
		}
		return "[" + strings.Join(parts, ", ") + "]", true
	}
	scalar := func(e any) (string, bool) {
		switch v := e.(type) {
		case int32, int64, bool:
			return fmt.Sprint(v), true
		}
		return "", false
	}
	logical := func(e any) (string, bool) {
		lt, ok := e.(*jsObject)
		if !ok {
			return "", false
		}
		return renderLogicalType(lt)
	}
	pos, ok1 := list("compareKeyPositions", scalar)
	types, ok2 := list("compareKeyTypes", logical)
	orders, ok3 := list("compareOrders", scalar)
	nulls, ok4 := list("nullsIsLast", scalar)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return "", false
	}
	return fmt.Sprintf("positions %s types %s ascending %s nullsLast %s", pos, types, orders, nulls), true
}

// renderFields renders the fields (RowType.RowField or StructuredType.StructuredAttribute
// objects: name, type, description) of a ROW or STRUCTURED type: ROW<`a` INT, `b` BIGINT>, or
// STRUCTURED<'class', `a` INT> with the class. A field's name takes part in Flink's equals, so
// it is rendered; a field with a description is not rendered (ok false).
func renderFields(kind, class string, fields []any, depth int) (string, bool) {
	parts := []string{}
	if class != "" {
		parts = append(parts, "'"+class+"'")
	}
	for _, f := range fields {
		fo, ok := f.(*jsObject)
		if !ok || fo.fields["description"] != nil {
			return "", false
		}
		name, ok1 := fo.fields["name"].(string)
		lt, ok2 := fo.fields["type"].(*jsObject)
		if !ok1 || !ok2 {
			return "", false
		}
		ft, ok := renderNested(lt, depth+1)
		if !ok {
			return "", false
		}
		parts = append(parts, "`"+name+"` "+ft)
	}
	return kind + "<" + strings.Join(parts, ", ") + ">", true
}

// renderStructured renders a StructuredType the way plan.StructuredOf spells the accumulator of
// a built-in imperative aggregate function (DataTypes.STRUCTURED(class, fields...)): Flink 2.3.0's
// StructuredType.equals compares the class name, the attributes (name, type, description), the
// final, instantiable and comparison flags, the super type, the object identifier and the
// description. Only what DataTypes.STRUCTURED builds is rendered (final, instantiable, EQUALS
// comparison, no super type, identifier or description); a stream without the class name (Flink 1.x wrote the
// implementation class only) is not rendered: 2.3.0 would compare a missing name.
func renderStructured(o *jsObject, depth int) (string, bool) {
	class, _ := o.fields["className"].(string)
	final, _ := o.fields["isFinal"].(bool)
	inst, _ := o.fields["isInstantiable"].(bool)
	cmp, _ := o.fields["comparison"].(*jsEnum)
	attrs, ok := jsList(o.fields["attributes"])
	if class == "" || !final || !inst || cmp == nil || cmp.name != "EQUALS" || !ok ||
		o.fields["superType"] != nil || o.fields["objectIdentifier"] != nil || o.fields["description"] != nil {
		return "", false
	}
	return renderFields("STRUCTURED", class, attrs, depth)
}

// jsList returns the elements of a serialized java.util.List: an ArrayList (its writeObject
// writes the elements), an unmodifiable view of one (Collections.unmodifiableList), or an
// immutable list (List.of).
func jsList(v any) ([]any, bool) {
	for depth := 0; depth < 4; depth++ {
		o, ok := v.(*jsObject)
		if !ok {
			return nil, false
		}
		switch o.class {
		case "java.util.ArrayList":
			return o.extra, true
		case "java.util.Collections$UnmodifiableRandomAccessList", "java.util.Collections$UnmodifiableList":
			v = o.fields["list"]
		case "java.util.CollSer":
			// List.of's serial form: a tag (1: a list, 4: a list that may hold nulls), then
			// the elements.
			if tag, _ := o.fields["tag"].(int64); tag != 1 && tag != 4 {
				return nil, false
			}
			return o.extra, true
		default:
			return nil, false
		}
	}
	return nil, false
}

// ArrayElementSQL renders the element type of an ArrayDataSerializer snapshot (a data view's
// list of values, held in an ExternalSerializer): Flink resolves it as incompatible unless the
// element LogicalTypes are equal. ok is false for another snapshot or a type it does not render.
func ArrayElementSQL(s *Snapshot) (string, bool) {
	if s == nil || s.Class != classArrayData || len(s.LogicalTypes) == 0 {
		return "", false
	}
	return LogicalTypeSQL(s.LogicalTypes[0])
}
