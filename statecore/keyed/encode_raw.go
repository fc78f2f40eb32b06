package keyed

import (
	"encoding/binary"
	"math"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// RawRecord is one record of a data file as its JSON tokens (serializer.RawEncoder's
// tokens; nil where the field is absent): what EncodeRaw takes. A scanner that has read an
// integer token (at most 18 digits, no fraction or exponent) may hand its value too, in Int
// with the field's bit (IntKey ...) set in Ints: it is not read again.
type RawRecord struct {
	State, Key, Namespace, UserKey, Value, TTLTimestamp []byte
	Int                                                 [5]int64
	Ints                                                uint8
}

// The fields of RawRecord.Int.
const (
	IntKey = iota
	IntNamespace
	IntUserKey
	IntValue
	IntTTLTimestamp
)

// rawEncoders are a state's fast paths (nil where a type has none), with those of integer
// types for integers already read.
type rawEncoders struct {
	ns, uk, v    serializer.RawEncoder
	nsI, ukI, vI serializer.RawIntEncoder
}

// rawField encodes a field's token, or its integer when the scanner read it.
func rawField(b []byte, r *RawRecord, f int, tok []byte, enc serializer.RawEncoder, encInt serializer.RawIntEncoder) ([]byte, bool) {
	if encInt != nil && r.Ints&(1<<f) != 0 {
		return encInt(b, r.Int[f])
	}
	return enc(b, tok)
}

// EncodeRaw is Encode's fast path for records of basic types (serializer.NewRawEncoder): it
// gives what Encode gives for the record the tokens decode to, or false for every record it
// does not take (a timer, a list state, a structured type, any error): the caller then decodes
// the record and calls Encode, which gives the answer or the error. Building no error messages
// and no map, it encodes a record without allocating.
func (e *RecordEncoder) EncodeRaw(r *RawRecord) (Encoded, bool) {
	if r.State == nil || r.State[0] != '"' {
		return Encoded{}, false
	}
	return e.EncodeRawIn(RawState{e.stateNamed(rawText(r.State))}, r)
}

// RawState is a state of a RecordEncoder, found once for the records of a run that name it
// (RawStateOf), so that EncodeRawIn does not look it up by name each time.
type RawState struct{ se *stateEncoder }

// RawStateOf is the state whose name is the string token tok (false: none).
func (e *RecordEncoder) RawStateOf(tok []byte) (RawState, bool) {
	if len(tok) < 2 || tok[0] != '"' {
		return RawState{}, false
	}
	se := e.stateNamed(rawText(tok))
	return RawState{se}, se != nil
}

// EncodeRawIn is EncodeRaw of a record of the state st (r.State is not read).
func (e *RecordEncoder) EncodeRawIn(st RawState, r *RawRecord) (Encoded, bool) {
	se := st.se
	if se == nil || se.err != nil || e.keyErr != nil || e.rawKey == nil || se.raw.ns == nil || se.raw.v == nil ||
		!se.rawKind {
		return Encoded{}, false
	}
	b := e.buf[:0]
	var ok bool
	if e.keyOK && sameToken(r.Key, e.keyTok) {
		b = append(b, e.keyBytes...)
	} else {
		e.keyOK = false
		if b, ok = rawField(b, r, IntKey, r.Key, e.rawKey, e.rawKeyI); !ok {
			return Encoded{}, false
		}
		e.keyTok, e.keyBytes, e.keyOK = append(e.keyTok[:0], r.Key...), append(e.keyBytes[:0], b...), true
	}
	if se.ambiguous {
		b = appendLengthSuffix(b, len(b))
	}
	nsAt := len(b)
	if b, ok = rawField(b, r, IntNamespace, r.Namespace, se.raw.ns, se.raw.nsI); !ok {
		return Encoded{}, false
	}
	if se.ambiguous {
		b = appendLengthSuffix(b, len(b)-nsAt)
	}
	if se.isMap {
		if se.raw.uk == nil {
			return Encoded{}, false
		}
		if b, ok = rawField(b, r, IntUserKey, r.UserKey, se.raw.uk, se.raw.ukI); !ok {
			return Encoded{}, false
		}
	}
	keyEnd := len(b)
	valueNull := rawNull(r.Value)
	hasTTL := !rawNull(r.TTLTimestamp)
	if hasTTL != se.ttl && !(se.isMap && valueNull && !hasTTL) {
		return Encoded{}, false // Encode's error
	}
	if se.isMap {
		if valueNull && !hasTTL {
			b = append(b, 1)
			e.buf = b
			return Encoded{StateID: se.id, Rest: b[:keyEnd], Value: b[keyEnd:]}, true
		}
		b = append(b, 0)
	}
	if se.ttl {
		// int64Of: a json.Number that strconv.ParseInt takes.
		ts, ok := r.Int[IntTTLTimestamp], r.Ints&(1<<IntTTLTimestamp) != 0
		if !ok {
			if ts, ok = rawInt64(r.TTLTimestamp); !ok {
				return Encoded{}, false
			}
		}
		b = binary.BigEndian.AppendUint64(b, uint64(ts))
	}
	if b, ok = rawField(b, r, IntValue, r.Value, se.raw.v, se.raw.vI); !ok {
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

func rawNull(tok []byte) bool {
	return tok == nil || len(tok) == 4 && tok[0] == 'n' && tok[1] == 'u' && tok[2] == 'l' && tok[3] == 'l'
}

// sameToken reports whether a and b hold the same bytes; tokens are short, and a call of the
// general comparison costs more than comparing them here.
func sameToken(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 16 {
		return string(a) == string(b)
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rawInt64 reads an integer token as int64Of does.
func rawInt64(tok []byte) (int64, bool) {
	return serializer.RawInteger(tok, math.MinInt64, math.MaxInt64)
}
