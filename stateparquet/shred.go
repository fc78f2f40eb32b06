package stateparquet

import (
	"encoding/json"
	"fmt"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// A decoded value becomes Parquet values by shredding (Dremel's record shredding): every leaf
// column under the value gets one value per occurrence, carrying its column index, its
// repetition level (which list the value starts a new element of) and its definition level (how
// many of the optional and repeated fields on its path are present). The rows are built here,
// against the schema the nodes make, with no reflection: parquet-go only encodes them.

// field is one node of the schema with how a value of it is shredded.
type field struct {
	node   parquet.Node // without its own optionality
	leaves int          // leaf columns under the node
	// put appends the values of a present v: rep is the repetition level of its first value,
	// def the definition level at which v is present, col its first leaf column.
	put func(b *rowBuf, v any, rep, def, col int) error
}

// rowBuf holds the values of the rows being built, back to back, and where each row ends.
type rowBuf struct {
	vals []parquet.Value
	ends []int
}

// nulls appends a null to each of n leaf columns from col, defined up to def.
func (b *rowBuf) nulls(n, rep, def, col int) {
	for i := range n {
		b.vals = append(b.vals, parquet.Value{}.Level(rep, def, col+i))
	}
}

// putOpt shreds v into an optional field: null when v is nil.
func (f *field) putOpt(b *rowBuf, v any, rep, def, col int) error {
	if v == nil {
		b.nulls(f.leaves, rep, def, col)
		return nil
	}
	return f.put(b, v, rep, def+1, col)
}

// leaf is a field of one column whose present values conv turns into a Parquet value.
func leaf(node parquet.Node, conv func(any) (parquet.Value, error)) *field {
	return &field{node: node, leaves: 1, put: func(b *rowBuf, v any, rep, def, col int) error {
		pv, err := conv(v)
		if err != nil {
			return err
		}
		b.vals = append(b.vals, pv.Level(rep, def, col))
		return nil
	}}
}

// want converts a value of type T, refusing any other (the snapshot promised T).
func want[T any](what string, f func(T) parquet.Value) func(any) (parquet.Value, error) {
	return func(v any) (parquet.Value, error) {
		x, ok := v.(T)
		if !ok {
			return parquet.Value{}, fmt.Errorf("got %T, want %s", v, what)
		}
		return f(x), nil
	}
}

// stringValue is a BYTE_ARRAY value of s's bytes (not copied: the column buffer copies them).
func stringValue(s string) parquet.Value {
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// build returns the field of a shape, maxRep being the number of repeated fields above it.
func build(sh *serializer.Shape, maxRep int) *field {
	switch sh.Kind {
	case serializer.ShapeBool:
		return leaf(parquet.Leaf(parquet.BooleanType), want("boolean", parquet.BooleanValue))
	case serializer.ShapeInt8:
		return leaf(parquet.Int(8), want("byte", func(i int8) parquet.Value { return parquet.Int32Value(int32(i)) }))
	case serializer.ShapeInt16:
		return leaf(parquet.Int(16), want("short", func(i int16) parquet.Value { return parquet.Int32Value(int32(i)) }))
	case serializer.ShapeInt32:
		return leaf(parquet.Int(32), want("int", parquet.Int32Value))
	case serializer.ShapeInt64:
		return leaf(parquet.Int(64), want("long", parquet.Int64Value))
	case serializer.ShapeFloat32:
		return leaf(parquet.Leaf(parquet.FloatType), want("float", func(f serializer.Float) parquet.Value { return parquet.FloatValue(float32(f)) }))
	case serializer.ShapeFloat64:
		return leaf(parquet.Leaf(parquet.DoubleType), want("double", func(f serializer.Float) parquet.Value { return parquet.DoubleValue(float64(f)) }))
	case serializer.ShapeString:
		return leaf(parquet.String(), want("string", stringValue))
	case serializer.ShapeBytes:
		return leaf(parquet.Leaf(parquet.ByteArrayType), want("bytes", parquet.ByteArrayValue))
	case serializer.ShapeDecimal:
		return leaf(parquet.String(), want("decimal", func(n json.Number) parquet.Value { return stringValue(n.String()) }))
	case serializer.ShapeStruct, serializer.ShapeRow:
		if len(sh.Fields) > 0 {
			if f := buildStruct(sh, maxRep); f != nil {
				return f
			}
		}
	case serializer.ShapeList:
		elem := build(sh.Elem, maxRep+1)
		return list(elem, maxRep+1, func(v any) (int, func(int) any, error) {
			l, ok := v.([]any)
			if !ok {
				return 0, nil, fmt.Errorf("got %T, want a list", v)
			}
			return len(l), func(i int) any { return l[i] }, nil
		})
	case serializer.ShapeMap:
		return buildMap(sh, maxRep)
	case serializer.ShapeNull:
		// Always null (a present value would be one the shape does not describe).
		return &field{node: parquet.String(), leaves: 1, put: func(b *rowBuf, _ any, rep, def, col int) error {
			b.nulls(1, rep, def-1, col)
			return nil
		}}
	}
	return opaque()
}

// list is a LIST (an optional group of a repeated group of an optional element) of elem, whose
// repeated group is at repetition level rep; elems gives a value's length and its elements.
func list(elem *field, rep int, elems func(any) (int, func(int) any, error)) *field {
	f := &field{node: parquet.List(parquet.Optional(elem.node)), leaves: elem.leaves}
	f.put = func(b *rowBuf, v any, r, def, col int) error {
		n, at, err := elems(v)
		if err != nil {
			return err
		}
		if n == 0 {
			b.nulls(f.leaves, r, def, col)
			return nil
		}
		for i := range n {
			if i > 0 {
				r = rep
			}
			// def+1: the repeated group holds an element; the element is optional.
			if err := elem.putOpt(b, at(i), r, def+1, col); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	}
	return f
}

// rowKindField is the name of the field a row group of a kinded row (SQL RowData; Row of Flink
// 1.11 on) has besides f0..fN: the row's RowKind, +I, -U, +U or -D.
const rowKindField = "rowKind"

// buildStruct is a group of the shape's fields (nil when two fields share a name), and of the
// row's kind when its values carry one.
func buildStruct(sh *serializer.Shape, maxRep int) *field {
	g := parquet.Group{}
	byName := map[string]int{}
	names := make([]string, len(sh.Fields), len(sh.Fields)+1)
	kids := make([]*field, len(sh.Fields), len(sh.Fields)+1)
	for i, fs := range sh.Fields {
		names[i], kids[i] = fs.Name, build(fs.Shape, maxRep)
	}
	kinded := sh.Kind == serializer.ShapeRow && sh.RowKind
	if kinded {
		names = append(names, rowKindField)
		kids = append(kids, leaf(parquet.String(), want("a RowKind", stringValue)))
	}
	for i, name := range names {
		if _, dup := byName[name]; dup {
			return nil
		}
		g[name], byName[name] = parquet.Optional(kids[i].node), i
	}
	// The group's columns come in the order of its fields' names (parquet.Group.Fields).
	order := make([]int, 0, len(kids))
	offs := make([]int, len(kids))
	leaves := 0
	for _, gf := range g.Fields() {
		i := byName[gf.Name()]
		order = append(order, i)
		offs[i] = leaves
		leaves += kids[i].leaves
	}
	// put shreds the fields vals and, for a kinded row, its kind.
	put := func(b *rowBuf, vals []any, kind string, rep, def, col int) error {
		if len(vals) != len(sh.Fields) {
			return fmt.Errorf("%d fields, want %d", len(vals), len(sh.Fields))
		}
		for _, i := range order {
			var v any = kind
			if i < len(vals) {
				v = vals[i]
			}
			if err := kids[i].putOpt(b, v, rep, def, col+offs[i]); err != nil {
				return fmt.Errorf("%s: %w", names[i], err)
			}
		}
		return nil
	}
	var scratch []any
	return &field{node: g, leaves: leaves, put: func(b *rowBuf, v any, rep, def, col int) error {
		switch x := v.(type) {
		case serializer.Fields:
			vals := scratch[:0]
			for _, f := range x {
				vals = append(vals, f.Value)
			}
			err := put(b, vals, "", rep, def, col)
			clear(vals)
			scratch = vals[:0]
			return err
		case serializer.BinaryRow:
			return put(b, x.Fields, x.Kind, rep, def, col)
		case serializer.JavaRow:
			return put(b, x.Fields, x.Kind, rep, def, col)
		case []any:
			return put(b, x, "+I", rep, def, col) // a Row's plain fields: an insert
		}
		return fmt.Errorf("got %T, want a structured value (a POJO subclass is not described by the snapshot)", v)
	}}
}

// buildMap is a map stored as a value: a LIST of {key, value} groups (Parquet's MAP would lose
// the serialized order).
func buildMap(sh *serializer.Shape, maxRep int) *field {
	k, val := build(sh.Key, maxRep+1), build(sh.Value, maxRep+1)
	entry := &field{node: parquet.Group{"key": parquet.Optional(k.node), "value": parquet.Optional(val.node)}, leaves: k.leaves + val.leaves}
	entry.put = func(b *rowBuf, v any, rep, def, col int) error {
		e := v.(serializer.MapEntry)
		if err := k.putOpt(b, e.Key, rep, def, col); err != nil {
			return fmt.Errorf("key: %w", err)
		}
		if err := val.putOpt(b, e.Value, rep, def, col+k.leaves); err != nil {
			return fmt.Errorf("value: %w", err)
		}
		return nil
	}
	f := list(entry, maxRep+1, func(v any) (int, func(int) any, error) {
		l, ok := v.([]serializer.MapEntry)
		if !ok {
			return 0, nil, fmt.Errorf("got %T, want map entries", v)
		}
		return len(l), func(i int) any { return l[i] }, nil
	})
	return f
}

// ttlList is the TTL column of list state: a LIST of TIMESTAMP(MILLIS), one per element.
func ttlList() *field {
	ts := leaf(parquet.Timestamp(parquet.Millisecond), want("a timestamp", parquet.Int64Value))
	return list(ts, 1, func(v any) (int, func(int) any, error) {
		l, ok := v.([]int64)
		if !ok {
			return 0, nil, fmt.Errorf("got %T, want a list of timestamps", v)
		}
		return len(l), func(i int) any { return l[i] }, nil
	})
}

// opaque is a STRING column holding each value's JSON, for values the snapshot does not type.
func opaque() *field {
	return leaf(parquet.String(), func(v any) (parquet.Value, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return parquet.Value{}, err
		}
		return parquet.ByteArrayValue(b), nil
	})
}
