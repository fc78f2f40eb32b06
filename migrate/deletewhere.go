package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// DeleteWhere drops the keyed entries for which any of its predicates holds (`migrate patch
// --delete-where`). A predicate names a state, a field of the entry as `dump` prints it, an
// operator and a JSON literal:
//
//	STATE: FIELD OP LITERAL       FIELD  key, namespace, userKey (map states), value,
//	                                     ttlTimestamp (TTL states), each optionally followed by
//	                                     .name or .index into an object or array (value.f0)
//	                              OP     == != < <= > >=
//	                              LITERAL null, true, false, a number, a "string"
//
//	count: value == null          every entry of count whose value is null
//	session: ttlTimestamp < 1700000000000
//	tags: key.f0 >= 100
//
// == and != compare JSON values (numbers by value); the orderings compare two numbers or two
// strings and hold for nothing else (a null or a missing field is never < or > anything).
// Every entry of the selected operators is read; the digests verification checks are those of
// the entries kept.
type DeleteWhere struct {
	Operators []Selector // default: every keyed operator
	Where     []Predicate
}

// Predicate is one parsed --delete-where condition.
type Predicate struct {
	Text  string
	State string
	Path  []string // field, then sub-fields
	Op    string
	Lit   any // as encoding/json decodes it with UseNumber
}

var predicateOps = []string{"==", "!=", "<=", ">=", "<", ">"}

// ParsePredicate reads "STATE: FIELD OP LITERAL".
func ParsePredicate(s string) (Predicate, error) {
	p := Predicate{Text: s}
	at, op := -1, ""
	for _, o := range predicateOps { // two-character operators first
		if i := strings.Index(s, o); i >= 0 && (at < 0 || i < at) {
			at, op = i, o
		}
	}
	if at < 0 {
		return p, fmt.Errorf("--delete-where %q: want STATE: FIELD OP LITERAL with OP one of %s", s, strings.Join(predicateOps, " "))
	}
	left, lit := strings.TrimSpace(s[:at]), strings.TrimSpace(s[at+len(op):])
	colon := strings.LastIndex(left, ":")
	if colon <= 0 {
		return p, fmt.Errorf("--delete-where %q: want STATE: FIELD before %s (e.g. count: value == null)", s, op)
	}
	p.State, p.Op = strings.TrimSpace(left[:colon]), op
	p.Path = strings.Split(strings.TrimSpace(left[colon+1:]), ".")
	switch p.Path[0] {
	case "key", "namespace", "userKey", "value", "ttlTimestamp":
	default:
		return p, fmt.Errorf("--delete-where %q: field %q: want key, namespace, userKey, value or ttlTimestamp", s, p.Path[0])
	}
	d := json.NewDecoder(strings.NewReader(lit))
	d.UseNumber()
	if err := d.Decode(&p.Lit); err != nil || d.More() {
		return p, fmt.Errorf("--delete-where %q: literal %q: want null, true, false, a number or a \"string\" (JSON)", s, lit)
	}
	switch p.Lit.(type) {
	case nil, bool, json.Number, string:
	default:
		return p, fmt.Errorf("--delete-where %q: literal %s: want null, true, false, a number or a string", s, lit)
	}
	return p, nil
}

// Describe says what the step does.
func (d *DeleteWhere) Describe() string {
	var ts []string
	for _, p := range d.Where {
		ts = append(ts, p.Text)
	}
	return "delete entries where " + strings.Join(ts, " or ")
}

func (d *DeleteWhere) apply(s *session) (*StepReport, error) {
	if len(d.Where) == 0 {
		return nil, fmt.Errorf("delete-where: no predicate")
	}
	ops, err := (&Rescale{Operators: d.Operators}).targets(s.m)
	if err != nil {
		return nil, err
	}
	rep := &StepReport{Step: d.Describe()}
	found := make([]bool, len(d.Where))
	for _, op := range ops {
		ch, err := d.operator(s, op, found)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		rep.Operators = append(rep.Operators, ch)
	}
	for i, p := range d.Where {
		if !found[i] {
			return nil, fmt.Errorf("--delete-where %q: no selected operator has a keyed state %q", p.Text, p.State)
		}
	}
	return rep, nil
}

