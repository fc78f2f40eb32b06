package serializer

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// javaStream writes one Java Object Serialization stream (the grammar javaser.go walks) the way
// ObjectOutputStream does for the object graphs statecraft declares: every class descriptor,
// string, enum constant and Class object is written once and referred to by its handle after
// that, handles counting from 0x7E0000 in the order ObjectOutputStream assigns them:
//
//	TC_OBJECT   classDesc, then the object's handle, then its field values (superclass first)
//	TC_CLASSDESC  the descriptor's handle, name, suid, flags, fields (a field's type string is
//	            a string object: TC_STRING once, TC_REFERENCE after), TC_ENDBLOCKDATA, superDesc
//	TC_ENUM     classDesc, the constant's handle, its name as a string
//	TC_CLASS    classDesc, the Class object's handle
//	a singleton (NullSerializer.INSTANCE) is one object: new once, referred to after that
//
// Strings are shared by content: the streams written here hold no two distinct String objects
// of equal content (Java shares by identity; field type strings and enum names are interned).
type javaStream struct {
	b       []byte
	handles map[any]int32
	next    int32
	last    int32 // the handle of the object whose values are being written (object)
}

// javaClass is a class descriptor: name, serialVersionUID, flags, the serializable fields in
// Java's order (primitives first, then objects, each by name) and the superclass's descriptor.
type javaClass struct {
	name   string
	suid   int64
	flags  byte
	fields []javaField
	super  *javaClass
}

// javaField is a field of a class descriptor: its type code ('I', 'Z', 'L' ...) and name, and an
// object field's type signature ("Ljava/lang/String;").
type javaField struct {
	code      byte
	name, sig string
}

type handleKey struct{ kind, name string }

func newJavaStream() *javaStream {
	return &javaStream{b: []byte{0xAC, 0xED, 0x00, 0x05}, handles: map[any]int32{}}
}

func (w *javaStream) u16(v int)   { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *javaStream) i32(v int32) { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *javaStream) utf(s string) {
	w.u16(len(s))
	w.b = append(w.b, s...)
}
func (w *javaStream) boolean(v bool) {
	if v {
		w.b = append(w.b, 1)
	} else {
		w.b = append(w.b, 0)
	}
}
func (w *javaStream) null() { w.b = append(w.b, tcNull) }

// ref writes a back reference to k and reports true when k has a handle already.
func (w *javaStream) ref(k handleKey) bool {
	h, ok := w.handles[k]
	if ok {
		w.b = append(w.b, tcReference)
		w.i32(baseHandle + h)
	}
	return ok
}

func (w *javaStream) assign(k handleKey) {
	w.handles[k] = w.next
	w.next++
}

func (w *javaStream) str(s string) {
	k := handleKey{"string", s}
	if w.ref(k) {
		return
	}
	w.b = append(w.b, tcString)
	w.assign(k)
	w.utf(s)
}

func (w *javaStream) classDesc(c *javaClass) {
	if c == nil {
		w.null()
		return
	}
	k := handleKey{"classdesc", c.name}
	if w.ref(k) {
		return
	}
	w.b = append(w.b, tcClassDesc)
	w.assign(k)
	w.utf(c.name)
	w.b = binary.BigEndian.AppendUint64(w.b, uint64(c.suid))
	w.b = append(w.b, c.flags)
	w.u16(len(c.fields))
	for _, f := range c.fields {
		w.b = append(w.b, f.code)
		w.utf(f.name)
		if f.code == 'L' || f.code == '[' {
			w.str(f.sig)
		}
	}
	w.b = append(w.b, tcEndBlockData)
	w.classDesc(c.super)
}

// object writes a new object of class c; values writes its field values, superclass first.
// Its handle is w.last until values writes another object (refObject refers back to it).
func (w *javaStream) object(c *javaClass, values func()) {
	w.b = append(w.b, tcObject)
	w.classDesc(c)
	w.last = w.next
	w.next++
	values()
}

