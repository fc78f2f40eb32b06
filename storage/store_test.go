package storage

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/azuretest"
	"github.com/statecraft/statecraft/internal/gcstest"
	"github.com/statecraft/statecraft/internal/s3test"
)

func TestMain(m *testing.M) {
	code := s3test.Main(m)
	gcstest.Stop()
	azuretest.Stop()
	os.Exit(code)
}

// stores returns a local store and an S3, a GCS and an Azure Blob store (on the test servers)
// over fresh, empty roots.
func stores(t *testing.T) map[string]Store {
	t.Helper()
	bucket := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	s3test.Require(t).Bucket(t, bucket)
	gcstest.Require(t).Bucket(t, bucket)
	azuretest.Require(t).Container(t, bucket)
	out := map[string]Store{}
	for name, url := range map[string]string{
		"local":  filepath.Join(t.TempDir(), "root"),
		"s3":     "s3://" + bucket + "/some/prefix",
		"gs":     "gs://" + bucket + "/some/prefix",
		"azblob": "azblob://" + bucket + "/some/prefix",
	} {
		s, err := OpenURL(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out[name] = s
	}
	return out
}

func put(t *testing.T, s Store, name string, data []byte) {
	t.Helper()
	w, err := s.Create(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s Store, name string) []byte {
	t.Helper()
	o, err := s.Open(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	b, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestStoreSemantics: both stores keep the seam's promises: nothing visible before Commit,
// nothing left by Abort, sorted recursive listing, ranged reads of exact bytes, copies (by link
// or server-side) byte-identical, removal idempotent, missing objects wrap ErrNotExist, names
// that leave the root refused.
func TestStoreSemantics(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			data := pattern(300 << 10)
			w, err := s.Create(ctx, "a/state-1")
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data[:1000])
			if _, err := s.Stat(ctx, "a/state-1"); !errors.Is(err, ErrNotExist) {
				t.Errorf("before Commit: Stat = %v, want not exist", err)
			}
			w.Write(data[1000:])
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after Commit = %v, want nil", err)
			}
			aborted, _ := s.Create(ctx, "a/aborted")
			aborted.Write([]byte("x"))
			aborted.Abort()
			put(t, s, "_metadata", []byte("meta"))

			list, err := s.List(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, i := range list {
				names = append(names, fmt.Sprintf("%s:%d", i.Name, i.Size))
			}
			if got, want := strings.Join(names, " "), "_metadata:4 a/state-1:307200"; got != want {
				t.Errorf("List = %s, want %s", got, want)
			}

			o, err := s.Open(ctx, "a/state-1")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range [][2]int{{0, 10}, {250000, 7000}, {100, 200000}, {307190, 10}} {
				buf := make([]byte, r[1])
				if n, err := o.ReadAt(buf, int64(r[0])); n != r[1] || (err != nil && err != io.EOF) || !bytes.Equal(buf, data[r[0]:r[0]+r[1]]) {
					t.Errorf("ReadAt(%d, %d) = %d, %v, bytes equal %v", r[0], r[1], n, err, bytes.Equal(buf, data[r[0]:r[0]+r[1]]))
				}
			}
			if n, err := o.ReadAt(make([]byte, 20), 307190); n != 10 || err != io.EOF {
				t.Errorf("ReadAt past the end = %d, %v; want 10, EOF", n, err)
			}
			o.Close()

			server, err := s.Copy(ctx, "b/copy", s, "a/state-1")
			if err != nil || !server {
				t.Errorf("Copy within the store = server %v, %v; want server-side", server, err)
			}
			if !bytes.Equal(get(t, s, "b/copy"), data) {
				t.Error("copy differs from its source")
			}

			if err := s.Remove(ctx, "b/copy"); err != nil {
				t.Fatal(err)
			}
			if err := s.Remove(ctx, "b/copy"); err != nil {
				t.Errorf("second Remove = %v, want nil", err)
			}
			if _, err := s.Open(ctx, "b/copy"); !errors.Is(err, ErrNotExist) || !strings.Contains(err.Error(), "b/copy") {
				t.Errorf("Open of a removed object = %v, want a not-exist error naming it", err)
			}
			for _, bad := range []string{"../x", "a/../../x", "/etc/passwd", "a//b", ""} {
				if _, err := s.Create(ctx, bad); err == nil {
					t.Errorf("Create(%q) accepted", bad)
				}
				if _, err := s.Open(ctx, bad); err == nil {
					t.Errorf("Open(%q) accepted", bad)
				}
			}
		})
	}
}

