package metadata

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecode: no input panics or hangs the decoder; whatever it accepts re-encodes to bytes that
// decode to the same metadata. Seeds are the Flink fixtures and the synthetic every-handle files.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for v := int32(MinVersion); v <= MaxVersion; v++ {
		var buf bytes.Buffer
		if err := Encode(&buf, everyHandle(v)); err == nil {
			f.Add(buf.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		m.ParseProperties("fuzz") // must not panic either
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			return // e.g. a V3 file whose operator names cannot be stored: Encode refuses
		}
		m2, err := Decode(bytes.NewReader(buf.Bytes()), "re-encoded")
		if err != nil {
			t.Fatalf("re-encoded metadata does not decode: %v", err)
		}
		if !reflect.DeepEqual(m, m2) {
			t.Fatal("re-encoded metadata decodes differently")
		}
	})
}
