package serializer

import (
	"strconv"
	"strings"
)

// javaTypes maps parameterless serializer snapshots to the Java type they serialize.
var javaTypes = map[string]string{
	"IntSerializer": "Integer", "LongSerializer": "Long", "ShortSerializer": "Short",
	"ByteSerializer": "Byte", "BooleanSerializer": "Boolean", "FloatSerializer": "Float",
	"DoubleSerializer": "Double", "CharSerializer": "Character", "StringSerializer": "String",
	"BytePrimitiveArraySerializer": "byte[]", "IntPrimitiveArraySerializer": "int[]",
	"LongPrimitiveArraySerializer": "long[]", "StringArraySerializer": "String[]",
	"VoidNamespaceSerializer": "VoidNamespace", "StringDataSerializer": "StringData",
}

// JavaType names the type a snapshot stands for, the way Java code declares it: Integer, Long,
// String, Tuple2<String, Integer>, List<Long>, Map<String, Long>, Row<String, Integer>, the POJO
// class, RowData.
func JavaType(s *Snapshot) string {
	if s == nil {
		return ""
	}
	args := func() string {
		var parts []string
		for _, n := range s.Nested {
			parts = append(parts, JavaType(n))
		}
		return strings.Join(parts, ", ")
	}
	switch s.Class {
	case classTuple:
		return "Tuple" + strconv.Itoa(len(s.Nested)) + "<" + args() + ">"
	case classList, classArrayList:
		return "List<" + args() + ">"
	case classGenericArray:
		if len(s.Nested) == 1 {
			return JavaType(s.Nested[0]) + "[]"
		}
	case classMap:
		return "Map<" + args() + ">"
	case classTtl, classTtlV2:
		if len(s.Nested) == 2 {
			return JavaType(s.Nested[1])
		}
	case classPojo, classValue, classCopyableValue, classEnum, classKryo:
		return s.TypeClass
	case classRowData:
		return "RowData"
	case classSortedMap:
		return "SortedMap<" + args() + ">"
	case classExternal:
		// Its compatibility is the nested internal serializer's (ExternalSerializerSnapshot
		// leaves the outer DataType out of the resolution).
		return "External<" + args() + ">"
	case classRow:
		// Position-based: the snapshot has the field types but no names.
		return "Row<" + args() + ">"
	}
	short := s.Short()
	if i := strings.IndexByte(short, '$'); i > 0 {
		short = short[:i]
	}
	if t, ok := javaTypes[short]; ok {
		return t
	}
	return short
}

// UnwrapTTL returns the user-value snapshot inside a TTL serializer snapshot, or s itself.
func UnwrapTTL(s *Snapshot) *Snapshot {
	if s != nil && (s.Class == classTtl || s.Class == classTtlV2) && len(s.Nested) == 2 {
		return s.Nested[1]
	}
	return s
}

// ListElement returns the element snapshot of a list serializer snapshot.
func ListElement(s *Snapshot) (*Snapshot, bool) {
	if s != nil && (s.Class == classList || s.Class == classArrayList) && len(s.Nested) == 1 {
		return s.Nested[0], true
	}
	return nil, false
}

// MapKeyValue returns the key and value snapshots of a map serializer snapshot.
func MapKeyValue(s *Snapshot) (key, value *Snapshot, ok bool) {
	if s != nil && s.Class == classMap && len(s.Nested) == 2 {
		return s.Nested[0], s.Nested[1], true
	}
	return nil, nil, false
}

// OpaqueCodec returns a codec that takes every remaining byte as an Opaque value of class.
func OpaqueCodec(class string) Codec { return opaqueCodec{class: class} }
