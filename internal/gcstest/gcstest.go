// Package gcstest runs a real GCS emulator for tests: fake-gcs-server (Go module
// github.com/fsouza/fake-gcs-server, built by .ci/run into ~/.cache/statecraft/bin) on a free
// loopback port, in memory, speaking the JSON API that statecraft's gs:// store uses.
//
// One server serves a whole test binary: the first Require starts it, Stop (from TestMain) stops it after the
// tests ran. Outside make check a missing binary skips the test saying so; inside it
// (STATECRAFT_ORACLE=1) it fails.
package gcstest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/statecraft/statecraft/internal/emulator"
)

// Version is the fake-gcs-server release .ci/run installs.
const Version = "v1.56.1"

// Server is a running fake-gcs-server.
type Server struct {
	*emulator.Process
	bin, dir string
}

var (
	once   sync.Once
	shared *Server
	fail   error
)

// Binary finds fake-gcs-server: $STATECRAFT_FAKE_GCS_SERVER, ~/.cache/statecraft/bin, or PATH.
func Binary() (string, bool) {
	if p := os.Getenv("STATECRAFT_FAKE_GCS_SERVER"); p != "" {
		return p, true
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "statecraft", "bin", "fake-gcs-server")
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	p, err := exec.LookPath("fake-gcs-server")
	return p, err == nil
}

// Require returns the shared server, starting it on first use, and points statecraft's gs://
// store at it (STORAGE_EMULATOR_HOST).
func Require(t testing.TB) *Server {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		emulator.Missing(t, "fake-gcs-server", "install it with GOBIN=~/.cache/statecraft/bin go install github.com/fsouza/fake-gcs-server@"+Version+" (.ci/run does)")
	}
	once.Do(func() { shared, fail = Start(bin) })
	if fail != nil {
		t.Fatalf("gcstest: %v", fail)
	}
	os.Setenv("STORAGE_EMULATOR_HOST", shared.Host())
	return shared
}

// Own starts a server for t alone, keeping its objects in a directory so that they outlive a
// Kill and Restart (a test that kills it must not take the shared one down),
// points STORAGE_EMULATOR_HOST at it for the rest of t (requests tried at most twice, so that a
// dead server fails a run at once) and stops it when t ends.
func Own(t testing.TB) *Server {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		emulator.Missing(t, "fake-gcs-server", "install it with GOBIN=~/.cache/statecraft/bin go install github.com/fsouza/fake-gcs-server@"+Version+" (.ci/run does)")
	}
	s, err := start(bin, t.TempDir(), 0)
	if err != nil {
		t.Fatalf("gcstest: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	t.Setenv("STORAGE_EMULATOR_HOST", s.Host())
	t.Setenv("STATECRAFT_MAX_ATTEMPTS", "2")
	return s
}

// Stop stops the shared server, if one was started; call it from TestMain after m.Run.
func Stop() {
	if shared != nil {
		shared.Stop()
	}
}

// Start runs fake-gcs-server in memory on a free loopback port.
func Start(bin string) (*Server, error) { return start(bin, "", 0) }

// start runs fake-gcs-server on port (a free one if 0), in memory, or with its filesystem
// backend under dir.
func start(bin, dir string, port int) (*Server, error) {
	argv := func(port int) []string {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		backend := []string{"-backend", "memory"}
		if dir != "" {
			backend = []string{"-backend", "filesystem", "-filesystem-root", dir}
		}
		return append([]string{bin, "-scheme", "http", "-host", "127.0.0.1", "-port", strconv.Itoa(port),
			"-public-host", addr, "-external-url", "http://" + addr, "-log-level", "warn"}, backend...)
	}
	p, err := emulator.StartOn("fake-gcs-server", port, argv, "/storage/v1/b")
	if err != nil {
		return nil, err
	}
	return &Server{Process: p, bin: bin, dir: dir}, nil
}

// Restart starts a killed server of Own again on the same port and objects.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	n, err := start(s.bin, s.dir, s.Port)
	if err != nil {
		t.Fatalf("gcstest: restart: %v", err)
	}
	*s = *n
}

// Host is the server's host:port, the form STORAGE_EMULATOR_HOST takes.
func (s *Server) Host() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// Bucket makes a new empty bucket and returns its name.
func (s *Server) Bucket(t testing.TB, name string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"name": name})
	resp, err := http.Post(s.URL+"/storage/v1/b?project=statecraft-test", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("gcstest: create bucket %s: %v", name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("gcstest: create bucket %s: %s %s", name, resp.Status, b)
	}
	return name
}

// Objects lists the names of the objects under prefix in bucket, straight from the server.
func (s *Server) Objects(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/storage/v1/b/%s/o?prefix=%s", s.URL, bucket, prefix))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var page struct {
		Items []struct {
			Name string `json:"name"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range page.Items {
		out = append(out, it.Name)
	}
	return out
}
