package migrate

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// DropOperator removes an operator and all its state. The job restoring the result must not
// declare state for it (or Flink finds nothing to restore); the point is usually that the job no
// longer has the operator, which Flink otherwise refuses unless unclaimed state is allowed.
type DropOperator struct{ Operator Selector }

// Describe implements Step.
func (d *DropOperator) Describe() string { return "drop-operator " + d.Operator.String() }

func (d *DropOperator) apply(s *session) (*StepReport, error) {
	op, err := d.Operator.find(s.m)
	if err != nil {
		return nil, err
	}
	ch := OperatorChange{Operator: Label(op), UIDHashBefore: op.ID.String(), ParallelismBefore: op.Parallelism,
		MaxParBefore: op.MaxParallelism, EntriesBefore: s.keyedCounts(op.ID), Note: "dropped"}
	var keep []*metadata.OperatorState
	for _, o := range s.m.Operators {
		if o != op {
			keep = append(keep, o)
		}
	}
	s.m.Operators = keep
	delete(s.digest, op.ID)
	return &StepReport{Step: d.Describe(), Operators: []OperatorChange{ch}}, nil
}

// keyedStep finds the operator and checks it has keyed state.
func keyedStep(s *session, sel Selector) (*metadata.OperatorState, error) {
	op, err := sel.find(s.m)
	if err != nil {
		return nil, err
	}
	if !hasKeyed(op) {
		return nil, fmt.Errorf("operator %s has no keyed state (renaming, dropping and retyping operator state is not supported)", Label(op))
	}
	return op, nil
}

// RenameState renames a keyed state (its name in every subtask's keyed-state header). Entries
// are copied unchanged; the job must then declare the state under the new name.
type RenameState struct {
	Operator Selector
	From, To string
}

// Describe implements Step.
func (r *RenameState) Describe() string {
	return fmt.Sprintf("rename-state %s %q -> %q", r.Operator, r.From, r.To)
}

func (r *RenameState) apply(s *session) (*StepReport, error) {
	op, err := keyedStep(s, r.Operator)
	if err != nil {
		return nil, err
	}
	if r.To == "" || strings.HasPrefix(r.To, "_timer_state/") || strings.HasPrefix(r.From, "_timer_state/") {
		return nil, fmt.Errorf("state names: %q -> %q: want a non-empty user state name (timer queues keep Flink's names)", r.From, r.To)
	}
	if r.From == r.To {
		return nil, fmt.Errorf("state %q: the new name is the old one; nothing to rename", r.From)
	}
	found := false
	before, after, _, err := s.editKeyed(op, keyedEdit{scan: s.opt.DryRun && s.digest == nil, header: func(p *headerParts, name string) ([][]byte, []int, error) {
		i := p.stateIndex(r.From)
		if p.stateIndex(r.To) >= 0 {
			return nil, nil, fmt.Errorf("%s: a state named %q already exists", name, r.To)
		}
		metas := append([][]byte{}, p.metas...)
		if i >= 0 {
			found = true
			m, err := renameMeta(metas[i], r.To)
			if err != nil {
				return nil, nil, err
			}
			metas[i] = m
		}
		return metas, identity(len(metas)), nil
	}})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("operator %s has no keyed state %q", Label(op), r.From)
	}
	if c := s.digestCounts(op.ID); c != nil {
		before, after = c, maps.Clone(c)
		if n, ok := after[r.From]; ok {
			delete(after, r.From)
			after[r.To] = n
		}
	}
	if d := s.digest[op.ID]; d != nil {
		d.Keyed[r.To] = d.Keyed[r.From]
		delete(d.Keyed, r.From)
	}
	return &StepReport{Step: r.Describe(), Operators: []OperatorChange{change(op, before, after)}}, nil
}

func change(op *metadata.OperatorState, before, after map[string]int) OperatorChange {
	return OperatorChange{Operator: Label(op), UIDHashBefore: op.ID.String(), UIDHashAfter: op.ID.String(),
		ParallelismBefore: op.Parallelism, ParallelismAfter: op.Parallelism, MaxParBefore: op.MaxParallelism, MaxParAfter: op.MaxParallelism,
		EntriesBefore: before, EntriesAfter: after}
}

