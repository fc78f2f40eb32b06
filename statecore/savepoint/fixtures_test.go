package savepoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// fixtures returns the oracle's savepoint directories (real Flink 2.3.0 output) with the
// "format" their expectation file records.
func fixtures(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	if len(files) == 0 {
		t.Skip("no fixtures in testdata/savepoints yet (testdata/oracle/run.sh savepoints makes them)")
	}
	out := map[string]string{}
	for _, f := range files {
		dir := filepath.Dir(f)
		var exp struct {
			Format string `json:"format"`
		}
		if data, err := os.ReadFile(dir + ".expect.json"); err == nil {
			json.Unmarshal(data, &exp)
		}
		out[dir] = exp.Format
	}
	return out
}

// TestFixtureStreams opens every stream handle of every fixture: each resolves inside the
// directory and has the size the metadata records. Native handles are skipped (their files are
// RocksDB's).
func TestFixtureStreams(t *testing.T) {
	for dir, format := range fixtures(t) {
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if format != "" && sp.Format().String() != format {
			t.Errorf("%s: format %s, the oracle says %s", dir, sp.Format(), format)
		}
		n := 0
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				var hs []metadata.StreamHandle
				for _, h := range []metadata.OperatorHandle{st.ManagedOperator, st.RawOperator} {
					if oh, ok := h.(*metadata.OperatorStreamHandle); ok {
						hs = append(hs, oh.Delegate)
					}
				}
				for _, h := range []metadata.KeyedHandle{st.ManagedKeyed, st.RawKeyed} {
					if kh, ok := h.(*metadata.KeyGroupsHandle); ok {
						hs = append(hs, kh.Delegate)
					}
				}
				for _, h := range hs {
					s, err := sp.OpenStream(h)
					if err != nil {
						t.Errorf("%s: %v", dir, err)
						continue
					}
					if s.Size() != h.StateSize() {
						t.Errorf("%s: %s: %d bytes, handle says %d", dir, s.Name, s.Size(), h.StateSize())
					}
					if _, err := io.Copy(io.Discard, io.NewSectionReader(s, 0, s.Size())); err != nil {
						t.Errorf("%s: read %s: %v", dir, s.Name, err)
					}
					s.Close()
					n++
				}
			}
		}
		sp.Close()
		if format == "canonical" && n == 0 {
			t.Errorf("%s: no stream handle opened", dir)
		}
	}
}

// TestFixtureNativeRefused: the oracle's native-format RocksDB savepoint is recognised and the
// refusal says what to do instead.
func TestFixtureNativeRefused(t *testing.T) {
	seen := false
	for dir, format := range fixtures(t) {
		if format != "native" {
			continue
		}
		seen = true
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = sp.CheckCanonical()
		sp.Close()
		if !errors.Is(err, ErrNotCanonical) {
			t.Fatalf("%s: CheckCanonical = %v, want ErrNotCanonical", dir, err)
		}
		for _, want := range []string{"native format", "flink savepoint --type canonical", "flink stop --type canonical", "_metadata"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: refusal %q does not mention %q", dir, err, want)
			}
		}
	}
	if !seen {
		t.Skip("no native fixture (testdata/savepoints/native-rocksdb)")
	}
}

// TestFixtureEscapesRefused copies a real savepoint whose state is in files and rewrites the
// first relative handle to point out of the directory (a hostile or corrupt _metadata); opening it
// must be refused, while the untouched copy still opens.
func TestFixtureEscapesRefused(t *testing.T) {
	var src string
	var m *metadata.Metadata
	var rel *metadata.RelativeFileHandle
	for dir := range fixtures(t) {
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		sp.Close()
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				if kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok && rel == nil {
					if r, ok := kh.Delegate.(*metadata.RelativeFileHandle); ok {
						src, m, rel = dir, sp.Metadata, r
					}
				}
			}
		}
	}
	if rel == nil {
		t.Skip("no fixture with keyed state in a relative file")
	}
	base := t.TempDir()
	secret := filepath.Join(base, "secret")
	os.WriteFile(secret, bytes.Repeat([]byte{1}, int(rel.Size)), 0o644)
	for _, bad := range []string{"../secret", "../../secret", "sub/../../secret", secret, "/etc/passwd"} {
		dir := filepath.Join(base, "sp")
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
		orig := rel.Path
		rel.Path = bad
		var buf bytes.Buffer
		err := metadata.Encode(&buf, m)
		rel.Path = orig
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "_metadata"), buf.Bytes(), 0o644)
		// The real state file is there too, under its own name.
		data, _ := os.ReadFile(filepath.Join(src, orig))
		os.WriteFile(filepath.Join(dir, orig), data, 0o644)
		sp, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = sp.OpenStream(findRelative(sp.Metadata, bad))
		sp.Close()
		if err == nil || !strings.Contains(err.Error(), "outside the savepoint directory") {
			t.Errorf("relative path %q: err = %v, want a refusal", bad, err)
		}
	}
}

func findRelative(m *metadata.Metadata, path string) metadata.StreamHandle {
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			if kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok {
				if r, ok := kh.Delegate.(*metadata.RelativeFileHandle); ok && r.Path == path {
					return r
				}
			}
		}
	}
	return nil
}
