package rocksdb

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
)

// Kind is the type of an internal key (RocksDB's ValueType).
type Kind byte

const (
	KindDelete       Kind = 0x0
	KindPut          Kind = 0x1
	KindMerge        Kind = 0x2
	KindSingleDelete Kind = 0x7
	KindRangeDelete  Kind = 0xF
)

func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "Delete"
	case KindPut:
		return "Put"
	case KindMerge:
		return "Merge"
	case KindSingleDelete:
		return "SingleDelete"
	case KindRangeDelete:
		return "RangeDeletion"
	case 0x11:
		return "BlobIndex"
	case 0x16:
		return "WideColumnEntity"
	}
	return fmt.Sprintf("value type %#x", byte(k))
}

// Meta block names this reader acts on.
const (
	metaProperties = "rocksdb.properties"
	metaRangeDel   = "rocksdb.range_del"
)

// Property names read from the properties block.
const (
	PropColumnFamilyName = "rocksdb.column.family.name"
	PropColumnFamilyID   = "rocksdb.column.family.id"
	PropCompression      = "rocksdb.compression"
	PropFormatVersion    = "rocksdb.format.version"
	PropMergeOperator    = "rocksdb.merge.operator"
	PropComparator       = "rocksdb.comparator"
	PropNumEntries       = "rocksdb.num.entries"
	propIndexType        = "rocksdb.block.based.table.index.type"
	propIndexDelta       = "rocksdb.index.value.is.delta.encoded"
	propExternalVersion  = "rocksdb.external_sst_file.version"
	propExternalSeqno    = "rocksdb.external_sst_file.global_seqno"
)

// Properties are a table's properties block: name to raw value. Numbers are varint64s except the
// few RocksDB writes as fixed-width integers.
type Properties map[string][]byte

// String returns a string property ("" when absent).
func (p Properties) String(name string) string { return string(p[name]) }

// Uint returns a varint64 property; ok is false when it is absent or not a varint.
func (p Properties) Uint(name string) (uint64, bool) {
	v, ok := p[name]
	if !ok {
		return 0, false
	}
	n, k := binary.Uvarint(v)
	return n, k == len(v)
}

// Table is an open block-based table. Its methods may be called from one goroutine at a time.
type Table struct {
	name   string
	r      io.ReaderAt
	size   int64
	footer footer
	props  Properties
	// deltaIndex: index values are delta-encoded handles without a value length.
	deltaIndex bool
	// partitioned: a two-level index (index type 2); the footer's index block points at index
	// partitions, each an ordinary index block of the data blocks it covers.
	partitioned bool
	rangeDel    blockHandle
	hasRange    bool
	// globalSeq replaces every key's sequence number when non-zero (an ingested table).
	globalSeq uint64
	external  bool
}

// OpenTable reads the footer, metaindex and properties of the table in r (size bytes), refusing
// by name any feature this reader does not implement. name is used in error messages.
func OpenTable(r io.ReaderAt, size int64, name string) (*Table, error) {
	f, err := readFooter(r, size, name)
	if err != nil {
		return nil, err
	}
	t := &Table{name: name, r: r, size: size, footer: f, props: Properties{}}
	meta, err := t.block(f.metaindex, "metaindex")
	if err != nil {
		return nil, err
	}
	it, err := newBlockIter(meta, t.where("metaindex", f.metaindex), false)
	if err != nil {
		return nil, err
	}
	var propsHandle blockHandle
	var hasProps bool
	for it.next() {
		h, _, err := decodeHandle(it.value)
		if err != nil {
			return nil, fmt.Errorf("%s: metaindex entry %q: %w", name, it.key, err)
		}
		switch k := string(it.key); {
		case k == metaProperties:
			propsHandle, hasProps = h, true
		case k == metaRangeDel:
			t.rangeDel, t.hasRange = h, true
		case k == "rocksdb.compression_dict":
			return nil, fmt.Errorf("%s: compression dictionaries (meta block %q) are not supported", name, k)
		case k == "rocksdb.hashindex.prefixes" || k == "rocksdb.hashindex.metadata":
			return nil, fmt.Errorf("%s: hash index (meta block %q) is not supported", name, k)
		}
		// Filters and other meta blocks only speed up lookups; a full scan needs none of them.
	}
	if it.err != nil {
		return nil, it.err
	}
	if !hasProps {
		return nil, fmt.Errorf("%s: no %q meta block", name, metaProperties)
	}
	pb, err := t.block(propsHandle, "properties")
	if err != nil {
		return nil, err
	}
	pit, err := newBlockIter(pb, t.where("properties", propsHandle), false)
	if err != nil {
		return nil, err
	}
	for pit.next() {
		t.props[string(pit.key)] = bytes.Clone(pit.value)
	}
	if pit.err != nil {
		return nil, pit.err
	}
	if v, ok := t.props[propIndexType]; ok {
		if len(v) != 4 {
			return nil, fmt.Errorf("%s: property %s: %d bytes, want a u32", name, propIndexType, len(v))
		}
		switch it := binary.LittleEndian.Uint32(v); it {
		case 0: // binary search
		case 1:
			return nil, fmt.Errorf("%s: hash index (index type 1) is not supported", name)
		case 2:
			// Two-level: the footer's index block indexes index partitions (ForSt's default).
			t.partitioned = true
		case 3:
			return nil, fmt.Errorf("%s: index with first keys (index type 3) is not supported", name)
		default:
			return nil, fmt.Errorf("%s: unknown index type %d", name, it)
		}
	}
	if c := t.props.String(PropComparator); c != "" && c != "leveldb.BytewiseComparator" {
		return nil, fmt.Errorf("%s: comparator %q is not supported (leveldb.BytewiseComparator is)", name, c)
	}
	if d, ok := t.props.Uint(propIndexDelta); ok && d != 0 {
		t.deltaIndex = true
	}
	if _, ok := t.props[propExternalVersion]; ok {
		t.external = true
		if v := t.props[propExternalSeqno]; len(v) == 8 {
			t.globalSeq = binary.LittleEndian.Uint64(v)
		}
	}
	return t, nil
}

