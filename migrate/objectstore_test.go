package migrate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/statecraft/statecraft/internal/gcstest"
	"github.com/statecraft/statecraft/internal/s3test"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
	"github.com/statecraft/statecraft/storage"
)

func TestMain(m *testing.M) {
	code := s3test.Main(m)
	gcstest.Stop()
	os.Exit(code)
}

// upload copies a local savepoint directory to url through the storage seam.
func upload(t *testing.T, dir, url string) {
	t.Helper()
	ctx := context.Background()
	local, err := storage.OpenURL(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	remote, err := storage.OpenURL(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.CopyAll(ctx, remote, local); err != nil {
		t.Fatal(err)
	}
}

// TestOracleS3: Flink 2.3.0 writes the source savepoints to the S3 server through its own S3
// file system (one with entropy injection), statecraft migrates them, and Flink reads (State
// Processor API) and restores (non-restored state not allowed) the results from the server: a
// UID change s3 -> s3 (server-side copies), a rescale s3 -> s3 (of the entropy-injected
// savepoint) and local -> s3, and a rescale s3 -> local restored from the local disk; each
// finds exactly the promised state.
func TestOracleS3(t *testing.T) {
	oracleOnly(t)
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "oracle")
	// Flink writes the S3 sources itself, through its S3 file system: the fixture jobs, stopped
	// with savepoints to the server, keyed-par3 with entropy injection (its state files under
	// random prefixes of the bucket, named by absolute s3:// paths in _metadata).
	out, err := runOracle(t, "savepoints-s3", srv.Endpoint, s3test.AccessKey, s3test.SecretKey, "s3://"+bucket+"/flink", "keyed-hashmap", "keyed-par3:entropy")
	if err != nil {
		t.Fatalf("Flink did not write the savepoints to S3: %v\n%s", err, tail(out))
	}
	written := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if name, loc, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && strings.HasPrefix(loc, "s3://") {
			written[name] = loc
		}
	}
	if len(written) != 2 {
		t.Fatalf("savepoints-s3 printed %v, want the locations of 2 savepoints\n%s", written, tail(out))
	}
	// Entropy injection: _metadata names every state file of keyed-par3 by an absolute path
	// outside its directory, in the same bucket.
	entropic, err := savepoint.Open(written["keyed-par3"])
	if err != nil {
		t.Fatal(err)
	}
	abs := 0
	for _, op := range entropic.Metadata.Operators {
		for _, st := range op.Subtasks {
			if h, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok {
				if fh, ok := h.Delegate.(*metadata.FileHandle); ok && strings.HasPrefix(fh.Path, "s3://"+bucket+"/") &&
					!strings.HasPrefix(fh.Path, written["keyed-par3"]) {
					abs++
				}
			}
		}
	}
	entropic.Close()
	if abs == 0 {
		t.Errorf("%s: no keyed state file named by an absolute path outside the savepoint (entropy injection)", written["keyed-par3"])
	}
	judgeS3 := func(t *testing.T, dst string, e expectation) {
		t.Helper()
		out, err := runOracle(t, "judge-savepoint-s3", srv.Endpoint, s3test.AccessKey, s3test.SecretKey, dst, e.file(t))
		if err != nil {
			t.Fatalf("Flink rejected the migrated savepoint %s: %v\n%s", dst, err, tail(out))
		}
		t.Logf("%s", lastLine(out))
	}
	hashmap := mustSel(t, "uid:int-keyed")
	for _, c := range []struct {
		name, fixture, src, dst string
		steps                   []Step
		expect                  func(e expectation)
	}{
		{"uid s3-s3", "keyed-hashmap", "s3", "s3", []Step{&RenameUIDs{Renames: []Rename{{hashmap, "counter-v2"}}}},
			func(e expectation) { e.rename(uid.Hash("int-keyed"), "counter-v2") }},
		{"rescale s3-s3", "keyed-par3", "s3", "s3", []Step{&Rescale{MaxParallelism: 256, Parallelism: 2}},
			func(e expectation) { e.rescale(uid.Hash("int-keyed"), 256, 2, true) }},
		{"rescale local-s3", "keyed-hashmap", "local", "s3", []Step{&Rescale{MaxParallelism: 200}},
			func(e expectation) { e.rescale(uid.Hash("int-keyed"), 200, 2, true) }},
		{"rescale s3-local", "keyed-hashmap", "s3", "local", []Step{&Rescale{MaxParallelism: 256}},
			func(e expectation) { e.rescale(uid.Hash("int-keyed"), 256, 2, true) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // judges wait on the oracle servers, not on this process
			src, _ := filepath.Abs(fixture(t, c.fixture))
			if c.src == "s3" {
				src = written[c.fixture]
			}
			dst := filepath.Join(t.TempDir(), "out")
			if c.dst == "s3" {
				dst = "s3://" + bucket + "/out/" + strings.ReplaceAll(c.name, " ", "-")
			}
			if _, err := Run(src, dst, c.steps, Options{}); err != nil {
				t.Fatal(err)
			}
			e := loadExpect(t, c.fixture)
			c.expect(e)
			if c.dst == "s3" {
				judgeS3(t, dst, e)
			} else {
				judge(t, dst, e)
			}
		})
	}
}

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
	upload(t, fixture(t, "keyed-par3"), "s3://"+bucket+"/src")
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