// refObject writes a back reference to the object of handle h (an object's w.last).
func (w *javaStream) refObject(h int32) {
	w.b = append(w.b, tcReference)
	w.i32(baseHandle + h)
}

// arrayList writes a java.util.ArrayList of n elements (ArrayList.writeObject: its size field,
// then the size again as block data, the elements, the end of the block data) and returns its
// handle.
func (w *javaStream) arrayList(n int, elem func(i int)) int32 {
	var h int32
	w.object(arrayListClass, func() {
		h = w.last
		w.i32(int32(n))
		w.b = append(w.b, tcBlockData, 4)
		w.i32(int32(n))
		for i := range n {
			elem(i)
		}
		w.b = append(w.b, tcEndBlockData)
	})
	return h
}

// described writes a new content of kind tag (TC_OBJECT, TC_ENUM, TC_CLASS) known as k: the tag,
// its class descriptor and its handle; or a back reference when k has one, reporting false.
func (w *javaStream) described(k handleKey, tag byte, c *javaClass) bool {
	if w.ref(k) {
		return false
	}
	w.b = append(w.b, tag)
	w.classDesc(c)
	w.assign(k)
	return true
}

// singleton writes the one instance of class c (NullSerializer.INSTANCE), which has no field
// values: new the first time, a back reference after that.
func (w *javaStream) singleton(c *javaClass) {
	w.described(handleKey{"singleton", c.name}, tcObject, c)
}

func (w *javaStream) enum(c *javaClass, name string) {
	if w.described(handleKey{"enum " + c.name, name}, tcEnum, c) {
		w.str(name)
	}
}

func (w *javaStream) class(c *javaClass) { w.described(handleKey{"class", c.name}, tcClass, c) }

