package migrate

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/statecraft/statecraft/internal/s3test"
	"github.com/statecraft/statecraft/storage"
)

// snapshot reads every file under dir (the S3 server's filesystem backend: one file per object).
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[p] = b
		return nil
	})
	return out
}

// TestPublishServerKilled: the S3 server is killed (SIGKILL) at each point of an upload to it:
// before the first state file and just before _metadata (the commit). Each
// time the run fails, DST has no _metadata, the source objects are byte-identical, a rerun is
// refused while leftovers are there, and a rerun with CleanPartial after the server is back
// succeeds and leaves no helper object.
func TestPublishServerKilled(t *testing.T) {
	srv := s3test.Own(t)
	bucket := srv.Bucket(t, "killed")
	ctx := context.Background()
	local, err := storage.OpenURL(ctx, "../testdata/savepoints/keyed-par3")
	if err != nil {
		t.Fatal(err)
	}
	remote, err := storage.OpenURL(ctx, "s3://"+bucket+"/src")
	if err != nil {
		t.Fatal(err)
	}
	files, err := local.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := remote.Copy(ctx, f.Name, local, f.Name); err != nil {
			t.Fatal(err)
		}
	}
	srcDir := filepath.Join(srv.Dir, bucket, "src")
	before := snapshot(t, srcDir)
	steps := []Step{&Rescale{MaxParallelism: 256}}
	t.Cleanup(func() { testHookPublish = nil })

	for _, point := range []string{"upload ", "commit"} {
		dst := "s3://" + bucket + "/out-" + strings.Fields(point)[0]
		dstDir := filepath.Join(srv.Dir, bucket, "out-"+strings.Fields(point)[0])
		var once sync.Once
		killed := false
		testHookPublish = func(at string) {
			if strings.HasPrefix(at, point) {
				once.Do(func() { srv.Kill(); killed = true })
			}
		}
		_, err := Run("s3://"+bucket+"/src", dst, steps, Options{})
		testHookPublish = nil
		if !killed || err == nil {
			t.Fatalf("%s: killed %v, run error %v; want a failed run", point, killed, err)
		}
		t.Logf("%s: %v", point, err)
		srv.Restart(t)
		if _, err := os.Stat(filepath.Join(dstDir, "_metadata")); err == nil {
			t.Errorf("%s: DST has _metadata after a failed run", point)
		}
		after := snapshot(t, srcDir)
		if len(after) != len(before) {
			t.Errorf("%s: the source has %d objects, had %d", point, len(after), len(before))
		}
		for p, b := range before {
			if !bytes.Equal(after[p], b) {
				t.Errorf("%s: source object %s changed", point, p)
			}
		}
		if _, err := Run("s3://"+bucket+"/src", dst, steps, Options{}); err == nil || !strings.Contains(err.Error(), "--clean-partial") {
			t.Errorf("%s: rerun over leftovers = %v, want a refusal naming --clean-partial", point, err)
		}
		if _, err := Run("s3://"+bucket+"/src", dst, steps, Options{CleanPartial: true}); err != nil {
			t.Fatalf("%s: rerun with CleanPartial: %v", point, err)
		}
		ents, _ := os.ReadDir(dstDir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
			if strings.HasPrefix(e.Name(), ".statecraft") {
				t.Errorf("%s: helper object %s left after the rerun", point, e.Name())
			}
		}
		if !strings.Contains(strings.Join(names, " "), "_metadata") {
			t.Errorf("%s: DST after the rerun holds %v, no _metadata", point, names)
		}
	}
	if _, err := Run("s3://"+bucket+"/src", "s3://"+bucket+"/out-commit", steps, Options{CleanPartial: true}); err == nil || !strings.Contains(err.Error(), "holds a finished savepoint") {
		t.Errorf("CleanPartial over a finished savepoint = %v, want a refusal", err)
	}
}