// DropState removes a keyed state: its meta information from every header and its entries.
type DropState struct {
	Operator Selector
	State    string
}

// Describe implements Step.
func (d *DropState) Describe() string { return fmt.Sprintf("drop-state %s %q", d.Operator, d.State) }

func (d *DropState) apply(s *session) (*StepReport, error) {
	op, err := keyedStep(s, d.Operator)
	if err != nil {
		return nil, err
	}
	found := false
	before, after, _, err := s.editKeyed(op, keyedEdit{scan: s.opt.DryRun && s.digest == nil, header: func(p *headerParts, name string) ([][]byte, []int, error) {
		var metas [][]byte
		ids := make([]int, len(p.metas))
		for i, m := range p.metas {
			if p.names[i] == d.State {
				found = true
				ids[i] = -1
				continue
			}
			ids[i] = len(metas)
			metas = append(metas, m)
		}
		return metas, ids, nil
	}})
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("operator %s has no keyed state %q", Label(op), d.State)
	}
	if c := s.digestCounts(op.ID); c != nil {
		before, after = c, maps.Clone(c)
		delete(after, d.State)
	}
	if dg := s.digest[op.ID]; dg != nil {
		delete(dg.Keyed, d.State)
	}
	return &StepReport{Step: d.Describe(), Operators: []OperatorChange{change(op, before, after)}}, nil
}

// Retype changes the value type of a keyed value, list or map state (for a list, the element
// type; for a map, the user value type) and/or the user key type of a map state. Supported types are the Java boxed primitives Integer,
// Long, Short, Byte, Float, Double, Boolean as targets, and those plus String as sources:
//
//	widening (Byte->Short->Integer->Long, Float->Double, integers->Double when exact) always;
//	narrowing (Long->Integer, Double->Float, ...) when every value fits the new type (an integer
//	  must be in range; a floating value converted to an integer type must be integral; Double to
//	  Float must be within Float's range and is rounded to nearest as Java's cast does);
//	String -> number when every value parses (Java's Integer.parseInt / Double.parseDouble).
//
// Otherwise the step fails naming the first key whose value does not convert, before anything is
// written. The state's serializer snapshot (nested inside List/Map/TTL serializers as needed)
// is replaced by the new type's, so Flink accepts a job declaring the new type. TTL timestamps
// and null map values are kept.
//
// A Retype with DropFields, AddFields or Class instead changes the fields of a value (list
// element, map value) that is a Row (RowSerializer: position-based, fields named f0, f1, ...)
// or a POJO (PojoSerializer: fields by name), and cannot also convert types:
//
//	drop: Row fields by position, POJO fields by name (all drops use the old names);
//	add:  a Type (Integer, Long, Short, Byte, Float, Double, Boolean, String) and a default
//	      every stored value gets (a literal of the type, or null); a Row field is named by the
//	      position it takes after the drops (f0 first, f<arity> appends), a POJO field by name;
//	      POJO fields are then ordered by name, as Flink's PojoTypeInfo orders them, so the
//	      snapshot is the one Flink's serializer for the new class writes;
//	class: a POJO's new class name, also in the declaring-class key of each field the old
//	      class declared (inherited fields keep their superclass).
//
// A null default suits Row fields and boxed POJO fields (Integer, Long, String, ...). A POJO
// field of a primitive type (int, long, ...) restored as null makes Flink fail when it reads the
// value (Field.set with null); the snapshot cannot tell int from Integer (both use the same
// serializer), so statecraft cannot refuse it: give a default for primitive fields. POJO values
// that are subclass instances (written with the subclass's serializer) are refused.
type Retype struct {
	Operator Selector
	State    string
	To       string // new value type: Integer, Long, Short, Byte, Float, Double, Boolean ("": keep)
	KeyTo    string // new map key type ("": keep); the same conversions, applied to map keys
	// Field, when set (f0, f1, ...), applies To to one field of a Flink tuple value instead of
	// the whole value: Tuple2<Integer, String> with Field f0, To Long gives Tuple2<Long, String>.
	Field string
	// DropFields, AddFields and Class change a Row or POJO value's fields (see above).
	DropFields []string
	AddFields  []AddField
	Class      string
}