// Flink 2.3.0's classes (serialVersionUIDs as serialver reports them, field lists as the
// descriptors in the savepoints Flink wrote).
var (
	javaEnumClass       = &javaClass{name: "java.lang.Enum", flags: scSerializable | scEnum}
	logicalTypeRootEnum = &javaClass{name: logicalPkg + "LogicalTypeRoot", flags: scSerializable | scEnum, super: javaEnumClass}
	logicalTypeClass    = &javaClass{name: logicalPkg + "LogicalType", suid: 1, flags: scSerializable, fields: []javaField{
		{'Z', "isNullable", ""}, {'L', "typeRoot", "L" + slashed(logicalPkg) + "LogicalTypeRoot;"}}}
	typeSerializerClass = &javaClass{name: "org.apache.flink.api.common.typeutils.TypeSerializer", suid: 1, flags: scSerializable}
	singletonClass      = &javaClass{name: "org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton", suid: 0x79a987aac72e7745,
		flags: scSerializable, super: typeSerializerClass}
	nullSerializerJava = &javaClass{name: nullSerializerClass, suid: -0x4aaf45b54c9c53a1, flags: scSerializable, super: singletonClass}
	rawTypeClass       = &javaClass{name: logicalPkg + "RawType", suid: 1, flags: scSerializable, super: logicalTypeClass, fields: []javaField{
		{'L', "clazz", "Ljava/lang/Class;"}, {'L', "serializer", "Lorg/apache/flink/api/common/typeutils/TypeSerializer;"}}}
	userDefinedClass = &javaClass{name: logicalPkg + "UserDefinedType", suid: 1, flags: scSerializable, super: logicalTypeClass, fields: []javaField{
		{'Z', "isFinal", ""}, {'L', "description", "Ljava/lang/String;"}, {'L', "objectIdentifier", "Lorg/apache/flink/table/catalog/ObjectIdentifier;"}}}
	structuredClass = &javaClass{name: logicalPkg + "StructuredType", suid: 1, flags: scSerializable, super: userDefinedClass, fields: []javaField{
		{'Z', "isInstantiable", ""}, {'L', "attributes", "Ljava/util/List;"}, {'L', "className", "Ljava/lang/String;"},
		{'L', "comparison", "L" + slashed(logicalPkg) + "StructuredType$StructuredComparison;"},
		{'L', "implementationClass", "Ljava/lang/Class;"}, {'L', "superType", "L" + slashed(logicalPkg) + "StructuredType;"}}}
	structuredComparisonEnum = &javaClass{name: logicalPkg + "StructuredType$StructuredComparison", flags: scSerializable | scEnum, super: javaEnumClass}
	structuredAttrClass      = &javaClass{name: logicalPkg + "StructuredType$StructuredAttribute", suid: 1, flags: scSerializable, fields: []javaField{
		{'L', "description", "Ljava/lang/String;"}, {'L', "name", "Ljava/lang/String;"}, {'L', "type", "L" + slashed(logicalPkg) + "LogicalType;"}}}
	// java.util.CollSer is List.of's serial form: a tag, then (writeObject) the size and elements.
	collSerClass  = &javaClass{name: "java.util.CollSer", suid: 0x578eabb63a1ba811, flags: scSerializable | scWriteMethod, fields: []javaField{{'I', "tag", ""}}}
	dataTypeClass = &javaClass{name: "org.apache.flink.table.types.DataType", suid: -0x39700ceb61fd7c93, flags: scSerializable, fields: []javaField{
		{'L', "conversionClass", "Ljava/lang/Class;"}, {'L', "logicalType", "L" + slashed(logicalPkg) + "LogicalType;"}}}
	atomicDataTypeClass = &javaClass{name: "org.apache.flink.table.types.AtomicDataType", suid: 0x1a885329fa7a2332, flags: scSerializable, super: dataTypeClass}
	javaNumberClass     = &javaClass{name: "java.lang.Number", suid: -8742448824652078965, flags: scSerializable}
	// A ROW's DataType (a DISTINCT view's key over several columns): FieldsDataType, its RowType's
	// fields an unmodifiable view of an ArrayList of RowFields, its field DataTypes an ArrayList.
	fieldsDataTypeClass = &javaClass{name: "org.apache.flink.table.types.FieldsDataType", suid: -0x0b4f53e3527e60a1, flags: scSerializable, super: dataTypeClass,
		fields: []javaField{{'L', "fieldDataTypes", "Ljava/util/List;"}}}
	rowTypeClass = &javaClass{name: logicalPkg + "RowType", suid: 1, flags: scSerializable, super: logicalTypeClass,
		fields: []javaField{{'L', "fields", "Ljava/util/List;"}}}
	rowFieldClass = &javaClass{name: logicalPkg + "RowType$RowField", suid: 1, flags: scSerializable, fields: []javaField{
		{'L', "description", "Ljava/lang/String;"}, {'L', "name", "Ljava/lang/String;"}, {'L', "type", "L" + slashed(logicalPkg) + "LogicalType;"}}}
	unmodifiableCollectionClass = &javaClass{name: "java.util.Collections$UnmodifiableCollection", suid: 0x19420080cb5ef71e, flags: scSerializable,
		fields: []javaField{{'L', "c", "Ljava/util/Collection;"}}}
	unmodifiableListClass = &javaClass{name: "java.util.Collections$UnmodifiableList", suid: -0x3f0dace4a1371f0, flags: scSerializable,
		super: unmodifiableCollectionClass, fields: []javaField{{'L', "list", "Ljava/util/List;"}}}
	arrayListClass   = &javaClass{name: "java.util.ArrayList", suid: 0x7881d21d99c7619d, flags: scSerializable | scWriteMethod, fields: []javaField{{'I', "size", ""}}}
	rowDataJavaClass = plainClass("org.apache.flink.table.data.RowData")
)

const scEnum = 0x10

func slashed(pkg string) string {
	b := []byte(pkg)
	for i, c := range b {
		if c == '.' {
			b[i] = '/'
		}
	}
	return string(b)
}

// plainClass is the descriptor of a class that is not serializable (a Class object's only):
// suid 0, no flags, no fields.
func plainClass(name string) *javaClass { return &javaClass{name: name} }

