package migrate

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// lineDecoderSamples are dump lines and lines the fast path must hand to encoding/json.
var lineDecoderSamples = []string{
	`{"operator":"uid:u","state":"count","keyGroup":7,"key":4,"namespace":null,"userKey":null,"value":3}`,
	`  {"operator":"uid:u","state":"m","key":-4,"userKey":"m1","value":{"f0":1.5e3,"f1":[1,-0,0.25,"x",true,false,null,[],{}]}}  ` + "\r\n",
	`{}`,
	`{"a":1,"a":2}`,
	`{"key":"caf\u00e9","value":"tab\tin"}`,
	`{"key":"café"}`,
	"{\"key\":\"bad \xff utf-8\"}",
	`{"key":"a\"b","n":1E+2,"m":-0.5e-3}`,
	`{"key":01}`,
	`{"key":1.}`,
	`{"key":-}`,
	`{"key":nul}`,
	`{"key":nullx}`,
	`{"key":1} trailing`,
	`{"key":[1,]}`,
	`{"key":1,}`,
	`{"key" 1}`,
	`{"operator":`,
	`[1,2]`,
	`null`,
	`"x"`,
	``,
	`{"deep":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}`,
}

// TestLineDecoder: the fast path decodes exactly what encoding/json (UseNumber, into a
// map[string]any) decodes, and a line it does not take gets encoding/json's result or error.
func TestLineDecoder(t *testing.T) {
	d := newLineDecoder()
	for _, line := range lineDecoderSamples {
		checkLineDecoder(t, d, []byte(line))
	}
}

// FuzzLineDecoder: the same agreement with encoding/json on any line, so the hand-written fast
// path (create's and patch's JSONL reader) never decodes a line differently from it.
func FuzzLineDecoder(f *testing.F) {
	for _, line := range lineDecoderSamples {
		f.Add([]byte(line))
	}
	d := newLineDecoder()
	f.Fuzz(func(t *testing.T, line []byte) {
		checkLineDecoder(t, d, line)
	})
}

// checkLineDecoder fails t unless d decodes line as encoding/json's Decoder with UseNumber
// decodes it into a map[string]any: the same map, or the same error.
func checkLineDecoder(t *testing.T, d *lineDecoder, line []byte) {
	t.Helper()
	want := map[string]any{}
	jd := json.NewDecoder(bytes.NewReader(line))
	jd.UseNumber()
	var full map[string]any
	wantErr := jd.Decode(&full)
	for k, v := range full {
		want[k] = v
	}
	got, err := d.decode(line)
	switch {
	case wantErr != nil:
		if err == nil || err.Error() != wantErr.Error() {
			t.Errorf("%q: error %v, want %v", line, err, wantErr)
		}
	case err != nil:
		t.Errorf("%q: %v", line, err)
	case !reflect.DeepEqual(got, want):
		t.Errorf("%q: got %#v, want %#v", line, got, want)
	}
}