func (d *DeleteWhere) operator(s *session, op *metadata.OperatorState, found []bool) (OperatorChange, error) {
	removed := map[string]int64{}
	deleted := map[string]int{}
	var bindErr error
	var line []byte
	ed := keyedEdit{
		scan: s.opt.DryRun,
		header: func(parts *headerParts, name string) ([][]byte, []int, error) {
			return parts.metas, identity(len(parts.metas)), nil
		},
		bind: func(h *keyed.Header) {
			dec := keyed.NewDecoder(h, "", int(op.MaxParallelism))
			for i, p := range d.Where {
				j := slices.IndexFunc(dec.States, func(sd *keyed.StateDecoder) bool { return sd.Meta.Name == p.State })
				if j < 0 {
					continue
				}
				sd := dec.States[j]
				switch {
				case sd.Kind == "timer":
					bindErr = fmt.Errorf("--delete-where %q: state %q is a timer queue; timers are not deleted by predicate", p.Text, p.State)
				case p.Path[0] == "userKey" && sd.Kind != "map":
					bindErr = fmt.Errorf("--delete-where %q: state %q is a %s state; only map states have a userKey", p.Text, p.State, sd.Kind)
				case p.Path[0] == "ttlTimestamp" && !sd.TTL:
					bindErr = fmt.Errorf("--delete-where %q: state %q is not stored with TTL; it has no ttlTimestamp", p.Text, p.State)
				}
				found[i] = true
			}
		},
		entry: func(h *keyed.Header, e *keyed.Entry, dec *keyed.Decoder) ([]byte, []byte, error) {
			name := h.States[e.StateID].Name
			match := false
			var rec map[string]any
			for _, p := range d.Where {
				if p.State != name {
					continue
				}
				if rec == nil {
					r, err := dec.Decode(e)
					if err != nil {
						return nil, nil, fmt.Errorf("key group %d state %q: %w", e.KeyGroup, name, err)
					}
					if line, err = r.AppendJSON(line[:0]); err != nil {
						return nil, nil, fmt.Errorf("key group %d state %q: %w", e.KeyGroup, name, err)
					}
					jd := json.NewDecoder(bytes.NewReader(line))
					jd.UseNumber()
					if err := jd.Decode(&rec); err != nil {
						return nil, nil, fmt.Errorf("key group %d state %q: %w", e.KeyGroup, name, err)
					}
				}
				if p.holds(rec) {
					match = true
					break
				}
			}
			if match {
				deleted[name]++
				removed[name] += int64(len(e.Key) + len(e.Value))
				return nil, nil, nil
			}
			return bytes.Clone(e.Key), bytes.Clone(e.Value), nil
		},
	}
	before, after, sums, err := s.editKeyed(op, ed)
	if err == nil {
		err = bindErr // a predicate the state cannot satisfy: the run fails before anything is published
	}
	if err != nil {
		return OperatorChange{}, err
	}
	if dg := s.digest[op.ID]; dg != nil {
		dg.Keyed = sums
	}
	ch := change(op, before, after)
	ch.Deleted, ch.BytesRemoved = deleted, removed
	return ch, nil
}

// holds evaluates the predicate on a record as dump prints it.
func (p Predicate) holds(rec map[string]any) bool {
	v, ok := any(rec), true
	for _, f := range p.Path {
		switch x := v.(type) {
		case map[string]any:
			v, ok = x[f]
		case []any:
			i, err := strconv.Atoi(f)
			if ok = err == nil && i >= 0 && i < len(x); ok {
				v = x[i]
			}
		default:
			ok = false
		}
		if !ok {
			return p.Op == "!="
		}
	}
	c, comparable := compareJSON(v, p.Lit)
	switch p.Op {
	case "==":
		return comparable && c == 0 || !comparable && jsonEqual(v, p.Lit)
	case "!=":
		return !(comparable && c == 0 || !comparable && jsonEqual(v, p.Lit))
	}
	if !comparable {
		return false
	}
	switch p.Op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

// compareJSON orders two numbers (by value) or two strings; ok is false for anything else.
func compareJSON(a, b any) (int, bool) {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return 0, false
		}
		rx, okx := new(big.Rat).SetString(string(x))
		ry, oky := new(big.Rat).SetString(string(y))
		if !okx || !oky {
			return 0, false
		}
		return rx.Cmp(ry), true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
