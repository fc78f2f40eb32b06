package migrate

import (
	"bytes"
	"encoding/json"
)

// lineDecoder decodes the lines of a data file (one JSON object each) into one map, reused.
type lineDecoder struct {
	rec    map[string]any
	intern map[string]string
}

func newLineDecoder() *lineDecoder {
	return &lineDecoder{rec: map[string]any{}, intern: map[string]string{}}
}

// decode decodes one line into d.rec, exactly as encoding/json's Decoder with UseNumber would
// (into a map[string]any: objects as map[string]any, arrays as []any, numbers as json.Number,
// strings, booleans and null; a "null" line leaves it empty), and returns d.rec, valid until
// the next call.
//
// A dump's lines are flat objects of ASCII names, numbers and short strings; decoding them
// through reflection cost two thirds of a load's CPU time. The fast path below takes only what
// it can decode exactly (strings without escapes or bytes past ASCII, numbers of JSON's
// grammar, nesting up to maxFastDepth, nothing but spaces after the object) and hands every
// other line to encoding/json, whose result and errors are then the answer:
//
//	line --fast--> ok: rec
//	      \--------> anything else: json.NewDecoder(line), UseNumber, Decode
//
// Field names and the string values of "operator", "state", "op", "mode" and "kind" are
// interned: they repeat on every line.
func (d *lineDecoder) decode(line []byte) (map[string]any, error) {
	clear(d.rec)
	p := fastJSON{flatScan: flatScan{b: line}, intern: d.intern}
	p.space()
	if p.object(d.rec, 0) {
		p.space()
		if p.i == len(p.b) {
			return d.rec, nil
		}
	}
	clear(d.rec)
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var full map[string]any
	if err := dec.Decode(&full); err != nil {
		return nil, err
	}
	for k, v := range full {
		d.rec[k] = v
	}
	return d.rec, nil
}

// maxFastDepth is the deepest nesting the fast path decodes (encoding/json takes the rest).
const maxFastDepth = 64

// fastJSON is the fast path's cursor (scanFlat's, with the interned strings): each method
// reports false where it gives up.
type fastJSON struct {
	flatScan
	intern map[string]string
}

// internedFields are the top-level fields whose string values repeat from line to line.
var internedFields = map[string]bool{"operator": true, "state": true, "op": true, "mode": true, "kind": true}

func (p *fastJSON) object(m map[string]any, depth int) bool {
	if depth > maxFastDepth || p.i >= len(p.b) || p.b[p.i] != '{' {
		return false
	}
	p.i++
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return true
	}
	for {
		p.space()
		raw, ok := p.rawString()
		if !ok {
			return false
		}
		name := p.internBytes(raw)
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		var v any
		if depth == 0 && internedFields[name] && p.i < len(p.b) && p.b[p.i] == '"' {
			s, ok := p.rawString()
			if !ok {
				return false
			}
			v = p.internBytes(s)
		} else if v, ok = p.value(depth); !ok {
			return false
		}
		m[name] = v
		p.space()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return false
		}
	}
}

func (p *fastJSON) internBytes(b []byte) string {
	if s, ok := p.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(p.intern) < 1024 {
		p.intern[s] = s
	}
	return s
}

func (p *fastJSON) value(depth int) (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '"':
		s, ok := p.rawString()
		return string(s), ok
	case c == '{':
		m := map[string]any{}
		return m, p.object(m, depth+1)
	case c == '[':
		return p.array(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case bytes.HasPrefix(p.b[p.i:], []byte("null")):
		p.i += 4
		return nil, true
	case bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return true, true
	case bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return false, true
	}
	return nil, false
}

func (p *fastJSON) array(depth int) (any, bool) {
	if depth > maxFastDepth {
		return nil, false
	}
	p.i++ // '['
	a := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// rawString returns the bytes of a string without escapes or bytes past ASCII (the fast path
// gives up on those: encoding/json decodes escapes and replaces invalid UTF-8).
func (p *fastJSON) rawString() ([]byte, bool) {
	if p.i >= len(p.b) || p.b[p.i] != '"' {
		return nil, false
	}
	start := p.i + 1
	for j := start; j < len(p.b); j++ {
		switch c := p.b[j]; {
		case c == '"':
			p.i = j + 1
			return p.b[start:j], true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// number reads a number of JSON's grammar (numberEnd).
func (p *fastJSON) number() (any, bool) {
	end, ok := numberEnd(p.b, p.i)
	if !ok {
		return nil, false
	}
	n := json.Number(p.b[p.i:end])
	p.i = end
	return n, true
}