// boxedClasses are the Java classes a SQL type's values convert to in an ExternalSerializer's
// DataType (its conversion class), with their value field.
var boxedClasses = map[string]*javaClass{
	"BIGINT":   {name: "java.lang.Long", suid: 4290774380558885855, flags: scSerializable, fields: []javaField{{'J', "value", ""}}, super: javaNumberClass},
	"INT":      {name: "java.lang.Integer", suid: 1360826667806852920, flags: scSerializable, fields: []javaField{{'I', "value", ""}}, super: javaNumberClass},
	"SMALLINT": {name: "java.lang.Short", suid: 7515723908773894738, flags: scSerializable, fields: []javaField{{'S', "value", ""}}, super: javaNumberClass},
	"TINYINT":  {name: "java.lang.Byte", suid: -7183698231559129828, flags: scSerializable, fields: []javaField{{'B', "value", ""}}, super: javaNumberClass},
	"DOUBLE":   {name: "java.lang.Double", suid: -9172774392245257468, flags: scSerializable, fields: []javaField{{'D', "value", ""}}, super: javaNumberClass},
	"FLOAT":    {name: "java.lang.Float", suid: -2671257302660747028, flags: scSerializable, fields: []javaField{{'F', "value", ""}}, super: javaNumberClass},
	"BOOLEAN":  {name: "java.lang.Boolean", suid: -3665804199014368530, flags: scSerializable, fields: []javaField{{'Z', "value", ""}}},
}

// internalClasses are the conversion classes of the internal DataTypes
// (DataTypeUtils.toInternalDataType) of the SQL types whose internal class is not a boxed Java
// type, by type name: the interface StringData and the final classes DecimalData and
// TimestampData, none serializable.
var internalClasses = map[string]*javaClass{
	"VARCHAR":   plainClass("org.apache.flink.table.data.StringData"),
	"CHAR":      plainClass("org.apache.flink.table.data.StringData"),
	"DECIMAL":   plainClass("org.apache.flink.table.data.DecimalData"),
	"TIMESTAMP": plainClass("org.apache.flink.table.data.TimestampData"),
}

// externalConversion is the conversion class of the (internal) DataType of SQL type t (without
// NOT NULL): the boxed class of a BIGINT, INT, SMALLINT, TINYINT, DOUBLE, FLOAT or BOOLEAN, the
// internal class of a VARCHAR(n), CHAR(n), DECIMAL(p, s) or TIMESTAMP(p).
func externalConversion(t string) (*javaClass, bool) {
	if c, ok := boxedClasses[t]; ok {
		return c, true
	}
	name, _, params := strings.Cut(t, "(")
	c, ok := internalClasses[name]
	return c, ok && params
}

// DeclareExternal returns the snapshot of the ExternalSerializer a state-backed data view keeps
// its keys or values with (DataViewUtils: ExternalSerializer.of(dataType), the external class a
// boxed Java type, or for a DISTINCT view's key the argument's internal DataType): its outer
// snapshot is the Java-serialized AtomicDataType (the LogicalType and the conversion class),
// then isInternalInput false; its nested serializer the internal one.
//
//	AtomicDataType  super DataType { conversionClass: TC_CLASS java.lang.Long (super Number),
//	                                 logicalType:     BigIntType (isNullable, BIGINT) }
//	AtomicDataType  super DataType { conversionClass: TC_CLASS org.apache.flink.table.data.StringData
//	                                                  (an interface: suid 0, no flags),
//	                                 logicalType:     VarCharType (isNullable, VARCHAR, length) }
//
// sql is the value's SQL type: BIGINT, INT, SMALLINT, TINYINT, DOUBLE, FLOAT, BOOLEAN,
// VARCHAR(n) (STRING is VARCHAR(2147483647)), CHAR(n), DECIMAL(p, s) or TIMESTAMP(p), each
// optionally NOT NULL (a view's values are; a DISTINCT view's keys are as the argument's
// column). The internal serializers of the last four are StringDataSerializer,
// DecimalDataSerializer and TimestampDataSerializer (DecimalData and TimestampData the
// conversion classes).
func DeclareExternal(sql string) (*Snapshot, error) {
	stream, internal, err := externalDataType(sql)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Class: classExternal, Version: 3, Kind: KindComposite, OuterVersion: 1,
		LogicalTypes: [][]byte{stream}, Nested: []*Snapshot{internal}}, nil
}

