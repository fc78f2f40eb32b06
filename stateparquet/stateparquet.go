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
// groups f0..fN and rowKind (STRING +I, -U, +U or -D: the row's RowKind; a Row of Flink before
// 1.11 carries none and has no such column); lists and arrays LIST; maps stored as values a LIST
// of {key, value} groups (Parquet's MAP would lose the serialized order); SQL DECIMAL and
// TIMESTAMP their exact text, as `dump --format jsonl` prints them. A value whose serializer
// statecraft cannot decode is the STRING of its JSON ({serializer, base64}). Every column but
// keyGroup is optional: Java values may be null.
//
// # Compression
//
// Pages are compressed with one codec per file, named as --compression takes it: snappy (the
// default, as Spark, pyarrow/pandas and DuckDB write), zstd, gzip or none. The codecs are
// parquet-go's, on klauspost/compress (pure Go), and frame their pages as the Parquet format
// specifies: a SNAPPY page is one raw Snappy block (no stream framing), a GZIP page one gzip
// member (RFC 1952), a ZSTD page one zstd frame (RFC 8878).
//
// # Memory and cores
//
// The caller's goroutine shreds each record into Parquet values against the schema (shred.go),
// in chunks of a few thousand rows; a goroutine of the Writer encodes the chunks, in order, into
// row groups of at most RowGroupRows rows, written out as each fills. Decoding and encoding thus
// use two cores, and memory is bounded by a row group and three chunks per state, not by the
// state.
package stateparquet

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// DefaultCodec compresses pages as Spark, pyarrow/pandas and DuckDB do by default: Snappy costs
// little CPU (on the encoding goroutine, beside decoding) and makes a dump about 3.5 times smaller.
const DefaultCodec = "snappy"

// Codec returns the page codec named snappy, zstd, gzip or none.
func Codec(name string) (compress.Codec, error) {
	switch name {
	case "snappy":
		return &parquet.Snappy, nil
	case "zstd":
		return &parquet.Zstd, nil
	case "gzip":
		return &parquet.Gzip, nil
	case "none":
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("compression %q: want one of snappy, zstd, gzip or none", name)
}

// RowGroupRows is the number of rows of a row group (the last one may hold fewer).
const RowGroupRows = 32 * 1024

// column is one top-level column: its field, its first leaf column, and where a record holds
// its value.
type column struct {
	name string
	f    *field
	col  int
	src  source
}

// source is the part of a record a column holds.
type source int

const (
	srcKeyGroup source = iota
	srcTimerKind
	srcKey
	srcNamespace
	srcUserKey
	srcValue
	srcTTL
	srcTimestamp
)

// value is the column's value in r (a direct switch rather than a func value, so that r does
// not escape to the heap).
func (c *column) value(r *keyed.Record) any {
	switch c.src {
	case srcTimerKind:
		return r.TimerKind
	case srcKey:
		return r.Key
	case srcNamespace:
		return r.Namespace
	case srcUserKey:
		return r.UserKey
	case srcValue:
		return r.Value
	case srcTTL:
		return r.TTL
	case srcTimestamp:
		return r.Timestamp
	}
	panic("stateparquet: no value of this source")
}

// Writer writes one state's records.
type Writer struct {
	state string
	cols  []column
	pw    *parquet.GenericWriter[any]
	cur   *chunk
	rows  int64
	enc   *encoder
	ended bool // Close or Discard has run
}

// chunk is the shredded values of up to chunkRows rows.
type chunk struct {
	rowBuf
	rows []parquet.Row
}

// encoder is a Writer's encoding goroutine and the chunks it shares with the Writer.
type encoder struct {
	free   chan *chunk // chunks to fill: every chunk not in flight
	work   chan *chunk // full chunks, in order, to encode
	done   chan struct{}
	failed atomic.Bool // an error is set: nothing more is encoded
	mu     sync.Mutex
	err    error // the first error
}

// fail records err unless an error is recorded already.
func (e *encoder) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err == nil {
		e.err = err
		e.failed.Store(true)
	}
}

// NewWriter returns a Writer of the records of the state sd decodes, whose keys the serializer
// key snapshot wrote, compressing its pages with codec (see Codec).
func NewWriter(out io.Writer, key *serializer.Snapshot, sd *keyed.StateDecoder, codec compress.Codec) *Writer {
	m := sd.Meta
	cols := []column{{name: "keyGroup", f: &field{node: parquet.Int(32), leaves: 1}, src: srcKeyGroup}}
	add := func(name string, sh *serializer.Shape, src source) {
		if sh.Kind == serializer.ShapeNull {
			return
		}
		cols = append(cols, column{name: name, f: build(sh, 0), src: src})
	}
	if sd.Kind == "timer" {
		var keySh, nsSh *serializer.Shape = &serializer.Shape{}, &serializer.Shape{}
		if ts := m.Serializer(keyed.SerValue); ts != nil && len(ts.Nested) == 2 {
			keySh, nsSh = serializer.ShapeOf(ts.Nested[0]), serializer.ShapeOf(ts.Nested[1])
		}
		add("kind", &serializer.Shape{Kind: serializer.ShapeString}, srcTimerKind)
		add("key", keySh, srcKey)
		add("namespace", nsSh, srcNamespace)
		add("timestamp", &serializer.Shape{Kind: serializer.ShapeInt64}, srcTimestamp)
	} else {
		add("key", serializer.ShapeOf(key), srcKey)
		add("namespace", serializer.ShapeOf(m.Serializer(keyed.SerNamespace)), srcNamespace)
		uk, vs, _, _ := m.EntrySerializers()
		if sd.Kind == "map" {
			add("userKey", serializer.ShapeOf(uk), srcUserKey)
		}
		vsh := serializer.ShapeOf(vs)
		if sd.Kind == "list" {
			vsh = &serializer.Shape{Kind: serializer.ShapeList, Elem: vsh}
		}
		add("value", vsh, srcValue)
		if sd.TTL {
			f := leaf(parquet.Timestamp(parquet.Millisecond), want("a timestamp", parquet.Int64Value))
			if sd.Kind == "list" {
				f = ttlList()
			}
			cols = append(cols, column{name: "ttlTimestamp", f: f, src: srcTTL})
		}
	}
	g := parquet.Group{}
	byName := map[string]*column{}
	for i := range cols {
		c := &cols[i]
		g[c.name], byName[c.name] = c.f.node, c
		if c.src != srcKeyGroup {
			g[c.name] = parquet.Optional(c.f.node)
		}
	}
	// Leaf columns are numbered in the order of the top-level names (parquet.Group.Fields); the
	// values of a row are appended in that order too.
	ordered := make([]column, 0, len(cols))
	leaves := 0
	for _, gf := range g.Fields() {
		c := byName[gf.Name()]
		c.col = leaves
		leaves += c.f.leaves
		ordered = append(ordered, *c)
	}
	schema := parquet.NewSchema(m.Name, g)
	w := &Writer{state: m.Name, cols: ordered, pw: parquet.NewGenericWriter[any](out, schema,
		parquet.MaxRowsPerRowGroup(RowGroupRows), parquet.Compression(codec))}
	w.enc = newEncoder(w.pw)
	return w
}