// Name is the name the table was opened with.
func (t *Table) Name() string { return t.name }

// Properties returns the table's properties.
func (t *Table) Properties() Properties { return t.props }

// FormatVersion is the footer's format version.
func (t *Table) FormatVersion() uint32 { return t.footer.formatVersion }

// External reports whether the table was written outside the database and ingested; its keys
// carry sequence number 0 and take the one the MANIFEST records (SetGlobalSeqno).
func (t *Table) External() bool { return t.external }

// SetGlobalSeqno sets the sequence number of every key of an ingested table.
func (t *Table) SetGlobalSeqno(seq uint64) { t.globalSeq = seq }

func (t *Table) where(what string, h blockHandle) string {
	return fmt.Sprintf("%s: %s block at offset %d", t.name, what, h.offset)
}

func (t *Table) block(h blockHandle, what string) ([]byte, error) {
	return readBlock(t.r, t.size, t.name, t.footer.checksum, h, what, nil)
}

// Entry is one internal key/value of a table.
type Entry struct {
	UserKey []byte
	Seq     uint64
	Kind    Kind
	Value   []byte
}

func splitInternal(ik []byte) (user []byte, seq uint64, kind Kind, ok bool) {
	if len(ik) < 8 {
		return nil, 0, 0, false
	}
	tr := binary.LittleEndian.Uint64(ik[len(ik)-8:])
	return ik[:len(ik)-8], tr >> 8, Kind(tr & 0xff), true
}

// RangeTombstone deletes the user keys in [Start, End) older than Seq.
type RangeTombstone struct {
	Start, End []byte
	Seq        uint64
}

// RangeTombstones reads the table's range_del block (none when it has none).
func (t *Table) RangeTombstones() ([]RangeTombstone, error) {
	if !t.hasRange {
		return nil, nil
	}
	b, err := t.block(t.rangeDel, "range_del")
	if err != nil {
		return nil, err
	}
	it, err := newBlockIter(b, t.where("range_del", t.rangeDel), false)
	if err != nil {
		return nil, err
	}
	var out []RangeTombstone
	for it.next() {
		user, seq, kind, ok := splitInternal(it.key)
		if !ok || kind != KindRangeDelete {
			return nil, fmt.Errorf("%s: range_del entry %d: key is not a range tombstone (%d bytes, %s)", t.name, len(out), len(it.key), kind)
		}
		if t.globalSeq != 0 {
			seq = t.globalSeq
		}
		out = append(out, RangeTombstone{Start: bytes.Clone(user), End: bytes.Clone(it.value), Seq: seq})
	}
	if it.err != nil {
		return nil, it.err
	}
	return out, nil
}

// Iter returns an iterator over all entries of the table in internal-key order (user key
// ascending, then sequence number descending). It holds one data block at a time.
func (t *Table) Iter() *TableIter { return &TableIter{t: t} }

