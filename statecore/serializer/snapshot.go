package serializer

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Envelope and composite constants, checked with javap against the Flink 2.3.0 jars.
const (
	// TopLevelEnvelopeVersion is TypeSerializerSnapshotSerializationProxy.VERSION.
	TopLevelEnvelopeVersion = 2
	// compositeMagic opens a CompositeTypeSerializerSnapshot payload (version >= 3).
	compositeMagic = 911108
	// compositeVersion is CompositeTypeSerializerSnapshot.getCurrentVersion() (final).
	compositeVersion = 3
	// simpleVersion is SimpleTypeSerializerSnapshot's current version, whose payload is empty.
	simpleVersion = 3
	// nestedDelegateMagic opens NestedSerializersSnapshotDelegate.
	nestedDelegateMagic = 1333245
	// optionalMapHeader opens a LinkedOptionalMapSerializer map (POJO snapshots).
	optionalMapHeader int64 = 5440760593776
	// maxNested bounds nesting depth, so a hostile snapshot cannot recurse without end.
	maxNested = 64
	// maxNestedCount bounds the number of nested serializers of one composite (Flink writes an
	// i32; real composites have a handful, rows and POJOs a few hundred at most).
	maxNestedCount = 1 << 16
)

// Snapshot is one parsed TypeSerializerSnapshot: the class, its version and what its payload
// says. The payload layout depends on the class; Kind says which layout was read.
type Snapshot struct {
	Class   string
	Version int32
	Kind    Kind

	// OuterVersion is the composite's outer snapshot version (Kind == KindComposite).
	OuterVersion int32
	// Nested are the nested serializer snapshots: a composite's, a POJO's fields (in field
	// order), a RowData's fields.
	Nested []*Snapshot

	// Class-specific payload.
	TypeClass   string      // Tuple class, array component class, Generic/Value type class, POJO class
	RowKind     bool        // RowSerializer: a RowKind is written in front of the null mask
	NullPadding int32       // NullableSerializer: bytes written for null
	PojoFields  []PojoField // PojoSerializerSnapshot, in serialization order
	LegacyName  string      // SimpleTypeSerializerSnapshot version 2: the serializer class name
	Enum        []string    // EnumSerializer constants, in ordinal order
	// LogicalTypes are the Java-serialized LogicalType objects of a RowDataSerializer snapshot,
	// one complete Java serialization stream each, kept as bytes.
	LogicalTypes [][]byte
	// Precision and Scale of SQL DecimalData and TimestampData serializers; Arity of a
	// BinaryRowData serializer.
	Precision, Scale, Arity int32
	// OuterFlag is the boolean outer snapshot of TwoPhaseCommitSinkFunction's and
	// LinkedListSerializer's snapshots (outer version >= 2).
	OuterFlag bool
	// Maps are optional maps this package keeps without interpreting them: a POJO's registered
	// and non-registered subclass maps, a Kryo snapshot's three maps. Written back as read.
	Maps [][]OptionalEntry

	// Offset is where the snapshot's class name starts in its stream, End where its payload
	// ends: [Offset, End) are the bytes of the versioned snapshot (a top-level one has its i32
	// envelope version in the 4 bytes before Offset).
	Offset, End int64
}

// Kind is the payload layout of a snapshot class.
type Kind int

// Payload layouts.
const (
	KindSimple        Kind = iota // SimpleTypeSerializerSnapshot: empty (v3) or UTF class name (v2)
	KindComposite                 // CompositeTypeSerializerSnapshot: outer snapshot + nested delegate
	KindPojo                      // PojoSerializerSnapshot
	KindGeneric                   // GenericTypeSerializerSnapshot: UTF type class
	KindEnum                      // EnumSerializerSnapshot
	KindRowData                   // RowDataSerializerSnapshot
	KindKryo                      // KryoSerializerSnapshot
	KindDecimalData               // DecimalDataSerializer: i32 precision, i32 scale
	KindTimestampData             // TimestampDataSerializer: i32 precision
	KindBinaryRowData             // BinaryRowDataSerializer: i32 arity
	KindJavaObjects               // ArrayData/MapData serializers: Java-serialized types and serializers
	KindSortedMap                 // SortedMapSerializer: Java-serialized comparator, nested delegate
)

