package serializer

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// newRowDataEncoder writes SQL rows as RowDataSerializer does: every row becomes a BinaryRowData
// (layout at rowDataCodec), preceded by its i32 size. The JSON shape is the one a dump prints:
// the array of the fields (null for a null field), nested rows as arrays, BINARY as base64,
// DECIMAL as a number, TIMESTAMP as a local date-time. Rows are written as inserts (+I), the
// kind of the rows Flink keeps in state (a dump does not print it).
//
// What Flink's BinaryRowWriter does, and so this writer, for each field:
//
//	null                  null bit i+8 set, slot all zero, nothing in the variable part
//	BOOLEAN .. DOUBLE     the value little-endian at the start of the slot, the rest zero
//	CHAR/VARCHAR, BINARY  <= 7 bytes: in the slot, byte 7 = 0x80|len; longer: in the
//	                      variable part, padded with zeros to 8 bytes, slot = off<<32 | len
//	nested ROW            its BinaryRowData in the variable part (never inline), padded
//	state-backed view     RAW(MapView|ListView, NullSerializer): NullSerializer's one zero
//	                      byte in the variable part (never inline), padded; {"dataView": "MapView"}
//	DECIMAL p <= 18       the unscaled long in the slot
//	DECIMAL p > 18        16 zeroed bytes of variable part, the minimal two's-complement
//	                      unscaled bytes at their start, slot = off<<32 | len
//	TIMESTAMP p <= 3      epoch millis in the slot
//	TIMESTAMP p > 3       epoch millis in 8 bytes of variable part, slot = off<<32 | nanoOfMilli
//
// Field types the decoder shows as opaque slots are refused when the encoder is built: their
// slot may point into a variable part the dump does not carry.
func newRowDataEncoder(s *Snapshot) (Encoder, error) {
	c := newRowDataCodec(s).(rowDataCodec)
	if err := c.writable(0); err != nil {
		return nil, err
	}
	return func(b []byte, v any, path string) ([]byte, error) {
		row, err := c.encodeRow(nil, v, path, 0)
		if err != nil {
			return nil, err
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(row)))
		return append(b, row...), nil
	}, nil
}

// writable refuses field kinds the encoder cannot write.
func (c rowDataCodec) writable(depth int) error {
	if depth > maxNested {
		return fmt.Errorf("RowData nested deeper than %d", maxNested)
	}
	for i, k := range c.kinds {
		switch k {
		case rfUnknown:
			return fmt.Errorf("writing RowData field %d of serializer %s is not supported", i, shortClass(c.classes[i]))
		case rfRow:
			if err := c.nested[i].writable(depth + 1); err != nil {
				return fmt.Errorf("RowData field %d: %w", i, err)
			}
		}
	}
	return nil
}

func shortClass(class string) string {
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		return class[i+1:]
	}
	return class
}

