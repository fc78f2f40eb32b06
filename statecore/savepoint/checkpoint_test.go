package savepoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

const chainFixture = "../../testdata/checkpoints/native-chain"

// copyTree copies a directory tree (the fixture is small).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckpointDirectory: a job's checkpoint directory that Flink wrote elsewhere (its _metadata
// names the old absolute paths) opens at its latest complete chk-N, and every file handle of every
// retained chk-N resolves into this directory's chk-N/ and shared/ through the layout. An
// incomplete newer chk-N (no _metadata) is passed over.
func TestCheckpointDirectory(t *testing.T) {
	if _, err := os.Stat(chainFixture); err != nil {
		t.Skipf("fixture: %v", err)
	}
	job := filepath.Join(t.TempDir(), "job")
	copyTree(t, chainFixture, job)
	chks, _ := filepath.Glob(filepath.Join(job, "chk-*"))
	if len(chks) < 3 {
		t.Fatalf("%d retained checkpoints, want at least 3", len(chks))
	}
	latest, _, err := LatestCheckpoint(job)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(job, "chk-999999"), 0o755); err != nil { // in progress
		t.Fatal(err)
	}
	sp, err := Open(job)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Dir != latest {
		t.Errorf("opened %s, want the latest complete checkpoint %s", sp.Dir, latest)
	}
	sp.Close()
	for _, chk := range chks {
		sp, err := Open(chk)
		if err != nil {
			t.Fatal(err)
		}
		files := 0
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				walkStreamHandles(st.ManagedKeyed, func(h metadata.StreamHandle) {
					s, err := sp.OpenStream(h)
					if err != nil {
						t.Errorf("%s: %v", chk, err)
						return
					}
					if !strings.HasPrefix(s.Name, job) {
						t.Errorf("%s: stream read from %s, outside the copied job directory", chk, s.Name)
					}
					files++
					s.Close()
				})
			}
		}
		if files == 0 {
			t.Errorf("%s: no file handle", chk)
		}
		sp.Close()
	}
}

// TestCheckpointMappingRefusesEscapes: a chk-N whose _metadata has one path that leaves the job
// directory layout ("..") gets no layout mapping, and the handle is refused.
func TestCheckpointMappingRefusesEscapes(t *testing.T) {
	if _, err := os.Stat(chainFixture); err != nil {
		t.Skipf("fixture: %v", err)
	}
	job := filepath.Join(t.TempDir(), "job")
	copyTree(t, chainFixture, job)
	chk, _, err := LatestCheckpoint(job)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(chk, MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	m, err := metadata.DecodeBytes(b, chk)
	if err != nil {
		t.Fatal(err)
	}
	changed := false
	for _, op := range m.Operators {
		for _, st := range op.Subtasks {
			if h, ok := st.ManagedKeyed.(*metadata.IncrementalHandle); ok && !changed && len(h.Shared) > 0 {
				if fh, ok := h.Shared[0].Handle.(*metadata.FileHandle); ok {
					fh.Path = strings.Replace(fh.Path, "/shared/", "/shared/../../", 1)
					changed = true
				}
			}
		}
	}
	if !changed {
		t.Fatal("no shared file handle to change")
	}
	var buf bytes.Buffer
	if err := metadata.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(chk, MetadataFileName), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(chk)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if len(sp.opt.PathMap) != 0 {
		t.Errorf("path map %v for a metadata with an escaping path", sp.opt.PathMap)
	}
}

// walkStreamHandles calls fn with every file-backed stream handle reachable from h.
func walkStreamHandles(h any, fn func(metadata.StreamHandle)) {
	switch h := h.(type) {
	case *metadata.FileHandle, *metadata.RelativeFileHandle:
		fn(h.(metadata.StreamHandle))
	case *metadata.KeyGroupsHandle:
		walkStreamHandles(h.Delegate, fn)
	case *metadata.IncrementalHandle:
		walkStreamHandles(h.MetaData, fn)
		for _, p := range append(append([]metadata.PathHandle{}, h.Shared...), h.Private...) {
			walkStreamHandles(p.Handle, fn)
		}
	}
}
