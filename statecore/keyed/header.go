package keyed

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// ProxyVersion is KeyedBackendSerializationProxy.VERSION in Flink 2.3.0 (javap). Flink 2.x reads
// no other version ("please migrate using Flink 1.16").
const ProxyVersion = 6

// MetaInfoVersion is the state meta-info format that proxy version 6 maps to in Flink 2.x
// (StateMetaInfoSnapshotReadersWriters.CURRENT_STATE_META_INFO_SNAPSHOT_VERSION = 7).
const MetaInfoVersion = 7

// maxStates is the largest state count a header may announce (written as a Java short).
const maxStates = 32767

// maxHeader bounds the bytes a header may take; real headers are a few KiB (SQL ones with
// Java-serialized logical types a few tens of KiB).
const maxHeader = 64 << 20

// BackendStateType is the ordinal of StateMetaInfoSnapshot.BackendStateType, as the meta info
// writes it.
type BackendStateType int32

// Backend state types (enum ordinals, not the enum's "code").
const (
	KeyValue      BackendStateType = 0
	Operator      BackendStateType = 1
	Broadcast     BackendStateType = 2
	PriorityQueue BackendStateType = 3
	KeyValueV2    BackendStateType = 4
)

func (t BackendStateType) String() string {
	switch t {
	case KeyValue:
		return "KEY_VALUE"
	case Operator:
		return "OPERATOR"
	case Broadcast:
		return "BROADCAST"
	case PriorityQueue:
		return "PRIORITY_QUEUE"
	case KeyValueV2:
		return "KEY_VALUE_V2"
	}
	return fmt.Sprintf("BackendStateType(%d)", int32(t))
}

// Option and serializer keys of the meta info (StateMetaInfoSnapshot.CommonOptionsKeys and
// CommonSerializerKeys).
const (
	OptKeyedStateType       = "KEYED_STATE_TYPE"
	OptDistributionMode     = "OPERATOR_STATE_DISTRIBUTION_MODE"
	SerKey                  = "KEY_SERIALIZER"
	SerNamespace            = "NAMESPACE_SERIALIZER"
	SerValue                = "VALUE_SERIALIZER"
	SerUserKey              = "USER_KEY_SERIALIZER"
	maxOptions              = 1024
	maxSerializersPerStates = 1024
)

// KV is one option of a meta info.
type KV struct{ Key, Value string }

// NamedSnapshot is one serializer of a meta info.
type NamedSnapshot struct {
	Key      string
	Snapshot *serializer.Snapshot
}

// StateMeta is one state's meta info (StateMetaInfoSnapshot). Options and serializers keep file
// order (Flink writes them from HashMaps, so the order carries no meaning).
type StateMeta struct {
	Name        string
	Type        BackendStateType
	Options     []KV
	Serializers []NamedSnapshot
}

// Option returns the value of option k, or "".
func (m *StateMeta) Option(k string) string {
	for _, o := range m.Options {
		if o.Key == k {
			return o.Value
		}
	}
	return ""
}

// Serializer returns the snapshot of serializer k, or nil.
func (m *StateMeta) Serializer(k string) *serializer.Snapshot {
	for _, s := range m.Serializers {
		if s.Key == k {
			return s.Snapshot
		}
	}
	return nil
}

// ReadStateMeta reads one meta info in format 6 or 7 (the two are identical here):
//
//	+-----------+----------------------+-------------+--------------------------+
//	| UTF name  | i32 backendStateType | i32 nOptions| nOptions x {UTF k, UTF v}|
//	+-----------+----------------------+-------------+--------------------------+
//	| i32 nSerializers | nSerializers x {UTF key, top-level serializer snapshot}|
//	+------------------+--------------------------------------------------------+
func ReadStateMeta(r *javaio.Reader, field string) *StateMeta {
	return readStateMeta(r, field, nil)
}

func readStateMeta(r *javaio.Reader, field string, simple map[string]bool) *StateMeta {
	m := &StateMeta{}
	m.Name = r.UTF(field + ".name")
	field = fmt.Sprintf("%s(%q)", field, m.Name)
	off := r.Offset()
	m.Type = BackendStateType(r.I32(field + ".backendStateType"))
	if r.Err() == nil && (m.Type < 0 || m.Type > KeyValueV2) {
		r.FailAt(off, field+".backendStateType", "state type ordinal %d, want 0..4", m.Type)
	}
	n := r.Count(field+".numOptions", maxOptions)
	for i := 0; i < n && r.Err() == nil; i++ {
		k := r.UTF(field + ".option.key")
		v := r.UTF(field + ".option[" + k + "]")
		m.Options = append(m.Options, KV{k, v})
	}
	n = r.Count(field+".numSerializers", maxSerializersPerStates)
	for i := 0; i < n && r.Err() == nil; i++ {
		k := r.UTF(field + ".serializer.key")
		s := serializer.ReadTopAssuming(r, field+".serializer["+k+"]", simple)
		m.Serializers = append(m.Serializers, NamedSnapshot{k, s})
	}
	if r.Err() != nil {
		return nil
	}
	return m
}