// PojoField is one field of a POJO snapshot.
type PojoField struct {
	// Entry is the optional map's key name; Flink writes the field name (or
	// "missing-field-at-<i>" when the field is gone from the class).
	Entry     string
	Name      string    // the field name (Entry when the key frame is absent)
	Declaring string    // the declaring class ("" when the field is gone)
	Present   bool      // the field still exists in the class
	Snapshot  *Snapshot // the field serializer's snapshot (nil when absent)
}

// Short is the class name without the package, for messages and type names.
func (s *Snapshot) Short() string {
	c := s.Class
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] == '.' {
			return c[i+1:]
		}
	}
	return c
}

// ReadTop reads a snapshot written by TypeSerializerSnapshotSerializationUtil.writeSerializerSnapshot,
// the form used for the key serializer of a keyed-state file and for every serializer of a state
// meta info:
//
//	+--------+----------------+-------------+--------------------------------+
//	| i32 2  | UTF class name | i32 version | payload (class-specific, no    |
//	|        |                |             | length: see the payload table) |
//	+--------+----------------+-------------+--------------------------------+
//
// The payload has no length, so an unknown class stops the read: the bytes after it cannot be
// found without understanding it.
func ReadTop(r *javaio.Reader, field string) *Snapshot {
	return ReadTopAssuming(r, field, nil)
}

// ReadVersioned reads a nested snapshot (TypeSerializerSnapshot.writeVersionedSnapshot): the
// top-level form without the envelope version.
//
//	+----------------+-------------+---------+
//	| UTF class name | i32 version | payload |
//	+----------------+-------------+---------+
func ReadVersioned(r *javaio.Reader, field string) *Snapshot {
	return readVersioned(r, field, readCtx{})
}

// ReadTopAssuming is ReadTop reading every snapshot of a class in simple, which this package does
// not know, as a SimpleTypeSerializerSnapshot subclass of version 3: its payload empty. Only the
// caller can tell whether that holds (the rest of its stream must then read as it should); see
// UnknownSnapshotError.
func ReadTopAssuming(r *javaio.Reader, field string, simple map[string]bool) *Snapshot {
	off := r.Offset()
	v := r.I32(field + ".envelopeVersion")
	if r.Err() != nil {
		return nil
	}
	if v != TopLevelEnvelopeVersion {
		r.FailAt(off, field, "serializer snapshot envelope version %d, want %d (Flink 1.7+)", v, TopLevelEnvelopeVersion)
		return nil
	}
	return readVersioned(r, field, readCtx{simple: simple})
}

// readCtx is what a read carries into nested snapshots: the nesting depth, and the unknown
// classes to read as simple snapshots (ReadTopAssuming).
type readCtx struct {
	depth  int
	simple map[string]bool
}

func (c readCtx) nested() readCtx { return readCtx{c.depth + 1, c.simple} }

// UnknownSnapshotError is a snapshot class this package does not know, whose payload therefore
// has no known length.
type UnknownSnapshotError struct {
	Class   string
	Version int32
	// EmptyPossible: the class may be a SimpleTypeSerializerSnapshot subclass (version 3, as
	// SimpleTypeSerializerSnapshot writes, and no composite magic after it), whose payload is
	// empty; a reader may try that (ReadTopAssuming) when the rest of its stream can prove it.
	EmptyPossible bool
}

func (e *UnknownSnapshotError) Error() string {
	return fmt.Sprintf("unknown serializer snapshot class %q (version %d): its payload has no length, so the rest of this header cannot be read", e.Class, e.Version)
}

