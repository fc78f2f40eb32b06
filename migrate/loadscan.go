package migrate

import (
	"fmt"

	"github.com/statecraft/statecraft/statecore/keyed"
)

// rawLine is a data line scanned by scanFlat: the JSON tokens of the fields a keyed record of
// basic types has (nil where absent).
type rawLine struct {
	operator, mode []byte
	rec            keyed.RawRecord
}

// String shows r's tokens and integers, for tests.
func (r *rawLine) String() string {
	return fmt.Sprintf("%q %q %q %q %q %q %q %q %v %b", r.operator, r.mode, r.rec.State, r.rec.Key, r.rec.Namespace,
		r.rec.UserKey, r.rec.Value, r.rec.TTLTimestamp, r.rec.Int, r.rec.Ints)
}

// slots are r's fields by scanFlat's numbers.
func (r *rawLine) slots() [8]*[]byte {
	return [8]*[]byte{&r.operator, &r.mode, &r.rec.State, &r.rec.Key, &r.rec.Namespace, &r.rec.UserKey, &r.rec.Value, &r.rec.TTLTimestamp}
}

// slotOf is the number of the field called name in rawLine.slots (-1: a field scanFlat skips).
func slotOf(name []byte) int {
	switch string(name) {
	case "operator":
		return 0
	case "mode":
		return 1
	case "state":
		return 2
	case "key":
		return 3
	case "namespace":
		return 4
	case "userKey":
		return 5
	case "value":
		return 6
	case "ttlTimestamp":
		return 7
	}
	return -1
}

// flatPrefix is the start of a line scanFlat scanned, up to the comma after its "state"
// field, and where the tokens of the fields in it are: a line that starts with the same bytes
// has the same tokens there (a dump's lines share `{"operator":"..","state":"..",`), so
// scanFlat goes on from there.
type flatPrefix struct {
	b  []byte
	at [8][2]int // token offsets by slot; {0, 0}: not in the prefix
}

// scanFlat scans a line holding one flat JSON object: field names and string values of
// printable ASCII without escapes (the bytes lineDecoder's fast path takes), numbers of JSON's
// grammar, true, false, null, nothing but spaces around. It fills r with the tokens of the
// fields a keyed record has and skips the others, as the decoded record's readers ignore
// them. It reports false for every other line (nested values, escapes, a known field given
// twice, anything encoding/json might decode differently or refuse): those take the decoding
// path, which gives the answer or the error. A line scanFlat takes is valid JSON. pre (nil:
// none) is the prefix of an earlier line, used and updated.
func scanFlat(line []byte, r *rawLine, pre *flatPrefix) bool {
	*r = rawLine{}
	slots := r.slots()
	p := flatScan{b: line}
	record := false
	if pre != nil && len(pre.b) > 0 && len(line) > len(pre.b) && string(line[:len(pre.b)]) == string(pre.b) {
		for i, s := range slots {
			if a := pre.at[i]; a[1] > 0 {
				*s = line[a[0]:a[1]]
			}
		}
		p.i = len(pre.b)
	} else {
		p.space()
		if !p.byte('{') {
			return false
		}
		p.space()
		if p.byte('}') {
			return p.end()
		}
		record = pre != nil
	}
	for {
		p.space()
		name, ok := p.str()
		if !ok {
			return false
		}
		p.space()
		if !p.byte(':') {
			return false
		}
		p.space()
		tok, ok := p.scalar()
		if !ok {
			return false
		}
		slot := slotOf(name[1 : len(name)-1])
		if slot >= 0 {
			if *slots[slot] != nil {
				return false
			}
			*slots[slot] = tok
		}
		p.space()
		switch {
		case p.byte(','):
			if record && slot == 2 {
				record = false
				pre.b = append(pre.b[:0], line[:p.i]...)
				for i, s := range slots {
					pre.at[i] = [2]int{}
					if *s != nil {
						at := cap(line) - cap(*s) // *s is line[at:]
						pre.at[i] = [2]int{at, at + len(*s)}
					}
				}
			}
		case p.byte('}'):
			return p.end()
		default:
			return false
		}
	}
}

// flatScan is scanFlat's cursor.
type flatScan struct {
	b []byte
	i int
}

func (p *flatScan) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *flatScan) byte(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end: nothing but spaces after the object.
func (p *flatScan) end() bool {
	p.space()
	return p.i == len(p.b)
}

// str is a string token, quotes included, of bytes 0x20-0x7f but '"' and '\'.
func (p *flatScan) str() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	j := p.i + 1
	for j < len(p.b) && !strStop[p.b[j]] {
		j++
	}
	if j == len(p.b) || p.b[j] != '"' {
		return nil, false
	}
	tok := p.b[p.i : j+1]
	p.i = j + 1
	return tok, true
}

// strStop are the bytes that end a string token: its closing quote, or what the fast path
// leaves to encoding/json (escapes, control bytes, bytes past ASCII).
var strStop = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '"' || c == '\\' || c < 0x20 || c >= 0x80
	}
	return t
}()

// scalar is a string, number, true, false or null token.
func (p *flatScan) scalar() ([]byte, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 'n':
		return p.literal("null")
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	}
	return nil, false
}

func (p *flatScan) literal(s string) ([]byte, bool) {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return nil, false
	}
	tok := p.b[p.i : p.i+len(s)]
	p.i += len(s)
	return tok, true
}

// number is a number token.
func (p *flatScan) number() ([]byte, bool) {
	end, ok := numberEnd(p.b, p.i)
	if !ok {
		return nil, false
	}
	tok := p.b[p.i:end]
	p.i = end
	return tok, true
}

// numberEnd is where the number of JSON's grammar at b[i:] ends:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// An integer (a dump's usual number) is read by one loop; a fraction or an exponent by
// numberEndFull.
func numberEnd(b []byte, i int) (int, bool) {
	j := i
	if j < len(b) && b[j] == '-' {
		j++
	}
	d := j
	for j < len(b) && b[j]-'0' <= 9 {
		j++
	}
	switch {
	case j == d:
		return 0, false
	case b[d] == '0':
		j = d + 1 // "0" is a whole integer part: what follows is not this number's
	}
	if j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return numberEndFull(b, i)
	}
	return j, true
}

// numberEndFull is numberEnd by the whole grammar.
func numberEndFull(b []byte, i int) (int, bool) {
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case !digits():
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return 0, false
		}
	}
	return i, true
}
