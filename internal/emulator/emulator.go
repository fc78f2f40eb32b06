// Package emulator runs a storage server for tests (S3Proxy, fake-gcs-server, Azurite) as a
// child process on a free loopback port: started, polled until it answers HTTP, killed or
// stopped, its output kept for failure messages; and a throttling proxy in front of one. The
// packages s3test, gcstest and azuretest build their servers on it.
package emulator

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a running emulator.
type Process struct {
	Name string
	Port int
	URL  string // http://127.0.0.1:PORT

	cmd  *exec.Cmd
	log  *logBuf
	done chan struct{}
}

// Missing skips t, or fails it inside make check (STATECRAFT_ORACLE=1, where every tool the
// tests need is installed by .ci/run), saying which tool is absent and how to get it.
func Missing(t testing.TB, tool, install string) {
	t.Helper()
	msg := fmt.Sprintf("%s is not installed, so this test cannot run; %s", tool, install)
	if os.Getenv("STATECRAFT_ORACLE") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Start runs argv(port) on a free loopback port and returns when GET URL+probe answers (any
// status), or an error with the tail of the process's output if it exits first.
func Start(name string, argv func(port int) []string, probe string) (*Process, error) {
	return StartOn(name, 0, argv, probe)
}

// StartOn is Start on a given port (a restart on the port the clients know), or on a free one
// if port is 0.
func StartOn(name string, port int, argv func(port int) []string, probe string) (*Process, error) {
	if port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		port = p
	}
	args := argv(port)
	p := &Process{Name: name, Port: port, URL: fmt.Sprintf("http://127.0.0.1:%d", port), log: new(logBuf), done: make(chan struct{})}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	// The server dies with the test binary, even when the binary is killed.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	if err := p.waitReady(probe); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// waitReady polls until the server answers HTTP or exits. The bound only stops a hung server
// from holding the test binary forever; it is no timing assertion.
func (p *Process) waitReady(probe string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return fmt.Errorf("%s exited before answering: %v\n%s", p.Name, p.cmd.ProcessState, tail(p.log.String()))
		default:
		}
		resp, err := client.Get(p.URL + probe)
		if err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-p.done:
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New(p.Name + " did not answer within 3 minutes:\n" + tail(p.log.String()))
}

// Kill ends the server at once (SIGKILL), as a crash would, and waits for it to exit.
func (p *Process) Kill() {
	if p.cmd.Process != nil {
		p.cmd.Process.Kill()
		<-p.done
	}
}

// Stop ends the server (SIGTERM, SIGKILL if it lingers) and waits for it to exit.
func (p *Process) Stop() {
	select {
	case <-p.done:
		return
	default:
	}
	if p.cmd.Process != nil {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// Log returns the tail of the server's output, for failure messages.
func (p *Process) Log() string { return tail(p.log.String()) }

// FreePort returns a loopback port that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func tail(s string) string {
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

// logBuf collects the server's output; the exec package writes it from its own goroutine.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Throttler is a loopback HTTP proxy in front of a server that answers every nth request with
// 503 Service Unavailable, as a store under load does, and passes the others through unchanged
// (the Host header too).
type Throttler struct {
	URL string

	mu       sync.Mutex
	n, every int
	refused  int
}

// Throttle starts a Throttler for target refusing every nth request with a plain 503; it stops
// when t ends.
func Throttle(t testing.TB, target string, every int) *Throttler {
	t.Helper()
	return ThrottleWith(t, target, every, func(w http.ResponseWriter) {
		http.Error(w, "slow down", http.StatusServiceUnavailable)
	})
}

// ThrottleWith is Throttle answering each refused request with refuse (a store's own error
// body, e.g. S3's SlowDown XML).
func ThrottleWith(t testing.TB, target string, every int, refuse func(w http.ResponseWriter)) *Throttler {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}}
	th := &Throttler{URL: "http://" + l.Addr().String(), every: every}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		th.mu.Lock()
		th.n++
		refused := th.n%th.every == 0
		if refused {
			th.refused++
		}
		th.mu.Unlock()
		if refused {
			io.Copy(io.Discard, r.Body)
			refuse(w)
			return
		}
		proxy.ServeHTTP(w, r)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return th
}

// Refused returns how many requests were answered with 503.
func (th *Throttler) Refused() int {
	th.mu.Lock()
	defer th.mu.Unlock()
	return th.refused
}