// Describe implements Step.
func (r *Retype) Describe() string {
	s := fmt.Sprintf("retype %s %q", r.Operator, r.State)
	if r.To != "" && r.Field != "" {
		s += " field " + r.Field + " -> " + r.To
	} else if r.To != "" {
		s += " values -> " + r.To
	}
	if r.KeyTo != "" {
		s += " map keys -> " + r.KeyTo
	}
	if len(r.DropFields) > 0 {
		s += " drop fields " + strings.Join(r.DropFields, ", ")
	}
	for i, a := range r.AddFields {
		if i == 0 {
			s += " add fields "
		} else {
			s += ", "
		}
		s += a.String()
	}
	if r.Class != "" {
		s += " class -> " + r.Class
	}
	return s
}

func (r *Retype) apply(s *session) (*StepReport, error) {
	if r.evolves() {
		return r.applyFields(s)
	}
	if r.To == "" && r.KeyTo == "" {
		return nil, fmt.Errorf("give the new value type, the new map key type, or both (or fields to add or drop)")
	}
	if r.Field != "" && r.To == "" {
		return nil, fmt.Errorf("field %q: give its new type (to)", r.Field)
	}
	for _, t := range []string{r.To, r.KeyTo} {
		if _, ok := serializer.BasicSnapshot(t); t != "" && (!ok || t == "String") {
			return nil, fmt.Errorf("target type %q: want Integer, Long, Short, Byte, Float, Double or Boolean", t)
		}
	}
	op, err := keyedStep(s, r.Operator)
	if err != nil {
		return nil, err
	}
	var notes []string
	found := false
	conv := map[*keyed.Header]*retypeState{}
	ed := keyedEdit{scan: true}
	// pending carries what header decided for a subtask to bind, which runs next for the same
	// subtask (editSubtask), keyed by its header.
	var pending *retypeState
	ed.header = func(p *headerParts, name string) ([][]byte, []int, error) {
		pending = nil
		i := p.stateIndex(r.State)
		if i < 0 {
			return p.metas, identity(len(p.metas)), nil
		}
		found = true
		kind, vs, elem, err := valueSlot(p.metas[i], name, r.State, "retype supports")
		if err != nil {
			return nil, nil, err
		}
		if r.KeyTo != "" && (kind != "map" || len(vs.Nested) != 2) {
			return nil, nil, fmt.Errorf("state %q is %s state; only map states have a map key type", r.State, english.A(kind))
		}
		rs := &retypeState{id: i, kind: kind, ttl: serializer.UnwrapTTL(elem) != elem}
		meta := p.metas[i]
		// Replace the later snapshot first, so that the earlier one's offsets stay valid: a
		// map's value serializer follows its key serializer.
		type swap struct {
			snap     *serializer.Snapshot
			to, what string
			from     *string
			codec    *serializer.Codec
		}
		var swaps []swap
		if r.To != "" {
			target, what := serializer.UnwrapTTL(elem), "values"
			if r.Field != "" {
				// A field of a Flink tuple value: its fields are written one after the other
				// (TupleSerializer), with no null flags.
				tup := target
				if tup == nil || tup.Class != snapTuple {
					return nil, nil, fmt.Errorf("%s: state %q holds %s, not a tuple; field %q names a tuple field", name, r.State, serializer.JavaType(tup), r.Field)
				}
				idx, ok := fieldPos(r.Field, len(tup.Nested)-1)
				if !ok {
					return nil, nil, fmt.Errorf("state %q: field %q: want f0..f%d of %s", r.State, r.Field, len(tup.Nested)-1, serializer.JavaType(tup))
				}
				rs.field = idx
				for _, n := range tup.Nested {
					rs.fields = append(rs.fields, serializer.NewCodec(n))
				}
				target, what = tup.Nested[idx], "values of field "+r.Field
			}
			swaps = append(swaps, swap{target, r.To, what, &rs.from, &rs.fromCodec})
		}
		if r.KeyTo != "" {
			swaps = append(swaps, swap{vs.Nested[0], r.KeyTo, "map keys", &rs.keyFrom, &rs.keyCodec})
		}
		var unchanged []string
		for _, sw := range swaps {
			if serializer.BasicType(sw.snap) == sw.to {
				unchanged = append(unchanged, fmt.Sprintf("its %s are already %s", sw.what, sw.to))
			}
		}
		if len(unchanged) == len(swaps) {
			// Rewriting every value into the type it has would change nothing but the files.
			return nil, nil, fmt.Errorf("state %q: %s; nothing to convert", r.State, strings.Join(unchanged, ", "))
		}
		for _, sw := range swaps {
			t := sw.snap
			from := serializer.BasicType(t)
			if from == "" || t.Version < 3 {
				return nil, nil, fmt.Errorf("%s: the %s of state %q are %s; retype converts Integer, Long, Short, Byte, Float, Double, Boolean and String", name, sw.what, r.State, serializer.JavaType(t))
			}
			if (from == "Boolean") != (sw.to == "Boolean") {
				return nil, nil, fmt.Errorf("state %q: no conversion of %s between %s and %s", r.State, sw.what, from, sw.to)
			}
			*sw.from = from
			*sw.codec = serializer.NewCodec(t)
			// The new type's snapshot, in the version the old one was written in (>= 3: no payload).
			to, _ := serializer.BasicSnapshot(sw.to)
			to.Version = t.Version
			enc, err := serializer.EncodeVersioned(to)
			if err != nil {
				return nil, nil, fmt.Errorf("state %q: new serializer snapshot: %w", r.State, err)
			}
			meta = replaceSnapshot(meta, t, enc)
		}
		rs.to, rs.keyTo = r.To, r.KeyTo
		metas := append([][]byte{}, p.metas...)
		metas[i] = meta
		pending = rs
		return metas, identity(len(metas)), nil
	}
	ed.entry = func(h *keyed.Header, e *keyed.Entry, dec *keyed.Decoder) ([]byte, []byte, error) {
		rs := conv[h]
		if rs == nil || e.StateID != rs.id {
			return bytes.Clone(e.Key), bytes.Clone(e.Value), nil
		}
		key, val := bytes.Clone(e.Key), bytes.Clone(e.Value)
		var err error
		if rs.to != "" {
			val, err = rs.convert(e.Value)
		}
		if err == nil && rs.keyTo != "" {
			key, err = rs.convertKey(e, dec)
		}
		if err != nil {
			rec, derr := dec.Decode(e)
			where := "a key"
			if derr == nil {
				k, _ := json.Marshal(rec.Key)
				where = "key " + string(k)
				if rec.UserKey != nil {
					u, _ := json.Marshal(rec.UserKey)
					where += " map key " + string(u)
				}
			}
			return nil, nil, fmt.Errorf("state %q: %s: %w", r.State, where, err)
		}
		return key, val, nil
	}
	ed.bind = func(h *keyed.Header) {
		if pending != nil {
			conv[h] = pending
			if len(notes) == 0 {
				if pending.to != "" {
					notes = append(notes, "values "+pending.from+" -> "+pending.to)
				}
				if pending.keyTo != "" {
					notes = append(notes, "map keys "+pending.keyFrom+" -> "+pending.keyTo)
				}
			}
		}
	}
	before, after, sums, err := s.editKeyed(op, ed)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("operator %s has no keyed state %q", Label(op), r.State)
	}
	before, after = s.dryRunCounts(op.ID, before, after)
	if d := s.digest[op.ID]; d != nil {
		d.Keyed[r.State] = sums[r.State]
	}
	ch := change(op, before, after)
	ch.Note = strings.Join(notes, ", ")
	return &StepReport{Step: r.Describe(), Operators: []OperatorChange{ch}}, nil
}

