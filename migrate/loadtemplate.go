package migrate

import (
	"encoding/binary"

	"github.com/statecraft/statecraft/statecore/keyed"
)

// A dump's lines repeat one shape: the same field names in the same order with the same
// separators, the same operator and, for long runs, the same state; only the values change.
// lineTemplate is that shape, learnt from a line scanFlat read and the fast path encoded, so
// that the next lines are read by comparing the constant runs and scanning the value tokens
// only (no field names looked up, no spaces skipped one by one):
//
//	line      {"operator":"uid:a","state":"s","keyGroup":0,"key":7,"namespace":null,"userKey":1,"value":9}
//	lits[0]   {"operator":"uid:a","state":"s","keyGroup":
//	value 0                                               0         (skipped: no slot)
//	lits[1]                                                ,"key":
//	value 1                                                       7 (slot key)
//	...
//	lits[n]                                                                                           }
//
// The operator and state tokens are part of the constant runs: a line that matches the
// template names the same operator and state. A line matches when every constant run is
// there byte for byte, every value is one scalar token as scanFlat reads it, and nothing but
// spaces follows the last run; it then gives exactly the rawLine scanFlat gives (the same
// fields, so no field twice, the same tokens). Any other line goes to scanFlat, and the next
// line encoded by the fast path is learnt instead.
type lineTemplate struct {
	lits     [][]byte // the constant runs: before the first value, between values, after the last
	slots    []int    // the rawLine slot of each value (-1: a field scanFlat skips)
	operator []byte   // the operator and state tokens, inside lits
	state    []byte
	buf      []byte // what lits, operator and state point into
	// the operator and state the line names (set by the caller once the line is encoded)
	lo *loadOp
	wo *workerOp
	st keyed.RawState
}

// learn makes t the template of line, which scanFlat read into r (r.mode nil: a keyed record).
// It reports false, leaving t empty, for a line it cannot describe.
func (t *lineTemplate) learn(line []byte, r *rawLine) bool {
	t.lits, t.slots, t.operator, t.state = t.lits[:0], t.slots[:0], nil, nil
	if r.mode != nil || r.operator == nil || r.rec.State == nil {
		return false
	}
	t.buf = append(t.buf[:0], line...)
	line = t.buf
	p := flatScan{b: line}
	litStart := 0
	p.space()
	if !p.byte('{') {
		return t.forget()
	}
	for {
		p.space()
		name, ok := p.str()
		if !ok {
			return t.forget()
		}
		p.space()
		if !p.byte(':') {
			return t.forget()
		}
		p.space()
		at := p.i
		tok, ok := p.scalar()
		if !ok {
			return t.forget()
		}
		switch slot := slotOf(name[1 : len(name)-1]); slot {
		case 0:
			t.operator = tok
		case 2:
			t.state = tok
		default:
			t.lits = append(t.lits, line[litStart:at])
			t.slots = append(t.slots, slot)
			litStart = p.i
		}
		p.space()
		switch {
		case p.byte(','):
		case p.byte('}'):
			t.lits = append(t.lits, line[litStart:p.i])
			if !p.end() {
				return t.forget()
			}
			return true
		default:
			return t.forget()
		}
	}
}

func (t *lineTemplate) forget() bool {
	t.lits, t.slots, t.operator, t.state = t.lits[:0], t.slots[:0], nil, nil
	return false
}

