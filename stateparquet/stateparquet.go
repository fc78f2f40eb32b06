// Package stateparquet writes the records of one keyed state (as package keyed decodes them) to
// a Parquet file whose columns are typed from the state's serializer snapshots, for DuckDB,
// Spark, pandas or Flink itself to query.
//
// # Columns
//
//	keyGroup      INT32, required
//	kind          STRING              timers only: event or processing
//	key           the key serializer's type
//	namespace     the namespace type   (absent for VoidNamespace: every row would be null)
//	userKey       the map key type     (map state only)
//	value         the value type       (list state: LIST of the element type; absent for timers)
//	ttlTimestamp  TIMESTAMP(MILLIS)    (TTL state only; list state: LIST of them, one per element)
//	timestamp     INT64                timers only
//
// Types follow serializer.ShapeOf: Integer INT32, Long INT64, Short INT(16), Byte INT(8),
// Boolean, Float, Double, String/Character/enum STRING, byte[] BYTE_ARRAY; tuples, POJOs and
// time windows are groups of their fields (f0, f1, ... for tuples), Row and SQL RowData values
// groups f0..fN; lists and arrays LIST; maps stored as values a LIST of {key, value} groups
// (Parquet's MAP would lose the serialized order); SQL DECIMAL and TIMESTAMP their exact text,
// as `dump --format jsonl` prints them. A value whose serializer statecraft cannot decode is the
// STRING of its JSON ({serializer, base64}). Every column but keyGroup is optional: Java values
// may be null.
//
// # Memory
//
// Rows are buffered into row groups of at most RowGroupRows rows and written out as each fills,
// so memory is bounded by a row group, not by the state.
package stateparquet

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// RowGroupRows bounds the rows buffered before a row group is written.
const RowGroupRows = 32 * 1024

// column is one top-level column: its node, and how a decoded value becomes a Parquet value.
type column struct {
	name string
	node parquet.Node
	conv func(any) (any, error)
	get  func(*keyed.Record) any
}

// Writer writes one state's records.
type Writer struct {
	state string
	cols  []column
	w     *parquet.GenericWriter[any]
	buf   []any
	rows  int64
}

// NewWriter returns a Writer of the records of the state sd decodes, whose keys the serializer
// key snapshot wrote.
func NewWriter(out io.Writer, key *serializer.Snapshot, sd *keyed.StateDecoder) *Writer {
	m := sd.Meta
	cols := []column{{name: "keyGroup", node: parquet.Int(32), conv: func(v any) (any, error) { return v, nil },
		get: func(r *keyed.Record) any { return int32(r.KeyGroup) }}}
	add := func(name string, sh *serializer.Shape, get func(*keyed.Record) any) {
		if sh.Kind == serializer.ShapeNull {
			return
		}
		n, conv := build(sh)
		cols = append(cols, column{name: name, node: parquet.Optional(n), conv: conv, get: get})
	}
	if sd.Kind == "timer" {
		var keySh, nsSh *serializer.Shape = &serializer.Shape{}, &serializer.Shape{}
		if ts := m.Serializer(keyed.SerValue); ts != nil && len(ts.Nested) == 2 {
			keySh, nsSh = serializer.ShapeOf(ts.Nested[0]), serializer.ShapeOf(ts.Nested[1])
		}
		add("kind", &serializer.Shape{Kind: serializer.ShapeString}, func(r *keyed.Record) any { return r.TimerKind })
		add("key", keySh, func(r *keyed.Record) any { return r.Key })
		add("namespace", nsSh, func(r *keyed.Record) any { return r.Namespace })
		add("timestamp", &serializer.Shape{Kind: serializer.ShapeInt64}, func(r *keyed.Record) any { return r.Timestamp })
	} else {
		add("key", serializer.ShapeOf(key), func(r *keyed.Record) any { return r.Key })
		add("namespace", serializer.ShapeOf(m.Serializer(keyed.SerNamespace)), func(r *keyed.Record) any { return r.Namespace })
		uk, vs, _, _ := m.EntrySerializers()
		if sd.Kind == "map" {
			add("userKey", serializer.ShapeOf(uk), func(r *keyed.Record) any { return r.UserKey })
		}
		vsh := serializer.ShapeOf(vs)
		if sd.Kind == "list" {
			vsh = &serializer.Shape{Kind: serializer.ShapeList, Elem: vsh}
		}
		add("value", vsh, func(r *keyed.Record) any { return r.Value })
		if sd.TTL {
			var n parquet.Node
			var conv func(any) (any, error)
			if sd.Kind == "list" {
				n = parquet.List(parquet.Optional(parquet.Timestamp(parquet.Millisecond)))
				conv = func(v any) (any, error) {
					l, ok := v.([]int64)
					if !ok {
						return nil, fmt.Errorf("got %T, want a list of timestamps", v)
					}
					out := make([]any, len(l))
					for i, t := range l {
						out[i] = &t
					}
					return out, nil
				}
			} else {
				n, conv = parquet.Timestamp(parquet.Millisecond), want[int64]("a timestamp", func(t int64) any { return &t })
			}
			cols = append(cols, column{name: "ttlTimestamp", node: parquet.Optional(n), conv: conv, get: func(r *keyed.Record) any { return r.TTL }})
		}
	}
	g := parquet.Group{}
	for _, c := range cols {
		g[c.name] = c.node
	}
	schema := parquet.NewSchema(m.Name, g)
	return &Writer{state: m.Name, cols: cols, w: parquet.NewGenericWriter[any](out, schema, parquet.MaxRowsPerRowGroup(RowGroupRows))}
}