// fieldPos reads a tuple or Row field named by position, fN, with N in [0, max].
func fieldPos(name string, max int) (int, bool) {
	n, ok := strings.CutPrefix(name, "f")
	i, err := strconv.Atoi(n)
	return i, ok && err == nil && i >= 0 && i <= max
}

// replaceSnapshot returns a copy of meta with the bytes of snapshot t, read from meta, replaced by
// enc.
func replaceSnapshot(meta []byte, t *serializer.Snapshot, enc []byte) []byte {
	return append(append(append([]byte{}, meta[:t.Offset]...), enc...), meta[t.End:]...)
}

// valueSlot reads a value, list or map state's meta information (its bytes in the header) and
// returns the state's kind, its value serializer (vs) and the snapshot slot holding the stored
// values (elem): the value serializer itself, a list's element or a map's value serializer,
// TTL-wrapped or not. Other kinds of state are refused:
// "<name>: state "s" is a reducing state; <what> value, list and map states".
func valueSlot(meta []byte, name, state, what string) (kind string, vs, elem *serializer.Snapshot, err error) {
	m, err := parseMeta(meta, name)
	if err != nil {
		return "", nil, nil, err
	}
	kind = m.StateKind()
	vs = m.Serializer(keyed.SerValue)
	elem = vs
	switch kind {
	case "value":
	case "list", "map":
		if vs == nil || len(vs.Nested) < 1 {
			return "", nil, nil, fmt.Errorf("%s: %s state %q: serializer has no element serializer", name, kind, state)
		}
		elem = vs.Nested[len(vs.Nested)-1]
	default:
		return "", nil, nil, fmt.Errorf("%s: state %q is %s state; %s value, list and map states", name, state, english.A(kind), what)
	}
	return kind, vs, elem, nil
}