func readVersioned(r *javaio.Reader, field string, c readCtx) *Snapshot {
	if c.depth > maxNested {
		r.Failf(field, "serializer snapshots nested deeper than %d", maxNested)
		return nil
	}
	s := &Snapshot{Offset: r.Offset()}
	s.Class = r.UTF(field + ".class")
	s.Version = r.I32(field + ".version")
	if r.Err() != nil {
		return nil
	}
	field = field + "<" + s.Short() + ">"
	k, ok := kindOf(s.Class)
	if !ok && c.simple[s.Class] && s.Version == simpleVersion {
		s.Kind = KindSimple // a user's SimpleTypeSerializerSnapshot, as the caller assumes
		s.End = r.Offset()
		return s
	}
	if !ok {
		if !readUserComposite(r, s, field, c) {
			return nil
		}
		s.End = r.Offset()
		return s
	}
	s.Kind = k
	switch k {
	case KindSimple:
		switch {
		case s.Version >= 3:
		case s.Version == 2:
			s.LegacyName = r.UTF(field + ".serializerClass")
		default:
			r.FailAt(s.Offset, field, "simple snapshot version %d, want 2 or 3", s.Version)
		}
	case KindComposite:
		readComposite(r, s, field, c)
	case KindPojo:
		readPojo(r, s, field, c)
	case KindGeneric:
		s.TypeClass = r.UTF(field + ".typeClass")
	case KindEnum:
		readEnum(r, s, field)
	case KindRowData:
		readRowData(r, s, field, c)
	case KindKryo:
		readKryo(r, s, field)
	case KindDecimalData:
		s.Precision = r.I32(field + ".precision")
		s.Scale = r.I32(field + ".scale")
	case KindTimestampData:
		s.Precision = r.I32(field + ".precision")
	case KindBinaryRowData:
		s.Arity = r.I32(field + ".arity")
	case KindJavaObjects:
		// ArrayDataSerializer writes the element type and serializer, MapDataSerializer the key
		// and value types and serializers: each a complete Java serialization stream.
		n := 2
		if s.Class == classMapData {
			n = 4
		}
		for i := 0; i < n && r.Err() == nil; i++ {
			s.LogicalTypes = append(s.LogicalTypes, skipJavaSerStream(r, fmt.Sprintf("%s.object[%d]", field, i)))
		}
	case KindSortedMap:
		s.LogicalTypes = append(s.LogicalTypes, skipJavaSerStream(r, field+".comparator"))
		s.Nested = readDelegate(r, field, c)
	}
	if r.Err() != nil {
		return nil
	}
	s.End = r.Offset()
	return s
}

// readComposite reads a CompositeTypeSerializerSnapshot payload. Version 3 (the only one Flink
// 2.x writes) is:
//
//	+-------------+----------------+------------------+--------------+-------+-------+----------------+
//	| i32 911108  | i32 outer ver. | outer snapshot   | i32 1333245  | i32 1 | i32 n | n x versioned  |
//	| (magic)     |                | (class-specific) | (delegate)   |       |       | snapshot       |
//	+-------------+----------------+------------------+--------------+-------+-------+----------------+
//
// Versions <= 2 are legacy: the outer snapshot comes first with no magic and no outer version,
// then the delegate. Flink 2.x still reads them; so do we.
func readComposite(r *javaio.Reader, s *Snapshot, field string, c readCtx) {
	if s.Version >= compositeVersion {
		off := r.Offset()
		if m := r.I32(field + ".magic"); r.Err() == nil && m != compositeMagic {
			r.FailAt(off, field, "composite snapshot magic %d, want %d", m, compositeMagic)
			return
		}
		s.OuterVersion = r.I32(field + ".outerVersion")
	} else {
		s.OuterVersion = s.Version
	}
	if r.Err() != nil {
		return
	}
	readOuter(r, s, field)
	s.Nested = readDelegate(r, field, c)
}

