package keyed

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// listDelimiter separates list-state elements (ListDelimitedSerializer: ',').
const listDelimiter = 0x2C

// Record is a decoded entry: one key (and namespace, map user key) of one state, or one timer.
type Record struct {
	State     string
	Kind      string // value, list, map, reducing, aggregating, timer
	KeyGroup  int
	Key       any
	Namespace any
	UserKey   any
	Value     any // list state: []any of the elements
	// TTL is the last-access timestamp of a TTL-wrapped value (int64), or of each list element
	// ([]int64); nil without TTL.
	TTL any
	// Timers: event or processing, and the timer's timestamp.
	TimerKind string
	Timestamp int64
	// RawKey and RawValue are the entry's bytes as stored (prefix included, flag cleared), kept
	// only when Decoder.KeepRaw is set.
	RawKey, RawValue []byte
}

// MarshalJSON writes the record in the shape of the expectation files' entries (key, namespace,
// userKey, value; timers: kind, key, namespace, timestamp) plus state, keyGroup and ttlTimestamp.
func (r Record) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	add := func(k string, v any) error {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		b.Write(vb)
		return nil
	}
	b.WriteByte('{')
	fields := []struct {
		k string
		v any
	}{{"state", r.State}, {"keyGroup", r.KeyGroup}}
	if r.Kind == "timer" {
		fields = append(fields, []struct {
			k string
			v any
		}{{"kind", r.TimerKind}, {"key", r.Key}, {"namespace", r.Namespace}, {"timestamp", r.Timestamp}}...)
	} else {
		fields = append(fields, []struct {
			k string
			v any
		}{{"key", r.Key}, {"namespace", r.Namespace}, {"userKey", r.UserKey}, {"value", r.Value}}...)
		if r.TTL != nil {
			fields = append(fields, struct {
				k string
				v any
			}{"ttlTimestamp", r.TTL})
		}
	}
	for _, f := range fields {
		if err := add(f.k, f.v); err != nil {
			return nil, err
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// StateDecoder holds the codecs of one state.
type StateDecoder struct {
	ID        int
	Meta      *StateMeta
	Kind      string
	TimerKind string
	Namespace serializer.Codec
	UserKey   serializer.Codec // map state
	Value     serializer.Codec // value: the value; list: the element; map: the user value
	TTL       bool             // Value is wrapped in TTL (the codec above is the inner one)
	ambiguous bool
	timerKey  serializer.Codec
}

// Decoder turns entries into records.
type Decoder struct {
	Header    *Header
	Name      string // stream name for errors
	PrefixLen int
	Key       serializer.Codec
	States    []*StateDecoder
	// KeepRaw copies each entry's raw key and value into the record.
	KeepRaw bool
	in      serializer.Input
}

// NewDecoder builds codecs for every state of h; maxParallelism sets the key-group prefix width.
func NewDecoder(h *Header, name string, maxParallelism int) *Decoder {
	d := &Decoder{Header: h, Name: name, PrefixLen: PrefixLen(maxParallelism), Key: serializer.NewCodec(h.KeySerializer)}
	for i, m := range h.States {
		sd := &StateDecoder{ID: i, Meta: m, Kind: m.StateKind()}
		if m.Type == PriorityQueue {
			sd.TimerKind = timerKind(m.Name)
			if ts := m.Serializer(SerValue); ts != nil && len(ts.Nested) == 2 {
				sd.timerKey = serializer.NewCodec(ts.Nested[0])
				sd.Namespace = serializer.NewCodec(ts.Nested[1])
			} else {
				sd.Value = serializer.NewCodec(ts)
			}
			d.States = append(d.States, sd)
			continue
		}
		sd.Namespace = serializer.NewCodec(m.Serializer(SerNamespace))
		// Codecs are built from the nested snapshots (not from the list or map codec), so that an
		// undecodable element or value stays opaque alone while keys and TTL timestamps decode.
		uk, vs, isMap, ttl := m.EntrySerializers()
		if isMap {
			sd.UserKey = serializer.NewCodec(uk)
		} else if sd.Kind == "map" {
			sd.UserKey = serializer.OpaqueCodec("map user key of " + m.Name)
		}
		sd.TTL = ttl
		sd.Value = serializer.NewCodec(vs)
		sd.ambiguous = d.Key.FixedLen() < 0 && sd.Namespace.FixedLen() < 0
		d.States = append(d.States, sd)
	}
	return d
}

func timerKind(name string) string {
	switch {
	case strings.HasPrefix(name, "_timer_state/event_"):
		return "event"
	case strings.HasPrefix(name, "_timer_state/processing_"):
		return "processing"
	}
	return "unknown"
}

func (d *Decoder) fail(e *Entry, part string, err error) error {
	field := fmt.Sprintf("keyGroup[%d].state(%q).%s", e.KeyGroup, d.States[e.StateID].Meta.Name, part)
	if e.Offset < 0 {
		// A native snapshot's entry has no file offset: name its RocksDB key instead.
		return fmt.Errorf("%s: %s of RocksDB key %x: %w", d.Name, field, e.Key, err)
	}
	// The entry is i32 keyLen, key, i32 valueLen, value: point at the failing byte itself.
	off := e.Offset + 4
	if part == "value" {
		off += int64(len(e.Key)) + 4
	}
	var de *serializer.DecodeError
	if errors.As(err, &de) {
		off += int64(de.Pos)
	}
	if e.Compressed {
		field += fmt.Sprintf(" (decompressed byte %d of the Snappy block at offset %d)", off, e.BlockOffset)
		off = e.BlockOffset
	}
	return &javaio.FormatError{Name: d.Name, Offset: off, Field: field, Msg: err.Error()}
}

// Decode decodes one entry.
func (d *Decoder) Decode(e *Entry) (Record, error) {
	if e.StateID < 0 || e.StateID >= len(d.States) {
		return Record{}, fmt.Errorf("%s: state id %d out of range", d.Name, e.StateID)
	}
	sd := d.States[e.StateID]
	r := Record{State: sd.Meta.Name, Kind: sd.Kind, KeyGroup: e.KeyGroup, TimerKind: sd.TimerKind}
	if d.KeepRaw {
		r.RawKey, r.RawValue = bytes.Clone(e.Key), bytes.Clone(e.Value)
	}
	in := &d.in
	in.Reset(e.Key)
	in.Pos = d.PrefixLen
	if sd.Kind == "timer" {
		if sd.timerKey == nil {
			r.Value = sd.Value.Decode(in)
		} else {
			r.Timestamp = in.I64("timer timestamp") ^ math.MinInt64
			r.Key = sd.timerKey.Decode(in)
			r.Namespace = sd.Namespace.Decode(in)
		}
		if err := checkEnd(in, "timer"); err != nil {
			return r, d.fail(e, "key", err)
		}
		return r, nil
	}
	r.Key = d.Key.Decode(in)
	keyEnd := in.Pos
	if sd.ambiguous {
		skipLengthSuffix(in, keyEnd-d.PrefixLen)
	}
	nsStart := in.Pos
	switch {
	case sd.Kind == "map" && sd.UserKey != nil && !sd.Namespace.Known():
		// An opaque namespace would take the user key too: the split is searched for.
		r.Namespace, r.UserKey = splitOpaqueNamespace(in, sd, sd.ambiguous)
	case sd.ambiguous && !sd.Namespace.Known():
		// An opaque namespace would take every byte left, its length suffix too; but the
		// suffix ends the key, and it says how long the namespace is.
		r.Namespace = decodeBeforeSuffix(in, sd.Namespace)
		skipLengthSuffix(in, in.Pos-nsStart)
	default:
		r.Namespace = sd.Namespace.Decode(in)
		if sd.ambiguous {
			skipLengthSuffix(in, in.Pos-nsStart)
		}
		if sd.Kind == "map" && sd.UserKey != nil {
			r.UserKey = sd.UserKey.Decode(in)
		}
	}
	if err := checkEnd(in, "key"); err != nil {
		return r, d.fail(e, "key", err)
	}

	in.Reset(e.Value)
	switch sd.Kind {
	case "list":
		var elems []any
		var ts []int64
		for in.Remaining() > 0 && in.Err() == nil {
			if sd.TTL {
				ts = append(ts, in.I64("ttl timestamp"))
			}
			elems = append(elems, sd.Value.Decode(in))
			if in.Remaining() > 0 {
				p := in.Pos
				if c := in.U8("list delimiter"); c != listDelimiter && in.Err() == nil {
					in.Pos = p
					in.Failf("list delimiter 0x%02x, want 0x2C", c)
				}
			}
		}
		r.Value = elems
		if sd.TTL {
			r.TTL = ts
		}
	case "map":
		if in.U8("map value null flag") != 0 {
			in.Pos = len(in.B) // RocksDB writes only the flag; the heap backend may write more
			break
		}
		if sd.TTL {
			r.TTL = in.I64("ttl timestamp")
		}
		r.Value = sd.Value.Decode(in)
	default:
		if sd.TTL {
			r.TTL = in.I64("ttl timestamp")
		}
		r.Value = sd.Value.Decode(in)
	}
	if err := checkEnd(in, "value"); err != nil {
		return r, d.fail(e, "value", err)
	}
	return r, nil
}

func checkEnd(in *serializer.Input, what string) error {
	if err := in.Err(); err != nil {
		return err
	}
	if in.Remaining() != 0 {
		return fmt.Errorf("%d bytes left over after the %s at byte %d", in.Remaining(), what, in.Pos)
	}
	return nil
}

// decodeBeforeSuffix decodes, with c, the bytes of in that its last bytes, a length suffix as
// skipLengthSuffix reads it, give the length of: the namespace of a key whose serializer is
// unknown. Of the n bytes left, n-1 with a 1-byte suffix, n-2 with a 2-byte one, and so on, only
// one split can hold, since the suffix grows with the length; its bytes must then say that length.
func decodeBeforeSuffix(in *serializer.Input, c serializer.Codec) any {
	n := in.Remaining()
	for width := 1; width <= 5 && width <= n; width++ {
		l := n - width
		if suffixWidth(l) != width {
			continue
		}
		got := 0
		for i, b := range in.B[in.Pos+l:] {
			got |= int(b) << (8 * i)
		}
		if got != l {
			in.Failf("namespace of unknown serializer: the key's last %d bytes give its length as %d, want %d (the bytes before them)", width, got, l)
			return nil
		}
		end := in.Pos + l
		whole := in.B
		in.B = whole[:end]
		v := c.Decode(in)
		in.B = whole
		return v
	}
	in.Failf("namespace of unknown serializer: no length suffix fits the %d bytes left", n)
	return nil
}

// suffixWidth is the number of bytes of the length suffix of n.
func suffixWidth(n int) int {
	w := 1
	for n >>= 8; n != 0; n >>= 8 {
		w++
	}
	return w
}

// skipLengthSuffix skips the length Flink appends to a key and a namespace when both serializers
// are variable-sized (CompositeKeySerializationUtils.writeVariableIntBytes): the length's bytes,
// least significant first, one per 8 bits, at least one. A suffix that is not n is an error.
func skipLengthSuffix(in *serializer.Input, n int) {
	got := 0
	for i, rest := 0, n; ; i++ {
		got |= int(in.U8("length suffix")) << (8 * i)
		if rest >>= 8; rest == 0 {
			break
		}
	}
	if got != n && in.Err() == nil {
		in.Failf("length suffix %d, want %d (the length of what it follows)", got, n)
	}
}
