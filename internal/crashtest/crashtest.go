// Package crashtest holds helpers for statecraft's crash-safety and hostile-input tests: build
// the real binary once, run it and SIGKILL it at a chosen moment, and snapshot directory trees
// by content so a test can prove that nothing it did not expect changed.
package crashtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RepoRoot is the module root (the directory holding go.mod), found from this file's location
// so tests in any package can reach testdata/.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Build compiles ./cmd/statecraft into a temporary directory of t and returns the binary's
// path. Call it once per test: the go build cache makes a second build a link step only.
func Build(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "statecraft")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/statecraft")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/statecraft: %v\n%s", err, out)
	}
	return bin
}

// Tree maps every path under a root (relative, slash-separated) to a description of its content:
// "file <sha256> <mode>", "dir <mode>", "link -> <target>" or "special <mode>". Two equal Trees
// mean equal bytes, names, modes and symlinks.
type Tree map[string]string

// Snapshot describes the tree under root. A missing root is an empty Tree.
func Snapshot(t testing.TB, root string) Tree {
	t.Helper()
	tr := Tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && p == root {
				return fs.SkipAll
			}
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tr[rel] = "link -> " + target
		case info.IsDir():
			tr[rel] = fmt.Sprintf("dir %v", info.Mode().Perm())
		case !info.Mode().IsRegular():
			// Named pipes and devices are described, never opened (opening a pipe blocks).
			tr[rel] = fmt.Sprintf("special %v", info.Mode())
		default:
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			tr[rel] = fmt.Sprintf("file %s %v", hex.EncodeToString(h.Sum(nil)), info.Mode().Perm())
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %s: %v", root, err)
	}
	return tr
}

// Diff describes how got differs from want ("" when equal), at most a few lines.
func (want Tree) Diff(got Tree) string {
	var lines []string
	for _, k := range sortedKeys(want, got) {
		w, okW := want[k]
		g, okG := got[k]
		switch {
		case !okG:
			lines = append(lines, "missing "+k)
		case !okW:
			lines = append(lines, "new "+k+": "+g)
		case w != g:
			lines = append(lines, "changed "+k+": "+w+" -> "+g)
		}
		if len(lines) == 8 {
			lines = append(lines, "...")
			break
		}
	}
	return strings.Join(lines, "\n")
}

func sortedKeys(a, b Tree) []string {
	seen := map[string]bool{}
	var ks []string
	for _, m := range []Tree{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				ks = append(ks, k)
			}
		}
	}
	sort.Strings(ks)
	return ks
}

// CopyTree copies the regular files and directories under src to dst (created), keeping modes.
// Fixtures are copied before a test damages or migrates them, so testdata is never touched.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm()|0o700)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file", p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// Result is how a killed (or finished) run ended.
type Result struct {
	Killed   bool // SIGKILL arrived before the process exited by itself
	ExitCode int  // when not killed
	Stdout   string
	Stderr   string
	Elapsed  time.Duration
}

// RunKill starts bin with args and sends SIGKILL when trigger returns (nil trigger: never);
// trigger is called in its own goroutine with the start time and may poll the file system. It
// returns when the process has ended.
func RunKill(t testing.TB, bin string, args []string, trigger func(start time.Time, done <-chan struct{})) Result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	done := make(chan struct{})
	fin := make(chan struct{})
	go func() {
		defer close(fin)
		if trigger == nil {
			return
		}
		trigger(start, done)
		select {
		case <-done:
		default:
			// os.Process.Signal after Wait is a harmless "process already finished".
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}()
	err := cmd.Wait()
	close(done)
	<-fin
	r := Result{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
		r.Killed = true
	} else if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			r.ExitCode = ee.ExitCode()
		} else {
			t.Fatalf("wait %s: %v", bin, err)
		}
	}
	return r
}

// After is a trigger that fires d after the start.
func After(d time.Duration) func(time.Time, <-chan struct{}) {
	return func(start time.Time, done <-chan struct{}) {
		select {
		case <-time.After(time.Until(start.Add(d))):
		case <-done:
		}
	}
}

// WhenExists is a trigger that fires d after a path matching glob first exists (polled every
// 50µs), or when the process ends.
func WhenExists(glob string, d time.Duration) func(time.Time, <-chan struct{}) {
	return func(_ time.Time, done <-chan struct{}) {
		for {
			if m, _ := filepath.Glob(glob); len(m) > 0 {
				break
			}
			select {
			case <-done:
				return
			case <-time.After(50 * time.Microsecond):
			}
		}
		select {
		case <-time.After(d):
		case <-done:
		}
	}
}

// MountTmpfs mounts a tmpfs of size bytes on a new directory of t and unmounts it when t ends.
// It skips t (with the reason) where mounting is not permitted, e.g. when not root.
func MountTmpfs(t testing.TB, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		t.Skipf("cannot mount a tmpfs to fill up (%v: %s): the disk-full test needs root", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// FailAfter is an io.Writer that accepts n bytes and then fails every write, like a disk that
// fills up mid-file.
type FailAfter struct {
	N       int
	Written int
}

// ErrFull is what FailAfter returns once its budget is spent.
var ErrFull = fmt.Errorf("crashtest: device full (simulated)")

func (w *FailAfter) Write(p []byte) (int, error) {
	if w.Written+len(p) <= w.N {
		w.Written += len(p)
		return len(p), nil
	}
	k := w.N - w.Written
	w.Written = w.N
	return k, ErrFull
}