// encodeRow appends the BinaryRowData of v to b: an array of the fields (an insert, +I), or, as
// dump prints a row of another kind, {"rowKind": "+U", "fields": [...]}.
func (c rowDataCodec) encodeRow(b []byte, v any, path string, depth int) ([]byte, error) {
	kind := byte(0)
	if m, ok := v.(map[string]any); ok {
		k, err := rowKindOfJSON(m, path)
		if err != nil {
			return nil, err
		}
		kind, v, path = k, m["fields"], path+".fields"
	}
	xs, ok := v.([]any)
	arity := len(c.kinds)
	if !ok || len(xs) != arity {
		return nil, want(path, fmt.Sprintf("an array of %d fields (RowData)", arity), v)
	}
	nullBytes := ((arity + 63 + 8) / 64) * 8
	start := len(b)
	b = append(b, make([]byte, nullBytes+8*arity)...)
	b[start] = kind // header byte 0: the RowKind
	var err error
	for i, k := range c.kinds {
		x := xs[i]
		p := path + "[" + strconv.Itoa(i) + "]"
		at := start + nullBytes + 8*i
		if x == nil {
			bit := i + 8
			b[start+bit>>3] |= 1 << (bit & 7)
			continue
		}
		slot := func() []byte { return b[at : at+8] } // b may move as the variable part grows
		switch k {
		case rfBool:
			t, ok := x.(bool)
			if !ok {
				return nil, want(p, "true or false", x)
			}
			if t {
				slot()[0] = 1
			}
		case rfByte, rfShort, rfInt, rfLong:
			r := intRanges[k]
			n, err := integer(x, p, r.lo, r.hi)
			if err != nil {
				return nil, err
			}
			// Only the type's own width is written; the rest of the slot stays zero.
			var w [8]byte
			binary.LittleEndian.PutUint64(w[:], uint64(n))
			copy(slot(), w[:r.width])
		case rfFloat, rfDouble:
			var f []byte
			if k == rfFloat {
				if f, err = encodeFloat(nil, x, p); err != nil {
					return nil, err
				}
				binary.LittleEndian.PutUint32(slot(), binary.BigEndian.Uint32(f))
			} else {
				if f, err = encodeDouble(nil, x, p); err != nil {
					return nil, err
				}
				binary.LittleEndian.PutUint64(slot(), binary.BigEndian.Uint64(f))
			}
		case rfString, rfBinary:
			var raw []byte
			if k == rfString {
				s, ok := x.(string)
				if !ok {
					return nil, want(p, "a string (StringData)", x)
				}
				raw = []byte(s)
			} else if raw, err = base64Of(x, p, "a base64 string (BINARY)"); err != nil {
				return nil, err
			}
			if len(raw) <= 7 {
				copy(slot(), raw)
				slot()[7] = 0x80 | byte(len(raw))
				break
			}
			b = appendVar(b, start, at, raw, len(raw))
		case rfView:
			m, ok := x.(map[string]any)
			if !ok || len(m) != 1 || m["dataView"] != c.views[i] {
				return nil, want(p, fmt.Sprintf(`{"dataView": %q} (the field of a state-backed %s, whose entries are in states of their own)`, c.views[i], c.views[i]), x)
			}
			b = appendVar(b, start, at, []byte{0}, 1)
		case rfRow:
			sub, err := c.nested[i].encodeRow(nil, x, p, depth+1)
			if err != nil {
				return nil, err
			}
			b = appendVar(b, start, at, sub, len(sub))
		case rfDecimal:
			u, err := unscaled(x, p, c.prec[i], c.scale[i])
			if err != nil {
				return nil, err
			}
			if c.prec[i] <= 18 {
				binary.LittleEndian.PutUint64(slot(), uint64(u.Int64()))
				break
			}
			raw := twosComplement(u)
			if len(raw) > 16 {
				return nil, fmt.Errorf("%s: decimal needs %d bytes, Flink keeps at most 16", p, len(raw))
			}
			off := len(b) - start
			b = append(b, make([]byte, 16)...)
			copy(b[start+off:], raw)
			binary.LittleEndian.PutUint64(b[at:], uint64(off)<<32|uint64(len(raw)))
		case rfTimestamp:
			ms, nano, err := timestampOf(x, p, c.prec[i])
			if err != nil {
				return nil, err
			}
			if c.prec[i] <= 3 {
				binary.LittleEndian.PutUint64(slot(), uint64(ms))
				break
			}
			off := len(b) - start
			b = binary.LittleEndian.AppendUint64(b, uint64(ms))
			binary.LittleEndian.PutUint64(b[at:], uint64(off)<<32|uint64(uint32(nano)))
		}
	}
	return b, nil
}

// intRanges are the integral SQL types' ranges and widths in the slot.
var intRanges = map[rowFieldKind]struct {
	lo, hi int64
	width  int
}{
	rfByte:  {math.MinInt8, math.MaxInt8, 1},
	rfShort: {math.MinInt16, math.MaxInt16, 2},
	rfInt:   {math.MinInt32, math.MaxInt32, 4},
	rfLong:  {math.MinInt64, math.MaxInt64, 8},
}