// readUserComposite reads the snapshot of a class this package does not know, which is possible
// for one layout only: a CompositeTypeSerializerSnapshot subclass (a user's serializer built from
// nested ones, such as a custom window's) with an empty outer snapshot. Its version-3 payload is
// then recognised by two magic numbers:
//
//	+-------------+----------------+--------------+-------+-------+----------------+
//	| i32 911108  | i32 outer ver. | i32 1333245  | i32 1 | i32 n | n x versioned  |
//	+-------------+----------------+--------------+-------+-------+----------------+
//
// Its nested snapshots are read; its values stay opaque (NewCodec), since nothing says how the
// class combines them. Any other payload stops the read with an UnknownSnapshotError: its
// length is unknown (empty, if the class is a SimpleTypeSerializerSnapshot subclass, which the
// error says is possible when the version is 3 and no composite magic follows). It reports
// whether s was read (else r holds the error).
func readUserComposite(r *javaio.Reader, s *Snapshot, field string, c readCtx) bool {
	unknown := func(emptyPossible bool) bool {
		r.FailWith(s.Offset, field, &UnknownSnapshotError{Class: s.Class, Version: s.Version, EmptyPossible: emptyPossible})
		return false
	}
	// compositeVersion and simpleVersion are both 3: the payload decides.
	if s.Version != compositeVersion || r.AtEOF() {
		return unknown(s.Version == simpleVersion)
	}
	if m := r.I32(field + ".magic"); r.Err() != nil || m != compositeMagic {
		return r.Err() == nil && unknown(true)
	}
	s.Kind = KindComposite
	s.OuterVersion = r.I32(field + ".outerVersion")
	off := r.Offset()
	if m := r.I32(field + ".nested.magic"); r.Err() != nil || m != nestedDelegateMagic {
		if r.Err() == nil {
			r.FailAt(off, field, "composite serializer snapshot of unknown class %q (outer version %d) writes an outer snapshot of its own: its length is unknown, so the rest of this header cannot be read", s.Class, s.OuterVersion)
		}
		return false
	}
	s.Nested = readDelegateBody(r, field, off, c)
	return r.Err() == nil
}

// readOuter reads the class-specific outer snapshot of a composite (writeOuterSnapshot, checked
// with javap for every composite snapshot class in the 2.3.0 jars).
func readOuter(r *javaio.Reader, s *Snapshot, field string) {
	switch s.Class {
	case classTuple:
		s.TypeClass = r.UTF(field + ".tupleClass")
	case classGenericArray:
		s.TypeClass = r.UTF(field + ".componentClass")
	case classRow:
		// Outer version 3 implies RowKind support without writing it; 4 writes the flag.
		switch {
		case s.OuterVersion >= 4:
			s.RowKind = r.Bool(field + ".supportsRowKind")
		case s.OuterVersion == 3:
			s.RowKind = true
		}
	case classNullable:
		s.NullPadding = r.I32(field + ".nullPaddingLength")
		if r.Err() == nil && s.NullPadding < 0 {
			r.Failf(field, "negative null padding %d", s.NullPadding)
		}
	case classTwoPhaseState, classLinkedList:
		if s.OuterVersion >= 2 {
			s.OuterFlag = r.Bool(field + ".flag")
		}
	case classExternal:
		// ExternalSerializerSnapshot: the Java-serialized DataType (kept as bytes in
		// LogicalTypes[0]), then isInternalInput; the nested serializer is the internal one.
		s.LogicalTypes = append(s.LogicalTypes, skipJavaSerStream(r, field+".dataType"))
		s.OuterFlag = r.Bool(field + ".isInternalInput")
	}
}

