package serializer

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// This file builds the snapshots Flink 2.x writes for declared types, so that a savepoint can be
// created from a declaration (`savepoint create --spec`) rather than copied from one Flink wrote.
// Each shape below was read back from snapshots Flink 2.3.0 wrote (the fixtures' keyed headers;
// TestDeclaredSnapshotsAreFlinks compares the bytes):
//
//	Integer .. String, Character, int[] ..   SimpleTypeSerializerSnapshot v3, empty payload
//	Integer[] .. (object arrays)             GenericArraySerializerSnapshot v3, outer 1, UTF element class
//	VoidNamespace, TimeWindow, GlobalWindow  the same (the namespaces of keyed state)
//	TupleN<A, B, ..>                         TupleSerializerSnapshot v3, outer 2, UTF tuple class
//	Row<A, B, ..>                            RowSerializerSnapshot v3, outer 4, bool supportsRowKind
//	                                         (true: Types.ROW's serializer keeps each row's kind)
//	List<T>, Map<K, V>                       ListSerializerSnapshot / MapSerializerSnapshot v3, outer 1
//	POJO                                     PojoSerializerSnapshot v2: class, fields sorted by
//	                                         name (PojoTypeInfo's order), each {declaring class,
//	                                         name} -> field snapshot, two empty subclass maps
//	TTL wrapper                              TtlSerializerSnapshot v3, outer 2: Long, the value
//	timer                                    TimerSerializerSnapshot v3, outer 2: key, namespace

// declaredSimple are the type names of parameterless serializers besides basicClasses' (the
// boxed primitives and String).
var declaredSimple = map[string]string{
	"Character":     "org.apache.flink.api.common.typeutils.base.CharSerializer$CharSerializerSnapshot",
	"byte[]":        "org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot",
	"int[]":         "org.apache.flink.api.common.typeutils.base.array.IntPrimitiveArraySerializer$IntPrimitiveArraySerializerSnapshot",
	"long[]":        "org.apache.flink.api.common.typeutils.base.array.LongPrimitiveArraySerializer$LongPrimitiveArraySerializerSnapshot",
	"short[]":       "org.apache.flink.api.common.typeutils.base.array.ShortPrimitiveArraySerializer$ShortPrimitiveArraySerializerSnapshot",
	"boolean[]":     "org.apache.flink.api.common.typeutils.base.array.BooleanPrimitiveArraySerializer$BooleanPrimitiveArraySerializerSnapshot",
	"double[]":      "org.apache.flink.api.common.typeutils.base.array.DoublePrimitiveArraySerializer$DoublePrimitiveArraySerializerSnapshot",
	"float[]":       "org.apache.flink.api.common.typeutils.base.array.FloatPrimitiveArraySerializer$FloatPrimitiveArraySerializerSnapshot",
	"String[]":      "org.apache.flink.api.common.typeutils.base.array.StringArraySerializer$StringArraySerializerSnapshot",
	"VoidNamespace": "org.apache.flink.runtime.state.VoidNamespaceSerializer$VoidNamespaceSerializerSnapshot",
	"TimeWindow":    "org.apache.flink.streaming.api.windowing.windows.TimeWindow$Serializer$TimeWindowSerializerSnapshot",
	"GlobalWindow":  "org.apache.flink.streaming.api.windowing.windows.GlobalWindow$Serializer$GlobalWindowSerializerSnapshot",
}

// objectArrayElems are the element types of object arrays (Types.OBJECT_ARRAY of a boxed type:
// GenericArraySerializer over the element's serializer); String[] has a serializer of its own.
var objectArrayElems = map[string]bool{"Integer": true, "Long": true, "Short": true, "Byte": true,
	"Float": true, "Double": true, "Boolean": true, "Character": true}

// DeclaredField is one field of a declared POJO.
type DeclaredField struct {
	Name string
	Type *Snapshot
}

// Declare returns the snapshot of a type named as Java declares it: a basic type, String,
// Character, a primitive array (int[] ...), String[], an object array of a boxed type (Integer[]
// ...), TupleN<..>, Row<..> (a position-based
// org.apache.flink.types.Row, Types.ROW(..)), List<T>, Map<K, V>, or a
// namespace (VoidNamespace, TimeWindow, GlobalWindow). POJOs are built by DeclarePojo.
func Declare(name string) (*Snapshot, error) {
	p := &typeParser{s: name}
	s, err := p.parse(0)
	if err != nil {
		return nil, fmt.Errorf("type %q: %w", name, err)
	}
	if p.skip(); p.i != len(p.s) {
		return nil, fmt.Errorf("type %q: unexpected %q at %d", name, p.s[p.i:], p.i)
	}
	return s, nil
}