// appendVar appends raw to the row's variable part, zero-padded to a multiple of 8, and points the
// slot at (offset from the row start, n).
func appendVar(b []byte, start, at int, raw []byte, n int) []byte {
	off := len(b) - start
	b = append(b, raw...)
	if pad := (8 - n%8) % 8; pad > 0 {
		b = append(b, make([]byte, pad)...)
	}
	binary.LittleEndian.PutUint64(b[at:], uint64(off)<<32|uint64(uint32(n)))
	return b
}

// unscaled reads a decimal number as its unscaled value at scale, refusing a value that needs
// rounding or more than precision digits (Flink would store null for the latter).
func unscaled(v any, path string, precision, scale int32) (*big.Int, error) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, want(path, fmt.Sprintf("a number (DECIMAL(%d, %d))", precision, scale), v)
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil, fmt.Errorf("%s: %s is not a decimal number", path, n)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		return nil, fmt.Errorf("%s: %s has more than %d digits after the point (DECIMAL(%d, %d))", path, n, scale, precision, scale)
	}
	u := r.Num()
	if len(new(big.Int).Abs(u).String()) > int(precision) {
		return nil, fmt.Errorf("%s: %s has more than %d digits (DECIMAL(%d, %d))", path, n, precision, precision, scale)
	}
	return u, nil
}

// twosComplement is Java's BigInteger.toByteArray: the shortest big-endian two's complement.
func twosComplement(u *big.Int) []byte {
	if u.Sign() >= 0 {
		b := u.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	n := new(big.Int).Not(u).BitLen()/8 + 1 // ^u = -u-1 >= 0
	m := new(big.Int).Add(new(big.Int).Lsh(big.NewInt(1), uint(8*n)), u)
	b := m.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	return b
}

// timestampOf reads a TIMESTAMP(precision) value (parseLocalDateTime), refusing digits below the
// millisecond that precision 3 or less does not keep.
func timestampOf(v any, path string, precision int32) (ms int64, nano int32, err error) {
	if ms, nano, err = parseLocalDateTime(v, path); err == nil && precision <= 3 && nano != 0 {
		err = fmt.Errorf("%s: %v has sub-millisecond digits, TIMESTAMP(%d) keeps milliseconds", path, v, precision)
	}
	return ms, nano, err
}

// parseLocalDateTime reads a timestamp as formatLocalDateTime prints it: epoch millis (UTC, no
// zone) and nano-of-millisecond.
func parseLocalDateTime(v any, path string) (ms int64, nano int32, err error) {
	s, ok := v.(string)
	if !ok {
		return 0, 0, want(path, `a local date-time such as "2024-01-02T03:04:05.123"`, v)
	}
	t, err := time.Parse("2006-01-02T15:04:05.999999999", s)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %q is not a local date-time (want 2006-01-02T15:04:05[.fraction])", path, s)
	}
	return t.UnixMilli(), int32(t.Nanosecond() % 1_000_000), nil
}

// rowKindOfJSON reads the kind of a row written as {"rowKind": K, "fields": [...]} (nothing else
// in the object): K is one of Flink's RowKind short strings, +I, -U, +U or -D.
func rowKindOfJSON(m map[string]any, path string) (byte, error) {
	for _, k := range slices.Sorted(maps.Keys(m)) { // sorted: the same error every run
		if k != "rowKind" && k != "fields" {
			return 0, fmt.Errorf("%s: unknown field %q of a RowData row (want rowKind and fields)", path, k)
		}
	}
	k, ok := m["rowKind"].(string)
	if !ok {
		return 0, want(path+".rowKind", "one of "+strings.Join(rowKinds, ", ")+" (RowKind)", m["rowKind"])
	}
	for i, name := range rowKinds {
		if k == name {
			return byte(i), nil
		}
	}
	return 0, want(path+".rowKind", "one of "+strings.Join(rowKinds, ", ")+" (RowKind)", k)
}