// Write adds one record of the state.
func (w *Writer) Write(r *keyed.Record) error {
	row := make(map[string]any, len(w.cols))
	for _, c := range w.cols {
		v := c.get(r)
		if v == nil {
			row[c.name] = nil
			continue
		}
		pv, err := c.conv(v)
		if err != nil {
			return fmt.Errorf("state %s key group %d: %s: %w", w.state, r.KeyGroup, c.name, err)
		}
		row[c.name] = pv
	}
	w.buf = append(w.buf, row)
	w.rows++
	if len(w.buf) >= 1024 {
		return w.flushBuf()
	}
	return nil
}

func (w *Writer) flushBuf() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	clear(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		return fmt.Errorf("state %s: parquet: %w", w.state, err)
	}
	return nil
}

// Rows is the number of records written.
func (w *Writer) Rows() int64 { return w.rows }

// Close writes what is buffered and the file footer (it does not close the underlying writer).
func (w *Writer) Close() error {
	if err := w.flushBuf(); err != nil {
		return err
	}
	if err := w.w.Close(); err != nil {
		return fmt.Errorf("state %s: parquet: %w", w.state, err)
	}
	return nil
}

// build returns the Parquet node of a shape (without its own optionality) and the conversion of
// a decoded value of that shape into what the Parquet writer takes.
func build(sh *serializer.Shape) (parquet.Node, func(any) (any, error)) {
	switch sh.Kind {
	case serializer.ShapeBool:
		return parquet.Leaf(parquet.BooleanType), want[bool]("boolean", func(b bool) any { return &b })
	case serializer.ShapeInt8:
		return parquet.Int(8), want[int8]("byte", func(i int8) any { return ptr(int32(i)) })
	case serializer.ShapeInt16:
		return parquet.Int(16), want[int16]("short", func(i int16) any { return ptr(int32(i)) })
	case serializer.ShapeInt32:
		return parquet.Int(32), want[int32]("int", func(i int32) any { return &i })
	case serializer.ShapeInt64:
		return parquet.Int(64), want[int64]("long", func(i int64) any { return &i })
	case serializer.ShapeFloat32:
		return parquet.Leaf(parquet.FloatType), want[serializer.Float]("float", func(f serializer.Float) any { return ptr(float32(f)) })
	case serializer.ShapeFloat64:
		return parquet.Leaf(parquet.DoubleType), want[serializer.Float]("double", func(f serializer.Float) any { return ptr(float64(f)) })
	case serializer.ShapeString:
		return parquet.String(), want[string]("string", func(s string) any { return &s })
	case serializer.ShapeBytes:
		return parquet.Leaf(parquet.ByteArrayType), want[[]byte]("bytes", func(b []byte) any { return &b })
	case serializer.ShapeDecimal:
		return parquet.String(), want[json.Number]("decimal", func(n json.Number) any { return ptr(n.String()) })
	case serializer.ShapeStruct, serializer.ShapeRow:
		if len(sh.Fields) == 0 {
			break
		}
		g := parquet.Group{}
		names := make([]string, len(sh.Fields))
		convs := make([]func(any) (any, error), len(sh.Fields))
		for i, f := range sh.Fields {
			if _, dup := g[f.Name]; dup {
				return opaque()
			}
			n, c := build(f.Shape)
			g[f.Name], names[i], convs[i] = parquet.Optional(n), f.Name, c
		}
		fields := func(vals []any) (any, error) {
			if len(vals) != len(names) {
				return nil, fmt.Errorf("%d fields, want %d", len(vals), len(names))
			}
			out := make(map[string]any, len(names))
			for i, v := range vals {
				if v == nil {
					out[names[i]] = nil
					continue
				}
				pv, err := convs[i](v)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", names[i], err)
				}
				out[names[i]] = pv
			}
			return out, nil
		}
		return g, func(v any) (any, error) {
			switch x := v.(type) {
			case serializer.Fields:
				vals := make([]any, len(x))
				for i, f := range x {
					vals[i] = f.Value
				}
				return fields(vals)
			case serializer.BinaryRow:
				return fields(x.Fields)
			case []any:
				return fields(x)
			}
			return nil, fmt.Errorf("got %T, want a structured value (a POJO subclass is not described by the snapshot)", v)
		}
	case serializer.ShapeList:
		n, c := build(sh.Elem)
		return parquet.List(parquet.Optional(n)), func(v any) (any, error) {
			l, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("got %T, want a list", v)
			}
			out := make([]any, len(l))
			for i, e := range l {
				if e == nil {
					continue
				}
				pe, err := c(e)
				if err != nil {
					return nil, fmt.Errorf("element %d: %w", i, err)
				}
				out[i] = pe
			}
			return out, nil
		}
	case serializer.ShapeMap:
		kn, kc := build(sh.Key)
		vn, vc := build(sh.Value)
		return parquet.List(parquet.Optional(parquet.Group{"key": parquet.Optional(kn), "value": parquet.Optional(vn)})), func(v any) (any, error) {
			l, ok := v.([]serializer.MapEntry)
			if !ok {
				return nil, fmt.Errorf("got %T, want map entries", v)
			}
			out := make([]any, len(l))
			for i, e := range l {
				var k, val any
				var err error
				if e.Key != nil {
					if k, err = kc(e.Key); err != nil {
						return nil, fmt.Errorf("entry %d key: %w", i, err)
					}
				}
				if e.Value != nil {
					if val, err = vc(e.Value); err != nil {
						return nil, fmt.Errorf("entry %d value: %w", i, err)
					}
				}
				out[i] = map[string]any{"key": k, "value": val}
			}
			return out, nil
		}
	case serializer.ShapeNull:
		return parquet.String(), func(any) (any, error) { return nil, nil }
	}
	return opaque()
}

// opaque is a STRING column holding each value's JSON, for values the snapshot does not type.
func opaque() (parquet.Node, func(any) (any, error)) {
	return parquet.String(), func(v any) (any, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return ptr(string(b)), nil
	}
}

// ptr boxes a leaf value: parquet-go writes a zero value of an optional column as null, and
// only a pointer tells a present 0, "" or false from an absent one.
func ptr[T any](v T) *T { return &v }

// want converts a value of type T, refusing any other (the snapshot promised T).
func want[T any](what string, f func(T) any) func(any) (any, error) {
	return func(v any) (any, error) {
		x, ok := v.(T)
		if !ok {
			return nil, fmt.Errorf("got %T, want %s", v, what)
		}
		return f(x), nil
	}
}