// convertKey re-encodes the map user key at the end of a map entry's key:
//
//	key := kg K [len] NS [len] UK      (UK last; its old encoding is re-derived to find it)
func (rs *retypeState) convertKey(e *keyed.Entry, dec *keyed.Decoder) ([]byte, error) {
	rec, err := dec.Decode(e)
	if err != nil {
		return nil, err
	}
	old, err := encodeSimple(rec.UserKey, rs.keyFrom)
	if err != nil {
		return nil, err
	}
	if len(old) > len(e.Key) || !bytes.Equal(e.Key[len(e.Key)-len(old):], old) {
		return nil, fmt.Errorf("map key %v: its %s encoding is not the end of the stored key", rec.UserKey, rs.keyFrom)
	}
	nk, err := convertValue(rec.UserKey, rs.keyFrom, rs.keyTo)
	if err != nil {
		return nil, err
	}
	return append(bytes.Clone(e.Key[:len(e.Key)-len(old)]), nk...), nil
}

// encodeSimple encodes a decoded simple value as its serializer does (to locate it in a key).
func encodeSimple(v any, typ string) ([]byte, error) {
	if s, ok := v.(string); ok && typ == "String" {
		// StringValue.writeString: varint(len+1), then each UTF-16 unit as a varint.
		var out []byte
		units := utf16.Encode([]rune(s))
		out = appendVarint(out, uint32(len(units)+1))
		for _, u := range units {
			out = appendVarint(out, uint32(u))
		}
		return out, nil
	}
	return convertValue(v, typ, typ)
}