// TestCopyBetweenStores: a copy between different stores streams the bytes through and says so.
func TestCopyBetweenStores(t *testing.T) {
	ss := stores(t)
	data := pattern(70 << 10)
	put(t, ss["local"], "f", data)
	for _, c := range []struct{ from, to, name string }{{"local", "s3", "f"}, {"s3", "local", "back"},
		{"local", "gs", "f"}, {"gs", "azblob", "f"}, {"azblob", "s3", "g"}, {"azblob", "local", "a"}} {
		server, err := ss[c.to].Copy(t.Context(), c.name, ss[c.from], "f")
		if err != nil || server {
			t.Errorf("%s -> %s: server %v, %v; want a streamed copy", c.from, c.to, server, err)
		}
		if !bytes.Equal(get(t, ss[c.to], c.name), data) {
			t.Errorf("%s -> %s: copy differs", c.from, c.to)
		}
	}
}

// TestS3Multipart: an object larger than a part is uploaded in parts and an object over the
// CopyObject limit is copied with UploadPartCopy; both arrive byte-identical. The limits are
// lowered so that small objects take these paths.
func TestS3Multipart(t *testing.T) {
	s := stores(t)["s3"]
	oldPart, oldMax, oldCopyPart := partSize, maxCopyObject, copyPartSize
	partSize, maxCopyObject, copyPartSize = 5<<20, 6<<20, 5<<20
	t.Cleanup(func() { partSize, maxCopyObject, copyPartSize = oldPart, oldMax, oldCopyPart })

	data := pattern(12<<20 + 12345)
	etag, err := Upload(t.Context(), s, "big", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, "big"); sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("multipart upload differs")
	}
	info, err := s.Stat(t.Context(), "big")
	if err != nil {
		t.Fatal(err)
	}
	// A multipart object's ETag is MD5(MD5(part 1) || ... || MD5(part N)) "-N": proof the parts
	// path was taken, and what the writer checked its parts against.
	var cat []byte
	for off := 0; off < len(data); off += 5 << 20 {
		sum := md5.Sum(data[off:min(off+5<<20, len(data))])
		cat = append(cat, sum[:]...)
	}
	want := fmt.Sprintf("%x-3", md5.Sum(cat))
	if info.ETag != want || etag != want {
		t.Errorf("ETag %q (Upload said %q), want the 3-part composite %q", info.ETag, etag, want)
	}

	// A server whose completed object is not the parts sent (its ETag says so) fails the Commit,
	// and the object is removed.
	tampered := s3test.Require(t).Tamper(t, func(r *http.Request, body []byte) []byte {
		if r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
			return bytes.Replace(body, []byte(want[:8]), []byte("00000000"), 1)
		}
		return body
	})
	t.Setenv("AWS_ENDPOINT_URL_S3", tampered)
	ts, err := OpenURL(t.Context(), s.Location().String())
	if err != nil {
		t.Fatal(err)
	}
	defer ts.Close()
	_, err = Upload(t.Context(), ts, "lied", bytes.NewReader(data))
	if err == nil || !strings.Contains(err.Error(), "CompleteMultipartUpload "+s.Location().Join("lied").String()) ||
		!strings.Contains(err.Error(), "is not \""+want+"\", the composite of the MD5s of the 3 parts sent") {
		t.Errorf("upload through a server that lies about the ETag: %v", err)
	}
	if _, err := s.Stat(t.Context(), "lied"); !errors.Is(err, ErrNotExist) {
		t.Errorf("the object whose ETag did not match was left: %v", err)
	}
	before := s.Stats().Read
	if server, err := s.Copy(t.Context(), "big-copy", s, "big"); err != nil || !server {
		t.Fatalf("multipart copy: server %v, %v", server, err)
	}
	if s.Stats().Read != before {
		t.Errorf("a server-side copy read %d bytes through statecraft", s.Stats().Read-before)
	}
	if got := get(t, s, "big-copy"); sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatal("multipart copy differs")
	}
}

