package keyed

import (
	"encoding/binary"
	"math"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// RawRecord is one record of a data file as its JSON tokens (serializer.RawEncoder's
// tokens; nil where the field is absent): what EncodeRaw takes.
type RawRecord struct {
	State, Key, Namespace, UserKey, Value, TTLTimestamp []byte
}

// rawEncoders are a state's fast paths (nil where a type has none).
type rawEncoders struct {
	ns, uk, v serializer.RawEncoder
}

// EncodeRaw is Encode's fast path for records of basic types (serializer.NewRawEncoder): it
// gives what Encode gives for the record the tokens decode to, or false for every record it
// does not take (a timer, a list state, a structured type, any error): the caller then decodes
// the record and calls Encode, which gives the answer or the error. Building no error messages
// and no map, it encodes a record without allocating.
func (e *RecordEncoder) EncodeRaw(r *RawRecord) (Encoded, bool) {
	se := e.stateNamed(rawText(r.State))
	if se == nil || se.err != nil || e.keyErr != nil || e.rawKey == nil || se.raw.ns == nil || se.raw.v == nil ||
		se.kind == "timer" || se.kind == "list" || r.State == nil || r.State[0] != '"' {
		return Encoded{}, false
	}
	b := e.buf[:0]
	var ok bool
	if b, ok = e.rawKey(b, r.Key); !ok {
		return Encoded{}, false
	}
	if se.ambiguous {
		b = appendLengthSuffix(b, len(b))
	}
	nsAt := len(b)
	if b, ok = se.raw.ns(b, r.Namespace); !ok {
		return Encoded{}, false
	}
	if se.ambiguous {
		b = appendLengthSuffix(b, len(b)-nsAt)
	}
	if se.kind == "map" {
		if se.raw.uk == nil {
			return Encoded{}, false
		}
		if b, ok = se.raw.uk(b, r.UserKey); !ok {
			return Encoded{}, false
		}
	}
	keyEnd := len(b)
	valueNull := rawNull(r.Value)
	hasTTL := !rawNull(r.TTLTimestamp)
	if hasTTL != se.ttl && !(se.kind == "map" && valueNull && !hasTTL) {
		return Encoded{}, false // Encode's error
	}
	if se.kind == "map" {
		if valueNull && !hasTTL {
			b = append(b, 1)
			e.buf = b
			return Encoded{StateID: se.id, Rest: b[:keyEnd], Value: b[keyEnd:]}, true
		}
		b = append(b, 0)
	}
	if se.ttl {
		// int64Of: a json.Number that strconv.ParseInt takes.
		ts, ok := rawInt64(r.TTLTimestamp)
		if !ok {
			return Encoded{}, false
		}
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
	}
	if b, ok = se.raw.v(b, r.Value); !ok {
		return Encoded{}, false
	}
	e.buf = b
	return Encoded{StateID: se.id, Rest: b[:keyEnd], Value: b[keyEnd:]}, true
}

// stateNamed is states[name], found without hashing among a few states (the last of a
// repeated name, as in the map).
func (e *RecordEncoder) stateNamed(name []byte) *stateEncoder {
	if len(e.names) > 8 {
		return e.states[string(name)]
	}
	for i := len(e.names) - 1; i >= 0; i-- {
		if e.names[i] == string(name) {
			return e.byName[i]
		}
	}
	return nil
}

// rawText is a string token's text (the token itself when it is no string: no state has a
// name with quotes, so a lookup by it fails as Encode's does).
func rawText(tok []byte) []byte {
	if len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' {
		return tok[1 : len(tok)-1]
	}
	return tok
}

func rawNull(tok []byte) bool { return tok == nil || string(tok) == "null" }

// rawInt64 reads an integer token as int64Of does.
func rawInt64(tok []byte) (int64, bool) {
	return serializer.RawInteger(tok, math.MinInt64, math.MaxInt64)
}
