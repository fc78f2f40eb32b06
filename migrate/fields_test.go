package migrate

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// valueShape describes a state's value serializer: Row<T1,...> with its field types, or
// Class{name:Type,...} for a POJO with its fields in snapshot order and their declaring classes
// when they differ from the POJO class.
func valueShape(t *testing.T, sp *savepoint.Savepoint, sel Selector, state string) string {
	t.Helper()
	vs := valueSnapshot(t, sp, sel, state)
	if vs == nil {
		t.Fatalf("no state %q", state)
	}
	var parts []string
	if vs.IsPojo() {
		for _, f := range vs.PojoFields {
			p := f.Name + ":" + serializer.JavaType(f.Snapshot)
			if f.Declaring != vs.TypeClass || f.Entry != f.Name {
				p += "@" + f.Declaring + "/" + f.Entry
			}
			parts = append(parts, p)
		}
		return vs.TypeClass + "{" + strings.Join(parts, ",") + "}"
	}
	for _, n := range vs.Nested {
		parts = append(parts, serializer.JavaType(n))
	}
	if !vs.IsRow() {
		t.Fatalf("state %q holds %s, neither a Row nor a POJO", state, serializer.JavaType(vs))
	}
	return "Row<" + strings.Join(parts, ",") + ">"
}

// evolvedLines decodes op's state and returns its records as canonical JSON lines (object keys
// sorted, key group dropped); with f, each record's value (each element of a list) is passed
// through f first.
func evolvedLines(t *testing.T, sp *savepoint.Savepoint, sel Selector, state string, f func(any) any) map[string]int {
	t.Helper()
	out := map[string]int{}
	for line, n := range decoded(t, sp, sel)[state] {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if f != nil {
			if l, ok := rec["value"].([]any); ok && isList(l) {
				for i := range l {
					l[i] = f(l[i])
				}
			} else {
				rec["value"] = f(rec["value"])
			}
		}
		b, _ := json.Marshal(rec)
		out[string(b)] += n
	}
	return out
}

// isList tells a list state's value (an array of rows or POJOs) from a Row value (an array of
// scalars): the evolve fixture's list holds rows.
func isList(l []any) bool {
	if len(l) == 0 {
		return false
	}
	switch l[0].(type) {
	case []any, map[string]any:
		return true
	}
	return false
}

const accountV2Class = "dev.statecraft.oracle.savepoints.AccountV2"