// A Writer's rows are shredded into chunks of chunkRows rows; chunks chunks exist (one filling,
// the others queued or being encoded).
const (
	chunkRows = 4096
	chunks    = 3
)

func newEncoder(pw *parquet.GenericWriter[any]) *encoder {
	e := &encoder{free: make(chan *chunk, chunks), work: make(chan *chunk, chunks), done: make(chan struct{})}
	for range chunks {
		e.free <- &chunk{}
	}
	go func() {
		defer close(e.done)
		for c := range e.work {
			if !e.failed.Load() {
				if err := c.encode(pw); err != nil {
					e.fail(err)
				}
			}
			c.reset()
			e.free <- c
		}
	}()
	return e
}

// encode writes the chunk's rows (parquet-go ends a row group at RowGroupRows rows).
func (c *chunk) encode(pw *parquet.GenericWriter[any]) error {
	c.rows = c.rows[:0]
	start := 0
	for _, end := range c.ends {
		c.rows = append(c.rows, c.vals[start:end:end])
		start = end
	}
	_, err := pw.WriteRows(c.rows)
	return err
}

func (c *chunk) reset() {
	clear(c.vals) // drop the references to decoded strings and bytes
	clear(c.rows)
	c.vals, c.ends, c.rows = c.vals[:0], c.ends[:0], c.rows[:0]
}

// Write adds one record of the state.
func (w *Writer) Write(r *keyed.Record) error {
	if w.ended {
		return errors.New("stateparquet: Write after Close or Discard")
	}
	if w.enc.failed.Load() {
		return w.failure()
	}
	if w.cur == nil {
		w.cur = <-w.enc.free
	}
	b := &w.cur.rowBuf
	start := len(b.vals)
	for i := range w.cols {
		c := &w.cols[i]
		if c.src == srcKeyGroup { // required
			b.vals = append(b.vals, parquet.Int32Value(int32(r.KeyGroup)).Level(0, 0, c.col))
			continue
		}
		if err := c.f.putOpt(b, c.value(r), 0, 0, c.col); err != nil {
			clear(b.vals[start:])
			b.vals = b.vals[:start]
			return fmt.Errorf("state %s key group %d: %s: %w", w.state, r.KeyGroup, c.name, err)
		}
	}
	// A repeated group of several columns (a map's entries, a list of tuples) was shredded
	// entry by entry; a row holds each column's values together, in column order.
	if row := b.vals[start:]; !slices.IsSortedFunc(row, byColumn) {
		slices.SortStableFunc(row, byColumn)
	}
	b.ends = append(b.ends, len(b.vals))
	w.rows++
	if len(b.ends) >= chunkRows {
		w.submit()
	}
	return nil
}

func byColumn(a, b parquet.Value) int { return a.Column() - b.Column() }

// submit hands the current chunk to the encoder (never blocks: work holds every chunk).
func (w *Writer) submit() {
	w.enc.work <- w.cur
	w.cur = nil
}

func (w *Writer) failure() error {
	w.enc.mu.Lock()
	defer w.enc.mu.Unlock()
	return fmt.Errorf("state %s: parquet: %w", w.state, w.enc.err)
}

// stop ends the encoding goroutine once the submitted chunks are encoded.
func (w *Writer) stop() {
	w.ended = true
	close(w.enc.work)
	<-w.enc.done
}

// Rows is the number of records written.
func (w *Writer) Rows() int64 { return w.rows }

// Close writes what is buffered and the file footer (it does not close the underlying writer).
func (w *Writer) Close() error {
	if w.ended {
		return errors.New("stateparquet: Close after Close or Discard")
	}
	if w.cur != nil && len(w.cur.ends) > 0 {
		w.submit()
	}
	w.stop()
	if w.enc.failed.Load() {
		return w.failure()
	}
	if err := w.pw.Close(); err != nil {
		return fmt.Errorf("state %s: parquet: %w", w.state, err)
	}
	return nil
}

var errDiscarded = errors.New("export discarded")

// Discard ends the Writer without writing anything more (an export that failed elsewhere); it
// does nothing after Close.
func (w *Writer) Discard() {
	if w.ended {
		return
	}
	if w.cur != nil {
		w.cur.reset()
	}
	w.enc.fail(errDiscarded)
	w.stop()
}
