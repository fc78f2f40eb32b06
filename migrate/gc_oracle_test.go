package migrate

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestOracleGCLeftovers: checkpoint gc on a checkpoint directory in which Flink itself left
// unreferenced files (the oracle's gc-leftovers: a job with retained incremental RocksDB
// checkpoints halted, as by kill -9, once its next checkpoint had uploaded its shared SST files
// but before its _metadata existed). gc finds garbage; no removed file is named by any complete
// checkpoint's _metadata (checked on the bytes, not through gc's handle walk); and after
// --apply --force Flink 2.3.0 still restores the latest checkpoint with non-restored state
// disallowed, finding exactly what the State Processor API read from it before gc.
func TestOracleGCLeftovers(t *testing.T) {
	oracleOnly(t)
	t.Parallel() // the judge waits on the oracle servers, not on this process
	src := filepath.Join("..", "testdata", "checkpoints", "gc-leftovers")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("fixture: %v", err)
	}
	job, err := filepath.Abs(filepath.Join(t.TempDir(), "job"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", src, job).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	list, err := savepoint.ListCheckpoints(job)
	if err != nil {
		t.Fatal(err)
	}
	var metas [][]byte // every complete checkpoint's _metadata
	var latest savepoint.CheckpointInfo
	for _, c := range list {
		if c.Complete {
			b, err := os.ReadFile(filepath.Join(c.Dir, savepoint.MetadataFileName))
			if err != nil {
				t.Fatal(err)
			}
			metas = append(metas, b)
			latest = c
		}
	}
	if last := list[len(list)-1]; last.Complete || len(metas) == 0 {
		t.Fatalf("the fixture should end in the checkpoint Flink was halted in (incomplete) after a complete one: %+v", list)
	}
	// The copy made every file new; Flink wrote them long before (the default minimum age).
	old := time.Now().Add(-2 * time.Hour)
	for _, sub := range []string{"shared", "taskowned"} {
		filepath.WalkDir(filepath.Join(job, sub), func(p string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				err = os.Chtimes(p, old, old)
			}
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			return nil
		})
	}
	plan, err := savepoint.PlanGC(job, savepoint.GCOptions{MinAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Garbage) == 0 || len(plan.TooNew) != 0 {
		t.Fatalf("Flink left no garbage gc finds (%d files, %d too new): the test would prove nothing", len(plan.Garbage), len(plan.TooNew))
	}
	for _, g := range plan.Garbage {
		for _, m := range metas {
			if bytes.Contains(m, []byte(filepath.Base(g.Path))) {
				t.Errorf("%s is garbage but a complete checkpoint's _metadata names it", g.Path)
			}
		}
	}
	if err := plan.Apply(true); err != nil {
		t.Fatal(err)
	}
	t.Logf("gc removed %d files (%d bytes) Flink left, kept %d referenced by %v", len(plan.Garbage), plan.Total, plan.Referenced, plan.Complete)

	// Flink restores from the absolute paths in _metadata: point them at the copy.
	relocateCheckpoint(t, latest.Dir, job)
	e := loadExpect(t, "../checkpoints/gc-leftovers")
	judge(t, latest.Dir, e)
}

// relocateCheckpoint rewrites the absolute file paths in chk's _metadata from the job directory
// Flink wrote them under to job (where the copy is); any path left pointing elsewhere fails.
func relocateCheckpoint(t *testing.T, chk, job string) {
	t.Helper()
	path := filepath.Join(chk, savepoint.MetadataFileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	md, err := metadata.DecodeBytes(b, path)
	if err != nil {
		t.Fatal(err)
	}
	oldJob := ""
	var files []*metadata.FileHandle
	var walk func(h any)
	walk = func(h any) {
		switch h := h.(type) {
		case *metadata.FileHandle:
			files = append(files, h)
			for _, sub := range []string{"/shared/", "/taskowned/", "/" + filepath.Base(chk) + "/"} {
				if i := strings.LastIndex(h.Path, sub); i > 0 && oldJob == "" {
					oldJob = h.Path[:i]
				}
			}
		case *metadata.KeyGroupsHandle:
			walk(h.Delegate)
		case *metadata.OperatorStreamHandle:
			walk(h.Delegate)
		case *metadata.IncrementalHandle:
			walk(h.MetaData)
			for _, p := range append(append([]metadata.PathHandle{}, h.Shared...), h.Private...) {
				walk(p.Handle)
			}
		}
	}
	for _, op := range md.Operators {
		for _, st := range op.Subtasks {
			if st != nil {
				for _, h := range []any{st.ManagedOperator, st.RawOperator, st.ManagedKeyed, st.RawKeyed} {
					walk(h)
				}
			}
		}
	}
	if oldJob == "" {
		t.Fatalf("%s: no absolute file path under a job directory", path)
	}
	newJob := "file:" + filepath.ToSlash(job)
	for _, f := range files {
		if !strings.HasPrefix(f.Path, oldJob+"/") {
			t.Fatalf("%s: %s is not under %s", path, f.Path, oldJob)
		}
		f.Path = newJob + strings.TrimPrefix(f.Path, oldJob)
	}
	var out bytes.Buffer
	if err := metadata.Encode(&out, md); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out.Bytes(), []byte(strings.TrimPrefix(oldJob, "file:"))) {
		t.Fatalf("%s: the old job directory %s is still named after the rewrite", path, oldJob)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