// readDelegate reads NestedSerializersSnapshotDelegate:
//
//	+--------------+-------------+-------+---------------------------+
//	| i32 1333245  | i32 version | i32 n | n x versioned snapshot    |
//	+--------------+-------------+-------+---------------------------+
func readDelegate(r *javaio.Reader, field string, c readCtx) []*Snapshot {
	off := r.Offset()
	m := r.I32(field + ".nested.magic")
	if r.Err() != nil {
		return nil
	}
	if m != nestedDelegateMagic {
		r.FailAt(off, field+".nested", "nested-serializers magic %d, want %d", m, nestedDelegateMagic)
		return nil
	}
	return readDelegateBody(r, field, off, c)
}

// readDelegateBody reads a NestedSerializersSnapshotDelegate after its magic (at off).
func readDelegateBody(r *javaio.Reader, field string, off int64, c readCtx) []*Snapshot {
	if v := r.I32(field + ".nested.version"); r.Err() == nil && v != 1 {
		r.FailAt(off+4, field+".nested", "nested-serializers version %d, want 1", v)
		return nil
	}
	n := r.Count(field+".nested.count", maxNestedCount)
	out := make([]*Snapshot, 0, min(n, 64))
	for i := 0; i < n && r.Err() == nil; i++ {
		out = append(out, readVersioned(r, fmt.Sprintf("%s.nested[%d]", field, i), c.nested()))
	}
	return out
}

// readPojo reads PojoSerializerSnapshotData (PojoSerializerSnapshot version 2):
//
//	+---------------+----------------------+--------------------------+-----------------------------+
//	| UTF pojoClass | OptionalMap fields   | OptionalMap registered   | OptionalMap non-registered  |
//	|               |                      | subclasses               | subclasses                  |
//	+---------------+----------------------+--------------------------+-----------------------------+
//
//	OptionalMap := i64 0x000004F2C69A3D70, i32 n,
//	               n x { UTF name, bool keyPresent, [i32 len, key bytes],
//	                              bool valuePresent, [i32 len, value bytes] }
//
// For fields the key frame is {UTF declaringClass, UTF fieldName} and the value frame a versioned
// snapshot of the field serializer. The subclass maps are kept as bytes (Extra).
func readPojo(r *javaio.Reader, s *Snapshot, field string, c readCtx) {
	if s.Version != 2 {
		r.FailAt(s.Offset, field, "POJO snapshot version %d, want 2", s.Version)
		return
	}
	s.TypeClass = r.UTF(field + ".pojoClass")
	readOptionalMap(r, field+".fields", func(e OptionalEntry, off int64) {
		f := PojoField{Entry: e.Name, Name: e.Name, Present: e.KeyPresent}
		if e.KeyPresent {
			kr := frameReader(e.Key, r.Name(), off)
			f.Declaring = kr.UTF(field + ".field.declaringClass")
			f.Name = kr.UTF(field + ".field.name")
			if kr.Err() == nil && !kr.AtEOF() {
				kr.Failf(field+".field", "bytes left after the declaring class and name")
			}
			if kr.Err() != nil {
				r.FailAt(off, field, "POJO field key frame: %v", kr.Err())
				return
			}
		}
		if e.ValuePresent {
			vr := frameReader(e.Value, r.Name(), off)
			f.Snapshot = readVersioned(vr, field+".field["+e.Name+"]", c.nested())
			if vr.Err() == nil && !vr.AtEOF() {
				vr.Failf(field+".field["+e.Name+"]", "bytes left after the field serializer snapshot")
			}
			if vr.Err() != nil {
				r.FailAt(off, field, "POJO field %q serializer: %v", e.Name, vr.Err())
				return
			}
		}
		s.PojoFields = append(s.PojoFields, f)
		s.Nested = append(s.Nested, f.Snapshot)
	})
	// Subclass serializers matter only for values whose runtime class differs from the declared
	// one; the value decoder refuses those, so their maps are kept as read.
	for _, part := range []string{".registeredSubclasses", ".nonRegisteredSubclasses"} {
		s.Maps = append(s.Maps, keepOptionalMap(r, field+part))
	}
}

