package migrate

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// Snapshot classes whose bytes keyHasher turns into a value with a known Java hashCode().
const (
	snapTuple   = "org.apache.flink.api.java.typeutils.runtime.TupleSerializerSnapshot"
	snapRow     = "org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot"
	snapRowData = "org.apache.flink.table.runtime.typeutils.RowDataSerializer$RowDataSerializerSnapshot"
	snapFloat   = "org.apache.flink.api.common.typeutils.base.FloatSerializer$FloatSerializerSnapshot"
	snapDouble  = "org.apache.flink.api.common.typeutils.base.DoubleSerializer$DoubleSerializerSnapshot"
	snapChar    = "org.apache.flink.api.common.typeutils.base.CharSerializer$CharSerializerSnapshot"
	snapInt     = "org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot"
	snapLong    = "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
)

// primitiveKeys are the serializers whose decoded Go value keygroup.HashCode takes as is.
var primitiveKeys = map[string]bool{
	"org.apache.flink.api.common.typeutils.base.IntSerializer$IntSerializerSnapshot":         true,
	"org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot":       true,
	"org.apache.flink.api.common.typeutils.base.ShortSerializer$ShortSerializerSnapshot":     true,
	"org.apache.flink.api.common.typeutils.base.ByteSerializer$ByteSerializerSnapshot":       true,
	"org.apache.flink.api.common.typeutils.base.BooleanSerializer$BooleanSerializerSnapshot": true,
	"org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot":   true,
	snapFloat: true, snapDouble: true, snapChar: true,
}

// keyHasher reads a key as its serializer wrote it and returns the key's Java hashCode(), which
// decides its key group. Only types whose hashCode() is defined by value are accepted:
// primitives and String, Flink tuples and Rows of them, and BinaryRowData (SQL keys). A POJO or
// generic key's hashCode() is user code, so such keys are refused by name.
type keyHasher struct {
	snap  *serializer.Snapshot
	codec serializer.Codec
	elems []*keyHasher // tuple / row fields
	fixed int          // 4 for Integer keys, 8 for Long keys (hashFixed), else 0
}

func newKeyHasher(s *serializer.Snapshot) (*keyHasher, error) {
	if s == nil {
		return nil, fmt.Errorf("the keyed-state header has no key serializer")
	}
	h := &keyHasher{snap: s}
	switch s.Class {
	case snapInt:
		h.fixed = 4
	case snapLong:
		h.fixed = 8
	}
	switch {
	case primitiveKeys[s.Class]:
		h.codec = serializer.NewCodec(s)
	case s.Class == snapTuple || s.Class == snapRow:
		for i, n := range s.Nested {
			e, err := newKeyHasher(n)
			if err != nil {
				return nil, fmt.Errorf("%s field %d: %w", serializer.JavaType(s), i, err)
			}
			h.elems = append(h.elems, e)
		}
	case s.Class == snapRowData:
	default:
		return nil, fmt.Errorf("key type %s (serializer %s) has no Java hashCode statecraft can compute; "+
			"supported key types: Integer, Long, Short, Byte, Boolean, Character, Float, Double, String, Tuple and Row of these, RowData",
			serializer.JavaType(s), s.Short())
	}
	return h, nil
}

// hashFixed returns the Java hashCode() of an Integer or Long key stored at key[pos:], read in
// place; ok is false for other key types or a key too short, which hash then reads (and refuses
// with a position) as usual.
func (h *keyHasher) hashFixed(key []byte, pos int) (code int32, ok bool) {
	switch {
	case h.fixed == 4 && pos >= 0 && len(key)-pos >= 4:
		return int32(binary.BigEndian.Uint32(key[pos:])), true // Integer.hashCode is the value
	case h.fixed == 8 && pos >= 0 && len(key)-pos >= 8:
		return keygroup.LongHash(int64(binary.BigEndian.Uint64(key[pos:]))), true
	}
	return 0, false
}

// hash reads one key from in and returns its Java hashCode().
func (h *keyHasher) hash(in *serializer.Input) (int32, error) {
	// Fast paths for the most common key types: no boxing.
	switch h.snap.Class {
	case snapInt:
		v := in.I32("int key")
		return v, in.Err()
	case snapLong:
		v := in.I64("long key")
		return keygroup.LongHash(v), in.Err()
	}
	v, err := h.value(in)
	if err != nil {
		return 0, err
	}
	if err := in.Err(); err != nil {
		return 0, err
	}
	return keygroup.HashCode(v)
}

// value reads one key value as a Go value keygroup.HashCode understands.
func (h *keyHasher) value(in *serializer.Input) (any, error) {
	s := h.snap
	switch s.Class {
	case snapTuple:
		t := make(keygroup.Tuple, len(h.elems))
		for i, e := range h.elems {
			v, err := e.value(in)
			if err != nil {
				return nil, err
			}
			t[i] = v
		}
		return t, nil
	case snapRow:
		// RowSerializer: [RowKind in the first two mask bits], a null mask MSB first, the
		// non-null fields in order.
		//	+--------------------------------------+-----------------+
		//	| mask: ceil((kindBits + n)/8) bytes   | non-null fields |
		//	+--------------------------------------+-----------------+
		off := 0
		if s.RowKind {
			off = 2
		}
		n := len(h.elems)
		mask := in.Bytes((off+n+7)/8, "row null mask")
		if in.Err() != nil {
			return nil, in.Err()
		}
		bit := func(j int) bool { return mask[j/8]&(0x80>>(j%8)) != 0 }
		r := keygroup.Row{Fields: make([]any, n)}
		if s.RowKind {
			var k keygroup.RowKind
			// mask[0] is kind&1, mask[1] is kind&2 (RowSerializer.fillMask, javap 2.3.0).
			if bit(0) {
				k |= 1
			}
			if bit(1) {
				k |= 2
			}
			r.Kind = k
		}
		for i, e := range h.elems {
			if bit(off + i) {
				continue
			}
			v, err := e.value(in)
			if err != nil {
				return nil, err
			}
			r.Fields[i] = v
		}
		return r, nil
	case snapRowData:
		// RowDataSerializer writes BinaryRowData: i32 size in bytes, then the row's bytes.
		n := in.Length("RowData length", 1)
		b := in.Bytes(n, "RowData bytes")
		if in.Err() != nil {
			return nil, in.Err()
		}
		return keygroup.BinaryRow(b), nil
	}
	v := h.codec.Decode(in)
	if in.Err() != nil {
		return nil, in.Err()
	}
	switch s.Class {
	case snapFloat:
		f, ok := v.(serializer.Float)
		if !ok {
			return nil, fmt.Errorf("float key decoded as %T", v)
		}
		return float32(f), nil
	case snapDouble:
		f, ok := v.(serializer.Float)
		if !ok {
			return nil, fmt.Errorf("double key decoded as %T", v)
		}
		return float64(f), nil
	case snapChar:
		c, ok := v.(string)
		u := []rune(c)
		if !ok || len(u) != 1 || u[0] > 0xFFFF {
			// A lone surrogate decodes to U+FFFD; its code unit is lost.
			return nil, fmt.Errorf("char key %q: not one UTF-16 code unit", c)
		}
		if strings.ContainsRune(c, 0xFFFD) {
			return nil, fmt.Errorf("char key is a lone surrogate, whose code unit is not kept")
		}
		return keygroup.Char(u[0]), nil
	}
	return v, nil
}