func appendVarint(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// retypeState converts the values of one state in one subtask's file.
type retypeState struct {
	id        int
	kind      string
	ttl       bool
	from, to  string // value types ("" when unchanged)
	fromCodec serializer.Codec
	keyFrom   string // map key types ("" when unchanged)
	keyTo     string
	keyCodec  serializer.Codec
	// fields are the codecs of a tuple value's fields when one field (index field) is retyped.
	fields []serializer.Codec
	field  int
}

// convert rewrites one stored value (framing: see rewriteStored).
func (rs *retypeState) convert(val []byte) ([]byte, error) {
	return rewriteStored(val, rs.kind, rs.ttl, func(in *serializer.Input, out []byte) ([]byte, error) {
		if rs.fields != nil {
			for j, c := range rs.fields {
				start := in.Pos
				v := c.Decode(in)
				if err := in.Err(); err != nil {
					return nil, err
				}
				if j != rs.field {
					out = append(out, in.B[start:in.Pos]...)
					continue
				}
				b, err := convertValue(v, rs.from, rs.to)
				if err != nil {
					return nil, fmt.Errorf("field f%d: %w", j, err)
				}
				out = append(out, b...)
			}
			return out, nil
		}
		v := rs.fromCodec.Decode(in)
		if err := in.Err(); err != nil {
			return nil, err
		}
		b, err := convertValue(v, rs.from, rs.to)
		if err != nil {
			return nil, err
		}
		return append(out, b...), nil
	})
}

// convertValue converts one decoded value of type from to the bytes of type to.
func convertValue(v any, from, to string) ([]byte, error) {
	var i int64
	var f float64
	isInt := false
	switch x := v.(type) {
	case int32:
		i, isInt = int64(x), true
	case int64:
		i, isInt = x, true
	case int16:
		i, isInt = int64(x), true
	case int8:
		i, isInt = int64(x), true
	case serializer.Float:
		f = float64(x)
	case bool:
		if to != "Boolean" {
			return nil, fmt.Errorf("Boolean value %v does not convert to %s", x, to)
		}
		if x {
			return []byte{1}, nil
		}
		return []byte{0}, nil
	case string:
		if to == "Float" || to == "Double" {
			p, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if err != nil {
				return nil, fmt.Errorf("value %q does not parse as %s", x, english.A(to))
			}
			f = p
		} else {
			p, err := strconv.ParseInt(x, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("value %q does not parse as %s", x, english.A(to))
			}
			i, isInt = p, true
		}
	default:
		return nil, fmt.Errorf("value of Go type %T cannot be converted", v)
	}
	var b [8]byte
	putInt := func(lo, hi int64, n int) ([]byte, error) {
		if !isInt {
			if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) || f < float64(lo) || f >= -float64(lo) {
				return nil, fmt.Errorf("value %v does not fit %s (not an integer in [%d, %d])", f, to, lo, hi)
			}
			i = int64(f)
		}
		if i < lo || i > hi {
			return nil, fmt.Errorf("value %d does not fit %s [%d, %d]", i, to, lo, hi)
		}
		switch n {
		case 1:
			b[0] = byte(i)
		case 2:
			binary.BigEndian.PutUint16(b[:], uint16(i))
		case 4:
			binary.BigEndian.PutUint32(b[:], uint32(i))
		case 8:
			binary.BigEndian.PutUint64(b[:], uint64(i))
		}
		return append([]byte{}, b[:n]...), nil
	}
	switch to {
	case "Byte":
		return putInt(math.MinInt8, math.MaxInt8, 1)
	case "Short":
		return putInt(math.MinInt16, math.MaxInt16, 2)
	case "Integer":
		return putInt(math.MinInt32, math.MaxInt32, 4)
	case "Long":
		return putInt(math.MinInt64, math.MaxInt64, 8)
	case "Double":
		if isInt {
			f = float64(i)
			if int64(f) != i || f == 1<<63 {
				return nil, fmt.Errorf("value %d has no exact Double", i)
			}
		}
		binary.BigEndian.PutUint64(b[:], math.Float64bits(f))
		return append([]byte{}, b[:8]...), nil
	case "Float":
		var g float32
		if isInt {
			g = float32(i)
			if float64(g) != float64(i) || int64(g) != i {
				return nil, fmt.Errorf("value %d has no exact Float", i)
			}
		} else {
			if !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) > math.MaxFloat32 {
				return nil, fmt.Errorf("value %v is outside Float's range", f)
			}
			g = float32(f)
		}
		binary.BigEndian.PutUint32(b[:], math.Float32bits(g))
		return append([]byte{}, b[:4]...), nil
	}
	return nil, fmt.Errorf("conversion from %s to %s is not supported", from, to)
}
