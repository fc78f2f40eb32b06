package storage

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/azuretest"
	"github.com/statecraft/statecraft/internal/emulator"
	"github.com/statecraft/statecraft/internal/gcstest"
)

// TestCloudChunked: on GCS and Azure an object larger than a chunk (block) is uploaded as a
// resumable upload (staged blocks) and arrives byte-identical, with its content MD5 as Info.ETag;
// a copy within the store is server-side (no bytes read through statecraft) and keeps the MD5.
// The chunk sizes are lowered so that small objects take these paths.
func TestCloudChunked(t *testing.T) {
	ss := stores(t)
	oldChunk, oldBlock := gcsChunk, azBlock
	gcsChunk, azBlock = 256<<10, 256<<10
	t.Cleanup(func() { gcsChunk, azBlock = oldChunk, oldBlock })
	data := pattern(1<<20 + 12345)
	sum := md5.Sum(data)
	for _, kind := range []string{"gs", "azblob"} {
		t.Run(kind, func(t *testing.T) {
			s := ss[kind]
			w, err := s.Create(t.Context(), "big")
			if err != nil {
				t.Fatal(err)
			}
			w.Write(data[:700<<10])
			if _, err := s.Stat(t.Context(), "big"); !errors.Is(err, ErrNotExist) {
				t.Errorf("before Commit, with chunks sent: Stat = %v, want not exist", err)
			}
			w.Write(data[700<<10:])
			if err := w.Commit(); err != nil {
				t.Fatal(err)
			}
			if got := get(t, s, "big"); md5.Sum(got) != sum {
				t.Fatal("chunked upload differs")
			}
			info, err := s.Stat(t.Context(), "big")
			if err != nil || info.ETag != hex.EncodeToString(sum[:]) || info.Size != int64(len(data)) {
				t.Errorf("Stat = %+v, %v; want size %d and the content MD5", info, err, len(data))
			}
			before := s.Stats().Read
			if server, err := s.Copy(t.Context(), "copy/big", s, "big"); err != nil || !server {
				t.Fatalf("copy: server %v, %v", server, err)
			}
			if s.Stats().Read != before {
				t.Errorf("a server-side copy read %d bytes through statecraft", s.Stats().Read-before)
			}
			if info, err := s.Stat(t.Context(), "copy/big"); err != nil || info.ETag != hex.EncodeToString(sum[:]) {
				t.Errorf("copy: Stat = %+v, %v; want the source's MD5", info, err)
			}
			aborted, _ := s.Create(t.Context(), "aborted")
			aborted.Write(data)
			aborted.Abort()
			if _, err := s.Stat(t.Context(), "aborted"); !errors.Is(err, ErrNotExist) {
				t.Errorf("after Abort: Stat = %v, want not exist", err)
			}
		})
	}
}

