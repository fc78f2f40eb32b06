// Package azuretest runs a real Azure Blob emulator for tests: Azurite's blob service (npm
// package azurite, installed by .ci/run into ~/.cache/statecraft/azurite) on a free loopback
// port, in memory (or, for a test that kills it, on disk), with SharedKey authentication for its well-known development account.
//
// One server serves a whole test binary: the first Require starts it, Stop (from TestMain) stops it after the
// tests ran. Outside make check a missing Azurite skips the test saying so; inside it
// (STATECRAFT_ORACLE=1) it fails.
package azuretest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/statecraft/statecraft/internal/emulator"
)

// Version is the Azurite release .ci/run installs.
const Version = "3.37.0"

// Azurite's well-known development account (published in its documentation; no secret).
const (
	Account = "devstoreaccount1"
	Key     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

const install = "install it with npm install --prefix ~/.cache/statecraft/azurite azurite@" + Version + " (.ci/run does)"

// Server is a running Azurite blob service.
type Server struct {
	*emulator.Process
	bin, dir string
}

var (
	once   sync.Once
	shared *Server
	fail   error
)

// Binary finds azurite-blob: $STATECRAFT_AZURITE_BLOB, ~/.cache/statecraft/azurite, or PATH.
func Binary() (string, bool) {
	if p := os.Getenv("STATECRAFT_AZURITE_BLOB"); p != "" {
		return p, true
	}
	if home, err := os.UserHomeDir(); err == nil {
		p := filepath.Join(home, ".cache", "statecraft", "azurite", "node_modules", ".bin", "azurite-blob")
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	p, err := exec.LookPath("azurite-blob")
	return p, err == nil
}

// Require returns the shared server, starting it on first use, and points statecraft's
// azblob:// store at it (AZURE_STORAGE_CONNECTION_STRING).
func Require(t testing.TB) *Server {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		emulator.Missing(t, "Azurite", install)
	}
	once.Do(func() { shared, fail = Start(bin) })
	if fail != nil {
		t.Fatalf("azuretest: %v", fail)
	}
	for k, v := range shared.Env() {
		os.Setenv(k, v)
	}
	return shared
}

// Own starts a server for t alone (a test that kills it must not take the shared one down),
// keeping its blobs and its metadata database in a directory so that they outlive a Kill and
// Restart, points the environment at it for the rest of t (requests tried at most twice, so that
// a dead server fails a run at once) and stops it when t ends. Azurite writes its metadata
// database every 5 s and when it stops, so a Kill loses what came after the last save: Persist
// first makes everything written so far survive one.
func Own(t testing.TB) *Server {
	t.Helper()
	bin, ok := Binary()
	if !ok {
		emulator.Missing(t, "Azurite", install)
	}
	s, err := start(bin, t.TempDir(), 0)
	if err != nil {
		t.Fatalf("azuretest: %v", err)
	}
	t.Cleanup(func() { s.Stop() })
	for k, v := range s.Env() {
		t.Setenv(k, v)
	}
	t.Setenv("STATECRAFT_MAX_ATTEMPTS", "2")
	return s
}

// Restart starts a stopped or killed server of Own again on the same port and directory.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	n, err := start(s.bin, s.dir, s.Port)
	if err != nil {
		t.Fatalf("azuretest: restart: %v", err)
	}
	*s = *n
}

// Persist stops a server of Own (Azurite saves its metadata database when it stops) and starts
// it again, so that every object written so far outlives a later Kill.
func (s *Server) Persist(t testing.TB) {
	t.Helper()
	s.Stop()
	s.Restart(t)
}

// Stop stops the shared server, if one was started; call it from TestMain after m.Run.
func Stop() {
	if shared != nil {
		shared.Stop()
	}
}

// Start runs Azurite's blob service in memory on a free loopback port.
func Start(bin string) (*Server, error) { return start(bin, "", 0) }

// start runs Azurite's blob service on port (a free one if 0), in memory, or with its blobs and
// metadata database under dir.
func start(bin, dir string, port int) (*Server, error) {
	argv := func(port int) []string {
		store := []string{"--inMemoryPersistence"}
		if dir != "" {
			store = []string{"--location", dir}
		}
		return append([]string{bin, "--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(port),
			"--silent", "--skipApiVersionCheck", "--disableTelemetry"}, store...)
	}
	p, err := emulator.StartOn("Azurite", port, argv, "/")
	if err != nil {
		return nil, err
	}
	return &Server{Process: p, bin: bin, dir: dir}, nil
}

// ConnectionString is the connection string of the development account on this server,
// with key as its account key (Key, or a wrong one to test refusals).
func (s *Server) ConnectionString(key string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + Account + ";AccountKey=" + key +
		";BlobEndpoint=" + s.URL + "/" + Account + ";"
}

// Env is the environment that points statecraft at the server.
func (s *Server) Env() map[string]string {
	return map[string]string{
		"AZURE_STORAGE_CONNECTION_STRING": s.ConnectionString(Key),
		"AZURE_STORAGE_ACCOUNT":           "",
		"AZURE_STORAGE_KEY":               "",
	}
}

// Container makes a new empty container and returns its name.
func (s *Server) Container(t testing.TB, name string) string {
	t.Helper()
	c, err := azblob.NewClientFromConnectionString(s.ConnectionString(Key), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateContainer(context.Background(), name, nil); err != nil {
		t.Fatalf("azuretest: create container %s: %v", name, err)
	}
	return name
}