// TestS3Errors: wrong credentials and a missing bucket give one error naming the operation, the
// bucket and key, and never the secret.
func TestS3Errors(t *testing.T) {
	srv := s3test.Require(t)
	bucket := srv.Bucket(t, "errors")
	ok, err := OpenURL(t.Context(), "s3://"+bucket+"/sp")
	if err != nil {
		t.Fatal(err)
	}
	put(t, ok, "_metadata", []byte("m"))

	t.Run("missing bucket", func(t *testing.T) {
		s, _ := OpenURL(t.Context(), "s3://no-such-bucket/sp")
		_, err := s.Stat(t.Context(), "_metadata")
		if err == nil || !strings.Contains(err.Error(), "HeadObject s3://no-such-bucket/sp/_metadata") {
			t.Errorf("Stat = %v", err)
		}
		_, err = s.List(t.Context(), "")
		if err == nil || !strings.Contains(err.Error(), "ListObjectsV2 s3://no-such-bucket/sp/: NoSuchBucket") {
			t.Errorf("List = %v", err)
		}
	})
	t.Run("wrong credentials", func(t *testing.T) {
		t.Setenv("AWS_SECRET_ACCESS_KEY", "wrong-secret-value")
		s, _ := OpenURL(t.Context(), "s3://"+bucket+"/sp")
		_, err := s.List(t.Context(), "")
		if err == nil || !strings.Contains(err.Error(), "ListObjectsV2 s3://errors/sp/: SignatureDoesNotMatch") {
			t.Errorf("List = %v", err)
		}
		if err != nil && strings.Contains(err.Error(), "wrong-secret-value") {
			t.Errorf("the error shows the secret: %v", err)
		}
		w, _ := s.Create(t.Context(), "x")
		if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "PutObject s3://errors/sp/x: SignatureDoesNotMatch") {
			t.Errorf("Commit = %v", err)
		}
	})
}

