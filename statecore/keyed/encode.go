package keyed

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// RecordEncoder is the inverse of Decoder.Decode: it turns a record as `savepoint dump` prints it
// (decoded from JSON with UseNumber) back into an entry's bytes, under the header's serializers.
// The key-group prefix is not written: it depends on the key's hash, which the caller computes
// from the key's bytes (KeyAt says where they start) for its max parallelism.
//
//	rest  := K [len(K)] NS [len(NS)] [map user key]     (lengths as Decode skips them)
//	timer := i64 timestamp ^ 0x8000000000000000, K, NS   value: empty
//	value := as the package comment draws it, TTL timestamps from "ttlTimestamp"
type RecordEncoder struct {
	states  map[string]*stateEncoder
	names   []string
	byName  []*stateEncoder // states[names[i]] when the names are few (EncodeRaw's lookup)
	key     serializer.Encoder
	rawKey  serializer.RawEncoder // EncodeRaw's
	rawKeyI serializer.RawIntEncoder
	keyErr  error
	buf     []byte
	// EncodeRaw's last key token and its bytes (keyOK: they are set): a map state's entries
	// come in runs of one key
	keyTok, keyBytes []byte
	keyOK            bool
}

type stateEncoder struct {
	id        int
	kind      string
	isMap     bool // kind "map"
	rawKind   bool // a kind EncodeRaw takes (not a timer or list)
	ttl       bool
	ambiguous bool
	ns, uk, v serializer.Encoder
	raw       rawEncoders
	err       error // the state's types cannot be written; reported at its first record
}

// Encoded is one entry: state id, the key past its key-group prefix, where the key's own bytes
// start in it (8 for a timer, after its timestamp), and the value. Rest and Value are valid until
// the next Encode.
type Encoded struct {
	StateID int
	Rest    []byte
	KeyAt   int
	Value   []byte
}

// NewRecordEncoder builds encoders for every state of h, as NewDecoder builds codecs.
func NewRecordEncoder(h *Header) *RecordEncoder {
	d := NewDecoder(h, "", 128)
	e := &RecordEncoder{states: map[string]*stateEncoder{}}
	e.key, e.keyErr = serializer.NewEncoder(h.KeySerializer)
	e.rawKey = serializer.NewRawEncoder(h.KeySerializer)
	e.rawKeyI = serializer.NewRawIntEncoder(h.KeySerializer)
	for _, sd := range d.States {
		se := &stateEncoder{id: sd.ID, kind: sd.Kind, ttl: sd.TTL, ambiguous: sd.ambiguous,
			isMap: sd.Kind == "map", rawKind: sd.Kind != "timer" && sd.Kind != "list"}
		e.names = append(e.names, sd.Meta.Name)
		e.states[sd.Meta.Name] = se
		e.byName = append(e.byName, se)
		m := sd.Meta
		if sd.Kind == "timer" {
			ts := m.Serializer(SerValue)
			if ts == nil || len(ts.Nested) != 2 {
				se.err = fmt.Errorf("timer state %q: no timer serializer with key and namespace", m.Name)
				continue
			}
			if se.ns, se.err = serializer.NewEncoder(ts.Nested[1]); se.err != nil {
				continue
			}
			continue
		}
		if se.ns, se.err = serializer.NewEncoder(m.Serializer(SerNamespace)); se.err != nil {
			continue
		}
		se.raw.ns = serializer.NewRawEncoder(m.Serializer(SerNamespace))
		se.raw.nsI = serializer.NewRawIntEncoder(m.Serializer(SerNamespace))
		uk, vs, isMap, _ := m.EntrySerializers()
		if sd.Kind == "map" {
			if !isMap {
				se.err = fmt.Errorf("map state %q: no map serializer", m.Name)
				continue
			}
			if se.uk, se.err = serializer.NewEncoder(uk); se.err != nil {
				continue
			}
			se.raw.uk = serializer.NewRawEncoder(uk)
			se.raw.ukI = serializer.NewRawIntEncoder(uk)
		}
		if vs == nil {
			se.err = fmt.Errorf("state %q: no value serializer", m.Name)
			continue
		}
		se.v, se.err = serializer.NewEncoder(vs)
		se.raw.v = serializer.NewRawEncoder(vs)
		se.raw.vI = serializer.NewRawIntEncoder(vs)
	}
	return e
}

// Kind is the kind of the state called name (value, list, map, reducing, aggregating, timer),
// or "" when the header has no such state.
func (e *RecordEncoder) Kind(name string) string {
	if se := e.states[name]; se != nil {
		return se.kind
	}
	return ""
}

// States names the states, in header order.
func (e *RecordEncoder) States() []string { return e.names }