// DeclarePojo returns the snapshot of POJO class with fields (in any order: Flink orders them by
// name).
func DeclarePojo(class string, fields []DeclaredField) (*Snapshot, error) {
	if class == "" {
		return nil, fmt.Errorf("POJO without a class name")
	}
	fs := slices.Clone(fields)
	slices.SortFunc(fs, func(a, b DeclaredField) int { return strings.Compare(a.Name, b.Name) })
	s := &Snapshot{Class: classPojo, Version: 2, Kind: KindPojo, TypeClass: class, Maps: [][]OptionalEntry{nil, nil}}
	for i, f := range fs {
		if f.Name == "" || f.Type == nil {
			return nil, fmt.Errorf("POJO %s: field %d needs a name and a type", class, i)
		}
		if i > 0 && fs[i-1].Name == f.Name {
			return nil, fmt.Errorf("POJO %s: field %q declared twice", class, f.Name)
		}
		s.PojoFields = append(s.PojoFields, PojoField{Entry: f.Name, Name: f.Name, Declaring: class, Present: true, Snapshot: f.Type})
		s.Nested = append(s.Nested, f.Type)
	}
	return s, nil
}

// DeclareTTL wraps v in the serializer snapshot of a TTL state's values (last-access timestamp,
// value).
func DeclareTTL(v *Snapshot) *Snapshot {
	long, _ := Declare("Long")
	return composite(classTtl, 2, long, v)
}

// DeclareList and DeclareMap are the serializers of list and map state values.
func DeclareList(elem *Snapshot) *Snapshot { return composite(classList, 1, elem) }

// DeclareMap is the serializer of a map state's value (or a Map value).
func DeclareMap(k, v *Snapshot) *Snapshot { return composite(classMap, 1, k, v) }

// DeclareTimer is the serializer of a timer queue: the key's and the namespace's.
func DeclareTimer(key, ns *Snapshot) *Snapshot { return composite(classTimer, 2, key, ns) }

func composite(class string, outer int32, nested ...*Snapshot) *Snapshot {
	return &Snapshot{Class: class, Version: compositeVersion, Kind: KindComposite, OuterVersion: outer, Nested: nested}
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *typeParser) parse(depth int) (*Snapshot, error) {
	if depth > maxNested {
		return nil, fmt.Errorf("nested deeper than %d", maxNested)
	}
	p.skip()
	start := p.i
	for p.i < len(p.s) && !strings.ContainsRune("<>, ", rune(p.s[p.i])) {
		p.i++
	}
	name := p.s[start:p.i]
	p.skip()
	var args []*Snapshot
	if p.i < len(p.s) && p.s[p.i] == '<' {
		p.i++
		for {
			a, err := p.parse(depth + 1)
			if err != nil {
				return nil, err
			}
			args = append(args, a)
			p.skip()
			if p.i >= len(p.s) {
				return nil, fmt.Errorf("%s<...: missing '>'", name)
			}
			c := p.s[p.i]
			p.i++
			if c == '>' {
				break
			}
			if c != ',' {
				return nil, fmt.Errorf("unexpected %q at %d", c, p.i-1)
			}
		}
	}
	if s, ok := BasicSnapshot(name); ok && args == nil {
		return s, nil
	}
	if c, ok := declaredSimple[name]; ok && args == nil {
		return &Snapshot{Class: c, Version: 3, Kind: KindSimple}, nil
	}
	if elem, ok := strings.CutSuffix(name, "[]"); ok && objectArrayElems[elem] && args == nil {
		e, ok := BasicSnapshot(elem)
		if !ok { // Character
			e = &Snapshot{Class: declaredSimple[elem], Version: 3, Kind: KindSimple}
		}
		s := composite(classGenericArray, 1, e)
		s.TypeClass = "java.lang." + elem
		return s, nil
	}
	switch {
	case name == "List" && len(args) == 1:
		return DeclareList(args[0]), nil
	case name == "Map" && len(args) == 2:
		return DeclareMap(args[0], args[1]), nil
	case name == "Row" && len(args) > 0:
		s := composite(classRow, 4, args...)
		s.RowKind = true
		return s, nil
	case strings.HasPrefix(name, "Tuple"):
		n, err := strconv.Atoi(name[len("Tuple"):])
		if err == nil && n >= 1 && n <= 25 && len(args) == n {
			s := composite(classTuple, 2, args...)
			s.TypeClass = "org.apache.flink.api.java.tuple." + name
			return s, nil
		}
		return nil, fmt.Errorf("%s needs %s type arguments (Tuple1 .. Tuple25)", name, strings.TrimPrefix(name, "Tuple"))
	case name == "":
		return nil, fmt.Errorf("missing type name at %d", start)
	}
	return nil, fmt.Errorf("unknown type %s (with %d type arguments); want Integer, Long, Short, Byte, Float, Double, "+
		"Boolean, Character, String, a primitive array, String[], an object array (Integer[] ..), TupleN<..>, Row<..>, List<T>, Map<K, V>, VoidNamespace, "+
		"TimeWindow, GlobalWindow, or a POJO declared with its class and fields", name, len(args))
}
