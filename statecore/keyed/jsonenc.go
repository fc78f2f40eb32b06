package keyed

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// AppendJSON appends the record exactly as MarshalJSON writes it (and as a json.Encoder prints
// it, without the newline), but without encoding/json's reflection and its second compacting
// pass: a savepoint dump spends most of its time here, one call per entry.
//
// MarshalJSON stays the reference: every value is produced as json.Marshal produces it, which
// means HTML-escaped strings (<, >, & as \u003c, \u003e, \u0026), sorted map keys, Go's float
// formatting, and base64 for []byte. Types this file does not know go through json.Marshal.
func (r *Record) AppendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"state":`...)
	b = appendJSONString(b, r.State)
	b = append(b, `,"keyGroup":`...)
	b = strconv.AppendInt(b, int64(r.KeyGroup), 10)
	var err error
	field := func(name string, v any) {
		if err == nil {
			b = append(b, name...)
			b, err = appendJSONValue(b, v)
		}
	}
	if r.Kind == "timer" {
		b = append(b, `,"kind":`...)
		b = appendJSONString(b, r.TimerKind)
		field(`,"key":`, r.Key)
		field(`,"namespace":`, r.Namespace)
		b = append(b, `,"timestamp":`...)
		b = strconv.AppendInt(b, r.Timestamp, 10)
	} else {
		field(`,"key":`, r.Key)
		field(`,"namespace":`, r.Namespace)
		field(`,"userKey":`, r.UserKey)
		field(`,"value":`, r.Value)
		if r.TTL != nil {
			field(`,"ttlTimestamp":`, r.TTL)
		}
	}
	if err != nil {
		// A value encoding/json refuses (a NaN float64, say): report exactly its error.
		if _, merr := r.MarshalJSON(); merr != nil {
			return nil, merr
		}
		return nil, err
	}
	return append(b, '}'), nil
}

// AppendJSONValue appends one decoded value (a key, namespace, user key or value of a Record)
// exactly as json.Marshal(v) writes it. On error nothing useful is appended; callers that show
// the error should take it from json.Marshal(v), as MarshalJSON's wording may differ.
func AppendJSONValue(b []byte, v any) ([]byte, error) { return appendJSONValue(b, v) }

// appendJSONValue appends v as json.Marshal(v) would.
func appendJSONValue(b []byte, v any) ([]byte, error) {
	var err error
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendJSONString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int8:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int16:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), nil
	case uint64:
		return strconv.AppendUint(b, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			break // json.Marshal's error
		}
		return appendJSONFloat(b, x, 64), nil
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			break
		}
		return appendJSONFloat(b, float64(x), 32), nil
	case serializer.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return appendJSONString(b, strconv.FormatFloat(f, 'g', -1, 64)), nil
		}
		return appendJSONFloat(b, f, 64), nil
	case []byte:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"'), nil
	case []any:
		return appendJSONArray(b, x, appendJSONValue)
	case []int64:
		return appendJSONArray(b, x, func(b []byte, e int64) ([]byte, error) { return strconv.AppendInt(b, e, 10), nil })
	case serializer.Fields:
		// Fields.MarshalJSON writes {} for a nil Fields too.
		b = append(b, '{')
		for i, f := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, f.Name)
			b = append(b, ':')
			if b, err = appendJSONValue(b, f.Value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case serializer.MapEntry:
		return appendMapEntry(b, x)
	case []serializer.MapEntry:
		return appendJSONArray(b, x, appendMapEntry)
	case serializer.TTLValue:
		// TTLValue.MarshalJSON marshals a map: keys in sorted order.
		b = append(b, `{"ttlTimestamp":`...)
		b = strconv.AppendInt(b, x.Timestamp, 10)
		b = append(b, `,"value":`...)
		if b, err = appendJSONValue(b, x.Value); err != nil {
			return nil, err
		}
		return append(b, '}'), nil
	case serializer.Opaque:
		b = append(b, `{"serializer":`...)
		b = appendJSONString(b, x.Serializer)
		if x.Type != "" {
			b = append(b, `,"type":`...)
			b = appendJSONString(b, x.Type)
		}
		b = append(b, `,"base64":`...)
		if b, err = appendJSONValue(b, x.Base64); err != nil {
			return nil, err
		}
		return append(b, '}'), nil
	case serializer.BinaryRow:
		return appendJSONRow(b, x.Kind, x.Fields)
	case serializer.JavaRow:
		return appendJSONRow(b, x.Kind, x.Fields)
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // encoding/json sorts map keys by their string
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONString(b, k)
			b = append(b, ':')
			if b, err = appendJSONValue(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	// Anything else (and NaN/Inf of a plain float, which json.Marshal refuses) takes the
	// reflective path, so output and errors stay those of encoding/json.
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, out...), nil
}

// appendJSONArray appends xs as a JSON array (null for a nil slice, as encoding/json writes it),
// each element through each.
func appendJSONArray[T any](b []byte, xs []T, each func([]byte, T) ([]byte, error)) ([]byte, error) {
	if xs == nil {
		return append(b, "null"...), nil
	}
	b = append(b, '[')
	for i, e := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = each(b, e); err != nil {
			return nil, err
		}
	}
	return append(b, ']'), nil
}

func appendMapEntry(b []byte, e serializer.MapEntry) ([]byte, error) {
	var err error
	b = append(b, `{"key":`...)
	if b, err = appendJSONValue(b, e.Key); err != nil {
		return nil, err
	}
	b = append(b, `,"value":`...)
	if b, err = appendJSONValue(b, e.Value); err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// appendJSONFloat formats a finite float as encoding/json does: the shortest representation
// that round-trips at the given bit size, in 'f' form unless the magnitude is below 1e-6 or at
// least 1e21, and then in 'e' form with a one-digit negative exponent left unpadded (1e-7, not
// 1e-07).
func appendJSONFloat(b []byte, f float64, bits int) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// jsonSafe marks the ASCII bytes json.Marshal writes as they are: printable, and not one of
// " \ < > & (the last three are escaped because json.Marshal escapes HTML).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// appendJSONString appends s quoted and escaped as json.Marshal does: the short escapes for
// " \ \b \f \n \r \t, \u00XX for other control bytes and for < > &, \ufffd for each byte of
// invalid UTF-8, and \u2028 \u2029 (line and paragraph separators, which break JavaScript).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendJSONRow appends a row of a kind: an insert's fields as an array, a row stored as another
// kind (Flink's keep-last dedup keeps +U rows; a Java Row carries any) as {"rowKind": "+U",
// "fields": [...]}, so that create and patch write back the same kind.
func appendJSONRow(b []byte, kind string, fields []any) ([]byte, error) {
	if kind == "+I" || kind == "" {
		return appendJSONValue(b, fields)
	}
	b = append(b, `{"rowKind":`...)
	b = appendJSONString(b, kind)
	b = append(b, `,"fields":`...)
	b, err := appendJSONValue(b, fields)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}