// TestCloudErrors: a missing bucket or container, wrong credentials and missing credentials give
// one error naming the operation, the bucket and key, and never the secret.
func TestCloudErrors(t *testing.T) {
	gcs := gcstest.Require(t)
	az := azuretest.Require(t)
	gcs.Bucket(t, "errors")
	az.Container(t, "errors")
	for _, c := range []struct {
		url, list, stat string
	}{
		{"gs://no-such-bucket/sp", "objects.list gs://no-such-bucket/sp/: 404 no such bucket", "objects.get gs://no-such-bucket/sp/_metadata"},
		{"azblob://no-such-container/sp", "List Blobs azblob://no-such-container/sp/: ContainerNotFound (404)", "Get Blob Properties azblob://no-such-container/sp/_metadata"},
		{"gs://errors/sp", "", "objects.get gs://errors/sp/_metadata: no such object"},
		{"azblob://errors/sp", "", "Get Blob Properties azblob://errors/sp/_metadata: no such object"},
	} {
		s, err := OpenURL(t.Context(), c.url)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.List(t.Context(), ""); (c.list == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.list)) {
			t.Errorf("%s: List = %v, want %q", c.url, err, c.list)
		}
		if _, err := s.Stat(t.Context(), "_metadata"); err == nil || !strings.Contains(err.Error(), c.stat) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: Stat = %v, want one line with %q", c.url, err, c.stat)
		}
	}

	t.Run("azure wrong key", func(t *testing.T) {
		wrong := "d3Jvbmcta2V5LXZhbHVlLW5vdC10aGUtcmVhbC1vbmU="
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", az.ConnectionString(wrong))
		s, err := OpenURL(t.Context(), "azblob://errors/sp")
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.List(t.Context(), "")
		if err == nil || !strings.Contains(err.Error(), "List Blobs azblob://errors/sp/: AuthorizationFailure (403)") {
			t.Errorf("List = %v", err)
		}
		w, _ := s.Create(t.Context(), "x")
		w.Write([]byte("x"))
		if err := w.Commit(); err == nil || !strings.Contains(err.Error(), "Put Blob azblob://errors/sp/x: AuthorizationFailure (403)") {
			t.Errorf("Commit = %v", err)
		}
		if err != nil && strings.Contains(err.Error(), wrong) {
			t.Errorf("the error shows the key: %v", err)
		}
	})
	t.Run("azure no account", func(t *testing.T) {
		t.Setenv("AZURE_STORAGE_CONNECTION_STRING", "")
		if _, err := OpenURL(t.Context(), "azblob://errors/sp"); err == nil || !strings.Contains(err.Error(), "azblob://errors/sp: no storage account: set AZURE_STORAGE_ACCOUNT") {
			t.Errorf("Open = %v", err)
		}
	})
	t.Run("gcs bad credentials file", func(t *testing.T) {
		t.Setenv("STORAGE_EMULATOR_HOST", "")
		t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", t.TempDir()+"/no-such-key.json")
		if _, err := OpenURL(t.Context(), "gs://errors/sp"); err == nil || !strings.Contains(err.Error(), "gs://errors/sp: find Google Application Default Credentials") ||
			!strings.Contains(err.Error(), "no-such-key.json") {
			t.Errorf("Open = %v", err)
		}
	})
}

// TestCloudThrottled: with every third request answered 503, GCS and Azure stores retry and
// keep their promises (an upload in chunks, a ranged read, a listing, a server-side copy).
func TestCloudThrottled(t *testing.T) {
	gcs := gcstest.Require(t)
	az := azuretest.Require(t)
	gcs.Bucket(t, "throttled")
	az.Container(t, "throttled")
	oldChunk, oldBlock := gcsChunk, azBlock
	gcsChunk, azBlock = 256<<10, 256<<10
	t.Cleanup(func() { gcsChunk, azBlock = oldChunk, oldBlock })
	data := pattern(600 << 10)
	for _, c := range []struct {
		url      string
		throttle func() *emulator.Throttler
	}{
		{"gs://throttled/sp", func() *emulator.Throttler {
			th := emulator.Throttle(t, gcs.URL, 3)
			t.Setenv("STORAGE_EMULATOR_HOST", strings.TrimPrefix(th.URL, "http://"))
			return th
		}},
		{"azblob://throttled/sp", func() *emulator.Throttler {
			th := emulator.Throttle(t, az.URL, 3)
			t.Setenv("AZURE_STORAGE_CONNECTION_STRING", strings.Replace(az.ConnectionString(azuretest.Key), az.URL, th.URL, 1))
			return th
		}},
	} {
		th := c.throttle()
		s, err := OpenURL(t.Context(), c.url)
		if err != nil {
			t.Fatal(err)
		}
		put(t, s, "state", data)
		if server, err := s.Copy(t.Context(), "copy", s, "state"); err != nil || !server {
			t.Fatalf("%s: copy: server %v, %v", c.url, server, err)
		}
		list, err := s.List(t.Context(), "")
		if err != nil || len(list) != 2 {
			t.Fatalf("%s: List = %v, %v", c.url, list, err)
		}
		for _, name := range []string{"state", "copy"} {
			if got := get(t, s, name); md5.Sum(got) != md5.Sum(data) {
				t.Errorf("%s: %s differs", c.url, name)
			}
		}
		if th.Refused() == 0 {
			t.Errorf("%s: the throttler refused no request", c.url)
		}
		t.Logf("%s: %d requests answered 503", c.url, th.Refused())
	}
}
