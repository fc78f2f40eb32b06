package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/azuretest"
	"github.com/statecraft/statecraft/internal/gcstest"
	"github.com/statecraft/statecraft/internal/s3test"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/storage"
)

func TestMain(m *testing.M) {
	code := s3test.Main(m)
	gcstest.Stop()
	azuretest.Stop()
	os.Exit(code)
}

// uploadDir copies every file of a local directory to the store at url, through the storage
// seam, and returns the bytes uploaded.
func uploadDir(t *testing.T, dir, url string) int64 {
	t.Helper()
	ctx := context.Background()
	src, err := storage.OpenURL(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := storage.OpenURL(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	n, err := storage.CopyAll(ctx, dst, src)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSavepointCommandsOnS3: inspect, dump, check and plan ttl impact print the same for a
// savepoint on the S3 server as for its local copy (the location aside), and inspect reads
// _metadata and the state files' headers with ranged reads, not whole files.
func TestSavepointCommandsOnS3(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-savepoints")
	for dir := range savepointFixtures(t) {
		name := filepath.Base(dir)
		url := "s3://" + bucket + "/sp/" + name
		size := uploadDir(t, dir, url)
		sameOnStore(t, storage.S3, dir, url, size, "savepoint", "inspect", "SP", "--json")
		sameOnStore(t, storage.S3, dir, url, size, "savepoint", "inspect", "SP/_metadata", "--subtasks")
		if name == "keyed-hashmap" {
			sameOnStore(t, storage.S3, dir, url, size, "savepoint", "dump", "SP", "--operator", "uid:int-keyed")
		}
		if plan := dir + ".plan.json"; fileExists(plan) {
			sameOnStore(t, storage.S3, dir, url, size, "savepoint", "check", "SP", "--plan", plan)
		}
	}
	refusesBroken(t, "s3://"+bucket, "HeadObject ")
}

// sameOnStore runs a command (SP in args stands for the savepoint) on the copy of dir at url,
// a store of kind, and on dir itself: both must succeed and print the same, the location aside,
// and inspect must read no more than the savepoint's size bytes from the store.
func sameOnStore(t *testing.T, kind storage.Kind, dir, url string, size int64, args ...string) {
	t.Helper()
	abs, _ := filepath.Abs(dir)
	local := make([]string, len(args))
	for i, a := range args {
		local[i] = strings.ReplaceAll(a, "SP", abs)
		args[i] = strings.ReplaceAll(a, "SP", url)
	}
	before := storage.Transferred(kind)
	code, out, errs := runCLI(args...)
	read := storage.Transferred(kind).Read - before.Read
	lcode, lout, lerrs := runCLI(local...)
	out, errs = strings.ReplaceAll(out, url, abs), strings.ReplaceAll(errs, url, abs)
	if code != lcode || out != lout || errs != lerrs || code != exitOK {
		t.Errorf("%s: %v: exit %d, local exit %d\nstdout:\n%s\nlocal stdout:\n%s\nstderr: %s\nlocal stderr: %s", url, args, code, lcode, out, lout, errs, lerrs)
	}
	if args[1] == "inspect" && read > size {
		t.Errorf("%s: inspect read %d bytes of a %d-byte savepoint", url, read, size)
	}
}

// refusesBroken: on the store at root, a missing savepoint, and one whose state file is gone,
// each give one error line naming it (op is the store's operation that finds the file missing).
func refusesBroken(t *testing.T, root, op string) {
	t.Helper()
	broken := root + "/broken"
	uploadDir(t, "../../testdata/savepoints/keyed-hashmap", broken)
	store, _ := storage.OpenURL(context.Background(), broken)
	files, _ := store.List(context.Background(), "")
	var gone string
	for _, f := range files {
		if f.Name != "_metadata" {
			gone = f.Name
			store.Remove(context.Background(), gone)
			break
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"savepoint", "inspect", root + "/nothing-here"}, root + "/nothing-here has no _metadata file"},
		{[]string{"savepoint", "dump", broken, "--operator", "uid:int-keyed"}, op + broken + "/" + gone + ": no such object"},
	} {
		code, _, errs := runCLI(c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want one line with %q", c.args, code, errs, c.want)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestInspectReadsHeadersOnly: inspect fetches the state files' headers (serializer snapshots),
// not their entries. The fixture's files are a few KB, so the first ranged read is made smaller
// than a file for this test; reading a whole file would show as more bytes than the savepoint
// minus its entries.
func TestInspectReadsHeadersOnly(t *testing.T) {
	old := storage.FirstReadBlock
	storage.FirstReadBlock = 512
	t.Cleanup(func() { storage.FirstReadBlock = old })
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-ranged")
	dir := "../../testdata/savepoints/keyed-hashmap"
	url := "s3://" + bucket + "/sp"
	size := uploadDir(t, dir, url)
	before := storage.Transferred(storage.S3)
	code, out, errs := runCLI("savepoint", "inspect", url)
	if code != exitOK || !strings.Contains(out, "int-keyed") {
		t.Fatalf("inspect: exit %d\n%s%s", code, out, errs)
	}
	got := storage.Transferred(storage.S3)
	t.Logf("inspect of %s: %d of %d bytes, %d requests", url, got.Read-before.Read, size, got.Requests-before.Requests)
	if got.Read-before.Read >= size {
		t.Errorf("inspect read %d bytes of the savepoint's %d: whole state files, not their headers", got.Read-before.Read, size)
	}
}

// TestObjectStoreLocationsCLI (issue #17, defect 7): schemes are never taken for local file
// names.
func TestObjectStoreLocationsCLI(t *testing.T) {
	abs, _ := filepath.Abs("../../testdata/savepoints/keyed-hashmap")
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout (exit 0) or stderr
	}{
		{[]string{"savepoint", "inspect", "hdfs://nn:8020/sp"}, 1, "hdfs://nn:8020/sp: the hdfs:// scheme is not supported; statecraft reads and writes " + storage.Supported},
		{[]string{"savepoint", "dump", "oss://b/sp", "--operator", "uid:x"}, 1, "the oss:// scheme is not supported"},
		{[]string{"savepoint", "inspect", "file://" + abs}, 0, "int-keyed"},
		{[]string{"migrate", "uid", abs, "hdfs://nn/out", "--rename", "uid:int-keyed=uid:v2"}, 1, "the hdfs:// scheme is not supported"},
	} {
		code, out, errs := runCLI(c.args...)
		text := errs
		if c.code == 0 {
			text = out
		}
		if code != c.code || !strings.Contains(text, c.want) || strings.Contains(errs, "no such file") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s\nwant exit %d and %q", c.args, code, out, errs, c.code, c.want)
		}
	}
}

// TestMigrateFromS3: a migration reads its source from the S3 server and writes a local
// directory; the result is the same savepoint the local source gives (inspect and dump equal),
// and a destination on an object store is refused in one line (not yet implemented).
func TestMigrateFromS3(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-migrate")
	src, _ := filepath.Abs("../../testdata/savepoints/keyed-hashmap")
	url := "s3://" + bucket + "/sp"
	uploadDir(t, src, url)
	for _, c := range []struct {
		args []string
		op   string // the operator to dump in the result
	}{
		{[]string{"migrate", "rescale", "SRC", "DST", "--max-parallelism", "256"}, "uid:int-keyed"},
		{[]string{"migrate", "uid", "SRC", "DST", "--rename", "uid:int-keyed=uid:v2"}, "uid:v2"},
	} {
		var dsts [2]string
		for i, from := range []string{url, src} {
			dsts[i] = filepath.Join(t.TempDir(), "out")
			args := strings.Fields(strings.NewReplacer("SRC", from, "DST", dsts[i]).Replace(strings.Join(c.args, " ")))
			if code, out, errs := runCLI(args...); code != exitOK {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
			}
		}
		for _, show := range [][]string{{"savepoint", "inspect"}, {"savepoint", "dump", "--operator", c.op}} {
			_, a, _ := runCLI(append(show, dsts[0])...)
			_, b, _ := runCLI(append(show, dsts[1])...)
			if strings.ReplaceAll(a, dsts[0], "DST") != strings.ReplaceAll(b, dsts[1], "DST") || a == "" {
				t.Errorf("%v: %v differs between the S3 and the local source:\n%s\n---\n%s", c, show, a, b)
			}
		}
	}
}

// TestMigrateToS3: local -> s3 and s3 -> s3 migrations give the savepoint a local run gives
// (inspect and dump equal); a UID rename s3 -> s3 copies server-side and downloads no state
// bytes; _metadata is the last object written and no helper object is left; a DST that is not
// empty, or in a missing bucket, is refused with nothing written.
func TestMigrateToS3(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-migrate-to")
	src, _ := filepath.Abs("../../testdata/savepoints/keyed-par3")
	srcURL := "s3://" + bucket + "/src"
	size := uploadDir(t, src, srcURL)
	n := 0
	for _, c := range []struct {
		args []string
		op   string
	}{
		{[]string{"migrate", "rescale", "SRC", "DST", "--max-parallelism", "256"}, "uid:int-keyed"},
		{[]string{"migrate", "uid", "SRC", "DST", "--rename", "uid:int-keyed=uid:v2"}, "uid:v2"},
	} {
		want := filepath.Join(t.TempDir(), "want")
		args := strings.Fields(strings.NewReplacer("SRC", src, "DST", want).Replace(strings.Join(c.args, " ")))
		if code, out, errs := runCLI(args...); code != exitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
		for _, from := range []string{src, srcURL} {
			n++
			dst := fmt.Sprintf("s3://%s/out-%d", bucket, n)
			report := filepath.Join(t.TempDir(), "report.json")
			args := strings.Fields(strings.NewReplacer("SRC", from, "DST", dst).Replace(strings.Join(c.args, " ")))
			args = append(args, "--report", report)
			before := storage.Transferred(storage.S3)
			code, out, errs := runCLI(args...)
			moved := storage.Transferred(storage.S3)
			if code != exitOK {
				t.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
			}
			t.Logf("%v: read %d, wrote %d bytes, %d requests", args, moved.Read-before.Read, moved.Written-before.Written, moved.Requests-before.Requests)
			if c.args[1] == "uid" && from == srcURL {
				// Server-side copies: only _metadata is uploaded, and every file is verified by
				// its ETag, not by reading it back.
				rep, _ := os.ReadFile(report)
				// No state byte is downloaded either: what is read is the source's _metadata and,
				// for verification, the uploaded one.
				meta, _ := os.Stat(filepath.Join(src, "_metadata"))
				if read := moved.Read - before.Read; read > 2*meta.Size() {
					t.Errorf("%v: read %d bytes; want at most the two _metadata reads (%d bytes each), no state bytes", args, read, meta.Size())
				}
				if moved.Written-before.Written >= size/2 || !strings.Contains(out, "3 copied server-side") ||
					!strings.Contains(string(rep), "same size and ETag (server-side copy)") || strings.Contains(string(rep), "SHA-256") {
					t.Errorf("%v: wrote %d bytes of a %d-byte savepoint, output:\n%s\nreport:\n%s", args, moved.Written-before.Written, size, out, rep)
				}
			}
			for _, show := range [][]string{{"savepoint", "inspect"}, {"savepoint", "dump", "--operator", c.op}} {
				_, a, _ := runCLI(append(show, dst)...)
				_, b, _ := runCLI(append(show, want)...)
				if strings.ReplaceAll(a, dst, "DST") != strings.ReplaceAll(b, want, "DST") || a == "" {
					t.Errorf("%v: %v differs from the local run's:\n%s\n---\n%s", args, show, a, b)
				}
			}
			objs, err := os.ReadDir(filepath.Join(srv.Dir, bucket, fmt.Sprintf("out-%d", n)))
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if strings.HasPrefix(o.Name(), ".statecraft") {
					t.Errorf("%v: helper object %s left in DST", args, o.Name())
				}
			}
		}
	}
	for _, c := range []struct{ dst, want string }{
		{"s3://" + bucket + "/out-1", "output s3://cli-migrate-to/out-1 is not empty"},
		{"s3://" + bucket + "/src/inner", "is inside the source savepoint"},
		{"s3://no-such-bucket/out", "ListObjectsV2 s3://no-such-bucket/out/: NoSuchBucket"},
	} {
		code, _, errs := runCLI("migrate", "rescale", srcURL, c.dst, "--max-parallelism", "256")
		if code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("migrate to %s: exit %d, %s; want %q", c.dst, code, errs, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(srv.Dir, bucket, "src", "inner")); err == nil {
		t.Error("a refused run wrote under the source")
	}
}

// TestMigrateToS3Throttled: with every fourth request answered 503 SlowDown, a migration to S3
// retries and writes the savepoint an undisturbed run writes.
func TestMigrateToS3Throttled(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-throttled")
	src, _ := filepath.Abs("../../testdata/savepoints/keyed-hashmap")
	calm, busy := "s3://"+bucket+"/calm", "s3://"+bucket+"/busy"
	if code, out, errs := runCLI("migrate", "rescale", src, calm, "--max-parallelism", "256"); code != exitOK {
		t.Fatalf("undisturbed run: exit %d\n%s%s", code, out, errs)
	}
	th := srv.Throttle(t, 4)
	t.Setenv("AWS_ENDPOINT_URL_S3", th.URL)
	if code, out, errs := runCLI("migrate", "rescale", src, busy, "--max-parallelism", "256"); code != exitOK {
		t.Fatalf("throttled run: exit %d\n%s%s", code, out, errs)
	}
	if th.Refused() == 0 {
		t.Fatal("the throttler refused no request")
	}
	t.Logf("%d requests answered 503 SlowDown", th.Refused())
	for _, show := range [][]string{{"savepoint", "inspect"}, {"savepoint", "dump", "--operator", "uid:int-keyed"}} {
		_, a, _ := runCLI(append(show, calm)...)
		_, b, _ := runCLI(append(show, busy)...)
		if strings.ReplaceAll(a, calm, "DST") != strings.ReplaceAll(b, busy, "DST") || a == "" {
			t.Errorf("%v differs between the undisturbed and the throttled run:\n%s\n---\n%s", show, a, b)
		}
	}
}

// TestProgressBytesPerStore: on a terminal, a migration's progress lines show the bytes each
// store read and wrote through the storage seam: a rescale from the S3 server to a local
// directory shows bytes read on S3, one from local to S3 bytes read locally and written on S3;
// in a pipe none of it shows.
func TestProgressBytesPerStore(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-progress")
	src, _ := filepath.Abs("../../testdata/savepoints/keyed-hashmap")
	srcURL := "s3://" + bucket + "/src"
	uploadDir(t, src, srcURL)
	defer func(f func(io.Writer) bool) { isTerminalWriter = f }(isTerminalWriter)
	for _, c := range []struct {
		from, to string
		want     *regexp.Regexp
	}{
		{srcURL, filepath.Join(t.TempDir(), "out"), regexp.MustCompile(`\[(local read [^;]*; )?s3 read [1-9][0-9.]* (bytes|KiB), wrote 0 bytes\]`)},
		{src, "s3://" + bucket + "/out", regexp.MustCompile(`\[local read [1-9][^,]*, wrote 0 bytes; s3 read [^,]*, wrote [1-9][0-9.]* (bytes|KiB)\]`)},
	} {
		for _, terminal := range []bool{true, false} {
			var out, errb bytes.Buffer
			isTerminalWriter = func(w io.Writer) bool { return terminal && w == &errb }
			dst := c.to
			if !terminal {
				dst += "-pipe"
			}
			if code := run([]string{"migrate", "rescale", c.from, dst, "--max-parallelism", "256"}, &out, &errb); code != exitOK {
				t.Fatalf("%s -> %s: exit %d: %s", c.from, dst, code, errb.String())
			}
			if got := c.want.MatchString(errb.String()); got != terminal {
				t.Errorf("%s -> %s (terminal %v): progress %q; want a match of %s: %v", c.from, dst, terminal, errb.String(), c.want, terminal)
			}
		}
	}
}

// TestPathMapAcrossStores: a real incremental RocksDB checkpoint (Flink names its shared files
// by absolute file: paths) copied to the S3 server with its shared directory moved to another
// prefix reads through --path-map OLD=s3://NEW (dump equal to the local checkpoint's, on every
// command that reads state: savepoint dump, migrate); without the rule the path is named in
// the error, and a rule that maps no path of _metadata is refused by name.
func TestPathMapAcrossStores(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "cli-path-map")
	job, _ := filepath.Abs("../../testdata/checkpoints/native-chain")
	chk := filepath.Join(job, "chk-8")
	spURL, sharedURL := "s3://"+bucket+"/moved/chk-8", "s3://"+bucket+"/elsewhere/shared"
	uploadDir(t, chk, spURL)
	uploadDir(t, filepath.Join(job, "shared"), sharedURL)
	sp, err := savepoint.Open(chk)
	if err != nil {
		t.Fatal(err)
	}
	old := ""
	for _, op := range sp.Metadata.Operators {
		for _, st := range op.Subtasks {
			if h, ok := st.ManagedKeyed.(*metadata.IncrementalHandle); ok && len(h.Shared) > 0 && old == "" {
				if fh, ok := h.Shared[0].Handle.(*metadata.FileHandle); ok {
					old = fh.Path[:strings.LastIndex(fh.Path, "/")]
				}
			}
		}
	}
	sp.Close()
	if !strings.HasPrefix(old, "file:/") || !strings.HasSuffix(old, "/shared") {
		t.Fatalf("no absolute shared-file path in %s (got %q)", chk, old)
	}
	_, want, _ := runCLI("savepoint", "dump", chk, "--operator", "uid:int-keyed")
	if want == "" {
		t.Fatal("empty dump of the local checkpoint")
	}
	rule := old + "=" + sharedURL
	code, got, errs := runCLI("savepoint", "dump", spURL, "--operator", "uid:int-keyed", "--path-map", rule)
	if code != exitOK || got != want {
		t.Errorf("dump with --path-map %s: exit %d, %s\nstdout differs from the local checkpoint's: %v", rule, code, errs, got != want)
	}
	code, _, errs = runCLI("savepoint", "dump", spURL, "--operator", "uid:int-keyed")
	if code == exitOK || !strings.Contains(errs, old+"/") {
		t.Errorf("dump without --path-map: exit %d, %s; want an error naming %s", code, errs, old)
	}
	bogus := "s3://nowhere/x=" + sharedURL
	code, _, errs = runCLI("savepoint", "dump", spURL, "--operator", "uid:int-keyed", "--path-map", rule, "--path-map", bogus)
	if code == exitOK || !strings.Contains(errs, "--path-map s3://nowhere/x="+sharedURL+": no absolute state-file path") {
		t.Errorf("dump with a rule that maps nothing: exit %d, %s", code, errs)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if code, out, errs := runCLI("migrate", "uid", spURL, dst, "--rename", "uid:int-keyed=uid:v2", "--path-map", rule); code != exitOK {
		t.Fatalf("migrate with --path-map: exit %d\n%s%s", code, out, errs)
	}
	if _, got, _ := runCLI("savepoint", "dump", dst, "--operator", "uid:v2"); got != want {
		t.Errorf("dump of the migrated checkpoint differs from the source's:\n%s\n---\n%s", got, want)
	}
}
