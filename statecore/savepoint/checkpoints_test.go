package savepoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chainCopy copies the retained-checkpoint fixture (chk-6, 7, 8 that Flink wrote) and adds what
// a job directory also holds while Flink works: an in-progress chk-9 (no _metadata yet) and a
// chk-10 whose _metadata was cut short.
func chainCopy(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chainFixture); err != nil {
		t.Skipf("fixture: %v", err)
	}
	job := filepath.Join(t.TempDir(), "job")
	copyTree(t, chainFixture, job)
	if err := os.MkdirAll(filepath.Join(job, "chk-9"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(job, "chk-8", MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(job, "chk-10"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(job, "chk-10", MetadataFileName), b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return job
}

func TestListCheckpoints(t *testing.T) {
	job := chainCopy(t)
	list, err := ListCheckpoints(job)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		id       int64
		complete bool
		reason   string
	}{{6, true, ""}, {7, true, ""}, {8, true, ""}, {9, false, "no _metadata"}, {10, false, "does not decode"}}
	if len(list) != len(want) {
		t.Fatalf("%d checkpoints, want %d: %+v", len(list), len(want), list)
	}
	for i, w := range want {
		c := list[i]
		if c.ID != w.id || c.Complete != w.complete || !strings.Contains(c.Reason, w.reason) || (w.reason == "") != (c.Reason == "") {
			t.Errorf("checkpoint %d: id %d complete %v reason %q, want %d %v %q", i, c.ID, c.Complete, c.Reason, w.id, w.complete, w.reason)
		}
		if c.Complete {
			// The size _metadata states is the sum of what the operators' handles hold.
			sp, err := Open(c.Dir)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, r := range MetadataRows(sp.Metadata) {
				sum += r.TotalSizeInBytes
			}
			sp.Close()
			if c.StateSize != sum || sum == 0 {
				t.Errorf("chk-%d: state size %d, want %d (not 0)", c.ID, c.StateSize, sum)
			}
			if c.Size <= 0 {
				t.Errorf("chk-%d: size %d", c.ID, c.Size)
			}
		}
	}
	if _, err := ListCheckpoints(filepath.Join(job, "shared")); err == nil || !strings.Contains(err.Error(), "no chk-N") {
		t.Errorf("a directory without chk-N: error %v", err)
	}
}

func TestCheckpointDir(t *testing.T) {
	job := chainCopy(t)
	cases := []struct {
		path string
		n    int64
		want string // the directory, or a part of the error
	}{
		{job, 7, filepath.Join(job, "chk-7")},
		{job, 8, filepath.Join(job, "chk-8")},
		{filepath.Join(job, "chk-6"), 6, filepath.Join(job, "chk-6")},
		{filepath.Join(job, "chk-6"), 7, "is checkpoint 6 itself"},
		{job, 9, "no _metadata"},
		{job, 10, "does not decode"},
		{job, 3, "its checkpoints: 6, 7, 8, 9, 10"},
		{job, -1, "want a checkpoint id"},
		{filepath.Join(job, "chk-8", MetadataFileName), 8, "is a file"},
		{"../../testdata/savepoints/keyed-hashmap", 1, "not a job's checkpoint directory"},
		{filepath.Join(job, "nowhere"), 1, "no such file"},
	}
	for _, c := range cases {
		got, err := CheckpointDir(c.path, c.n)
		if filepath.IsAbs(c.want) {
			if err != nil || got != c.want {
				t.Errorf("%s --checkpoint %d: %q, %v; want %q", c.path, c.n, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s --checkpoint %d: %q, %v; want an error containing %q", c.path, c.n, got, err, c.want)
		}
	}
	// The picked checkpoint opens with its own id, its files found through the layout.
	dir, err := CheckpointDir(job, 6)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if sp.Metadata.CheckpointID != 6 {
		t.Errorf("opened checkpoint %d, want 6", sp.Metadata.CheckpointID)
	}
}
