package savepoint

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// writeSavepoint writes a savepoint directory whose one operator has a keyed handle per stream
// handle given, plus the named files. It is for path-safety tests: the handles are what an
// attacker or a moved directory would put there; fixtures_test.go covers real Flink savepoints.
func writeSavepoint(t *testing.T, dir string, handles []metadata.StreamHandle, files map[string]string) {
	t.Helper()
	op := &metadata.OperatorState{ID: metadata.OperatorID{1}, Parallelism: int32(len(handles)), MaxParallelism: 128}
	for i, h := range handles {
		op.Subtasks = append(op.Subtasks, &metadata.SubtaskState{Index: int32(i),
			ManagedKeyed: &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups,
				Range: metadata.KeyGroupRange{Start: int32(i), Num: 1}, Offsets: []int64{0}, Delegate: h}})
	}
	m := &metadata.Metadata{Version: 6, CheckpointID: 1, Operators: []*metadata.OperatorState{op},
		Tail: []byte{0xAC, 0xED, 0x00, 0x05, 0x70}}
	var buf bytes.Buffer
	if err := metadata.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetadataFileName), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readAll(t *testing.T, s *Stream) string {
	t.Helper()
	b, err := io.ReadAll(io.NewSectionReader(s, 0, s.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestOpenStreamResolution(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "sp")
	outside := filepath.Join(base, "secret")
	os.WriteFile(outside, []byte("do not read"), 0o644)
	abs := func(p string) string { return "file:" + filepath.ToSlash(p) }
	handles := []metadata.StreamHandle{
		&metadata.ByteStreamHandle{Name: "inline", Data: []byte("inline!")},                        // 0
		&metadata.RelativeFileHandle{Path: "a-uuid", Size: 5},                                      // 1
		&metadata.FileHandle{Path: abs(filepath.Join(dir, "b-uuid")), Size: 3},                     // 2 inside
		&metadata.FileHandle{Path: "file:///elsewhere/old-sp/a-uuid", Size: 5},                     // 3 moved
		&metadata.RelativeFileHandle{Path: "../secret", Size: 11},                                  // 4 escape
		&metadata.FileHandle{Path: abs(outside), Size: 11},                                         // 5 outside
		&metadata.RelativeFileHandle{Path: "link", Size: 11},                                       // 6 symlink out
		&metadata.RelativeFileHandle{Path: "a-uuid", Size: 6},                                      // 7 size mismatch
		&metadata.FileHandle{Path: "s3://bucket/sp/a-uuid", Size: 5},                               // 8 remote
		&metadata.RelativeFileHandle{Path: "/etc/passwd", Size: 1},                                 // 9 absolute as relative
		&metadata.SegmentFileHandle{StartPos: 1, Size: 3, Path: abs(filepath.Join(dir, "a-uuid"))}, // 10
	}
	writeSavepoint(t, dir, handles, map[string]string{"a-uuid": "hello", "b-uuid": "abc"})
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip("symlinks not supported:", err)
	}
	for _, p := range []string{dir, filepath.Join(dir, MetadataFileName)} {
		sp, err := Open(p)
		if err != nil {
			t.Fatal(err)
		}
		streams := make([]*Stream, len(handles))
		errs := make([]error, len(handles))
		for i, st := range sp.Metadata.Operators[0].Subtasks {
			streams[i], errs[i] = sp.OpenStream(st.ManagedKeyed.(*metadata.KeyGroupsHandle))
		}
		want := map[int]string{0: "inline!", 1: "hello", 2: "abc", 3: "hello", 10: "ell"}
		for i, w := range want {
			if errs[i] != nil {
				t.Errorf("handle %d: %v", i, errs[i])
				continue
			}
			if got := readAll(t, streams[i]); got != w {
				t.Errorf("handle %d: read %q, want %q", i, got, w)
			}
		}
		if !streams[3].Moved || streams[1].Moved {
			t.Errorf("Moved flags: handle 3 %v (want true), handle 1 %v (want false)", streams[3].Moved, streams[1].Moved)
		}
		refusals := map[int]string{4: "outside the savepoint", 5: "outside the savepoint", 6: "open state file", 7: "metadata says 6", 8: "s3://", 9: "outside the savepoint"}
		for i, w := range refusals {
			if errs[i] == nil || !strings.Contains(errs[i].Error(), w) {
				t.Errorf("handle %d: err = %v, want one containing %q", i, errs[i], w)
			}
		}
		for _, s := range streams {
			if s != nil {
				s.Close()
			}
		}
		// LocalPath accepts and refuses the same handles, naming the file inside the directory.
		for i, st := range sp.Metadata.Operators[0].Subtasks {
			rel, moved, err := sp.LocalPath(st.ManagedKeyed.(*metadata.KeyGroupsHandle))
			want := map[int]string{0: "", 1: "a-uuid", 2: "b-uuid", 3: "a-uuid", 7: "a-uuid", 10: "a-uuid"}
			if w, ok := want[i]; ok {
				if err != nil || rel != w || moved != (i == 3) {
					t.Errorf("LocalPath(handle %d) = %q, %v, %v; want %q", i, rel, moved, err, w)
				}
			} else if err == nil {
				t.Errorf("LocalPath(handle %d) = %q, want a refusal", i, rel)
			}
		}
		sp.Close()
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "has no _metadata") {
		t.Errorf("empty dir: err = %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: err = %v", err)
	}
	os.WriteFile(filepath.Join(dir, MetadataFileName), []byte{0x49, 0x60, 0x67, 0x2d, 0, 0, 0}, 0o644)
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, MetadataFileName)) || !strings.Contains(err.Error(), "offset 4") {
		t.Errorf("truncated metadata: err = %v, want the file name and offset 4", err)
	}
}
