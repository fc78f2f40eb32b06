package serializer

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRowKindRoundTrip: a Row (RowSerializer, Flink 1.11 on) carries its RowKind in the first two
// bits of its null mask (bit 0 kind&1, bit 1 kind&2). An insert is written from, and decoded to,
// the plain array of its fields; another kind from and to {"rowKind": K, "fields": [...]}, as
// dump prints a SQL row of that kind; a kind or a member the encoder does not know, and a kind
// for a Row whose serializer writes none (before 1.11), are refused naming the path.
func TestRowKindRoundTrip(t *testing.T) {
	snap, err := Declare("Row<String, Integer>")
	if err != nil {
		t.Fatal(err)
	}
	legacy := *snap
	legacy.RowKind, legacy.OuterVersion = false, 2
	for _, tc := range []struct {
		name   string
		legacy bool   // the serializer of a Row before Flink 1.11: no kind bits
		in     string // the value as JSON
		mask   byte   // the mask byte written
		out    string // what dump prints back ("" = in)
		err    string // or the encoder's error
	}{
		{name: "insert", in: `["a",1]`, mask: 0b0000_0000},
		{name: "insert with a null", in: `["a",null]`, mask: 0b0001_0000},
		{name: "-U", in: `{"rowKind":"-U","fields":["a",1]}`, mask: 0b1000_0000},
		{name: "+U", in: `{"rowKind":"+U","fields":[null,2]}`, mask: 0b0110_0000},
		{name: "-D", in: `{"rowKind":"-D","fields":["a",null]}`, mask: 0b1101_0000},
		{name: "+I spelled out", in: `{"rowKind":"+I","fields":["a",1]}`, mask: 0, out: `["a",1]`},
		{name: "legacy insert", legacy: true, in: `["a",1]`, mask: 0},
		{name: "unknown kind", in: `{"rowKind":"+X","fields":["a",1]}`, err: `v.rowKind: want one of +I, -U, +U, -D (RowKind), got "+X"`},
		{name: "unknown member", in: `{"rowKind":"+U","fields":["a",1],"kind":1}`, err: `v: unknown field "kind"`},
		{name: "fields missing", in: `{"rowKind":"+U"}`, err: "v.fields: want an array of 2 fields (Row), got null"},
		{name: "kind of a legacy Row", legacy: true, in: `{"rowKind":"+U","fields":["a",1]}`, err: "v: want an array of 2 fields (Row; its serializer writes no RowKind)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snap
			if tc.legacy {
				s = &legacy
			}
			enc, err := NewEncoder(s)
			if err != nil {
				t.Fatal(err)
			}
			d := json.NewDecoder(strings.NewReader(tc.in))
			d.UseNumber()
			var v any
			if err := d.Decode(&v); err != nil {
				t.Fatal(err)
			}
			b, err := enc(nil, v, "v")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b[0] != tc.mask {
				t.Fatalf("mask byte %08b, want %08b", b[0], tc.mask)
			}
			in := NewInput(b)
			got := NewCodec(s).Decode(in)
			if in.Err() != nil || in.Pos != len(b) {
				t.Fatalf("decode: %v at byte %d of %d", in.Err(), in.Pos, len(b))
			}
			out, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.out
			if want == "" {
				want = tc.in
			}
			if string(out) != want {
				t.Fatalf("decoded %s, want %s", out, want)
			}
		})
	}
}
