package keyed

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// referenceJSON is the record as the dump printed it before AppendJSON: a json.Encoder with
// SetEscapeHTML(false) over Record.MarshalJSON, without the trailing newline.
func referenceJSON(t testing.TB, r Record) ([]byte, error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// TestAppendJSONEqualsMarshalOnFixtures: every record of every keyed-state stream Flink wrote
// for the fixtures is encoded byte for byte as encoding/json encodes it.
func TestAppendJSONEqualsMarshalOnFixtures(t *testing.T) {
	n := 0
	for _, f := range keyedFixtures(t, nil) {
		h, err := f.header()
		if err != nil {
			t.Fatal(err)
		}
		d := NewDecoder(h, f.name, f.maxPar)
		for i := range f.entries {
			r, err := d.Decode(&f.entries[i])
			if err != nil {
				t.Fatalf("%s entry %d: %v", f.name, i, err)
			}
			want, err := referenceJSON(t, r)
			if err != nil {
				t.Fatalf("%s entry %d: reference: %v", f.name, i, err)
			}
			got, err := r.AppendJSON(nil)
			if err != nil {
				t.Fatalf("%s entry %d: %v", f.name, i, err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s entry %d:\n got %s\nwant %s", f.name, i, got, want)
			}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no records in the fixtures")
	}
	t.Logf("%d fixture records encoded identically", n)
}

// TestAppendJSONEqualsMarshal covers the values fixtures may not hold: escapes, invalid UTF-8,
// floats at the 'f'/'e' switch, extreme integers, nested maps and lists, opaque blobs.
func TestAppendJSONEqualsMarshal(t *testing.T) {
	strs := []string{
		"", "plain", `quote " backslash \ slash /`, "<html> & </html>", "\x00\x01\x1f\x7f",
		"\b\f\n\r\t", "é ü 日本 🙂", "\u2028\u2029", "bad \xff\xfe utf8 \xc3", "\xed\xa0\x80",
	}
	vals := []any{
		nil, true, false, int8(-128), int16(math.MinInt16), int32(math.MaxInt32), int64(math.MinInt64),
		int64(math.MaxInt64), 7, uint8(255), uint16(65535), uint32(math.MaxUint32), uint64(math.MaxUint64),
		0.0, math.Copysign(0, -1), 1.5, -2.25, 1e-6, 9.99e-7, 1e-7, 1.234e-300, 1e20, 1e21, 123456789e15,
		math.MaxFloat64, math.SmallestNonzeroFloat64, float32(0.1), float32(1e-7), float32(3e21), float32(1e21),
		float32(math.MaxFloat32), serializer.Float(0.1), serializer.Float(math.NaN()),
		serializer.Float(math.Inf(1)), serializer.Float(math.Inf(-1)), serializer.Float(1e-9),
		[]byte(nil), []byte{}, []byte{0, 1, 2, 0xff, 0xfe}, []any(nil), []any{}, []int64(nil), []int64{1, -2},
		serializer.Fields(nil), serializer.Fields{{Name: "f0", Value: int32(1)}, {Name: "<n>", Value: []any{"x", nil}}},
		serializer.MapEntry{Key: "k", Value: int64(1)}, []serializer.MapEntry(nil),
		[]serializer.MapEntry{{Key: int32(1), Value: serializer.Fields{{Name: "a", Value: "b"}}}},
		serializer.TTLValue{Timestamp: 42, Value: "v"},
		serializer.Opaque{Serializer: "s", Base64: []byte("abc")}, serializer.Opaque{Serializer: "s", Type: "T"},
		serializer.BinaryRow{Kind: "+I", Fields: []any{int32(1), "r", nil}},
		map[string]any(nil), map[string]any{"b": 1, "a": map[string]any{"z": nil, "y": []any{1.5}}, "": "e"},
		&serializer.Fields{{Name: "ptr", Value: true}}, struct{ A int }{3}, [2]int{1, 2},
	}
	for _, s := range strs {
		vals = append(vals, s, []any{s}, map[string]any{s: s}, serializer.Fields{{Name: s, Value: s}})
	}
	var recs []Record
	for _, v := range vals {
		recs = append(recs,
			Record{State: "s", Kind: "map", KeyGroup: 3, Key: v, Namespace: "VoidNamespace", UserKey: v, Value: v},
			Record{State: "t", Kind: "value", KeyGroup: 0, Key: int32(1), Value: v, TTL: int64(5)},
			Record{State: "timers", Kind: "timer", KeyGroup: 127, TimerKind: "event", Key: v, Namespace: v, Timestamp: -1},
		)
	}
	for _, s := range strs {
		recs = append(recs, Record{State: s, Kind: "timer", TimerKind: s}, Record{State: s, Kind: "list", TTL: []int64{1, 2}})
	}
	for i, v := range vals {
		want, werr := json.Marshal(v)
		got, gerr := AppendJSONValue(nil, v)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Errorf("value %d (%#v): AppendJSONValue %s (err %v), json.Marshal %s (err %v)", i, v, got, gerr, want, werr)
		}
	}
	for i, r := range recs {
		want, werr := referenceJSON(t, r)
		got, gerr := r.AppendJSON([]byte("prefix"))
		if werr != nil || gerr != nil {
			t.Errorf("record %d (%#v): reference error %v, AppendJSON error %v", i, r, werr, gerr)
			continue
		}
		if !bytes.Equal(got, append([]byte("prefix"), want...)) {
			t.Errorf("record %d (%#v):\n got %s\nwant prefix%s", i, r, got, want)
		}
	}
}

// TestAppendJSONErrors: a value encoding/json refuses is refused with encoding/json's error.
func TestAppendJSONErrors(t *testing.T) {
	for _, v := range []any{math.NaN(), math.Inf(-1), float32(math.Inf(1)), []any{math.NaN()}, make(chan int)} {
		r := Record{State: "s", Kind: "value", Value: v}
		_, want := r.MarshalJSON()
		_, got := r.AppendJSON(nil)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%#v: AppendJSON error %v, want %v", v, got, want)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	r := Record{State: "count", Kind: "value", KeyGroup: 77, Key: int32(123456), Namespace: "VoidNamespace", Value: int64(987654321)}
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf, _ = r.AppendJSON(buf[:0])
		}
	})
	b.Run("Encoder", func(b *testing.B) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for b.Loop() {
			buf.Reset()
			enc.Encode(r)
		}
	})
}