func externalDataType(sql string) ([]byte, *Snapshot, error) {
	t := strings.TrimSuffix(strings.TrimSpace(sql), " NOT NULL")
	conversion, ok := externalConversion(t)
	if !ok {
		return nil, nil, fmt.Errorf("SQL type %q: statecraft declares the data view values of BIGINT, INT, SMALLINT, TINYINT, DOUBLE, FLOAT, BOOLEAN, VARCHAR(n), CHAR(n), DECIMAL(p, s) and TIMESTAMP(p)", sql)
	}
	w := newJavaStream()
	var internal *Snapshot
	var err error
	w.object(atomicDataTypeClass, func() {
		w.class(conversion)
		internal, err = w.logicalType(sql, 0)
	})
	if err != nil {
		return nil, nil, err
	}
	return w.b, internal, nil
}

// DeclareExternalRow returns the snapshot of the ExternalSerializer a DISTINCT view over several
// columns keys its entries with (AggregateUtil.extractDistinctInformation: the internal DataType
// of RowType.of(the arguments' types), fields f0, f1, ...): its DataType a FieldsDataType
//
//	FieldsDataType  super DataType { conversionClass: TC_CLASS org.apache.flink.table.data.RowData,
//	                                 logicalType:     RowType (isNullable, ROW, fields: an
//	                                                  UnmodifiableList of an ArrayList of RowField
//	                                                  (description null, name fN, type)) }
//	                fieldDataTypes:  an ArrayList of each field's internal AtomicDataType, whose
//	                                 logical type refers back to the RowField's
//
// and its nested serializer the RowDataSerializer of the fields. types are the arguments' SQL
// types as DeclareExternal takes them (nullability as the columns have it).
func DeclareExternalRow(types []string) (*Snapshot, error) {
	w := newJavaStream()
	var err error
	var fieldTypes []int32
	w.object(fieldsDataTypeClass, func() {
		w.class(rowDataJavaClass)
		w.object(rowTypeClass, func() {
			w.boolean(true)
			w.enum(logicalTypeRootEnum, "ROW")
			w.object(unmodifiableListClass, func() {
				list := w.arrayList(len(types), func(i int) {
					w.object(rowFieldClass, func() {
						w.null()
						w.str(fmt.Sprintf("f%d", i))
						if _, e := w.logicalType(types[i], 1); e != nil && err == nil {
							err = e
						}
						fieldTypes = append(fieldTypes, w.last)
					})
				})
				w.refObject(list)
			})
		})
		w.arrayList(len(types), func(i int) {
			conversion, ok := externalConversion(strings.TrimSuffix(strings.TrimSpace(types[i]), " NOT NULL"))
			if !ok {
				if err == nil {
					err = fmt.Errorf("SQL type %q: statecraft declares the row keys of BIGINT, INT, SMALLINT, TINYINT, DOUBLE, FLOAT, BOOLEAN, VARCHAR(n), CHAR(n), DECIMAL(p, s) and TIMESTAMP(p) columns", types[i])
				}
				return
			}
			w.object(atomicDataTypeClass, func() {
				w.class(conversion)
				w.refObject(fieldTypes[i])
			})
		})
	})
	if err != nil {
		return nil, err
	}
	row, err := DeclareRowData(types)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Class: classExternal, Version: 3, Kind: KindComposite, OuterVersion: 1,
		LogicalTypes: [][]byte{w.b}, Nested: []*Snapshot{row}}, nil
}
