package migrate

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// AddField is a field a Retype adds to a Row or POJO value.
type AddField struct {
	// Name is a POJO field's name, or for a Row fN: the position the new field takes (f0 puts
	// it first; f<arity> appends it), counted after the dropped fields are gone.
	Name string
	// Type is Integer, Long, Short, Byte, Float, Double, Boolean or String.
	Type string
	// Default is the value every existing entry gets, as a literal of Type (Boolean: true or
	// false). Null gives null instead.
	Default string
	Null    bool
}

func (a AddField) String() string {
	d := strconv.Quote(a.Default)
	if a.Null {
		d = "null"
	}
	return a.Name + ":" + a.Type + "=" + d
}

// evolves reports whether r changes the fields of a Row or POJO value.
func (r *Retype) evolves() bool {
	return len(r.DropFields) > 0 || len(r.AddFields) > 0 || r.Class != ""
}

// fieldPlan is what a field evolution does to one state's values, decided from its snapshot.
type fieldPlan struct {
	row     bool
	rowKind bool               // Row: the null mask starts with the two RowKind bits
	old     []serializer.Codec // the old fields' codecs, in stored order
	// out lists the new fields in stored order: an old field's index, or -(k+1) for the k-th
	// added field, whose default's bytes are defs[k] (nil: null).
	out  []int
	defs [][]byte
	snap *serializer.Snapshot // the new value serializer's snapshot
	note string
}

