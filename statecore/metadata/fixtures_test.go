package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// fixtureFiles lists the _metadata files of the savepoints and checkpoints the oracle made with
// real Flink (testdata/savepoints/<name>/_metadata, see testdata/README.md).
func fixtureFiles(t testing.TB) []string {
	return globOrSkip(t, "../../testdata/savepoints/*/_metadata",
		"no fixtures in testdata/savepoints yet (the oracle writes them: testdata/oracle/run.sh savepoints)")
}

// globOrSkip lists the files matching pattern, skipping the test with why when there are none.
func globOrSkip(t testing.TB, pattern, why string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Skip(why)
	}
	return files
}

// TestFixturesRoundTrip proves the codec byte-exact: decoding then encoding each Flink-written
// _metadata reproduces the file.
func TestFixturesRoundTrip(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(bytes.NewReader(data), f)
		if err != nil {
			t.Errorf("decode: %v", err)
			continue
		}
		if m.Version != 6 {
			t.Errorf("%s: version %d, want 6 (what Flink 2.3.0 writes)", f, m.Version)
		}
		checkReencodes(t, f, m, data)
	}
}

// checkReencodes fails the test unless m encodes to exactly data (the file f it was decoded from).
func checkReencodes(t *testing.T, f string, m *Metadata, data []byte) {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		t.Errorf("%s: encode: %v", f, err)
		return
	}
	if !bytes.Equal(buf.Bytes(), data) {
		n := 0
		for n < len(data) && n < buf.Len() && data[n] == buf.Bytes()[n] {
			n++
		}
		t.Errorf("%s: re-encoded %d bytes differ from the file's %d, first at offset %d", f, buf.Len(), len(data), n)
	}
}

// TestFixturesCorrupt cuts and flips bytes of real files: every cut must fail with an error that
// names the file and an offset inside the data, and no flip may panic. A flip may also produce
// another valid file (a size, a name, or a value Flink reads leniently: a "present" flag of 0x101
// or a subtask count of -2^31 mean what 1 and -1 mean). Then re-encoding gives Flink's canonical
// bytes, which must decode to the same metadata.
func TestFixturesCorrupt(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(bytes.NewReader(data), f)
		if err != nil {
			t.Fatal(err)
		}
		body := len(data) - len(m.Tail)
		step := max(1, body/200) // keep the test quick on big files
		for n := 0; n < body; n += step {
			_, err := Decode(bytes.NewReader(data[:n]), f)
			var fe *javaio.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("%s cut at %d: err = %v, want a format error", f, n, err)
			}
			if fe.Name != f || fe.Offset > int64(n) || !strings.Contains(err.Error(), "offset") {
				t.Fatalf("%s cut at %d: error %q should name the file and an offset <= %d", f, n, err, n)
			}
		}
		for i := 0; i < body; i += step {
			for _, mask := range []byte{0x01, 0x80, 0xFF} {
				b := bytes.Clone(data)
				b[i] ^= mask
				m2, err := Decode(bytes.NewReader(b), f)
				if err != nil {
					var fe *javaio.FormatError
					if !errors.As(err, &fe) {
						t.Fatalf("%s flip %#x at %d: err = %v, want a format error", f, mask, i, err)
					}
					continue
				}
				var out bytes.Buffer
				if err := Encode(&out, m2); err != nil {
					continue // e.g. a flipped count now disagrees with its list; Encode refuses
				}
				m3, err := Decode(bytes.NewReader(out.Bytes()), f)
				if err != nil || !reflect.DeepEqual(m3, m2) {
					t.Errorf("%s flip %#x at %d: accepted, but its re-encoding decodes differently (%v)", f, mask, i, err)
				}
			}
		}
	}
}

// TestFixturesProperties reads the CheckpointProperties of every fixture: savepoints, with the
// format type the oracle asked for.
func TestFixturesProperties(t *testing.T) {
	for _, f := range fixtureFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode(bytes.NewReader(data), f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := m.ParseProperties(f)
		if err != nil || p == nil {
			t.Errorf("%s: properties %v, %v", f, p, err)
			continue
		}
		var exp struct{ Format string }
		if b, err := os.ReadFile(filepath.Dir(f) + ".expect.json"); err == nil {
			json.Unmarshal(b, &exp)
		}
		if !p.IsSavepoint() || (exp.Format != "" && p.FormatType != strings.ToUpper(exp.Format)) {
			t.Errorf("%s: %+v, want a savepoint of format %q", f, p, exp.Format)
		}
		if p.Name != "Savepoint" && p.Name != "Suspend Savepoint" && p.Name != "Terminate Savepoint" {
			t.Errorf("%s: savepoint type name %q", f, p.Name)
		}
		// Every cut of the tail is an error, never a panic.
		for n := 0; n < len(m.Tail); n++ {
			cut := *m
			cut.Tail = m.Tail[:n]
			if _, err := cut.ParseProperties(f); err == nil && n > 0 {
				t.Fatalf("%s: tail cut at %d parsed", f, n)
			}
		}
	}
	null := &Metadata{Version: 6, Tail: nullTail}
	if p, err := null.ParseProperties("null"); p != nil || err != nil {
		t.Errorf("null properties: %v, %v", p, err)
	}
}
