package keyed

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestRecordEncoderRowKind: Flink 2.3.0's rowtime keep-last dedup keeps its row as +U (header
// byte 2). dump prints it as {"rowKind": "+U", "fields": [...]}; the encoder writes each kind's
// byte, writes a plain array as an insert, and refuses a kind or a member it does not know,
// naming the path.
func TestRecordEncoderRowKind(t *testing.T) {
	dir := "../../testdata/upgrades/types-savepoints/dedup-rowtime-last"
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var rec map[string]any
	var enc *RecordEncoder
	for _, op := range sp.Metadata.Operators {
		subs, closeAll, err := OpenSubtasks(sp, op)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			err := s.Records(nil, func(r Record) error {
				if r.State != "deduplicate-state" || rec != nil {
					return nil
				}
				b, err := r.MarshalJSON()
				if err != nil {
					return err
				}
				d := json.NewDecoder(bytes.NewReader(b))
				d.UseNumber()
				enc = NewRecordEncoder(s.Header)
				return d.Decode(&rec)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		closeAll()
	}
	if rec == nil {
		t.Fatalf("%s: no deduplicate-state entry", dir)
	}
	v, ok := rec["value"].(map[string]any)
	if !ok || v["rowKind"] != "+U" {
		t.Fatalf("dump printed the value as %v, want {rowKind: +U, fields: [...]}", rec["value"])
	}
	fields := v["fields"]
	for _, tc := range []struct {
		name  string
		value any
		kind  byte   // header byte written
		err   string // or the error
	}{
		{"as dumped", v, 2, ""},
		{"plain array is an insert", fields, 0, ""},
		{"delete", map[string]any{"rowKind": "-D", "fields": fields}, 3, ""},
		{"unknown kind", map[string]any{"rowKind": "+X", "fields": fields}, 0, "value.rowKind: want one of +I, -U, +U, -D (RowKind), got \"+X\""},
		{"kind not a string", map[string]any{"rowKind": 2, "fields": fields}, 0, "value.rowKind: want one of +I, -U, +U, -D (RowKind), got 2"},
		{"unknown member", map[string]any{"rowKind": "+U", "fields": fields, "kind": "x"}, 0, `unknown field "kind"`},
		{"fields missing", map[string]any{"rowKind": "+U"}, 0, "value.fields: want an array of 3 fields (RowData), got null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]any{}
			for k, x := range rec {
				m[k] = x
			}
			m["value"] = tc.value
			e, err := enc.Encode(m, "rec")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			// The value is the row's length (4 bytes), then the row: byte 0 is its kind.
			if len(e.Value) < 5 || e.Value[4] != tc.kind {
				t.Fatalf("value %x: header byte, want %d", e.Value, tc.kind)
			}
		})
	}
}