// planFields works out the new layout of the Row or POJO whose snapshot is t.
func (r *Retype) planFields(t *serializer.Snapshot) (*fieldPlan, error) {
	if !t.IsRow() && !t.IsPojo() {
		return nil, fmt.Errorf("state %q holds %s, not a Row (RowSerializer) or a POJO (PojoSerializer); adding and dropping fields needs one of those", r.State, serializer.JavaType(t))
	}
	for _, a := range r.AddFields {
		if _, ok := serializer.BasicSnapshot(a.Type); !ok {
			return nil, fmt.Errorf("state %q: new field %q: type %q, want Integer, Long, Short, Byte, Float, Double, Boolean or String", r.State, a.Name, a.Type)
		}
	}
	p := &fieldPlan{row: t.IsRow(), rowKind: t.RowKind}
	// names are the fields' names in stored order: f0, f1, ... for a Row (position-based: its
	// snapshot has no names), the POJO field names otherwise.
	var names []string
	var snaps []*serializer.Snapshot
	if p.row {
		if r.Class != "" {
			return nil, fmt.Errorf("state %q holds a Row: class %q applies to POJO states only", r.State, r.Class)
		}
		for i, n := range t.Nested {
			names = append(names, "f"+strconv.Itoa(i))
			snaps = append(snaps, n)
		}
	} else {
		if len(t.Maps) != 2 {
			return nil, fmt.Errorf("state %q: POJO snapshot of %s has no subclass maps", r.State, t.TypeClass)
		}
		for _, f := range t.PojoFields {
			if !f.Present || f.Snapshot == nil {
				return nil, fmt.Errorf("state %q: POJO %s field %q is missing from the class that wrote the savepoint; Flink itself cannot restore such a state", r.State, t.TypeClass, f.Entry)
			}
			names = append(names, f.Name)
			snaps = append(snaps, f.Snapshot)
		}
	}
	for i, s := range snaps {
		c := serializer.NewCodec(s)
		if !c.Known() {
			return nil, fmt.Errorf("state %q: field %s is %s, whose bytes statecraft cannot decode (so the fields after it cannot be found)", r.State, names[i], serializer.JavaType(s))
		}
		p.old = append(p.old, c)
	}
	// cur is the working list of fields: an old index, or -(k+1) for the k-th added field.
	cur := make([]int, len(names))
	for i := range cur {
		cur[i] = i
	}
	dropped := map[string]bool{}
	for _, d := range r.DropFields {
		i := slices.Index(names, d)
		switch {
		case i < 0 && p.row:
			return nil, fmt.Errorf("state %q: drop field %q: the Row has fields f0..f%d (Row fields are named by position)", r.State, d, len(names)-1)
		case i < 0:
			return nil, fmt.Errorf("state %q: drop field %q: POJO %s has no such field (it has %s)", r.State, d, t.TypeClass, strings.Join(names, ", "))
		case dropped[d]:
			return nil, fmt.Errorf("state %q: field %q dropped twice", r.State, d)
		}
		dropped[d] = true
		cur = slices.DeleteFunc(cur, func(j int) bool { return j == i })
	}
	if len(cur) == 0 && len(r.AddFields) == 0 {
		return nil, fmt.Errorf("state %q: dropping every field leaves an empty %s", r.State, serializer.JavaType(t))
	}
	newName := func(j int) string {
		if j >= 0 {
			return names[j]
		}
		return r.AddFields[-j-1].Name
	}
	for k, a := range r.AddFields {
		def, err := defaultBytes(a)
		if err != nil {
			return nil, fmt.Errorf("state %q: new field %q: %w", r.State, a.Name, err)
		}
		p.defs = append(p.defs, def)
		if p.row {
			pos, ok := fieldPos(a.Name, len(cur))
			if !ok {
				return nil, fmt.Errorf("state %q: new Row field %q: want f0..f%d, the position it takes (f%d appends)", r.State, a.Name, len(cur), len(cur))
			}
			cur = slices.Insert(cur, pos, -k-1)
			continue
		}
		if a.Name == "" || strings.ContainsAny(a.Name, " .") {
			return nil, fmt.Errorf("state %q: new POJO field %q: want a Java field name", r.State, a.Name)
		}
		for _, j := range cur {
			if newName(j) == a.Name {
				return nil, fmt.Errorf("state %q: new field %q: POJO %s already has a field of that name (drop it first to reset it)", r.State, a.Name, t.TypeClass)
			}
		}
		cur = append(cur, -k-1)
	}
	newSnap := func(j int) *serializer.Snapshot {
		if j >= 0 {
			return snaps[j]
		}
		s, _ := serializer.BasicSnapshot(r.AddFields[-j-1].Type)
		return s
	}
	snap := *t
	if p.row {
		snap.Nested = nil
		for _, j := range cur {
			snap.Nested = append(snap.Nested, newSnap(j))
		}
	} else {
		// Flink orders a POJO's fields by name (the PojoTypeInfo constructor sorts them with
		// String.compareTo, checked with javap on flink-core 2.3.0): the serializer of the new
		// class writes them in that order, so the snapshot and the values must follow it.
		slices.SortStableFunc(cur, func(a, b int) int { return compareUTF16(newName(a), newName(b)) })
		oldClass := t.TypeClass
		if r.Class != "" {
			snap.TypeClass = r.Class
		}
		snap.PojoFields, snap.Nested = nil, nil
		for _, j := range cur {
			f := serializer.PojoField{Entry: newName(j), Name: newName(j), Declaring: snap.TypeClass, Present: true, Snapshot: newSnap(j)}
			if j >= 0 {
				// A field inherited from a superclass keeps its declaring class.
				f.Entry, f.Declaring = t.PojoFields[j].Entry, t.PojoFields[j].Declaring
				if f.Declaring == oldClass {
					f.Declaring = snap.TypeClass
				}
			}
			snap.PojoFields = append(snap.PojoFields, f)
			snap.Nested = append(snap.Nested, f.Snapshot)
		}
	}
	p.out = cur
	p.snap = &snap
	// The note shows a Row by its field types (its fields have no names), a POJO by its names.
	label := newName
	if p.row {
		label = func(j int) string { return serializer.JavaType(newSnap(j)) }
	}
	var from, to []string
	for i := range names {
		from = append(from, label(i))
	}
	for _, j := range cur {
		to = append(to, label(j))
	}
	if p.row {
		p.note = "Row<" + strings.Join(from, ",") + "> -> Row<" + strings.Join(to, ",") + ">"
	} else {
		p.note = t.TypeClass + "{" + strings.Join(from, ", ") + "} -> " + snap.TypeClass + "{" + strings.Join(to, ", ") + "}"
	}
	return p, nil
}

// compareUTF16 orders strings as Java's String.compareTo does (by UTF-16 code unit).
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// defaultBytes encodes a new field's default value as its serializer writes it.
func defaultBytes(a AddField) ([]byte, error) {
	if a.Null {
		return nil, nil
	}
	v := a.Default
	switch a.Type {
	case "String":
		return encodeSimple(v, "String")
	case "Boolean":
		switch v {
		case "true":
			return []byte{1}, nil
		case "false":
			return []byte{0}, nil
		}
	case "Float":
		// Parsed straight to the nearest float32 (convertValue goes through float64).
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 32); err == nil {
			return binary.BigEndian.AppendUint32(nil, math.Float32bits(float32(f))), nil
		}
	default:
		// The integer types and Double: the parsing and range checks of a String retype.
		if b, err := convertValue(strings.TrimSpace(v), "String", a.Type); err == nil {
			return b, nil
		}
	}
	return nil, fmt.Errorf("default %q is not a literal of type %s", v, a.Type)
}

