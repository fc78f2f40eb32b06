package keyed

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/golang/snappy"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// A full checkpoint of the hashmap (heap) backend has the canonical file's header but its own
// key-group blocks (HeapSnapshotStrategy; every key group of the range gets a block and an
// offset, empty ones too):
//
//	+--------------------------------------------------------------------+ offset 0
//	| header: exactly the canonical one (proxy version 6, ..., StateMeta) |
//	+--------------------------------------------------------------------+ <- offset[kg]
//	| i32 keyGroup           (uncompressed even with compression on)     |
//	| state section x numStates, in no particular order of state id:     |
//	|   +-------------+--------------------------------------------+     |
//	|   | i16 stateId | state table of this key group (see below)  |     |
//	|   +-------------+--------------------------------------------+     |
//	|   with compression each section is its own Snappy framed stream  |
//	+--------------------------------------------------------------------+ <- offset[kg+1] ...
//
//	key/value state table (StateMapSnapshot):
//	+-------------+--------------------------------------------------+
//	| i32 entries | entries x { NS bytes | K bytes | state bytes }    |
//	+-------------+--------------------------------------------------+
//	state bytes are the state's whole serializer (VALUE_SERIALIZER):
//	  value, reducing, aggregating: the value ([i64 TTL timestamp] value with TTL)
//	  list:  i32 n, n x element          ([i64 TTL timestamp] element with TTL)
//	  map:   i32 n, n x {user key, bool isNull, [value]}   ([i64 TTL] value with TTL)
//
//	timer queue (KeyGroupPartitioner):
//	+-------------+----------------------------------------------------------+
//	| i32 timers  | timers x TimerSerializer {i64 timestamp^MinInt64, K, NS} |
//	+-------------+----------------------------------------------------------+
//
// Nothing carries a length: each value is found by decoding it with its serializer, so a state
// whose serializer statecraft cannot decode is refused by name (its bytes cannot be skipped).
// The reader turns every entry into the canonical entry Flink would have written for it (key
// group prefix, K, NS, the length suffixes when both are variable-sized, map user key; list
// elements joined by ','), so that dump, check and convert see one entry type. A key group's
// entries are sorted state by state, keys ascending, as in a canonical block.