// TableIter iterates a table's entries; see Table.Iter.
type TableIter struct {
	t       *Table
	top     *blockIter // the top-level index of a partitioned index, else nil
	index   *blockIter
	data    *blockIter
	entry   Entry
	err     error
	started bool
	last    []byte   // previous internal key, to check the order
	buf     blockBuf // the current data block's memory, reused by the next
}

// Next moves to the next entry; false at the end or on error (Err).
func (it *TableIter) Next() bool {
	if it.err != nil {
		return false
	}
	if !it.started {
		it.started = true
		b, err := it.t.block(it.t.footer.index, "index")
		if err != nil {
			it.err = err
			return false
		}
		top, err := newBlockIter(b, it.t.where("index", it.t.footer.index), it.t.deltaIndex)
		if err != nil {
			it.err = err
			return false
		}
		if it.t.partitioned {
			it.top = top
		} else {
			it.index = top
		}
	}
	for it.data == nil || !it.data.next() {
		if it.data != nil && it.data.err != nil {
			it.err = it.data.err
			return false
		}
		h, ok := it.nextDataHandle()
		if !ok {
			return false
		}
		b, err := readBlock(it.t.r, it.t.size, it.t.name, it.t.footer.checksum, h, "data", &it.buf)
		if err != nil {
			it.err = err
			return false
		}
		if it.data, err = newBlockIter(b, it.t.where("data", h), false); err != nil {
			it.err = err
			return false
		}
	}
	user, seq, kind, ok := splitInternal(it.data.key)
	if !ok {
		it.err = fmt.Errorf("%s: entry at offset %d: internal key of %d bytes (at least 8)", it.data.what, it.data.pos, len(it.data.key))
		return false
	}
	switch kind {
	case KindPut, KindDelete, KindSingleDelete, KindMerge:
	default:
		it.err = fmt.Errorf("%s: entry at offset %d: %s entries are not supported", it.data.what, it.data.pos, kind)
		return false
	}
	if it.last != nil && compareInternal(it.last, it.data.key) >= 0 {
		it.err = fmt.Errorf("%s: entry at offset %d: key is not after the previous one (table not sorted)", it.data.what, it.data.pos)
		return false
	}
	it.last = append(it.last[:0], it.data.key...)
	if it.t.globalSeq != 0 {
		seq = it.t.globalSeq
	}
	it.entry = Entry{UserKey: user, Seq: seq, Kind: kind, Value: it.data.value}
	return true
}

// nextDataHandle returns the handle of the next data block, moving to the next index partition
// when the current one is done; false at the end or on error (it.err).
func (it *TableIter) nextDataHandle() (blockHandle, bool) {
	for {
		if it.index != nil {
			if it.index.next() {
				return it.handleOf(it.index, "index")
			}
			if it.err = it.index.err; it.err != nil || it.top == nil {
				return blockHandle{}, false
			}
		}
		if !it.top.next() {
			it.err = it.top.err
			return blockHandle{}, false
		}
		h, ok := it.handleOf(it.top, "top-level index")
		if !ok {
			return blockHandle{}, false
		}
		b, err := it.t.block(h, "index partition")
		if err != nil {
			it.err = err
			return blockHandle{}, false
		}
		if it.index, err = newBlockIter(b, it.t.where("index partition", h), it.t.deltaIndex); err != nil {
			it.err = err
			return blockHandle{}, false
		}
	}
}

// handleOf is the block handle of an index iterator's current entry.
func (it *TableIter) handleOf(ix *blockIter, what string) (blockHandle, bool) {
	if it.t.deltaIndex {
		return ix.handle, true
	}
	h, _, err := decodeHandle(ix.value)
	if err != nil {
		it.err = fmt.Errorf("%s: %s entry at offset %d: %w", it.t.name, what, ix.pos, err)
		return blockHandle{}, false
	}
	return h, true
}

// Entry is the current entry; its slices are valid until the next call to Next.
func (it *TableIter) Entry() Entry { return it.entry }

// Err is the error that ended the iteration, if any.
func (it *TableIter) Err() error { return it.err }

// compareInternal orders internal keys as RocksDB's bytewise comparator does: user key
// ascending, then the (sequence << 8 | type) trailer descending.
func compareInternal(a, b []byte) int {
	ua, ub := a[:len(a)-8], b[:len(b)-8]
	if c := bytes.Compare(ua, ub); c != 0 {
		return c
	}
	ta, tb := binary.LittleEndian.Uint64(a[len(a)-8:]), binary.LittleEndian.Uint64(b[len(b)-8:])
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}