// Header is the start of a canonical keyed-state file (KeyedBackendSerializationProxy).
type Header struct {
	Version       int32
	Compressed    bool
	KeySerializer *serializer.Snapshot
	States        []*StateMeta
	// Raw is the header's bytes exactly as read; a writer that keeps every state copies them.
	Raw []byte
	// AssumedSimple are the serializer snapshot classes statecraft does not know that the header
	// was read with as SimpleTypeSerializerSnapshot subclasses (empty payload): the only reading
	// under which it parsed and ended where the snapshot says it ends (ReadHeaderUpTo).
	AssumedSimple []string
}

// Size is the header's length in bytes: the offset of the first byte after it.
func (h *Header) Size() int64 { return int64(len(h.Raw)) }

// maxAssumedSimple bounds the unknown classes one header is read again for.
const maxAssumedSimple = 16

// HeaderEnd is where the header of a key-groups stream of size bytes ends: at the first key group
// with data (the smallest offset above 0: Flink leaves 0 for a key group it wrote nothing for),
// or at the end of the stream when no key group has any.
func HeaderEnd(kh *metadata.KeyGroupsHandle, size int64) int64 {
	first := int64(0)
	for _, o := range kh.Offsets {
		if o > 0 && (first == 0 || o < first) {
			first = o
		}
	}
	if first == 0 {
		return size
	}
	return first
}

// ReadHeader reads the header at the start of a keyed-state stream:
//
//	+-------------------+----------------+------------------------+-------------+--------------------+
//	| i32 version (6)   | bool compressed| key serializer snapshot| i16 nStates | nStates x StateMeta|
//	+-------------------+----------------+------------------------+-------------+--------------------+
//
// name is used in errors. src is read only as far as the header goes (plus buffering).
//
// A serializer snapshot of a class statecraft does not know stops the read, since its payload has
// no length (ReadHeaderUpTo reads a user's simple snapshot when the header's end is known).
func ReadHeader(src io.Reader, name string) (*Header, error) {
	return ReadHeaderUpTo(src, name, -1)
}

