package migrate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/statecraft/statecraft/internal/azuretest"
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
	azuretest.Stop()
	os.Exit(code)
}

// copyStore copies every object under from to to (each a local directory or a store URL)
// through the storage seam.
func copyStore(t *testing.T, from, to string) {
	t.Helper()
	ctx := context.Background()
	src, err := storage.OpenURL(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := storage.OpenURL(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := storage.CopyAll(ctx, dst, src); err != nil {
		t.Fatal(err)
	}
}

// TestOracleS3: Flink 2.3.0 writes the source savepoints to the S3 server through its own S3
// file system (one with entropy injection, one of a SQL job), statecraft migrates them, and Flink
// reads (State Processor API) and restores (non-restored state not allowed) the results from the
// server: a UID change s3 -> s3 (server-side copies), a rescale s3 -> s3 (of the entropy-injected
// savepoint) and local -> s3, a rescale s3 -> local restored from the local disk, and a rescale
// s3 -> s3 of the SQL job's savepoint restored under EXECUTE PLAN of its compiled plan (every
// key's aggregate must go on from its saved count and sum). Flink has no file system for the GCS
// and Azure emulators, so migrations gs -> gs and azblob -> azblob are copied down to the disk
// by statecraft's own store and judged there. One oracle call writes, one judges them all.
func TestOracleS3(t *testing.T) {
	oracleOnly(t)
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "oracle")
	gcs := gcstest.Require(t)
	gsBucket := gcs.Bucket(t, "oracle")
	az := azuretest.Require(t)
	container := az.Container(t, "oracle")
	// Flink writes the S3 sources itself, through its S3 file system: the fixture jobs, stopped
	// with savepoints to the server, keyed-par3 with entropy injection (its state files under
	// random prefixes of the bucket, named by absolute s3:// paths in _metadata), and the SQL job
	// of sql-group-aggregate (its state in files beside _metadata).
	out, err := runOracle(t, "savepoints-s3", srv.Endpoint, s3test.AccessKey, s3test.SecretKey, "s3://"+bucket+"/flink",
		"keyed-hashmap", "keyed-par3:entropy", "sql-group-aggregate")
	if err != nil {
		t.Fatalf("Flink did not write the savepoints to S3: %v\n%s", err, tail(out))
	}
	written := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if name, loc, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && strings.HasPrefix(loc, "s3://") {
			written[name] = loc
		}
	}
	if len(written) != 3 {
		t.Fatalf("savepoints-s3 printed %v, want the locations of 3 savepoints\n%s", written, tail(out))
	}
	// Entropy injection: _metadata names every state file of keyed-par3 by an absolute path
	// outside its directory, in the same bucket.
	if n := absoluteStateFiles(t, written["keyed-par3"], "s3://"+bucket+"/"); n == 0 {
		t.Errorf("%s: no keyed state file named by an absolute path outside the savepoint (entropy injection)", written["keyed-par3"])
	}
	// The SQL job's state is in files on the server (a rescale rewrites them), not inline.
	if st := storeOf(t, written["sql-group-aggregate"]); len(list(t, st)) < 2 {
		t.Errorf("%s: no state file beside _metadata", written["sql-group-aggregate"])
	}
	gsSrc, azSrc := "gs://"+gsBucket+"/src/keyed-par3", "azblob://"+container+"/src/keyed-hashmap"
	copyStore(t, fixture(t, "keyed-par3"), gsSrc)
	copyStore(t, fixture(t, "keyed-hashmap"), azSrc)
	// The SQL job restored under its compiled plan gets one more row per key; its final rows
	// must carry each key's saved count and sum on (judge-restore's spec).
	sqlSpec := func(t *testing.T) string {
		dir := filepath.Join("..", "testdata", "upgrades", "agg-filter-added")
		var spec map[string]any
		b, err := os.ReadFile(filepath.Join(dir, "spec.json"))
		if err == nil {
			err = json.Unmarshal(b, &spec)
		}
		if err != nil {
			t.Fatal(err)
		}
		plan, _ := filepath.Abs(filepath.Join("..", "testdata", "savepoints", "sql-group-aggregate.plan.json"))
		spec["plan"] = plan
		return expectation(spec).file(t)
	}
	hashmap := mustSel(t, "uid:int-keyed")
	var judged []string
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
		{"rescale sql s3-s3", "sql-group-aggregate", "s3", "s3", []Step{&Rescale{MaxParallelism: 256, Parallelism: 3}}, nil},
		{"rescale gs-gs", "keyed-par3", "gs", "gs", []Step{&Rescale{MaxParallelism: 200, Parallelism: 2}},
			func(e expectation) { e.rescale(uid.Hash("int-keyed"), 200, 2, true) }},
		{"uid azblob-azblob", "keyed-hashmap", "azblob", "azblob", []Step{&RenameUIDs{Renames: []Rename{{hashmap, "counter-v2"}}}},
			func(e expectation) { e.rename(uid.Hash("int-keyed"), "counter-v2") }},
	} {
		src, _ := filepath.Abs(fixture(t, c.fixture))
		switch c.src {
		case "s3":
			src = written[c.fixture]
		case "gs":
			src = gsSrc
		case "azblob":
			src = azSrc
		}
		name := strings.ReplaceAll(c.name, " ", "-")
		dst := filepath.Join(t.TempDir(), name)
		switch c.dst {
		case "s3":
			dst = "s3://" + bucket + "/out/" + name
		case "gs":
			dst = "gs://" + gsBucket + "/out/" + name
		case "azblob":
			dst = "azblob://" + container + "/out/" + name
		}
		if _, err := Run(src, dst, c.steps, Options{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		judgeAt := dst
		if c.dst == "gs" || c.dst == "azblob" {
			// Flink reads it from the disk: statecraft's store copies it down object by object.
			judgeAt = filepath.Join(t.TempDir(), name)
			copyStore(t, dst, judgeAt)
		}
		if c.expect == nil {
			judged = append(judged, judgeAt, sqlSpec(t))
			continue
		}
		e := loadExpect(t, c.fixture)
		c.expect(e)
		judged = append(judged, judgeAt, e.file(t))
	}
	out, err = runOracle(t, append([]string{"judge-savepoint-s3", srv.Endpoint, s3test.AccessKey, s3test.SecretKey}, judged...)...)
	accepted := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "accepted: ") || strings.HasPrefix(l, "rejected: ") {
			t.Log(l)
			accepted += strings.Count(l[:10], "accepted: ")
		}
	}
	if err != nil || accepted != len(judged)/2 {
		t.Fatalf("Flink accepted %d of the %d migrated savepoints: %v\n%s", accepted, len(judged)/2, err, tail(out))
	}
}

