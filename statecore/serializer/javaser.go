package serializer

import (
	"fmt"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Some Flink snapshots embed objects written with Java Object Serialization
// (InstantiationUtil.serializeObject): RowDataSerializer writes each field's LogicalType that way.
// Nothing in front says how long such a stream is, so to find the bytes after it we walk its
// grammar (Java Object Serialization Specification, chapter 6) without building objects:
//
//	stream  := AC ED 00 05 content
//	content := TC_OBJECT classDesc fieldValues... | TC_STRING UTF | TC_ARRAY classDesc i32 n values
//	         | TC_ENUM classDesc TC_STRING | TC_CLASS classDesc | TC_REFERENCE i32 handle | TC_NULL
//	         | TC_BLOCKDATA u8 n bytes | TC_BLOCKDATALONG i32 n bytes | ...
//	classDesc := TC_CLASSDESC UTF name i64 suid u8 flags u16 nFields fields annotation superDesc
//	           | TC_PROXYCLASSDESC ... | TC_REFERENCE i32 handle | TC_NULL
//
// Class descriptors are remembered by handle, because later objects refer back to them and their
// field lists say how to walk the values.

const (
	tcNull           = 0x70
	tcReference      = 0x71
	tcClassDesc      = 0x72
	tcObject         = 0x73
	tcString         = 0x74
	tcArray          = 0x75
	tcClass          = 0x76
	tcBlockData      = 0x77
	tcEndBlockData   = 0x78
	tcReset          = 0x79
	tcBlockDataLong  = 0x7A
	tcException      = 0x7B
	tcLongString     = 0x7C
	tcProxyClassDesc = 0x7D
	tcEnum           = 0x7E
	baseHandle       = 0x7E0000

	scWriteMethod    = 0x01
	scSerializable   = 0x02
	scExternalizable = 0x04
	scBlockData      = 0x08

	maxJavaSerDepth   = 256
	maxJavaSerHandles = 1 << 16
)

type jsField struct {
	code byte
	name string
}

type jsClass struct {
	name   string
	flags  byte
	fields []jsField
	super  *jsClass
}

// javaSerSkipper walks one serialization stream and records its bytes. It also builds the values
// it walks (strings, enum constants, objects with their primitive and object fields), which
// logicaltype.go reads; skipping needs only the grammar.
type javaSerSkipper struct {
	r       *javaio.Reader
	field   string
	buf     []byte
	handles []any // *jsClass for class descriptors, the value for objects, strings, enums, arrays
	depth   int
}

// jsObject is a deserialized object: its class, its serializable fields by name (superclass
// fields included) and what its class's writeObject wrote after them (ArrayList: the elements).
type jsObject struct {
	class  string
	fields map[string]any
	extra  []any
}

// jsClassValue is a java.lang.Class object (TC_CLASS), by the class's name.
type jsClassValue struct{ name string }

// jsEnum is an enum constant.
type jsEnum struct{ class, name string }

func (s *javaSerSkipper) u8() byte {
	v := s.r.U8(s.field)
	s.buf = append(s.buf, v)
	return v
}
func (s *javaSerSkipper) u16() uint16 {
	v := s.r.U16(s.field)
	s.buf = append(s.buf, byte(v>>8), byte(v))
	return v
}
func (s *javaSerSkipper) i32() int32 {
	v := s.r.I32(s.field)
	s.buf = append(s.buf, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	return v
}
func (s *javaSerSkipper) raw(n int) {
	b := s.r.Bytes(s.field, n)
	s.buf = append(s.buf, b...)
}
func (s *javaSerSkipper) utf() string {
	n := int(s.u16())
	b := s.r.Bytes(s.field, n)
	s.buf = append(s.buf, b...)
	return string(b)
}
func (s *javaSerSkipper) fail(format string, args ...any) {
	s.r.Failf(s.field, "Java serialization stream: "+format, args...)
}
func (s *javaSerSkipper) ok() bool { return s.r.Err() == nil }

func (s *javaSerSkipper) newHandle(v any) int {
	if len(s.handles) >= maxJavaSerHandles {
		s.fail("more than %d handles", maxJavaSerHandles)
		return -1
	}
	s.handles = append(s.handles, v)
	return len(s.handles) - 1
}

func (s *javaSerSkipper) setHandle(h int, v any) {
	if h >= 0 && h < len(s.handles) {
		s.handles[h] = v
	}
}

// skipJavaSerStream reads one complete serialization stream holding one object and returns its bytes.
func skipJavaSerStream(r *javaio.Reader, field string) []byte {
	s := &javaSerSkipper{r: r, field: field}
	off := r.Offset()
	if m, v := s.u16(), s.u16(); s.ok() && (m != 0xACED || v != 5) {
		r.FailAt(off, field, "Java serialization stream header %04X %04X, want ACED 0005", m, v)
		return nil
	}
	s.content()
	if !s.ok() {
		return nil
	}
	return s.buf
}

func (s *javaSerSkipper) content() any {
	if !s.ok() {
		return nil
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > maxJavaSerDepth {
		s.fail("nested deeper than %d", maxJavaSerDepth)
		return nil
	}
	tc := s.u8()
	switch tc {
	case tcNull:
	case tcReference:
		h := s.i32() - baseHandle
		if h >= 0 && int(h) < len(s.handles) {
			return s.handles[h]
		}
	case tcClassDesc, tcProxyClassDesc:
		s.classDescBody(tc)
	case tcObject:
		c := s.classDesc()
		o := &jsObject{fields: map[string]any{}}
		if c != nil {
			o.class = c.name
		}
		s.newHandle(o)
		s.objectData(c, o)
		return o
	case tcString:
		h := s.newHandle(nil)
		str := s.utf()
		s.setHandle(h, str)
		return str
	case tcLongString:
		s.newHandle(nil)
		hi, lo := s.i32(), s.i32()
		if hi != 0 || lo < 0 {
			s.fail("long string too long")
			return nil
		}
		s.raw(int(lo))
	case tcArray:
		c := s.classDesc()
		h := s.newHandle(nil)
		n := s.i32()
		if n < 0 || n > 1<<24 {
			s.fail("array length %d", n)
			return nil
		}
		if c == nil || len(c.name) < 2 {
			s.fail("array without class")
			return nil
		}
		var arr []any
		for i := int32(0); i < n && s.ok(); i++ {
			arr = append(arr, s.value(c.name[1]))
		}
		s.setHandle(h, arr)
		return arr
	case tcClass:
		c := s.classDesc()
		h := s.newHandle(nil)
		if c != nil {
			v := jsClassValue{c.name}
			s.setHandle(h, v)
			return v
		}
	case tcEnum:
		c := s.classDesc()
		e := &jsEnum{}
		if c != nil {
			e.class = c.name
		}
		s.newHandle(e)
		e.name, _ = s.content().(string) // the constant's name, a TC_STRING
		return e
	case tcBlockData:
		s.raw(int(s.u8()))
	case tcBlockDataLong:
		n := s.i32()
		if n < 0 {
			s.fail("negative block length")
			return nil
		}
		s.raw(int(n))
	case tcReset:
		s.handles = s.handles[:0]
	default:
		s.fail("unexpected type code 0x%02X", tc)
	}
	return nil
}

// classDesc reads a class descriptor position (new, reference or null) and returns it.
func (s *javaSerSkipper) classDesc() *jsClass {
	tc := s.u8()
	switch tc {
	case tcNull:
		return nil
	case tcReference:
		h := s.i32() - baseHandle
		var c *jsClass
		if h >= 0 && int(h) < len(s.handles) {
			c, _ = s.handles[h].(*jsClass)
		}
		if c == nil {
			if s.ok() {
				s.fail("reference to unknown class descriptor handle %#x", h+baseHandle)
			}
			return nil
		}
		return c
	case tcClassDesc, tcProxyClassDesc:
		return s.classDescBody(tc)
	}
	if s.ok() {
		s.fail("want a class descriptor, got type code 0x%02X", tc)
	}
	return nil
}

func (s *javaSerSkipper) classDescBody(tc byte) *jsClass {
	c := &jsClass{}
	if tc == tcProxyClassDesc {
		s.newHandle(c)
		n := s.i32()
		if n < 0 || n > 1<<10 {
			s.fail("proxy interface count %d", n)
			return nil
		}
		for i := int32(0); i < n && s.ok(); i++ {
			s.utf()
		}
		c.flags = scSerializable
	} else {
		c.name = s.utf()
		s.raw(8) // serialVersionUID
		s.newHandle(c)
		c.flags = s.u8()
		n := int(s.u16())
		for i := 0; i < n && s.ok(); i++ {
			f := jsField{code: s.u8()}
			f.name = s.utf()
			if f.code == 'L' || f.code == '[' {
				s.content() // the field's type name: TC_STRING or TC_REFERENCE
			}
			c.fields = append(c.fields, f)
		}
	}
	s.annotation()
	c.super = s.classDesc()
	if !s.ok() {
		return nil
	}
	return c
}

// annotation reads contents up to and including TC_ENDBLOCKDATA and returns the values among
// them (block data is skipped).
func (s *javaSerSkipper) annotation() []any {
	var out []any
	for s.ok() {
		b := s.r.Peek1()
		if b < 0 {
			s.u8() // records the EOF error
			return out
		}
		if byte(b) == tcEndBlockData {
			s.u8()
			return out
		}
		if v := s.content(); v != nil {
			out = append(out, v)
		}
	}
	return out
}

func (s *javaSerSkipper) objectData(c *jsClass, o *jsObject) {
	var chain []*jsClass
	for k := c; k != nil; k = k.super {
		chain = append(chain, k)
		if len(chain) > maxJavaSerDepth {
			s.fail("class hierarchy deeper than %d", maxJavaSerDepth)
			return
		}
	}
	for i := len(chain) - 1; i >= 0 && s.ok(); i-- {
		k := chain[i]
		switch {
		case k.flags&scExternalizable != 0:
			if k.flags&scBlockData == 0 {
				s.fail("class %s uses the pre-1.2 externalizable format", k.name)
				return
			}
			o.extra = append(o.extra, s.annotation()...)
		default:
			for _, f := range k.fields {
				o.fields[f.name] = s.value(f.code)
			}
			if k.flags&scWriteMethod != 0 {
				o.extra = append(o.extra, s.annotation()...)
			}
		}
	}
}

func (s *javaSerSkipper) value(code byte) any {
	switch code {
	case 'Z':
		return s.u8() != 0
	case 'B':
		return int64(int8(s.u8()))
	case 'C', 'S':
		return int64(int16(s.u16()))
	case 'I':
		return int64(s.i32())
	case 'F':
		s.raw(4)
	case 'J', 'D':
		s.raw(8)
	case 'L', '[':
		return s.content()
	default:
		s.fail("unknown field type code %q", code)
	}
	return nil
}

// readRowData reads RowDataSerializerSnapshot version 3:
//
//	+-------+-------------------------------------------+----------------------------------+
//	| i32 n | n x LogicalType as a complete Java        | NestedSerializersSnapshotDelegate |
//	|       | serialization stream (AC ED 00 05 ...)    | (the n field serializers)        |
//	+-------+-------------------------------------------+----------------------------------+
func readRowData(r *javaio.Reader, s *Snapshot, field string, c readCtx) {
	if s.Version != 3 {
		r.FailAt(s.Offset, field, "RowData snapshot version %d, want 3", s.Version)
		return
	}
	n := r.Count(field+".arity", maxNestedCount)
	for i := 0; i < n && r.Err() == nil; i++ {
		s.LogicalTypes = append(s.LogicalTypes, skipJavaSerStream(r, fmt.Sprintf("%s.type[%d]", field, i)))
	}
	if r.Err() != nil {
		return
	}
	s.Nested = readDelegate(r, field, c)
	if r.Err() == nil && len(s.Nested) != n {
		r.Failf(field, "RowData snapshot has %d types but %d field serializers", n, len(s.Nested))
	}
}