// TestPublishChecksUploads: verification lists DST and holds every uploaded object to the size
// of its staged file and the ETag its upload committed (checked against the parts' MD5s by the
// writer): an object overwritten after its upload (same size, other bytes) fails the run before
// _metadata is written, naming the object.
func TestPublishChecksUploads(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "checked-uploads")
	upload(t, fixture(t, "keyed-par3"), "s3://"+bucket+"/src")
	dst := "s3://" + bucket + "/out"
	t.Cleanup(func() { testHookPublish = nil })
	overwritten := ""
	testHookPublish = func(at string) {
		if at != "temporary metadata" {
			return
		}
		st, err := storage.OpenURL(t.Context(), dst)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		objs, err := st.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if strings.HasPrefix(o.Name, ".statecraft") || o.Size < 2 {
				continue
			}
			b := get(t, st, o.Name)
			b[0] ^= 0xff
			if err := storage.WriteFrom(t.Context(), st, o.Name, bytes.NewReader(b)); err != nil {
				t.Fatal(err)
			}
			overwritten = st.Location().Join(o.Name).String()
			return
		}
	}
	_, err := Run("s3://"+bucket+"/src", dst, []Step{&Rescale{MaxParallelism: 256}}, Options{})
	if overwritten == "" {
		t.Fatal("no uploaded object to overwrite")
	}
	if err == nil || !strings.Contains(err.Error(), "verify: "+overwritten+" has ETag") || !strings.Contains(err.Error(), "its upload committed") {
		t.Errorf("run with %s overwritten after its upload: %v", overwritten, err)
	}
	if _, err := os.Stat(filepath.Join(srv.Dir, bucket, "out", "_metadata")); err == nil {
		t.Error("DST has _metadata after a failed verification")
	}
}

func get(t *testing.T, st storage.Store, name string) []byte {
	t.Helper()
	o, err := st.Open(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b := make([]byte, o.Size())
	if _, err := o.ReadAt(b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestPublishGCSServerKilled: the GCS emulator is killed (SIGKILL) just before _metadata is
// uploaded (the commit); the run fails, DST has no _metadata, the source objects are unchanged,
// a rerun is refused until CleanPartial, which then succeeds once the server is back.
func TestPublishGCSServerKilled(t *testing.T) {
	srv := gcstest.Own(t)
	srv.Bucket(t, "killed")
	src, dst := "gs://killed/src", "gs://killed/out"
	upload(t, fixture(t, "keyed-par3"), src)
	list := func(url string) []storage.Info {
		s, err := storage.OpenURL(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.List(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	before := list(src)
	steps := []Step{&Rescale{MaxParallelism: 256}}
	t.Cleanup(func() { testHookPublish = nil })
	killed := false
	testHookPublish = func(at string) {
		if at == "commit" && !killed {
			srv.Kill()
			killed = true
		}
	}
	_, err := Run(src, dst, steps, Options{})
	testHookPublish = nil
	if !killed || err == nil {
		t.Fatalf("killed %v, run error %v; want a failed run", killed, err)
	}
	t.Logf("killed at commit: %v", err)
	srv.Restart(t)
	for _, o := range list(dst) {
		if o.Name == "_metadata" {
			t.Error("DST has _metadata after a failed run")
		}
	}
	if after := list(src); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the source changed:\n%v\n%v", before, after)
	}
	if _, err := Run(src, dst, steps, Options{}); err == nil || !strings.Contains(err.Error(), "--clean-partial") {
		t.Errorf("rerun over leftovers = %v, want a refusal naming --clean-partial", err)
	}
	if _, err := Run(src, dst, steps, Options{CleanPartial: true}); err != nil {
		t.Fatalf("rerun with CleanPartial: %v", err)
	}
	names := ""
	for _, o := range list(dst) {
		names += o.Name + " "
		if strings.HasPrefix(o.Name, ".statecraft") {
			t.Errorf("helper object %s left after the rerun", o.Name)
		}
	}
	if !strings.Contains(names, "_metadata") {
		t.Errorf("DST after the rerun holds %s, no _metadata", names)
	}
}
