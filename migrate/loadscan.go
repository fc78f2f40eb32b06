package migrate

import "github.com/statecraft/statecraft/statecore/keyed"

// rawLine is a data line scanned by scanFlat: the JSON tokens of the fields a keyed record of
// basic types has (nil where absent).
type rawLine struct {
	operator, mode []byte
	rec            keyed.RawRecord
}

// scanFlat scans a line holding one flat JSON object: field names and string values of
// printable ASCII without escapes (the bytes lineDecoder's fast path takes), numbers of JSON's
// grammar, true, false, null, nothing but spaces around. It fills r with the tokens of the
// fields a keyed record has and skips the others, as the decoded record's readers ignore
// them. It reports false for every other line (nested values, escapes, a known field given
// twice, anything encoding/json might decode differently or refuse): those take the decoding
// path, which gives the answer or the error. A line scanFlat takes is valid JSON.
func scanFlat(line []byte, r *rawLine) bool {
	*r = rawLine{}
	p := flatScan{b: line}
	p.space()
	if !p.byte('{') {
		return false
	}
	p.space()
	if p.byte('}') {
		return p.end()
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
		var slot *[]byte
		switch string(name[1 : len(name)-1]) {
		case "operator":
			slot = &r.operator
		case "mode":
			slot = &r.mode
		case "state":
			slot = &r.rec.State
		case "key":
			slot = &r.rec.Key
		case "namespace":
			slot = &r.rec.Namespace
		case "userKey":
			slot = &r.rec.UserKey
		case "value":
			slot = &r.rec.Value
		case "ttlTimestamp":
			slot = &r.rec.TTLTimestamp
		}
		if slot != nil {
			if *slot != nil {
				return false
			}
			*slot = tok
		}
		p.space()
		switch {
		case p.byte(','):
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
func numberEnd(b []byte, i int) (int, bool) {
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