// absoluteStateFiles counts the keyed state files that the _metadata at sp names by an absolute
// path under prefix but outside sp.
func absoluteStateFiles(t *testing.T, sp, prefix string) int {
	t.Helper()
	s, err := savepoint.Open(sp)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for _, op := range s.Metadata.Operators {
		for _, st := range op.Subtasks {
			if h, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok {
				if fh, ok := h.Delegate.(*metadata.FileHandle); ok && strings.HasPrefix(fh.Path, prefix) && !strings.HasPrefix(fh.Path, sp) {
					n++
				}
			}
		}
	}
	return n
}

// storeOf opens the store at url.
func storeOf(t *testing.T, url string) storage.Store {
	t.Helper()
	st, err := storage.OpenURL(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// list lists every object of st.
func list(t *testing.T, st storage.Store) []storage.Info {
	t.Helper()
	l, err := st.List(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return l
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
	copyStore(t, fixture(t, "keyed-par3"), "s3://"+bucket+"/src")
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
	copyStore(t, fixture(t, "keyed-par3"), "s3://"+bucket+"/src")
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

// TestPublishVerifiesRereadBytes: an uploaded object damaged on the server after its upload, in
// place, behind the server's back (same size; the server still lists the ETag of the upload, so
// the listing check cannot see it), is caught by verification's re-read of the object, whether
// the byte lies in the state file's header or among its last entries: the byte is named, the
// run fails before _metadata is written and removes what it uploaded.
func TestPublishVerifiesRereadBytes(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "reread-uploads")
	copyStore(t, fixture(t, "keyed-par3"), "s3://"+bucket+"/src")
	t.Cleanup(func() { testHookPublish = nil })
	for _, c := range []struct {
		name string
		at   func(size int64) int64
	}{
		{"header", func(int64) int64 { return 40 }},
		{"entries", func(size int64) int64 { return size - 3 }},
	} {
		outDir := filepath.Join(srv.Dir, bucket, "out-"+c.name)
		damaged, damagedAt := "", int64(0)
		testHookPublish = func(at string) {
			if at != "temporary metadata" {
				return
			}
			ents, err := os.ReadDir(outDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				fi, err := e.Info()
				if err != nil || strings.HasPrefix(e.Name(), ".statecraft") || fi.Size() < 64 {
					continue
				}
				f, err := os.OpenFile(filepath.Join(outDir, e.Name()), os.O_RDWR, 0)
				if err != nil {
					t.Fatal(err)
				}
				b, at := make([]byte, 1), c.at(fi.Size())
				if _, err := f.ReadAt(b, at); err != nil {
					t.Fatal(err)
				}
				b[0] ^= 0x55
				if _, err := f.WriteAt(b, at); err != nil {
					t.Fatal(err)
				}
				f.Close()
				damaged, damagedAt = e.Name(), at
				return
			}
		}
		_, err := Run("s3://"+bucket+"/src", "s3://"+bucket+"/out-"+c.name, []Step{&Rescale{MaxParallelism: 256}}, Options{})
		testHookPublish = nil
		if damaged == "" {
			t.Fatalf("%s: no uploaded object to damage", c.name)
		}
		want := fmt.Sprintf("verify: s3://%s/out-%s/%s differs from the verified staged output at offset %d ", bucket, c.name, damaged, damagedAt)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: run with %s damaged on the server after its upload: %v, want %q", c.name, damaged, err, want)
		}
		if ents, _ := os.ReadDir(outDir); len(ents) > 0 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%s: DST holds %v after the failed run, want nothing", c.name, names)
		}
	}
}

// TestPublishVerifiesStage: an object-store run verifies its staged output while it uploads
// (verifyStage): a staged state file damaged before verification (so that DST receives, and the
// byte comparison finds, the same damaged bytes) fails the run on the digests, before
// _metadata is written, and DST is left empty.
func TestPublishVerifiesStage(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "verified-stage")
	copyStore(t, fixture(t, "keyed-hashmap"), "s3://"+bucket+"/src")
	damaged := ""
	testHookBeforeVerify = func(stage string) { damaged = damageLastValue(t, stage) }
	t.Cleanup(func() { testHookBeforeVerify = nil })
	_, err := Run("s3://"+bucket+"/src", "s3://"+bucket+"/out", []Step{&Rescale{MaxParallelism: 256}}, Options{})
	if damaged == "" {
		t.Fatal("no staged state file to damage")
	}
	if err == nil || !strings.Contains(err.Error(), "checksum differs") {
		t.Errorf("run with the staged %s damaged: %v, want a checksum difference", damaged, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(srv.Dir, bucket, "out")); len(ents) > 0 {
		t.Errorf("DST holds %d objects after the failed run, want none", len(ents))
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
	copyStore(t, fixture(t, "keyed-par3"), src)
	objects := func(url string) []storage.Info { return list(t, storeOf(t, url)) }
	before := objects(src)
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
	for _, o := range objects(dst) {
		if o.Name == "_metadata" {
			t.Error("DST has _metadata after a failed run")
		}
	}
	if after := objects(src); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the source changed:\n%v\n%v", before, after)
	}
	if _, err := Run(src, dst, steps, Options{}); err == nil || !strings.Contains(err.Error(), "--clean-partial") {
		t.Errorf("rerun over leftovers = %v, want a refusal naming --clean-partial", err)
	}
	if _, err := Run(src, dst, steps, Options{CleanPartial: true}); err != nil {
		t.Fatalf("rerun with CleanPartial: %v", err)
	}
	names := ""
	for _, o := range objects(dst) {
		names += o.Name + " "
		if strings.HasPrefix(o.Name, ".statecraft") {
			t.Errorf("helper object %s left after the rerun", o.Name)
		}
	}
	if !strings.Contains(names, "_metadata") {
		t.Errorf("DST after the rerun holds %s, no _metadata", names)
	}
}

// TestPublishAzureServerKilled: Azurite is killed (SIGKILL) at each point of an upload to it:
// before the first state file and just before _metadata (the commit). Each time the run fails,
// DST has no _metadata after the restart, the source blobs are byte-identical, and a rerun with
// CleanPartial succeeds and leaves no helper object. (Whether a plain rerun is refused depends
// on whether Azurite saved its metadata, .statecraft-partial included, between the run's start
// and the kill: it saves every 5 s, so that is not asserted here; the S3 test asserts it.)
func TestPublishAzureServerKilled(t *testing.T) {
	srv := azuretest.Own(t)
	container := srv.Container(t, "killed")
	src := "azblob://" + container + "/src"
	copyStore(t, fixture(t, "keyed-par3"), src)
	srv.Persist(t) // the source is on Azurite's disk before any kill
	before := contents(t, src)
	steps := []Step{&Rescale{MaxParallelism: 256}}
	t.Cleanup(func() { testHookPublish = nil })
	for _, point := range []string{"upload ", "commit"} {
		dst := "azblob://" + container + "/out-" + strings.Fields(point)[0]
		var once sync.Once
		killed := false
		testHookPublish = func(at string) {
			if strings.HasPrefix(at, point) {
				once.Do(func() { srv.Kill(); killed = true })
			}
		}
		_, err := Run(src, dst, steps, Options{})
		testHookPublish = nil
		if !killed || err == nil {
			t.Fatalf("%s: killed %v, run error %v; want a failed run", point, killed, err)
		}
		t.Logf("%s: %v", point, err)
		srv.Restart(t)
		if _, ok := contents(t, dst)["_metadata"]; ok {
			t.Errorf("%s: DST has _metadata after a failed run", point)
		}
		after := contents(t, src)
		if len(after) != len(before) {
			t.Errorf("%s: the source has %d objects, had %d", point, len(after), len(before))
		}
		for name, b := range before {
			if after[name] != b {
				t.Errorf("%s: source object %s changed", point, name)
			}
		}
		if _, err := Run(src, dst, steps, Options{CleanPartial: true}); err != nil {
			t.Fatalf("%s: rerun with CleanPartial: %v", point, err)
		}
		out := contents(t, dst)
		for name := range out {
			if strings.HasPrefix(name, ".statecraft") {
				t.Errorf("%s: helper object %s left after the rerun", point, name)
			}
		}
		if _, ok := out["_metadata"]; !ok {
			t.Errorf("%s: DST after the rerun has no _metadata", point)
		}
	}
}

// contents reads every object under url: name -> bytes.
func contents(t *testing.T, url string) map[string]string {
	t.Helper()
	st := storeOf(t, url)
	out := map[string]string{}
	for _, o := range list(t, st) {
		out[o.Name] = string(get(t, st, o.Name))
	}
	return out
}
