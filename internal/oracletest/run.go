package oracletest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// ServerEnv names a directory where `make oracle-check` runs long-lived oracle JVMs
// (testdata/oracle/run.sh serve DIR/flink-VERSION.N.sock, N = 1, 2, ...). With it, Run sends each
// command to an idle one of them instead of starting a JVM: the suite then pays for Java, Flink's
// class loading and the JIT once per server, not once per judge. A server runs one command at a
// time, so Run claims one with an exclusive lock on DIR/flink-VERSION.N.lock, waiting when all
// are busy. Without ServerEnv (or without a server for the version), Run starts run.sh.
const ServerEnv = "STATECRAFT_ORACLE_SERVER"

// DefaultVersion is the Flink version run.sh uses when FLINK_VERSION is not set.
const DefaultVersion = "2.3.0"

// ExitError is the error of an oracle command that ran and exited non-zero.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("oracle exited with status %d", e.Code) }

// ExitCode is the exit status of an oracle command that ran and failed (an *ExitError in err's
// chain), or -1 for any other error.
func ExitCode(err error) int {
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return -1
}

// Run runs one oracle command (testdata/oracle/run.sh COMMAND ARGS...) with Flink's default
// version and returns its combined output; err is an *ExitError when the command exited non-zero.
// Paths in args must be absolute: a served JVM's working directory is not the test's.
func Run(t testing.TB, args ...string) ([]byte, error) {
	t.Helper()
	return RunVersion(t, "", args...)
}

// RunVersion is Run with Flink version (for example "1.20.0"; "" for the default).
func RunVersion(t testing.TB, version string, args ...string) ([]byte, error) {
	t.Helper()
	var combined bytes.Buffer
	err := run(t, version, args, &combined, &combined)
	return combined.Bytes(), err
}

// Exec is RunVersion with standard output and standard error kept apart.
func Exec(t testing.TB, version string, args ...string) (stdout, stderr []byte, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(t, version, args, &o, &e)
	return o.Bytes(), e.Bytes(), err
}

func run(t testing.TB, version string, args []string, stdout, stderr io.Writer) error {
	t.Helper()
	if len(args) == 0 {
		t.Fatal("oracletest.Run: no command")
	}
	for _, a := range args[1:] {
		if looksRelative(a) {
			t.Fatalf("oracletest.Run %s: path %q is relative; pass an absolute path", args[0], a)
		}
	}
	if version == "" {
		version = os.Getenv("FLINK_VERSION")
	}
	if version == "" {
		version = DefaultVersion
	}
	if dir := os.Getenv(ServerEnv); dir != "" {
		socks, _ := filepath.Glob(filepath.Join(dir, "flink-"+version+".*.sock"))
		if len(socks) > 0 {
			sock, release, err := claim(socks)
			if err != nil {
				return err
			}
			defer release()
			return serve(sock, args, stdout, stderr)
		}
		t.Logf("oracletest: no oracle server for Flink %s in %s; starting run.sh", version, dir)
	}
	cmd := exec.Command(Script(t), args...)
	cmd.Env = append(os.Environ(), "FLINK_VERSION="+version)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() >= 0 {
		return &ExitError{Code: ee.ExitCode()}
	}
	return err
}

// claim locks an idle server of socks (by an flock on its .lock file beside it), waiting for the
// first to become idle when all are busy; release unlocks it. The locks are shared by every test
// process of the run, and the kernel frees them if a process dies.
func claim(socks []string) (sock string, release func(), err error) {
	files := make([]*os.File, len(socks))
	for i, s := range socks {
		f, err := os.OpenFile(strings.TrimSuffix(s, ".sock")+".lock", os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			for _, f := range files[:i] {
				f.Close()
			}
			return "", nil, fmt.Errorf("oracle server lock: %w", err)
		}
		files[i] = f
	}
	unlock := func(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }
	for i, f := range files {
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			for j, g := range files {
				if j != i {
					g.Close()
				}
			}
			return socks[i], func() { unlock(f) }, nil
		}
	}
	// All busy: wait for every lock at once. The first granted is ours; the waits still pending
	// are granted later, as their servers finish, and each is handed straight back.
	type grant struct {
		i   int
		err error
	}
	granted := make(chan grant, len(files))
	for i, f := range files {
		go func() { granted <- grant{i, syscall.Flock(int(f.Fd()), syscall.LOCK_EX)} }()
	}
	var lastErr error
	for pending := len(files); pending > 0; {
		g := <-granted
		pending--
		if g.err != nil {
			files[g.i].Close()
			lastErr = g.err
			continue
		}
		go func() {
			for ; pending > 0; pending-- {
				if h := <-granted; h.err == nil {
					unlock(files[h.i])
				} else {
					files[h.i].Close()
				}
			}
		}()
		f := files[g.i]
		return socks[g.i], func() { unlock(f) }, nil
	}
	return "", nil, fmt.Errorf("oracle server lock: %w", lastErr)
}

// serve sends one command to the oracle server at sock and copies its output frames (see
// testdata/oracle/src/main/java/dev/statecraft/oracle/Serve.java):
//
//	request   u32 argc, argc × (u32 length, UTF-8 bytes)      big-endian
//	response  'o' u32 n, n bytes   standard output
//	          'e' u32 n, n bytes   standard error
//	          'x' u32 code         exit status, the last frame
func serve(sock string, args []string, stdout, stderr io.Writer) error {
	conn, err := net.Dial("unix", sock)
	if err != nil {
		return fmt.Errorf("oracle server %s: %w", sock, err)
	}
	defer conn.Close()
	var req bytes.Buffer
	binary.Write(&req, binary.BigEndian, uint32(len(args)))
	for _, a := range args {
		binary.Write(&req, binary.BigEndian, uint32(len(a)))
		req.WriteString(a)
	}
	if _, err := conn.Write(req.Bytes()); err != nil {
		return fmt.Errorf("oracle server %s: send %s: %w", sock, args[0], err)
	}
	var hdr [5]byte
	for {
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return fmt.Errorf("oracle server %s: %s: connection ended before its exit status: %w", sock, args[0], err)
		}
		n := binary.BigEndian.Uint32(hdr[1:])
		var w io.Writer
		switch hdr[0] {
		case 'x':
			if n != 0 {
				return &ExitError{Code: int(n)}
			}
			return nil
		case 'o':
			w = stdout
		case 'e':
			w = stderr
		default:
			return fmt.Errorf("oracle server %s: %s: unknown frame %q", sock, args[0], hdr[0])
		}
		if _, err := io.CopyN(w, conn, int64(n)); err != nil {
			return fmt.Errorf("oracle server %s: %s: %w", sock, args[0], err)
		}
	}
}

// looksRelative reports whether a names an existing file or directory by a relative path.
func looksRelative(a string) bool {
	if a == "" || filepath.IsAbs(a) {
		return false
	}
	_, err := os.Stat(a)
	return err == nil
}

// Abs is filepath.Abs for test arguments: the oracle needs absolute paths.
func Abs(t testing.TB, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