// OptionalEntry is one entry of a LinkedOptionalMap: its key name and the framed key and value
// (each absent when its class is gone from the classpath of the job that wrote it).
type OptionalEntry struct {
	Name                     string
	KeyPresent, ValuePresent bool
	Key, Value               []byte // the frames' contents
}

// keepOptionalMap reads an optional map whose entries this package does not interpret.
func keepOptionalMap(r *javaio.Reader, field string) []OptionalEntry {
	var out []OptionalEntry
	readOptionalMap(r, field, func(e OptionalEntry, _ int64) { out = append(out, e) })
	return out
}

func readOptionalMap(r *javaio.Reader, field string, each func(e OptionalEntry, valOff int64)) {
	off := r.Offset()
	if h := r.I64(field + ".header"); r.Err() == nil && h != optionalMapHeader {
		r.FailAt(off, field, "optional-map header %#x, want %#x", h, optionalMapHeader)
		return
	}
	n := r.Count(field+".count", maxNestedCount)
	for i := 0; i < n && r.Err() == nil; i++ {
		name := r.UTF(fmt.Sprintf("%s[%d].name", field, i))
		var key, val []byte
		keyOK := r.Bool(field + ".keyPresent")
		if keyOK {
			key = readFrame(r, field+"."+name+".key")
		}
		valOff := r.Offset()
		valOK := r.Bool(field + ".valuePresent")
		if valOK {
			valOff = r.Offset() + 4
			val = readFrame(r, field+"."+name+".value")
		}
		if r.Err() != nil {
			return
		}
		each(OptionalEntry{Name: name, KeyPresent: keyOK, ValuePresent: valOK, Key: key, Value: val}, valOff)
	}
}

// maxFrame bounds one framed snapshot inside a POJO snapshot.
const maxFrame = 16 << 20

func readFrame(r *javaio.Reader, field string) []byte {
	n := r.Count(field+".length", maxFrame)
	return r.Bytes(field, n)
}

// readEnum reads EnumSerializerSnapshot version 3: UTF enum class, i32 n, n x UTF constant.
func readEnum(r *javaio.Reader, s *Snapshot, field string) {
	if s.Version != 3 {
		r.FailAt(s.Offset, field, "enum snapshot version %d, want 3", s.Version)
		return
	}
	s.TypeClass = r.UTF(field + ".enumClass")
	n := r.Count(field+".count", maxNestedCount)
	for i := 0; i < n && r.Err() == nil; i++ {
		s.Enum = append(s.Enum, r.UTF(fmt.Sprintf("%s.constant[%d]", field, i)))
	}
}

// readKryo reads KryoSerializerSnapshot version 2 (KryoSerializerSnapshotData):
//
//	+----------------+--------------------------+-------------------------+----------------------------+
//	| UTF type class | OptionalMap registrations | OptionalMap default     | OptionalMap default        |
//	|                |                          | serializers (Java-ser.) | serializer classes         |
//	+----------------+--------------------------+-------------------------+----------------------------+
//
// Every map entry is framed (length-prefixed), so the snapshot can be skipped without
// understanding Kryo; the values it describes are shown opaque.
func readKryo(r *javaio.Reader, s *Snapshot, field string) {
	if s.Version != 2 {
		r.FailAt(s.Offset, field, "Kryo snapshot version %d, want 2", s.Version)
		return
	}
	s.TypeClass = r.UTF(field + ".typeClass")
	for _, part := range []string{".registrations", ".defaultSerializers", ".defaultSerializerClasses"} {
		s.Maps = append(s.Maps, keepOptionalMap(r, field+part))
	}
}

// frameReader reads a frame already in memory. Its buffer is sized to the frame, not to
// javaio's default 64 KiB, so that a snapshot with many small frames (a POJO with thousands of
// fields, nested) costs memory in proportion to its bytes.
func frameReader(b []byte, name string, off int64) *javaio.Reader {
	return javaio.NewReader(bufio.NewReaderSize(bytes.NewReader(b), max(16, len(b))), name, off)
}