// ReadHeaderUpTo is ReadHeader for a header the snapshot says ends at byte end (the size of a
// native snapshot's meta data file, HeaderEnd of a key-groups stream; -1: unknown). A user's
// SimpleTypeSerializerSnapshot subclass (a custom window's serializer, say) writes an empty
// payload; a snapshot of an unknown class that may be one (UnknownSnapshotError.EmptyPossible)
// makes the header be read again from the start with its payload taken as empty. That reading is
// kept only when the whole header parses under it and ends exactly at end (AssumedSimple names
// the classes); else the error says what the assumption led to.
func ReadHeaderUpTo(src io.Reader, name string, end int64) (*Header, error) {
	rec := &recorder{r: io.LimitReader(src, maxHeader)}
	var simple map[string]bool
	for {
		h, err := readHeader(rec, name, simple)
		if err == nil && len(simple) > 0 && h.Size() != end {
			err = fmt.Errorf("%s: the keyed header ends at byte %d, but the snapshot puts its end at %d", name, h.Size(), end)
		}
		var u *serializer.UnknownSnapshotError
		if err == nil || !errors.As(err, &u) || !u.EmptyPossible || end < 0 || simple[u.Class] || len(simple) >= maxAssumedSimple {
			if err != nil && len(simple) > 0 {
				return nil, fmt.Errorf("%w (read with %q as SimpleTypeSerializerSnapshot subclasses, whose payload is empty: it is not, and its length is unknown)", err, sortedKeys(simple))
			}
			if h != nil {
				h.AssumedSimple = sortedKeys(simple)
			}
			return h, err
		}
		if simple == nil {
			simple = map[string]bool{}
		}
		simple[u.Class] = true
		// Again from the first byte: the bytes read so far, then the rest of src.
		rec = &recorder{r: io.MultiReader(bytes.NewReader(rec.buf.Bytes()), rec.r)}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func readHeader(rec *recorder, name string, simple map[string]bool) (*Header, error) {
	r := javaio.NewReader(rec, name, 0)
	h := &Header{}
	h.Version = r.I32("keyedHeader.version")
	if r.Err() == nil && h.Version != ProxyVersion {
		r.FailAt(0, "keyedHeader.version", "keyed backend serialization proxy version %d, want %d (Flink 1.16 and later)", h.Version, ProxyVersion)
	}
	h.Compressed = r.Bool("keyedHeader.compression")
	h.KeySerializer = serializer.ReadTopAssuming(r, "keyedHeader.keySerializer", simple)
	off := r.Offset()
	n := int(r.I16("keyedHeader.numStates"))
	if r.Err() == nil && n < 0 {
		r.FailAt(off, "keyedHeader.numStates", "negative state count %d", n)
	}
	for i := 0; i < n && r.Err() == nil; i++ {
		h.States = append(h.States, readStateMeta(r, fmt.Sprintf("keyedHeader.state[%d]", i), simple))
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	h.Raw = bytes.Clone(rec.buf.Bytes()[:r.Offset()])
	return h, nil
}

// recorder keeps every byte read through it, so the header's exact bytes are known afterwards
// (the buffered reader on top may read ahead; the caller cuts at the header's end).
type recorder struct {
	r   io.Reader
	buf bytes.Buffer
}

func (c *recorder) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.buf.Write(p[:n])
	return n, err
}

// StateKind is the KEYED_STATE_TYPE option in lower case (value, list, map, reducing,
// aggregating), or "timer" for priority-queue states.
func (m *StateMeta) StateKind() string {
	if m.Type == PriorityQueue {
		return "timer"
	}
	switch m.Option(OptKeyedStateType) {
	case "VALUE":
		return "value"
	case "LIST":
		return "list"
	case "MAP":
		return "map"
	case "REDUCING":
		return "reducing"
	case "AGGREGATING":
		return "aggregating"
	case "":
		return "unknown"
	}
	return "unknown:" + m.Option(OptKeyedStateType)
}

// EntrySerializers unwraps the value serializer snapshot of a state that is not a timer state
// into the snapshots of what one entry holds: the map user key (map state only; isMap false, and
// value the whole snapshot, when a map state's snapshot is not a map serializer's), and the value
// (list state: one element), its TTL wrapper removed (ttl true when there was one). value is nil
// without a value serializer.
// The decoder, the encoder and the Parquet export all read entries through it.
func (m *StateMeta) EntrySerializers() (userKey, value *serializer.Snapshot, isMap, ttl bool) {
	value = m.Serializer(SerValue)
	switch m.StateKind() {
	case "list":
		if el, ok := serializer.ListElement(value); ok {
			value = el
		}
	case "map":
		if uk, uv, ok := serializer.MapKeyValue(value); ok {
			userKey, value, isMap = uk, uv, true
		}
	}
	if in := serializer.UnwrapTTL(value); in != value {
		value, ttl = in, true
	}
	return userKey, value, isMap, ttl
}

// Encode writes the header: the inverse of ReadHeader. Serializer snapshots are copied from Raw
// (the header they were read from), so a header whose states were renamed, dropped, reordered
// or whose compression flag changed can be written without re-encoding any snapshot.
func (h *Header) Encode() ([]byte, error) {
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	w.I32(h.Version)
	w.Bool(h.Compressed)
	snap := func(s *serializer.Snapshot) error {
		if s == nil || s.Offset < 4 || s.End > int64(len(h.Raw)) || s.End <= s.Offset {
			return fmt.Errorf("keyed header: serializer snapshot without its bytes in the header")
		}
		w.Raw(h.Raw[s.Offset-4 : s.End])
		return nil
	}
	if err := snap(h.KeySerializer); err != nil {
		return nil, err
	}
	if len(h.States) > maxStates {
		return nil, fmt.Errorf("keyed header: %d states, at most %d", len(h.States), maxStates)
	}
	w.I16(int16(len(h.States)))
	for _, m := range h.States {
		w.UTF(m.Name)
		w.I32(int32(m.Type))
		w.I32(int32(len(m.Options)))
		for _, o := range m.Options {
			w.UTF(o.Key)
			w.UTF(o.Value)
		}
		w.I32(int32(len(m.Serializers)))
		for _, s := range m.Serializers {
			w.UTF(s.Key)
			if err := snap(s.Snapshot); err != nil {
				return nil, fmt.Errorf("state %q %s: %w", m.Name, s.Key, err)
			}
		}
	}
	if err := w.Err(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
