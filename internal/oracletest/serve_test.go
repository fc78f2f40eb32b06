package oracletest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestOracleServe starts the oracle server (run.sh serve) as `make oracle-check` does and sends it
// commands through Run: the output and exit status must be those of the one-shot run.sh, output
// of concurrent requests must not mix, and the server must stop with its parent's death.
func TestOracleServe(t *testing.T) {
	Require(t, "to start the oracle server (Java 17, Maven, Flink)")
	dir := t.TempDir()
	sock := filepath.Join(dir, "flink-"+DefaultVersion+".1.sock")
	// The server's parent is a process of the test's own, killed at the end: the server must
	// then stop by itself.
	parent := exec.Command("sleep", "3600")
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { parent.Process.Kill(); parent.Wait() })
	srv := exec.Command(Script(t), "serve", sock, strconv.Itoa(parent.Process.Pid))
	srv.Env = append(os.Environ(), "FLINK_VERSION="+DefaultVersion)
	log, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stdout, srv.Stderr = log, log
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	t.Cleanup(func() {
		srv.Process.Kill()
		<-exited
	})
	// Readiness: the socket appears (renamed into place) once the server listens. Polled, with
	// the server's death as the only failure: the first start compiles the oracle.
	for {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		select {
		case err := <-exited:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("oracle server exited before listening (%v):\n%s", err, b)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Setenv(ServerEnv, dir)

	out, err := Run(t, "version")
	if err != nil || strings.TrimSpace(string(out)) != DefaultVersion {
		t.Fatalf("version through the server: %q, %v; want %q", out, err, DefaultVersion)
	}
	stdout, stderr, err := Exec(t, "", "no-such-command")
	if ExitCode(err) != 2 || len(stdout) != 0 || !strings.Contains(string(stderr), "unknown oracle command: no-such-command") {
		t.Fatalf("unknown command through the server: stdout %q, stderr %q, err %v; want exit 2 and the message on stderr", stdout, stderr, err)
	}

	// Concurrent requests (served one after the other) each get their own output, whole.
	var wg sync.WaitGroup
	errs := make([]string, 6)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := "no-such-command-" + strconv.Itoa(i)
			_, stderr, err := Exec(t, "", name)
			got := strings.TrimSpace(string(stderr))
			if ExitCode(err) != 2 || !strings.HasPrefix(got, "unknown oracle command: "+name+";") || strings.Count(got, "unknown oracle command") != 1 {
				errs[i] = got
			}
		}()
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("request %d got another request's output or none: %q", i, e)
		}
	}

	// No JVM is left behind when whoever started the server dies without stopping it.
	parent.Process.Kill()
	parent.Wait()
	<-exited
	exited <- nil // for the cleanup
	if _, err := os.Stat(sock); err == nil {
		t.Errorf("%s still exists after the server stopped", sock)
	}
}