// rewrite converts one Row or POJO value at in to the new layout, appending it to out.
//
// Row (RowSerializer; mask bits MSB first, the 2 RowKind bits first when supported):
//
//	+-----------------------------------------+--------------------------------+
//	| mask: ceil((2? + arity) / 8) bytes      | the non-null fields, in order  |
//	+-----------------------------------------+--------------------------------+
//
// POJO (PojoSerializer, exact class):
//
//	+----------+---------------------------------------------------------+
//	| u8 2     | per field, in snapshot order: bool isNull, [field bytes] |
//	+----------+---------------------------------------------------------+
//
// A null POJO (flags 1) stays null; a subclass instance (flags 4 or 8) is written with the
// subclass's own serializer, whose fields the snapshot does not list, so it is refused.
func (p *fieldPlan) rewrite(in *serializer.Input, out []byte) ([]byte, error) {
	// raw[i] is old field i's bytes, nil when it is null.
	raw := make([][]byte, len(p.old))
	if p.row {
		lead := 0
		if p.rowKind {
			lead = 2
		}
		mask := in.Bytes((lead+len(p.old)+7)/8, "row null mask")
		if err := in.Err(); err != nil {
			return nil, err
		}
		bit := func(j int) bool { return mask[j/8]&(0x80>>(j%8)) != 0 }
		for i, c := range p.old {
			if bit(lead + i) {
				continue
			}
			start := in.Pos
			c.Decode(in)
			if err := in.Err(); err != nil {
				return nil, fmt.Errorf("row field f%d: %w", i, err)
			}
			raw[i] = in.B[start:in.Pos]
		}
		nmask := make([]byte, (lead+len(p.out)+7)/8)
		if p.rowKind {
			nmask[0] = mask[0] & 0xC0 // the RowKind bits are kept as they are
		}
		for k, j := range p.out {
			if p.field(j, raw) == nil {
				nmask[(lead+k)/8] |= 0x80 >> ((lead + k) % 8)
			}
		}
		out = append(out, nmask...)
		for _, j := range p.out {
			out = append(out, p.field(j, raw)...)
		}
		return out, nil
	}
	start := in.Pos
	flags := in.U8("POJO flags")
	switch {
	case in.Err() != nil:
		return nil, in.Err()
	case flags == 1:
		return append(out, 1), nil
	case flags != 2:
		in.Pos = start
		return nil, fmt.Errorf("POJO flags 0x%02x at byte %d: only values of exactly the POJO class (flags 0x02) or null can be rewritten, not subclass instances", flags, start)
	}
	for i, c := range p.old {
		if in.U8("POJO field null flag") != 0 {
			continue
		}
		s := in.Pos
		c.Decode(in)
		if err := in.Err(); err != nil {
			return nil, fmt.Errorf("POJO field %d: %w", i, err)
		}
		raw[i] = in.B[s:in.Pos]
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	out = append(out, 2)
	for _, j := range p.out {
		b := p.field(j, raw)
		if b == nil {
			out = append(out, 1)
			continue
		}
		out = append(append(out, 0), b...)
	}
	return out, nil
}

// field returns new field j's bytes (an old field's or a default's), nil for null.
func (p *fieldPlan) field(j int, raw [][]byte) []byte {
	if j >= 0 {
		return raw[j]
	}
	return p.defs[-j-1]
}

// applyFields adds and drops fields of a Row or POJO value (and renames a POJO's class):
// the value serializer's snapshot in every subtask's header is re-encoded for the new layout and
// every stored value rewritten, before anything is written if a value does not fit.
func (r *Retype) applyFields(s *session) (*StepReport, error) {
	if r.To != "" || r.KeyTo != "" || r.Field != "" {
		return nil, fmt.Errorf("state %q: adding, dropping fields or changing the class is one step, converting types (to, key-to, field) another: give them as two retype steps", r.State)
	}
	op, err := keyedStep(s, r.Operator)
	if err != nil {
		return nil, err
	}
	found := false
	note := ""
	plans := map[*keyed.Header]*fieldState{}
	ed := keyedEdit{scan: true}
	var pending *fieldState
	ed.header = func(p *headerParts, name string) ([][]byte, []int, error) {
		pending = nil
		i := p.stateIndex(r.State)
		if i < 0 {
			return p.metas, identity(len(p.metas)), nil
		}
		found = true
		kind, _, elem, err := valueSlot(p.metas[i], name, r.State, "fields change in")
		if err != nil {
			return nil, nil, err
		}
		t := serializer.UnwrapTTL(elem)
		if t == nil {
			return nil, nil, fmt.Errorf("%s: state %q has no value serializer", name, r.State)
		}
		plan, err := r.planFields(t)
		if err != nil {
			return nil, nil, err
		}
		enc, err := serializer.EncodeVersioned(plan.snap)
		if err != nil {
			return nil, nil, fmt.Errorf("state %q: new serializer snapshot: %w", r.State, err)
		}
		metas := append([][]byte{}, p.metas...)
		metas[i] = replaceSnapshot(p.metas[i], t, enc)
		pending = &fieldState{id: i, kind: kind, ttl: t != elem, plan: plan}
		note = plan.note
		return metas, identity(len(metas)), nil
	}
	ed.bind = func(h *keyed.Header) {
		if pending != nil {
			plans[h] = pending
		}
	}
	ed.entry = func(h *keyed.Header, e *keyed.Entry, dec *keyed.Decoder) ([]byte, []byte, error) {
		fs := plans[h]
		if fs == nil || e.StateID != fs.id {
			return bytes.Clone(e.Key), bytes.Clone(e.Value), nil
		}
		val, err := rewriteStored(e.Value, fs.kind, fs.ttl, fs.plan.rewrite)
		if err != nil {
			where := "a key"
			if rec, derr := dec.Decode(e); derr == nil {
				k, _ := json.Marshal(rec.Key)
				where = "key " + string(k)
			}
			return nil, nil, fmt.Errorf("state %q: %s: %w", r.State, where, err)
		}
		return bytes.Clone(e.Key), val, nil
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
	ch.Note = note
	return &StepReport{Step: r.Describe(), Operators: []OperatorChange{ch}}, nil
}

// fieldState is a field evolution bound to one subtask's header.
type fieldState struct {
	id   int
	kind string
	ttl  bool
	plan *fieldPlan
}

// rewriteStored applies one to every user value in a stored keyed-state value, keeping the
// framing around it:
//
//	value: [i64 ttl] V
//	list:  [i64 ttl] E (0x2C [i64 ttl] E)*
//	map:   u8 isNull, then (isNull == 0) [i64 ttl] V
//
// one appends the new encoding of the value at in to out.
func rewriteStored(val []byte, kind string, ttl bool, one func(in *serializer.Input, out []byte) ([]byte, error)) ([]byte, error) {
	in := serializer.NewInput(val)
	out := make([]byte, 0, len(val)+16)
	elem := func() error {
		if ttl {
			out = append(out, in.Bytes(8, "ttl timestamp")...)
			if err := in.Err(); err != nil {
				return err
			}
		}
		var err error
		out, err = one(in, out)
		return err
	}
	switch kind {
	case "map":
		flag := in.U8("map value null flag")
		if err := in.Err(); err != nil {
			return nil, err
		}
		out = append(out, flag)
		if flag != 0 {
			if in.Remaining() != 0 {
				return nil, fmt.Errorf("%d bytes after a null map value", in.Remaining())
			}
			return out, nil
		}
		if err := elem(); err != nil {
			return nil, err
		}
	case "list":
		for in.Remaining() > 0 {
			if err := elem(); err != nil {
				return nil, err
			}
			if in.Remaining() > 0 {
				if c := in.U8("list delimiter"); c != 0x2C {
					return nil, fmt.Errorf("list delimiter 0x%02x at byte %d, want 0x2C", c, in.Pos-1)
				}
				if in.Remaining() == 0 {
					return nil, fmt.Errorf("list ends with a delimiter at byte %d", in.Pos-1)
				}
				out = append(out, 0x2C)
			}
		}
	default:
		if err := elem(); err != nil {
			return nil, err
		}
	}
	if err := in.Err(); err != nil {
		return nil, err
	}
	if in.Remaining() != 0 {
		return nil, fmt.Errorf("%d bytes left over after the value", in.Remaining())
	}
	return out, nil
}

// ParseAddField reads the command-line form of a new field, NAME:TYPE=DEFAULT. DEFAULT null
// gives a null default; a double-quoted DEFAULT is unquoted (Go/JSON escapes), so
// tier:String="null" is the four-letter string and "a,b" keeps its comma.
func ParseAddField(s string) (AddField, error) {
	name, rest, ok := strings.Cut(s, ":")
	typ, def, hasDef := strings.Cut(rest, "=")
	if !ok || name == "" || typ == "" {
		return AddField{}, fmt.Errorf("new field %q: want NAME:TYPE=DEFAULT (DEFAULT null for null)", s)
	}
	if !hasDef {
		return AddField{}, fmt.Errorf("new field %q: give a default every stored value gets: %s:%s=VALUE (or =null)", s, name, typ)
	}
	a := AddField{Name: name, Type: typ, Default: def}
	switch {
	case def == "null":
		a.Null = true
	case len(def) >= 2 && def[0] == '"' && def[len(def)-1] == '"':
		u, err := strconv.Unquote(def)
		if err != nil {
			return AddField{}, fmt.Errorf("new field %q: default %s: %w", s, def, err)
		}
		a.Default = u
	}
	return a, nil
}