// TestS3UploadFile: a local file up to singlePutMax goes up in one PutObject streamed from the
// file (its ETag is the file's MD5, no "-N" part count), even over the most the server takes in
// a request signed with its payload (the body is sent unsigned, its Content-MD5 signed); a larger
// one, or one the server refuses as too large for one PUT, takes the multipart Writer. All
// arrive byte-identical.
func TestS3UploadFile(t *testing.T) {
	s := stores(t)["s3"]
	oldPart, oldMax := partSize, singlePutMax
	partSize, singlePutMax = 5<<20, 6<<20
	t.Cleanup(func() { partSize, singlePutMax = oldPart, oldMax })
	for _, c := range []struct {
		name  string
		size  int
		parts int
		max   int64 // singlePutMax for the case (0: 6 MiB)
	}{
		{"small", 6 << 20, 0, 0},
		{"large", 6<<20 + 1, 2, 0},
		// Over what the server takes with a signed payload (s3test.MaxSignedRequest): a
		// signed PUT was refused with MaxMessageLengthExceeded.
		{"over-signed-limit", s3test.MaxSignedRequest + 1, 0, 64 << 20},
		// Over what the server takes in one PUT (s3test.MaxSinglePut): the refusal
		// (EntityTooLarge) sends the file through the multipart Writer instead of failing.
		{"over-server-limit", s3test.MaxSinglePut + 1, 5, 64 << 20},
	} {
		singlePutMax = 6 << 20
		if c.max > 0 {
			singlePutMax = c.max
		}
		data := pattern(c.size)
		file := filepath.Join(t.TempDir(), c.name)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		etag, err := Upload(t.Context(), s, c.name, f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := get(t, s, c.name); sha256.Sum256(got) != sha256.Sum256(data) {
			t.Fatalf("%s: the uploaded object differs from the file", c.name)
		}
		want := fmt.Sprintf("%x", md5.Sum(data))
		if c.parts > 0 {
			want = fmt.Sprintf("-%d", c.parts)
		}
		if !strings.HasSuffix(etag, want) || (c.parts == 0 && strings.Contains(etag, "-")) {
			t.Errorf("%s: ETag %q, want %s", c.name, etag, map[bool]string{true: "a composite ending in " + want, false: "the file's MD5 " + want}[c.parts > 0])
		}
	}
}

// TestS3UploadFileChecksum: putFile's PutObject carries the CRC32C of the file as it was read
// for the checksum; bytes that differ on the way (here the file is changed between the checksum
// pass and the PUT, same size) are refused by the server (BadDigest), and nothing is stored.
func TestS3UploadFileChecksum(t *testing.T) {
	s := stores(t)["s3"]
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, pattern(1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testHookPutFile = nil })
	testHookPutFile = func(f *os.File) {
		if _, err := f.WriteAt([]byte{0xff, 0x00, 0xff}, 1000); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = Upload(t.Context(), s, "damaged", f)
	if err == nil || !strings.Contains(err.Error(), "PutObject "+s.Location().Join("damaged").String()+": BadDigest") {
		t.Errorf("Upload of bytes other than the checksummed ones = %v, want BadDigest", err)
	}
	if _, err := s.Stat(t.Context(), "damaged"); !errors.Is(err, ErrNotExist) {
		t.Errorf("Stat after the refused upload = %v, want no such object", err)
	}
}

// TestS3SequentialReadStreams: an object read from start to end, as a rescale or a digest reads a
// state file, costs a handful of GETs: after the first small blocks, the rest comes from one GET
// left open from block to block (rangeReader.fetchSeq), not one GET per block. Two readers
// walking two regions in turn keep a GET each. The bytes are the object's.
func TestS3SequentialReadStreams(t *testing.T) {
	bucket := "sequential-streams"
	s3test.Require(t).Bucket(t, bucket)
	s, err := OpenURL(t.Context(), "s3://"+bucket+"/sp")
	if err != nil {
		t.Fatal(err)
	}
	data := pattern(24 << 20)
	if err := WriteFrom(t.Context(), s, "state", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		starts  []int64 // one reader from each, taking turns
		maxReqs int64
	}{
		// Open's HeadObject, 64 KiB and 128 KiB ranged, then one GET of the rest (ranged GETs
		// of up to 8 MiB blocks took 11 requests in all).
		{"one reader", []int64{0}, 4},
		{"two readers in turn", []int64{0, 12 << 20}, 7},
	} {
		o, err := s.Open(t.Context(), "state")
		if err != nil {
			t.Fatal(err)
		}
		before := s.Stats().Requests
		pos := append([]int64(nil), c.starts...)
		ends := append(append([]int64(nil), c.starts[1:]...), int64(len(data)))
		buf := make([]byte, 64<<10)
		for done := false; !done; {
			done = true
			for i := range pos {
				if pos[i] >= ends[i] {
					continue
				}
				done = false
				n := min(int64(len(buf)), ends[i]-pos[i])
				if _, err := o.ReadAt(buf[:n], pos[i]); err != nil {
					t.Fatalf("%s: ReadAt(%d): %v", c.name, pos[i], err)
				}
				if !bytes.Equal(buf[:n], data[pos[i]:pos[i]+n]) {
					t.Fatalf("%s: bytes at %d differ from the object's", c.name, pos[i])
				}
				pos[i] += n
			}
		}
		o.Close()
		if got := s.Stats().Requests - before; got > c.maxReqs {
			t.Errorf("%s: %d requests to read %d bytes, want at most %d", c.name, got, len(data), c.maxReqs)
		}
	}
}
