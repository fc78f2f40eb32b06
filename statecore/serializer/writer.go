package serializer

import (
	"bytes"
	"fmt"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// This file is the inverse of snapshot.go: WriteTop and WriteVersioned write a parsed (or built)
// Snapshot in the layout its reader reads, so a state's serializer snapshot can be changed (a
// row or POJO gaining or losing fields) and written back. Every layout is drawn once, above its
// reader in snapshot.go; the writers below follow the same order field for field. Offset and End
// are ignored: they describe where a snapshot was read from, not what it says.

// WriteTop writes s the way TypeSerializerSnapshotSerializationUtil.writeSerializerSnapshot does:
// the envelope version (i32 2), then the versioned snapshot.
func WriteTop(w *javaio.Writer, s *Snapshot) error {
	w.I32(TopLevelEnvelopeVersion)
	return WriteVersioned(w, s)
}

// WriteVersioned writes s the way TypeSerializerSnapshot.writeVersionedSnapshot does: UTF class
// name, i32 version, payload. It fails (without a partial guarantee about what was written) on a
// snapshot its reader would not accept: an unknown class, a missing nested snapshot, a version
// with no known layout.
func WriteVersioned(w *javaio.Writer, s *Snapshot) error {
	if err := writeVersioned(w, s, "snapshot", 0); err != nil {
		return err
	}
	return w.Err()
}

// EncodeVersioned returns the bytes WriteVersioned writes.
func EncodeVersioned(s *Snapshot) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteVersioned(javaio.NewWriter(&b), s); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeVersioned(w *javaio.Writer, s *Snapshot, field string, depth int) error {
	if s == nil {
		return fmt.Errorf("%s: no snapshot to write", field)
	}
	if depth > maxNested {
		return fmt.Errorf("%s: serializer snapshots nested deeper than %d", field, maxNested)
	}
	k, ok := kindOf(s.Class)
	if !ok && s.Kind == KindComposite && s.Version == compositeVersion {
		k, ok = KindComposite, true // a user's composite with no outer snapshot (readUserComposite)
	}
	if !ok && s.Kind == KindSimple && s.Version == simpleVersion {
		k, ok = KindSimple, true // a user's simple snapshot, read as one (ReadTopAssuming)
	}
	if !ok {
		return fmt.Errorf("%s: unknown serializer snapshot class %q", field, s.Class)
	}
	field = field + "<" + s.Short() + ">"
	w.UTF(s.Class)
	w.I32(s.Version)
	switch k {
	case KindSimple:
		switch {
		case s.Version >= 3:
		case s.Version == 2:
			w.UTF(s.LegacyName)
		default:
			return fmt.Errorf("%s: simple snapshot version %d, want 2 or 3", field, s.Version)
		}
	case KindComposite:
		return writeComposite(w, s, field, depth)
	case KindPojo:
		return writePojo(w, s, field, depth)
	case KindGeneric:
		w.UTF(s.TypeClass)
	case KindEnum:
		if s.Version != 3 {
			return fmt.Errorf("%s: enum snapshot version %d, want 3", field, s.Version)
		}
		w.UTF(s.TypeClass)
		w.I32(int32(len(s.Enum)))
		for _, c := range s.Enum {
			w.UTF(c)
		}
	case KindRowData:
		if s.Version != 3 {
			return fmt.Errorf("%s: RowData snapshot version %d, want 3", field, s.Version)
		}
		if len(s.LogicalTypes) != len(s.Nested) {
			return fmt.Errorf("%s: %d logical types but %d field serializers", field, len(s.LogicalTypes), len(s.Nested))
		}
		w.I32(int32(len(s.LogicalTypes)))
		for _, t := range s.LogicalTypes {
			w.Raw(t)
		}
		return writeDelegate(w, s.Nested, field, depth)
	case KindKryo:
		if s.Version != 2 || len(s.Maps) != 3 {
			return fmt.Errorf("%s: Kryo snapshot version %d with %d maps, want version 2 with 3", field, s.Version, len(s.Maps))
		}
		w.UTF(s.TypeClass)
		for _, m := range s.Maps {
			writeOptionalMap(w, m)
		}
	case KindDecimalData:
		w.I32(s.Precision)
		w.I32(s.Scale)
	case KindTimestampData:
		w.I32(s.Precision)
	case KindBinaryRowData:
		w.I32(s.Arity)
	case KindJavaObjects:
		n := 2
		if s.Class == classMapData {
			n = 4
		}
		if len(s.LogicalTypes) != n {
			return fmt.Errorf("%s: %d Java-serialized objects, want %d", field, len(s.LogicalTypes), n)
		}
		for _, t := range s.LogicalTypes {
			w.Raw(t)
		}
	case KindSortedMap:
		if len(s.LogicalTypes) != 1 {
			return fmt.Errorf("%s: %d comparators, want 1", field, len(s.LogicalTypes))
		}
		w.Raw(s.LogicalTypes[0])
		return writeDelegate(w, s.Nested, field, depth)
	}
	return w.Err()
}

// writeComposite writes a CompositeTypeSerializerSnapshot payload: version 3 with the magic and
// the outer version, legacy versions with the outer snapshot first (see readComposite).
func writeComposite(w *javaio.Writer, s *Snapshot, field string, depth int) error {
	if s.Version >= compositeVersion {
		w.I32(compositeMagic)
		w.I32(s.OuterVersion)
	}
	switch s.Class {
	case classTuple, classGenericArray: // the tuple class, the array's component class
		w.UTF(s.TypeClass)
	case classRow:
		// Outer version 3 implies RowKind support without writing it; older ones have none.
		switch {
		case s.OuterVersion >= 4:
			w.Bool(s.RowKind)
		case s.OuterVersion == 3 && !s.RowKind, s.OuterVersion < 3 && s.RowKind:
			return fmt.Errorf("%s: outer version %d cannot say supportsRowKind=%v", field, s.OuterVersion, s.RowKind)
		}
	case classNullable:
		if s.NullPadding < 0 {
			return fmt.Errorf("%s: negative null padding %d", field, s.NullPadding)
		}
		w.I32(s.NullPadding)
	case classTwoPhaseState, classLinkedList:
		if s.OuterVersion >= 2 {
			w.Bool(s.OuterFlag)
		}
	case classExternal:
		if len(s.LogicalTypes) != 1 {
			return fmt.Errorf("%s: %d data types, want 1", field, len(s.LogicalTypes))
		}
		w.Raw(s.LogicalTypes[0])
		w.Bool(s.OuterFlag)
	}
	return writeDelegate(w, s.Nested, field, depth)
}

// writeDelegate writes NestedSerializersSnapshotDelegate (version 1).
func writeDelegate(w *javaio.Writer, nested []*Snapshot, field string, depth int) error {
	if len(nested) > maxNestedCount {
		return fmt.Errorf("%s: %d nested serializers, at most %d", field, len(nested), maxNestedCount)
	}
	w.I32(nestedDelegateMagic)
	w.I32(1)
	w.I32(int32(len(nested)))
	for i, n := range nested {
		if err := writeVersioned(w, n, fmt.Sprintf("%s.nested[%d]", field, i), depth+1); err != nil {
			return err
		}
	}
	return w.Err()
}

// writePojo writes PojoSerializerSnapshot version 2: the POJO class, the fields map (key frame
// {UTF declaring class, UTF name}, value frame the field serializer's versioned snapshot), then
// the two subclass maps as read.
func writePojo(w *javaio.Writer, s *Snapshot, field string, depth int) error {
	if s.Version != 2 {
		return fmt.Errorf("%s: POJO snapshot version %d, want 2", field, s.Version)
	}
	if len(s.Maps) != 2 {
		return fmt.Errorf("%s: %d subclass maps, want 2 (registered, non-registered)", field, len(s.Maps))
	}
	w.UTF(s.TypeClass)
	entries := make([]OptionalEntry, 0, len(s.PojoFields))
	for _, f := range s.PojoFields {
		e := OptionalEntry{Name: f.Entry, KeyPresent: f.Present, ValuePresent: f.Snapshot != nil}
		if e.Name == "" {
			e.Name = f.Name
		}
		if f.Present {
			var kb bytes.Buffer
			kw := javaio.NewWriter(&kb)
			kw.UTF(f.Declaring)
			kw.UTF(f.Name)
			if kw.Err() != nil {
				return fmt.Errorf("%s: field %q key: %w", field, f.Name, kw.Err())
			}
			e.Key = kb.Bytes()
		}
		if f.Snapshot != nil {
			var vb bytes.Buffer
			if err := writeVersioned(javaio.NewWriter(&vb), f.Snapshot, field+".field["+f.Name+"]", depth+1); err != nil {
				return err
			}
			e.Value = vb.Bytes()
		}
		entries = append(entries, e)
	}
	writeOptionalMap(w, entries)
	for _, m := range s.Maps {
		writeOptionalMap(w, m)
	}
	return w.Err()
}

// writeOptionalMap writes a LinkedOptionalMap (see readPojo for the layout): every present key
// and value framed by its i32 length.
func writeOptionalMap(w *javaio.Writer, m []OptionalEntry) {
	w.I64(optionalMapHeader)
	w.I32(int32(len(m)))
	for _, e := range m {
		w.UTF(e.Name)
		w.Bool(e.KeyPresent)
		if e.KeyPresent {
			w.I32(int32(len(e.Key)))
			w.Raw(e.Key)
		}
		w.Bool(e.ValuePresent)
		if e.ValuePresent {
			w.I32(int32(len(e.Value)))
			w.Raw(e.Value)
		}
	}
}

// Constructors for the snapshots a schema change writes.

// basicClasses maps the Java types whose serializers are parameterless to their snapshot class.
var basicClasses = map[string]string{
	"Integer": "org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot",
	"Long":    "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot",
	"Short":   "org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot",
	"Byte":    "org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot",
	"Float":   "org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot",
	"Double":  "org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot",
	"Boolean": "org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot",
	"String":  "org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot",
}

// BasicSnapshot returns the snapshot Flink 2.x writes for the serializer of a boxed primitive or
// String (SimpleTypeSerializerSnapshot, version 3, empty payload): javaType is Integer, Long,
// Short, Byte, Float, Double, Boolean or String.
func BasicSnapshot(javaType string) (*Snapshot, bool) {
	c, ok := basicClasses[javaType]
	if !ok {
		return nil, false
	}
	return &Snapshot{Class: c, Version: 3, Kind: KindSimple}, true
}

// BasicType is the inverse of BasicSnapshot: the Java type of a simple snapshot, or "".
func BasicType(s *Snapshot) string {
	if s == nil || s.Kind != KindSimple {
		return ""
	}
	for t, c := range basicClasses {
		if c == s.Class {
			return t
		}
	}
	return ""
}

// IsRow reports whether s is a RowSerializer snapshot (position-based org.apache.flink.types.Row).
func (s *Snapshot) IsRow() bool { return s != nil && s.Class == classRow }

// IsPojo reports whether s is a PojoSerializer snapshot.
func (s *Snapshot) IsPojo() bool { return s != nil && s.Class == classPojo }
