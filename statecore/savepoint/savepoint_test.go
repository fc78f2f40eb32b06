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
		&metadata.FileHandle{Path: "s3://bucket/sp/a-uuid", Size: 5},                               // 8 copied from S3
		&metadata.RelativeFileHandle{Path: "/etc/passwd", Size: 1},                                 // 9 absolute as relative
		&metadata.SegmentFileHandle{StartPos: 1, Size: 3, Path: abs(filepath.Join(dir, "a-uuid"))}, // 10
		&metadata.FileHandle{Path: "s3://bucket/sp/not-here", Size: 5},                             // 11 remote, not copied
		&metadata.FileHandle{Path: "hdfs://nn:8020/sp/not-here", Size: 5},                          // 12 unsupported scheme
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
		want := map[int]string{0: "inline!", 1: "hello", 2: "abc", 3: "hello", 8: "hello", 10: "ell"}
		for i, w := range want {
			if errs[i] != nil {
				t.Errorf("handle %d: %v", i, errs[i])
				continue
			}
			if got := readAll(t, streams[i]); got != w {
				t.Errorf("handle %d: read %q, want %q", i, got, w)
			}
		}
		if !streams[3].Moved || !streams[8].Moved || streams[1].Moved {
			t.Errorf("Moved flags: handles 3, 8 %v %v (want true), handle 1 %v (want false)", streams[3].Moved, streams[8].Moved, streams[1].Moved)
		}
		refusals := map[int]string{4: "outside the savepoint", 5: "outside the savepoint", 6: "open state file", 7: "metadata says 6",
			9: "outside the savepoint", 11: "s3://bucket/sp/not-here is outside the savepoint directory", 12: "the hdfs:// scheme is not supported"}
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
			want := map[int]string{0: "", 1: "a-uuid", 2: "b-uuid", 3: "a-uuid", 7: "a-uuid", 8: "a-uuid", 10: "a-uuid"}
			if w, ok := want[i]; ok {
				if err != nil || rel != w || moved != (i == 3 || i == 8) {
					t.Errorf("LocalPath(handle %d) = %q, %v, %v; want %q", i, rel, moved, err, w)
				}
			} else if err == nil {
				t.Errorf("LocalPath(handle %d) = %q, want a refusal", i, rel)
			}
		}
		sp.Close()
	}
}

// TestPathMap: --path-map rewrites an absolute handle to where the user says its file is, also
// outside the directory; without it, the same handle is refused; a rule that maps no path of
// _metadata is refused by name.
func TestPathMap(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "sp")
	shared := filepath.Join(base, "moved-shared")
	os.MkdirAll(shared, 0o755)
	os.WriteFile(filepath.Join(shared, "x-uuid"), []byte("shared!"), 0o644)
	h := &metadata.FileHandle{Path: "s3://old-bucket/chk/shared/x-uuid", Size: 7}
	writeSavepoint(t, dir, []metadata.StreamHandle{h}, nil)
	for _, c := range []struct {
		maps []string
		want string // content, or the error's text
	}{
		{nil, "outside the savepoint directory"},
		{[]string{"s3://old-bucket/chk/shared=" + shared}, "shared!"},
		{[]string{"s3://old-bucket/chk/shared/=file://" + shared + "/"}, "shared!"},
		{[]string{"s3://old-bucket/chk/sha=" + shared}, "outside the savepoint directory"}, // not at a "/"
		{[]string{"s3p://old-bucket/chk/shared=" + shared}, "shared!"},                     // Flink's spellings of s3://
		{[]string{"s3://other-bucket/chk=" + shared, "s3://old-bucket/chk/shared=" + shared},
			"--path-map s3://other-bucket/chk=" + shared + ": no absolute state-file path in " + filepath.Join(dir, "_metadata") + " starts with s3://other-bucket/chk"},
	} {
		var opt Options
		for _, m := range c.maps {
			pm, err := ParsePathMap(m)
			if err != nil {
				t.Fatal(err)
			}
			opt.PathMap = append(opt.PathMap, pm)
		}
		sp, err := OpenWith(t.Context(), dir, opt)
		if err != nil {
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("path map %v: open: %v, want %q", c.maps, err, c.want)
			}
			continue
		}
		st, err := sp.OpenStream(sp.Metadata.Operators[0].Subtasks[0].ManagedKeyed)
		got := ""
		if err != nil {
			got = err.Error()
		} else {
			got = readAll(t, st)
			st.Close()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("path map %v: got %q, want %q", c.maps, got, c.want)
		}
		sp.Close()
	}
	for _, bad := range []string{"x", "=y", "x=", "a=hdfs://nn/x"} {
		if _, err := ParsePathMap(bad); err == nil {
			t.Errorf("ParsePathMap(%q) accepted", bad)
		}
	}
}

// TestOpenSchemes (issue #17, defect 7): a URL is never taken for a local file name: an
// unsupported scheme is refused by name with the supported ones, file:/// opens the local
// directory, a missing s3:// savepoint is not "stat s3://...: no such file", and gs:// and
// azblob:// without credentials say which are missing.
func TestOpenSchemes(t *testing.T) {
	// Credentials the machine may have must not reach a cloud: these point nowhere.
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(t.TempDir(), "no-adc.json"))
	for _, v := range []string{"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_KEY", "AZURE_STORAGE_CONNECTION_STRING"} {
		t.Setenv(v, "")
	}
	dir := filepath.Join(t.TempDir(), "sp")
	writeSavepoint(t, dir, []metadata.StreamHandle{&metadata.ByteStreamHandle{Name: "x", Data: []byte("1")}}, nil)
	if sp, err := Open("file://" + dir); err != nil || sp.Dir != dir {
		t.Errorf("file:// = %v, want %s opened", err, dir)
	} else {
		sp.Close()
	}
	for _, c := range []struct{ in, want string }{
		{"hdfs://nn:8020/sp", "open savepoint: hdfs://nn:8020/sp: the hdfs:// scheme is not supported; statecraft reads and writes s3://"},
		{"oss://b/sp", "the oss:// scheme is not supported"},
		// gs:// and azblob:// are stores now: without credentials, one line says what is missing.
		{"gs://b/sp", "open savepoint: gs://b/sp: find Google Application Default Credentials: google: error getting credentials using GOOGLE_APPLICATION_CREDENTIALS"},
		{"azblob://c/sp", "open savepoint: azblob://c/sp: no storage account: set AZURE_STORAGE_ACCOUNT"},
		{"file:///no/such/dir", "open savepoint: stat /no/such/dir: no such file or directory"},
	} {
		_, err := Open(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s) = %v, want %q", c.in, err, c.want)
		}
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