// match reads line into r when it has the template's shape (see lineTemplate). Integer
// tokens of the record's fields are read once, their values handed to the encoder in r.rec.Int.
// r is written as the line is read: when match reports false, r holds nothing to use (scanFlat,
// which the caller tries next, sets every field).
func (t *lineTemplate) match(line []byte, r *rawLine) bool {
	if len(t.lits) == 0 {
		return false
	}
	rec := &r.rec
	rec.Key, rec.Namespace, rec.UserKey, rec.Value, rec.TTLTimestamp, rec.Ints = nil, nil, nil, nil, nil, 0
	i := 0
	for k, slot := range t.slots {
		lit := t.lits[k]
		if !hasAt(line, i, lit) {
			return false
		}
		i += len(lit)
		start := i
		if i < len(line) {
			switch c := line[i]; {
			case c == 'n':
				if len(line)-i >= 4 && string(line[i:i+4]) == "null" {
					i += 4
				}
			case c == '-' || c-'0' <= 9:
				// an integer, read as intAt reads it (inlined: most values are integers)
				j := i
				if c == '-' {
					j++
				}
				d := j
				var v uint64
				for j < len(line) && line[j]-'0' <= 9 {
					v = v*10 + uint64(line[j]-'0')
					j++
				}
				if j > d && (line[d] != '0' || j-d == 1) && (j == len(line) || line[j] != '.' && line[j]|0x20 != 'e') {
					i = j
					if f := intField[slot+1]; f >= 0 && j-d <= 18 {
						n := int64(v)
						if c == '-' {
							n = -n
						}
						rec.Int[f], rec.Ints = n, rec.Ints|1<<f
					}
				}
			}
		}
		if i == start {
			p := flatScan{b: line, i: i}
			if _, ok := p.scalar(); !ok {
				return false
			}
			i = p.i
		}
		switch slot {
		case -1: // a field scanFlat skips
		case 3:
			rec.Key = line[start:i]
		case 4:
			rec.Namespace = line[start:i]
		case 5:
			rec.UserKey = line[start:i]
		case 6:
			rec.Value = line[start:i]
		case 7:
			rec.TTLTimestamp = line[start:i]
		default:
			return false // never learnt (learn keeps operator and state in the runs, refuses mode)
		}
	}
	if lit := t.lits[len(t.slots)]; !hasAt(line, i, lit) {
		return false
	} else {
		i += len(lit)
	}
	for ; i < len(line); i++ {
		switch line[i] {
		case ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	r.operator, r.mode, rec.State = t.operator, nil, t.state
	return true
}

// intField is the keyed.RawRecord.Int field of a slot (by slot+1: -1, a skipped field, first;
// -1: none).
var intField = [9]int{-1, -1, -1, -1, keyed.IntKey, keyed.IntNamespace, keyed.IntUserKey, keyed.IntValue, keyed.IntTTLTimestamp}

// intAt reads the number at b[i:] (a '-' or a digit there) when it is an integer: where it
// ends, its value, and whether the value was read (small: at most 18 digits). end is -1 for
// anything else (a fraction, an exponent, a leading zero before digits, a lone '-'), which
// the caller reads by the whole grammar.
func intAt(b []byte, i int) (end int, n int64, small bool) {
	j := i
	neg := b[j] == '-'
	if neg {
		j++
	}
	d := j
	var v uint64
	for j < len(b) && b[j]-'0' <= 9 {
		v = v*10 + uint64(b[j]-'0')
		j++
	}
	switch {
	case j == d, b[d] == '0' && j-d > 1:
		return -1, 0, false
	case j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E'):
		return -1, 0, false
	case j-d > 18:
		return j, 0, false
	}
	n = int64(v)
	if neg {
		n = -n
	}
	return j, n, true
}

// hasAt reports whether b holds lit at i. The constant runs between values are short (a
// field name and its punctuation): those of 8 to 16 bytes are compared as two words, which
// costs less than a call of the general comparison. (A loop of words for the longer first run
// stops hasAt being inlined, and costs more than it saves.)
func hasAt(b []byte, i int, lit []byte) bool {
	n := len(lit)
	if len(b)-i < n {
		return false
	}
	b = b[i : i+n]
	switch {
	case n > 16:
		return string(b) == string(lit)
	case n >= 8:
		return binary.LittleEndian.Uint64(b) == binary.LittleEndian.Uint64(lit) &&
			binary.LittleEndian.Uint64(b[n-8:]) == binary.LittleEndian.Uint64(lit[n-8:])
	}
	for k := range n {
		if b[k] != lit[k] {
			return false
		}
	}
	return true
}