// TestFieldEvolution: Row and POJO values of Flink-written savepoints gain and lose fields; the
// output's snapshot has the new layout and every value reads back as the source's value changed
// the same way (nulls, TTL timestamps, list elements and map user keys kept).
func TestFieldEvolution(t *testing.T) {
	ev := mustSel(t, "uid:evolve")
	lk := mustSel(t, "uid:long-keyed")
	cases := []struct {
		name, fixture string
		op            Selector
		step          *Retype
		shape         string
		value         func(any) any
	}{
		{"row append", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "profile", AddFields: []AddField{{Name: "f2", Type: "Long", Default: "7"}}},
			"Row<String,Integer,Long>", func(v any) any { return append(v.([]any), 7.0) }},
		{"row insert first, null default", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "profile", AddFields: []AddField{{Name: "f0", Type: "Boolean", Null: true}}},
			"Row<Boolean,String,Integer>", func(v any) any { return append([]any{nil}, v.([]any)...) }},
		{"row drop and insert in the middle", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "profile", DropFields: []string{"f0"}, AddFields: []AddField{{Name: "f0", Type: "Double", Default: "-2.5"}, {Name: "f1", Type: "Short", Default: "3"}}},
			"Row<Double,Short,Integer>", func(v any) any { return []any{-2.5, 3.0, v.([]any)[1]} }},
		{"list of rows drop", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "events", DropFields: []string{"f1"}},
			"Row<Integer>", func(v any) any { return v.([]any)[:1] }},
		{"map of rows insert", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "scores", AddFields: []AddField{{Name: "f0", Type: "String", Default: "new"}}},
			"Row<String,Long,Double>", func(v any) any { return append([]any{"new"}, v.([]any)...) }},
		{"ttl row drop", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "ttlProfile", DropFields: []string{"f0"}},
			"Row<Integer>", func(v any) any { return v.([]any)[1:] }},
		{"pojo to AccountV2", "evolve-hashmap", ev,
			&Retype{Operator: ev, State: "account", Class: accountV2Class, DropFields: []string{"version"}, AddFields: []AddField{{Name: "tier", Type: "String", Default: "gold"}}},
			accountV2Class + "{balance:Long,owner:String,tier:String}", func(v any) any {
				m := v.(map[string]any)
				delete(m, "version")
				m["tier"] = "gold"
				return m
			}},
		{"pojo field sorted first, class kept", "types-hashmap", lk,
			&Retype{Operator: lk, State: "account", AddFields: []AddField{{Name: "active", Type: "Boolean", Default: "true"}, {Name: "level", Type: "Integer", Null: true}}},
			"dev.statecraft.oracle.savepoints.Account{active:Boolean,balance:Long,level:Integer,owner:String,version:Integer}", func(v any) any {
				m := v.(map[string]any)
				m["active"], m["level"] = true, nil
				return m
			}},
		{"pojo class only", "types-hashmap", lk,
			&Retype{Operator: lk, State: "account", Class: "x.Renamed"},
			"x.Renamed{balance:Long,owner:String,version:Integer}", func(v any) any { return v }},
	}
	// The evolve savepoint made by the RocksDB backend (canonical format) holds the same states.
	for _, c := range cases[:7] {
		c.name += " (rocksdb)"
		c.fixture = "evolve-rocksdb"
		cases = append(cases, c)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := fixture(t, c.fixture)
			dst, rep := run(t, src, Options{}, c.step)
			in, out := open(t, src), open(t, dst)
			if got := valueShape(t, out, c.op, c.step.State); got != c.shape {
				t.Errorf("value serializer %s, want %s", got, c.shape)
			}
			want := evolvedLines(t, in, c.op, c.step.State, c.value)
			got := evolvedLines(t, out, c.op, c.step.State, nil)
			sameMultiset(t, c.step.State, want, got)
			// The other states of the operator are untouched.
			before, after := decoded(t, in, c.op), decoded(t, out, c.op)
			for name, lines := range before {
				if name != c.step.State && len(lines) > 0 {
					sameMultiset(t, name, lines, after[name])
				}
			}
			if n := rep.Steps[0].Operators[0].Note; !strings.Contains(n, "->") {
				t.Errorf("report note %q does not say what changed", n)
			}
		})
	}
}

// TestFieldEvolutionKeepsTTLAndNulls: the evolve fixture has null row fields, null POJO fields
// and TTL timestamps; the test above would prove less without them.
func TestFieldEvolutionKeepsTTLAndNulls(t *testing.T) {
	sp := open(t, fixture(t, "evolve-hashmap"))
	ev := mustSel(t, "uid:evolve")
	d := decoded(t, sp, ev)
	for state, want := range map[string]string{"profile": `"value":[null,`, "events": `,null]`, "ttlProfile": `"ttlTimestamp":`, "account": `"owner":null`} {
		found := false
		for l := range d[state] {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("%s: no record contains %s", state, want)
		}
	}
}

