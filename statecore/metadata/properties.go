package metadata

import (
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Properties is what the V4+ tail says about the snapshot: Flink's CheckpointProperties, read
// from its Java serialization. The tail itself stays in Metadata.Tail, verbatim.
//
// A Flink 2.3.0 canonical savepoint's tail (745 bytes) looks like this:
//
//	AC ED 00 05                             stream magic, version
//	73 72 "...CheckpointProperties" suid=2  TC_OBJECT, TC_CLASSDESC, 8 fields:
//	   Z discardCancelled ... Z unclaimed   7 booleans (primitives first, sorted by name)
//	   L checkpointType "L...SnapshotType;"
//	   78 70                                end of annotations, no superclass
//	00 00 00 00 01 00 00                    the 7 boolean values
//	73 72 "...SavepointType" suid flags     checkpointType = SavepointType{formatType, name,
//	   ...                                  postCheckpointAction}
//	7E 72 "...SavepointFormatType" ...      TC_ENUM ... "CANONICAL" or "NATIVE"
//	74 "Savepoint"                          TC_STRING name
//	7E 72 "...$PostCheckpointAction" ...    TC_ENUM ... "NONE", "SUSPEND" or "TERMINATE"
type Properties struct {
	// Type is the simple class name of the snapshot type: SavepointType or CheckpointType.
	Type string
	// Name is the type's name: "Savepoint", "Suspend Savepoint", "Terminate Savepoint",
	// "Checkpoint", "Full Checkpoint".
	Name string
	// FormatType is CANONICAL or NATIVE for savepoints, "" for checkpoints.
	FormatType string
	// PostCheckpointAction is NONE, SUSPEND or TERMINATE for savepoints.
	PostCheckpointAction string
	// SharingFilesStrategy is FORWARD_BACKWARD, FORWARD or NO_SHARING for checkpoints.
	SharingFilesStrategy string

	Forced, DiscardSubsumed, DiscardFinished, DiscardCancelled, DiscardFailed, DiscardSuspended, Unclaimed bool
}

// IsSavepoint reports whether the snapshot is a savepoint (of any kind) rather than a checkpoint.
func (p *Properties) IsSavepoint() bool { return p.Type == "SavepointType" }

// ParseProperties reads the CheckpointProperties object of a V4+ tail. It returns nil, nil for a
// tail holding null, and nil, nil for V3 files (no tail). name is used in errors.
func (m *Metadata) ParseProperties(name string) (*Properties, error) {
	if m.Version < 4 {
		return nil, nil
	}
	// Offsets in errors count from the start of the tail, which is what the name says.
	r := javaio.NewBytesReader(m.Tail, name+" (CheckpointProperties tail)", 0)
	d := &javaDecoder{r: r}
	if magic := r.U16("properties.magic"); r.Err() == nil && magic != 0xACED {
		r.FailAt(0, "properties.magic", "want AC ED (Java serialization), got %04X", magic)
	}
	if v := r.U16("properties.version"); r.Err() == nil && v != 5 {
		r.FailAt(2, "properties.version", "want Java serialization version 5, got %d", v)
	}
	v := d.content()
	if err := r.Err(); err != nil {
		return nil, err
	}
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(*javaObject)
	if !ok || obj.class.name != "org.apache.flink.runtime.checkpoint.CheckpointProperties" {
		return nil, fmt.Errorf("%s: properties: want a CheckpointProperties object, got %s", name, describe(v))
	}
	p := &Properties{}
	for field, dst := range map[string]*bool{
		"forced": &p.Forced, "discardSubsumed": &p.DiscardSubsumed, "discardFinished": &p.DiscardFinished,
		"discardCancelled": &p.DiscardCancelled, "discardFailed": &p.DiscardFailed,
		"discardSuspended": &p.DiscardSuspended, "unclaimed": &p.Unclaimed,
	} {
		*dst, _ = obj.fields[field].(bool)
	}
	if t, ok := obj.fields["checkpointType"].(*javaObject); ok {
		p.Type = t.class.name[strings.LastIndexByte(t.class.name, '.')+1:]
		p.Name, _ = t.fields["name"].(string)
		p.FormatType = enumName(t.fields["formatType"])
		p.PostCheckpointAction = enumName(t.fields["postCheckpointAction"])
		p.SharingFilesStrategy = enumName(t.fields["sharingFilesStrategy"])
	}
	return p, nil
}

// A minimal reader of the Java serialization grammar (java.io.ObjectOutputStream, protocol 2):
// enough for objects of plain Serializable classes, strings and enums, which is what
// CheckpointProperties holds. Classes with custom writeObject data, arrays and proxies are
// refused.
const (
	tcNull           = 0x70
	tcReference      = 0x71
	tcClassDesc      = 0x72
	tcObject         = 0x73
	tcString         = 0x74
	tcEndBlockData   = 0x78
	tcLongString     = 0x7C
	tcEnum           = 0x7E
	baseWireHandle   = 0x7E0000
	scWriteMethod    = 0x01
	scSerializable   = 0x02
	scEnum           = 0x10
	maxJavaHandles   = 1 << 12
	maxJavaNesting   = 32
	maxJavaFieldsPer = 1 << 10
)

type javaClass struct {
	name   string
	flags  byte
	fields []javaField
	super  *javaClass
}

type javaField struct {
	typ  byte // B C D F I J S Z, or L / [ for objects
	name string
}

type javaObject struct {
	class  *javaClass
	fields map[string]any
}

type javaEnum struct {
	class *javaClass
	name  string
}

type javaDecoder struct {
	r       *javaio.Reader
	handles []any
	depth   int
}

func describe(v any) string {
	switch v := v.(type) {
	case *javaObject:
		return "an object of " + v.class.name
	case *javaEnum:
		return "enum " + v.class.name + "." + v.name
	case string:
		return "a string"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func enumName(v any) string {
	if e, ok := v.(*javaEnum); ok {
		return e.name
	}
	return ""
}

func (d *javaDecoder) newHandle(v any) int {
	if len(d.handles) >= maxJavaHandles {
		d.r.Failf("properties", "more than %d objects", maxJavaHandles)
		return -1
	}
	d.handles = append(d.handles, v)
	return len(d.handles) - 1
}

func (d *javaDecoder) reference() any {
	r := d.r
	off := r.Offset()
	h := r.I32("properties.handle")
	if r.Err() != nil {
		return nil
	}
	i := int64(h) - baseWireHandle
	if i < 0 || i >= int64(len(d.handles)) {
		r.FailAt(off, "properties.handle", "reference to unknown handle 0x%x", h)
		return nil
	}
	return d.handles[i]
}

func (d *javaDecoder) content() any {
	r := d.r
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxJavaNesting {
		r.Failf("properties", "objects nested more than %d deep", maxJavaNesting)
		return nil
	}
	off := r.Offset()
	tc := r.U8("properties.typeCode")
	if r.Err() != nil {
		return nil
	}
	switch tc {
	case tcNull:
		return nil
	case tcReference:
		return d.reference()
	case tcString:
		s := r.UTF("properties.string")
		d.newHandle(s)
		return s
	case tcLongString:
		n := r.I64("properties.longString.length")
		if r.Err() == nil && (n < 0 || n > int64(maxTail)) {
			r.FailAt(off, "properties.longString", "length %d out of range", n)
			return nil
		}
		raw := r.Bytes("properties.longString", int(n))
		s, _ := javaio.DecodeModifiedUTF8(raw)
		d.newHandle(s)
		return s
	case tcEnum:
		c := d.classDesc()
		e := &javaEnum{class: c}
		d.newHandle(e)
		e.name, _ = d.content().(string)
		if c == nil && r.Err() == nil {
			r.FailAt(off, "properties.enum", "enum without a class")
		}
		return e
	case tcObject:
		c := d.classDesc()
		if r.Err() != nil {
			return nil
		}
		if c == nil {
			r.FailAt(off, "properties.object", "object without a class")
			return nil
		}
		o := &javaObject{class: c, fields: map[string]any{}}
		d.newHandle(o)
		d.classData(o, c)
		return o
	}
	r.FailAt(off, "properties.typeCode", "unsupported Java serialization type code 0x%02X", tc)
	return nil
}

func (d *javaDecoder) classDesc() *javaClass {
	r := d.r
	off := r.Offset()
	tc := r.U8("properties.classDesc")
	if r.Err() != nil {
		return nil
	}
	switch tc {
	case tcNull:
		return nil
	case tcReference:
		c, ok := d.reference().(*javaClass)
		if !ok && r.Err() == nil {
			r.FailAt(off, "properties.classDesc", "reference to something that is not a class")
		}
		return c
	case tcClassDesc:
	default:
		r.FailAt(off, "properties.classDesc", "want a class descriptor, got type code 0x%02X", tc)
		return nil
	}
	c := &javaClass{}
	c.name = r.UTF("properties.className")
	r.I64("properties.serialVersionUID")
	d.newHandle(c)
	c.flags = r.U8("properties.classFlags")
	n := int(r.U16("properties.fieldCount"))
	if n > maxJavaFieldsPer {
		r.Failf("properties.fieldCount", "%d fields", n)
		return nil
	}
	for i := 0; i < n && r.Err() == nil; i++ {
		f := javaField{typ: r.U8("properties.fieldType")}
		f.name = r.UTF("properties.fieldName")
		switch f.typ {
		case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z':
		case 'L', '[':
			d.content() // the field's type name (a string or a reference to one)
		default:
			r.Failf("properties.fieldType", "unknown field type %q", f.typ)
		}
		c.fields = append(c.fields, f)
	}
	if aOff := r.Offset(); r.U8("properties.classAnnotation") != tcEndBlockData && r.Err() == nil {
		r.FailAt(aOff, "properties.classAnnotation", "class annotations are not supported")
		return nil
	}
	c.super = d.classDesc()
	return c
}

func (d *javaDecoder) classData(o *javaObject, c *javaClass) {
	r := d.r
	var chain []*javaClass
	for k := c; k != nil; k = k.super {
		// A reference can make a class its own ancestor; Java would recurse forever.
		if len(chain) == maxJavaNesting {
			r.Failf("properties", "class %s: superclass chain longer than %d (a cycle?)", c.name, maxJavaNesting)
			return
		}
		chain = append(chain, k)
	}
	for i := len(chain) - 1; i >= 0 && r.Err() == nil; i-- {
		k := chain[i]
		if k.flags&scSerializable == 0 || k.flags&scEnum != 0 {
			continue
		}
		if k.flags&scWriteMethod != 0 {
			r.Failf("properties", "class %s writes custom data, which is not supported", k.name)
			return
		}
		for _, f := range k.fields {
			var v any
			switch f.typ {
			case 'Z':
				v = r.Bool("properties." + f.name)
			case 'B':
				v = r.I8("properties." + f.name)
			case 'C', 'S':
				v = r.I16("properties." + f.name)
			case 'I', 'F':
				v = r.I32("properties." + f.name)
			case 'J', 'D':
				v = r.I64("properties." + f.name)
			default:
				v = d.content()
			}
			o.fields[f.name] = v
		}
	}
}