// heapEntries reads the subtask's heap-layout blocks key group by key group.
func (s *Subtask) heapEntries(fn func(*Entry) error) error {
	ends := BlockEnds(s.Handle.Offsets, s.size)
	hr := &heapReader{s: s}
	for i, off := range s.Handle.Offsets {
		if off == 0 {
			continue
		}
		kg := int(s.Handle.Range.Start) + i
		if err := hr.readBlock(off, ends[off], kg); err != nil {
			return err
		}
		for sid, es := range hr.byState {
			slices.SortFunc(es, func(a, b heapEntry) int { return bytes.Compare(a.key, b.key) })
			for _, he := range es {
				e := Entry{KeyGroup: kg, StateID: sid, Key: he.key, Value: he.value, Offset: -1, BlockOffset: off}
				if err := fn(&e); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// heapCheck is CheckBlocks for the heap layout: every block starts with its key-group number.
func (s *Subtask) heapCheck() error {
	for i, off := range s.Handle.Offsets {
		if off == 0 {
			continue
		}
		kg := int32(int(s.Handle.Range.Start) + i)
		var b [4]byte
		if off < 0 || off+4 > s.size {
			return &javaio.FormatError{Name: s.Name, Offset: off, Field: fmt.Sprintf("keyGroup[%d]", kg), Msg: fmt.Sprintf("block offset outside the %d-byte stream", s.size)}
		}
		if _, err := s.src.ReadAt(b[:], off); err != nil {
			return fmt.Errorf("%s: offset %d: key group %d: %w", s.Name, off, kg, err)
		}
		if got := int32(binary.BigEndian.Uint32(b[:])); got != kg {
			return &javaio.FormatError{Name: s.Name, Offset: off, Field: fmt.Sprintf("keyGroup[%d]", kg), Msg: fmt.Sprintf("the block starts with key-group number %d, want %d", got, kg)}
		}
	}
	return nil
}

type heapEntry struct{ key, value []byte }

// heapReader parses one key-group block at a time into canonical entries per state id.
type heapReader struct {
	s       *Subtask
	byState [][]heapEntry
	in      serializer.Input
	buf     []byte
}

// readBlock reads the block at [off, end) of key group kg.
func (h *heapReader) readBlock(off, end int64, kg int) error {
	s := h.s
	field := fmt.Sprintf("keyGroup[%d]", kg)
	if off < 0 || end > s.size || end-off < 4 {
		return &javaio.FormatError{Name: s.Name, Offset: off, Field: field, Msg: fmt.Sprintf("block [%d, %d) does not fit the %d-byte stream", off, end, s.size)}
	}
	raw := make([]byte, end-off)
	if _, err := s.src.ReadAt(raw, off); err != nil && err != io.EOF {
		return fmt.Errorf("%s: %s at offset %d: %w", s.Name, field, off, err)
	}
	if got := int32(binary.BigEndian.Uint32(raw)); got != int32(kg) {
		return &javaio.FormatError{Name: s.Name, Offset: off, Field: field, Msg: fmt.Sprintf("the block starts with key-group number %d, want %d", got, kg)}
	}
	body, bodyOff := raw[4:], off+4
	where := func(pos int) (int64, string) { return bodyOff + int64(pos), "" }
	if s.Header.Compressed {
		// One framed stream per state section, back to back; the framing allows a stream
		// identifier anywhere, so one reader takes them all.
		var err error
		h.buf, err = readAllInto(h.buf[:0], snappy.NewReader(bytes.NewReader(body)))
		if err != nil {
			return &javaio.FormatError{Name: s.Name, Offset: bodyOff, Field: field, Msg: "Snappy framed state sections: " + err.Error()}
		}
		body = h.buf
		where = func(pos int) (int64, string) {
			return bodyOff, fmt.Sprintf(" (decompressed byte %d of the block)", pos)
		}
	}
	n := len(s.Header.States)
	h.byState = slices.Grow(h.byState[:0], n)[:n]
	for i := range h.byState {
		h.byState[i] = nil
	}
	seen := make([]bool, n)
	in := &h.in
	in.Reset(body)
	for in.Remaining() > 0 {
		start := in.Pos
		sid := int(uint16(in.I16("state id")))
		if in.Err() == nil && (sid >= n || seen[sid]) {
			in.Pos = start
			in.Failf("state id %d: want one section per state id below %d", sid, n)
		}
		if in.Err() != nil {
			o, note := where(in.Pos)
			return &javaio.FormatError{Name: s.Name, Offset: o, Field: field + ".stateId", Msg: in.Err().Error() + note}
		}
		seen[sid] = true
		if err := h.readSection(kg, sid); err != nil {
			o, note := where(in.Pos)
			return &javaio.FormatError{Name: s.Name, Offset: o, Field: fmt.Sprintf("%s.state(%q)", field, s.Header.States[sid].Name), Msg: err.Error() + note}
		}
	}
	return nil
}

func readAllInto(dst []byte, r io.Reader) ([]byte, error) {
	var b bytes.Buffer
	b.Write(dst)
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// readSection reads one state's table (or timer queue) for key group kg from h.in.
func (h *heapReader) readSection(kg, sid int) error {
	d := h.s.Decoder
	sd := d.States[sid]
	in := &h.in
	prefix := binary.BigEndian.AppendUint16(nil, uint16(kg))[2-d.PrefixLen:]
	// span decodes one value with c and returns its bytes.
	span := func(c serializer.Codec, what string) []byte {
		if !c.Known() {
			in.Failf("%s: the serializer has no decoder in statecraft, and the heap layout stores no length to skip it by", what)
			return nil
		}
		p := in.Pos
		c.Decode(in)
		return in.B[p:in.Pos]
	}
	count := in.Length("entry count", 1)
	out := h.byState[sid]
	for i := 0; i < count && in.Err() == nil; i++ {
		if sd.Kind == "timer" {
			var elem []byte
			if sd.timerKey == nil {
				elem = span(sd.Value, "timer")
			} else {
				p := in.Pos
				in.I64("timer timestamp")
				span(sd.timerKey, "timer key")
				span(sd.Namespace, "timer namespace")
				elem = in.B[p:in.Pos]
			}
			out = append(out, heapEntry{key: concat(prefix, elem), value: []byte{}})
			continue
		}
		ns := span(sd.Namespace, "namespace")
		k := span(d.Key, "key")
		key := append(append([]byte{}, prefix...), k...)
		if sd.ambiguous {
			key = appendLengthSuffix(key, len(k))
		}
		key = append(key, ns...)
		if sd.ambiguous {
			key = appendLengthSuffix(key, len(ns))
		}
		ttl := func() []byte {
			if sd.TTL {
				p := in.Pos
				in.I64("ttl timestamp")
				return in.B[p:in.Pos]
			}
			return nil
		}
		switch sd.Kind {
		case "list":
			n := in.Length("list size", 1)
			var v []byte
			for j := 0; j < n && in.Err() == nil; j++ {
				if j > 0 {
					v = append(v, listDelimiter)
				}
				v = append(v, ttl()...)
				v = append(v, span(sd.Value, "list element")...)
			}
			if n > 0 {
				out = append(out, heapEntry{key: key, value: v})
			}
		case "map":
			n := in.Length("map size", 2)
			for j := 0; j < n && in.Err() == nil; j++ {
				uk := span(sd.UserKey, "map user key")
				null := in.U8("map value null flag")
				v := []byte{null}
				if null == 0 {
					v = append(v, ttl()...)
					v = append(v, span(sd.Value, "map value")...)
				}
				out = append(out, heapEntry{key: concat(key, uk), value: v})
			}
		default:
			v := ttl()
			v = append(v, span(sd.Value, "value")...)
			out = append(out, heapEntry{key: key, value: bytes.Clone(v)})
		}
	}
	h.byState[sid] = out
	return in.Err()
}

func concat(a, b []byte) []byte {
	return append(append(make([]byte, 0, len(a)+len(b)), a...), b...)
}

// HeapLayout reports whether any subtask of op holds a hashmap full checkpoint in the heap's own
// layout (which a conversion to canonical must rewrite).
func HeapLayout(sp *savepoint.Savepoint, op *metadata.OperatorState) (bool, error) {
	subs, closeAll, err := OpenSubtasks(sp, op)
	if err != nil {
		return false, err
	}
	defer closeAll()
	for _, s := range subs {
		if s.Heap {
			return true, nil
		}
	}
	return false, nil
}