func TestFieldEvolutionRefused(t *testing.T) {
	ev := mustSel(t, "uid:evolve")
	lk := mustSel(t, "uid:long-keyed")
	add := func(name, typ, def string) []AddField { return []AddField{{Name: name, Type: typ, Default: def}} }
	cases := []struct {
		fixture string
		step    *Retype
		want    string
	}{
		{"types-hashmap", &Retype{Operator: lk, State: "account", DropFields: []string{"nope"}}, `drop field "nope": POJO dev.statecraft.oracle.savepoints.Account has no such field (it has balance, owner, version)`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", AddFields: add("owner", "String", "x")}, `new field "owner": POJO dev.statecraft.oracle.savepoints.Account already has a field of that name`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", AddFields: add("tier", "Long", "gold")}, `state "account": new field "tier": default "gold" is not a literal of type Long`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", AddFields: add("tier", "Byte", "300")}, `default "300" is not a literal of type Byte`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", AddFields: add("tier", "Boolean", "yes")}, `not a literal of type Boolean`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", AddFields: add("tier", "Character", "x")}, `type "Character", want Integer`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", DropFields: []string{"owner", "owner"}}, `field "owner" dropped twice`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", DropFields: []string{"owner", "balance", "version"}}, `dropping every field`},
		{"types-hashmap", &Retype{Operator: lk, State: "last", DropFields: []string{"f0"}}, `state "last" holds String, not a Row (RowSerializer) or a POJO`},
		{"types-hashmap", &Retype{Operator: lk, State: "nope", DropFields: []string{"f0"}}, `has no keyed state "nope"`},
		{"types-hashmap", &Retype{Operator: lk, State: "account", Class: accountV2Class, To: "Long"}, `two retype steps`},
		{"evolve-hashmap", &Retype{Operator: ev, State: "profile", DropFields: []string{"f2"}}, `drop field "f2": the Row has fields f0..f1`},
		{"evolve-hashmap", &Retype{Operator: ev, State: "profile", AddFields: add("f3", "Long", "1")}, `new Row field "f3": want f0..f2`},
		{"evolve-hashmap", &Retype{Operator: ev, State: "profile", AddFields: add("extra", "Long", "1")}, `new Row field "extra"`},
		{"evolve-hashmap", &Retype{Operator: ev, State: "profile", Class: accountV2Class}, `class "dev.statecraft.oracle.savepoints.AccountV2" applies to POJO states only`},
	}
	for _, c := range cases {
		t.Run(c.step.Describe(), func(t *testing.T) {
			parent := t.TempDir()
			_, err := Run(fixture(t, c.fixture), filepath.Join(parent, "out"), []Step{c.step}, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestDefaultBytes(t *testing.T) {
	cases := []struct {
		a    AddField
		want []byte
	}{
		{AddField{Type: "Integer", Default: "-2"}, []byte{0xFF, 0xFF, 0xFF, 0xFE}},
		{AddField{Type: "Long", Default: "7"}, []byte{0, 0, 0, 0, 0, 0, 0, 7}},
		{AddField{Type: "Short", Default: "258"}, []byte{1, 2}},
		{AddField{Type: "Byte", Default: "-128"}, []byte{0x80}},
		{AddField{Type: "Float", Default: "1.5"}, []byte{0x3F, 0xC0, 0, 0}},
		{AddField{Type: "Double", Default: "-2"}, []byte{0xC0, 0, 0, 0, 0, 0, 0, 0}},
		{AddField{Type: "Boolean", Default: "true"}, []byte{1}},
		// StringValue.writeString: varint(len+1), then each UTF-16 unit as a varint.
		{AddField{Type: "String", Default: "gold"}, []byte{5, 'g', 'o', 'l', 'd'}},
		{AddField{Type: "String", Default: ""}, []byte{1}},
		{AddField{Type: "String", Default: "é"}, []byte{2, 0xE9, 0x01}},
		{AddField{Type: "Long", Null: true}, nil},
	}
	for _, c := range cases {
		got, err := defaultBytes(c.a)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %x, %v; want %x", c.a, got, err, c.want)
		}
	}
}

// TestPojoFieldOrder: POJO fields sort as Java's String.compareTo sorts them (by UTF-16 unit),
// which differs from Go's byte order for characters outside the BMP.
func TestPojoFieldOrder(t *testing.T) {
	names := []string{"b", "\uFFFF", "😀", "B", "a_"}
	slices.SortFunc(names, compareUTF16)
	if want := []string{"B", "a_", "b", "😀", "\uFFFF"}; !slices.Equal(names, want) {
		t.Errorf("order %q, want %q", names, want)
	}
}

func TestScriptFieldSteps(t *testing.T) {
	ev := mustSel(t, "uid:evolve")
	script := `steps:
  - retype: {operator: "uid:evolve", state: profile, add-field: {name: f2, type: Long, default: 0}}
  - retype: {operator: "uid:evolve", state: events, drop-field: f1}
  - retype:
      operator: "uid:evolve"
      state: account
      class: dev.statecraft.oracle.savepoints.AccountV2
      drop-field: ["version", "a, b"]
      add-field:
        - {name: tier, type: String, default: gold}
        - {name: level, type: Integer, default: null}
        - {name: note, type: String, default: "null"}
        - {name: on, type: Boolean, default: true}
`
	steps, err := ParseScript(strings.NewReader(script), "s.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []*Retype{
		{Operator: ev, State: "profile", AddFields: []AddField{{Name: "f2", Type: "Long", Default: "0"}}},
		{Operator: ev, State: "events", DropFields: []string{"f1"}},
		{Operator: ev, State: "account", Class: accountV2Class, DropFields: []string{"version", "a", "b"}, AddFields: []AddField{
			{Name: "tier", Type: "String", Default: "gold"}, {Name: "level", Type: "Integer", Null: true, Default: "null"},
			{Name: "note", Type: "String", Default: "null"}, {Name: "on", Type: "Boolean", Default: "true"}}},
	}
	if len(steps) != len(want) {
		t.Fatalf("%d steps, want %d", len(steps), len(want))
	}
	for i, st := range steps {
		if got := st.Describe(); got != want[i].Describe() {
			t.Errorf("step %d: %s, want %s", i, got, want[i].Describe())
		}
	}
	for _, c := range []struct{ script, want string }{
		{`{operator: "uid:e", state: s, add-field: {name: f2, type: Long}}`, "line 3: retype: add-field: default is required"},
		{`{operator: "uid:e", state: s, add-field: {name: f2, type: Long, default: 1, colour: red}}`, `unknown key "colour"`},
		{`{operator: "uid:e", state: s, add-field: [f2]}`, "want {name, type, default}"},
		{`{operator: "uid:e", state: s, drop-field: {a: b}}`, "drop-field: want a field name"},
		{`{operator: "uid:e", state: s, drop-field: "a,,b"}`, "empty field name"},
		{`{operator: "uid:e", state: s, klass: X}`, `unknown field "klass"`},
	} {
		_, err := ParseScript(strings.NewReader("steps:\n  - retype:\n      "+c.script+"\n"), "s.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.script, err, c.want)
		}
	}
}

func TestParseAddField(t *testing.T) {
	cases := []struct {
		in   string
		want AddField
		err  string
	}{
		{"f2:Long=7", AddField{Name: "f2", Type: "Long", Default: "7"}, ""},
		{"tier:String=gold", AddField{Name: "tier", Type: "String", Default: "gold"}, ""},
		{"tier:String=", AddField{Name: "tier", Type: "String", Default: ""}, ""},
		{"level:Integer=null", AddField{Name: "level", Type: "Integer", Default: "null", Null: true}, ""},
		{`tier:String="null"`, AddField{Name: "tier", Type: "String", Default: "null"}, ""},
		{`tier:String="a=b, c"`, AddField{Name: "tier", Type: "String", Default: "a=b, c"}, ""},
		{"tier:String", AddField{}, "give a default"},
		{"tier=1", AddField{}, "want NAME:TYPE=DEFAULT"},
		{":Long=1", AddField{}, "want NAME:TYPE=DEFAULT"},
		{`t:String="bad`, AddField{}, ""}, // not quoted at both ends: taken literally
	}
	for _, c := range cases {
		got, err := ParseAddField(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.in, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.in, err)
		case c.err == "" && c.in != `t:String="bad` && got != c.want:
			t.Errorf("%s: %+v, want %+v", c.in, got, c.want)
		case c.in == `t:String="bad` && got.Default != `"bad`:
			t.Errorf("%s: default %q", c.in, got.Default)
		}
	}
}

// TestFieldEvolutionThenRescale: a script that changes fields and then rescales reads the
// rewritten headers and values back correctly (the rescale regroups the new values).
func TestFieldEvolutionThenRescale(t *testing.T) {
	src := fixture(t, "evolve-hashmap")
	ev := mustSel(t, "uid:evolve")
	dst, _ := run(t, src, Options{},
		&Retype{Operator: ev, State: "ttlProfile", DropFields: []string{"f0"}, AddFields: []AddField{{Name: "f1", Type: "String", Default: "x"}}},
		&Rescale{MaxParallelism: 300, Parallelism: 3})
	in, out := open(t, src), open(t, dst)
	op, _ := ev.find(out.Metadata)
	if op.MaxParallelism != 300 || op.Parallelism != 3 {
		t.Fatalf("max parallelism %d, parallelism %d", op.MaxParallelism, op.Parallelism)
	}
	want := evolvedLines(t, in, ev, "ttlProfile", func(v any) any { return []any{v.([]any)[1], "x"} })
	sameMultiset(t, "ttlProfile", want, evolvedLines(t, out, ev, "ttlProfile", nil))
}

// TestFieldRewriteHostile: cut and damaged values are refused with an error, never a panic, and
// an intact value is rewritten as the layouts say.
func TestFieldRewriteHostile(t *testing.T) {
	str, _ := serializer.BasicSnapshot("String")
	i32, _ := serializer.BasicSnapshot("Integer")
	row := &serializer.Snapshot{Class: "org.apache.flink.api.java.typeutils.runtime.RowSerializer$RowSerializerSnapshot",
		Version: 3, Kind: serializer.KindComposite, OuterVersion: 4, RowKind: true, Nested: []*serializer.Snapshot{str, i32}}
	pojo := &serializer.Snapshot{Class: "org.apache.flink.api.java.typeutils.runtime.PojoSerializerSnapshot", Version: 2,
		Kind: serializer.KindPojo, TypeClass: "a.B", Maps: [][]serializer.OptionalEntry{nil, nil},
		PojoFields: []serializer.PojoField{{Entry: "n", Name: "n", Declaring: "a.B", Present: true, Snapshot: i32}, {Entry: "s", Name: "s", Declaring: "a.B", Present: true, Snapshot: str}}}
	cases := []struct {
		snap      *serializer.Snapshot
		step      Retype
		kind      string
		ttl       bool
		val, want []byte
	}{
		// Row(+I, "ab", 5) -> Row(+I, 5, 9L): mask 0b00 0 0 -> 0b00 0 0, then the kept int and the default.
		{row, Retype{State: "r", DropFields: []string{"f0"}, AddFields: []AddField{{Name: "f1", Type: "Long", Default: "9"}}}, "value", false,
			[]byte{0x00, 3, 'a', 'b', 0, 0, 0, 5}, []byte{0x00, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 9}},
		// RowKind -U (bits 10) and a null f0 (bit 2 set) are kept; a null default sets its bit.
		{row, Retype{State: "r", AddFields: []AddField{{Name: "f0", Type: "Boolean", Null: true}}}, "list", true,
			[]byte{1, 2, 3, 4, 5, 6, 7, 8, 0xA0, 0, 0, 0, 5, 0x2C, 1, 2, 3, 4, 5, 6, 7, 8, 0x00, 1, 0, 0, 0, 6},
			[]byte{1, 2, 3, 4, 5, 6, 7, 8, 0xB0, 0, 0, 0, 5, 0x2C, 1, 2, 3, 4, 5, 6, 7, 8, 0x20, 1, 0, 0, 0, 6}},
		// POJO {n: 5, s: null} -> {m: "x", n: 5}; a null POJO in a map stays null.
		{pojo, Retype{State: "p", DropFields: []string{"s"}, AddFields: []AddField{{Name: "m", Type: "String", Default: "x"}}}, "map", false,
			[]byte{0, 2, 0, 0, 0, 0, 5, 1}, []byte{0, 2, 0, 2, 'x', 0, 0, 0, 0, 5}},
		{pojo, Retype{State: "p", DropFields: []string{"s"}}, "value", false, []byte{1}, []byte{1}},
	}
	for i, c := range cases {
		p, err := c.step.planFields(c.snap)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rewriteStored(c.val, c.kind, c.ttl, p.rewrite)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("case %d: % x, %v; want % x", i, got, err, c.want)
		}
		for cut := 0; cut < len(c.val); cut++ {
			// A list may end after any whole element (or be empty).
			boundary := c.kind == "list" && (cut == 0 || c.val[cut] == 0x2C && cut == 13)
			if _, err := rewriteStored(c.val[:cut], c.kind, c.ttl, p.rewrite); err == nil && !boundary {
				t.Errorf("case %d cut at %d: no error", i, cut)
			}
		}
		for pos := range c.val {
			b := slices.Clone(c.val)
			b[pos] ^= 0xFF
			rewriteStored(b, c.kind, c.ttl, p.rewrite) // must not panic
		}
	}
	// A subclass instance (flags 4) is refused by name.
	p, _ := (&Retype{State: "p", DropFields: []string{"s"}}).planFields(pojo)
	if _, err := rewriteStored([]byte{4, 0, 1, 'C'}, "value", false, p.rewrite); err == nil || !strings.Contains(err.Error(), "subclass") {
		t.Errorf("subclass value: %v", err)
	}
}