// Encode writes rec (fields state, key, namespace, userKey, value, ttlTimestamp; timers:
// timestamp). where prefixes errors (file and line).
func (e *RecordEncoder) Encode(rec map[string]any, where string) (Encoded, error) {
	name, _ := rec["state"].(string)
	se := e.states[name]
	if se == nil {
		return Encoded{}, fmt.Errorf("%s: state %q: no such keyed state (the operator has %v)", where, name, e.names)
	}
	if se.err != nil {
		return Encoded{}, fmt.Errorf("%s: %w", where, se.err)
	}
	if e.keyErr != nil {
		return Encoded{}, fmt.Errorf("%s: key: %w", where, e.keyErr)
	}
	b := e.buf[:0]
	out := Encoded{StateID: se.id}
	var err error
	if se.kind == "timer" {
		ts, err := int64Of(rec["timestamp"], where+": timestamp")
		if err != nil {
			return Encoded{}, err
		}
		b = binary.BigEndian.AppendUint64(b, uint64(ts^math.MinInt64))
		out.KeyAt = 8
		if b, err = e.key(b, rec["key"], where+": key"); err != nil {
			return Encoded{}, err
		}
		if b, err = se.ns(b, rec["namespace"], where+": namespace"); err != nil {
			return Encoded{}, err
		}
		e.buf = b
		out.Rest = b
		return out, nil
	}
	if b, err = e.appendKey(b, se, rec, where); err != nil {
		return Encoded{}, err
	}
	keyEnd := len(b)
	if b, err = e.value(b, se, rec, where); err != nil {
		return Encoded{}, err
	}
	e.buf = b
	out.Rest, out.Value = b[:keyEnd], b[keyEnd:]
	return out, nil
}

// EncodeKey writes only the key part of rec (key, namespace and, for a map state, userKey
// unless withUserKey is false): what names the entries a patch deletes.
func (e *RecordEncoder) EncodeKey(rec map[string]any, where string, withUserKey bool) (Encoded, error) {
	name, _ := rec["state"].(string)
	se := e.states[name]
	switch {
	case se == nil:
		return Encoded{}, fmt.Errorf("%s: state %q: no such keyed state (the operator has %v)", where, name, e.names)
	case se.err != nil:
		return Encoded{}, fmt.Errorf("%s: %w", where, se.err)
	case e.keyErr != nil:
		return Encoded{}, fmt.Errorf("%s: key: %w", where, e.keyErr)
	case se.kind == "timer":
		return Encoded{}, fmt.Errorf("%s: state %q is a timer queue; timers are not patched", where, name)
	}
	if !withUserKey {
		se = &stateEncoder{id: se.id, kind: "value", ambiguous: se.ambiguous, ns: se.ns}
	}
	b, err := e.appendKey(e.buf[:0], se, rec, where)
	if err != nil {
		return Encoded{}, err
	}
	e.buf = b
	return Encoded{StateID: se.id, Rest: b}, nil
}

// appendKey appends K [len] NS [len] [userKey] of rec.
func (e *RecordEncoder) appendKey(b []byte, se *stateEncoder, rec map[string]any, where string) ([]byte, error) {
	var err error
	if b, err = e.key(b, rec["key"], where+": key"); err != nil {
		return nil, err
	}
	if se.ambiguous {
		b = appendLengthSuffix(b, len(b))
	}
	nsAt := len(b)
	if b, err = se.ns(b, rec["namespace"], where+": namespace"); err != nil {
		return nil, err
	}
	if se.ambiguous {
		b = appendLengthSuffix(b, len(b)-nsAt)
	}
	if se.kind == "map" {
		if b, err = se.uk(b, rec["userKey"], where+": userKey"); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// value appends the entry's value bytes.
func (e *RecordEncoder) value(b []byte, se *stateEncoder, rec map[string]any, where string) ([]byte, error) {
	v := rec["value"]
	ttl, hasTTL := rec["ttlTimestamp"]
	hasTTL = hasTTL && ttl != nil
	if hasTTL != se.ttl && !(se.kind == "map" && v == nil && !hasTTL) {
		if se.ttl {
			return nil, fmt.Errorf("%s: ttlTimestamp missing (state %s has TTL)", where, strconv.Quote(rec["state"].(string)))
		}
		return nil, fmt.Errorf("%s: ttlTimestamp given, but the state has no TTL", where)
	}
	var err error
	switch se.kind {
	case "list":
		xs, ok := v.([]any)
		if !ok || len(xs) == 0 {
			return nil, fmt.Errorf("%s: value: want a non-empty array (list state; a key without elements has no entry)", where)
		}
		var tss []any
		if se.ttl {
			if tss, ok = ttl.([]any); !ok || len(tss) != len(xs) {
				return nil, fmt.Errorf("%s: ttlTimestamp: want an array of %d timestamps, one per element", where, len(xs))
			}
		}
		for i, x := range xs {
			if i > 0 {
				b = append(b, listDelimiter)
			}
			if se.ttl {
				ts, err := int64Of(tss[i], where+": ttlTimestamp["+strconv.Itoa(i)+"]")
				if err != nil {
					return nil, err
				}
				b = binary.BigEndian.AppendUint64(b, uint64(ts))
			}
			if b, err = se.v(b, x, where+": value["+strconv.Itoa(i)+"]"); err != nil {
				return nil, err
			}
		}
		return b, nil
	case "map":
		if v == nil && !hasTTL {
			return append(b, 1), nil
		}
		b = append(b, 0)
	}
	if se.ttl {
		ts, err := int64Of(ttl, where+": ttlTimestamp")
		if err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
	}
	return se.v(b, v, where+": value")
}

// appendLengthSuffix writes n as skipLengthSuffix reads it: base 256, least significant first,
// at least one byte.
func appendLengthSuffix(b []byte, n int) []byte {
	for {
		b = append(b, byte(n))
		n >>= 8
		if n == 0 {
			return b
		}
	}
}

func int64Of(v any, what string) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: want an integer, got %v", what, v)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %s is not a 64-bit integer", what, n)
	}
	return i, nil
}
