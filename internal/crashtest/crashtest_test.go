package crashtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestSnapshotSeesEveryChange: the sentinel checks of the crash and hostile tests are only as
// good as Snapshot, so each kind of change must show in Diff.
func TestSnapshotSeesEveryChange(t *testing.T) {
	changes := []struct {
		name string
		do   func(dir string) error
		want string
	}{
		{"content", func(d string) error { return os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644) }, "changed f"},
		{"mode", func(d string) error { return os.Chmod(filepath.Join(d, "f"), 0o600) }, "changed f"},
		{"new file", func(d string) error { return os.WriteFile(filepath.Join(d, "g"), nil, 0o644) }, "new g"},
		{"removed", func(d string) error { return os.Remove(filepath.Join(d, "f")) }, "missing f"},
		{"symlink target", func(d string) error {
			os.Remove(filepath.Join(d, "l"))
			return os.Symlink("elsewhere", filepath.Join(d, "l"))
		}, "changed l"},
		{"named pipe", func(d string) error { return syscall.Mkfifo(filepath.Join(d, "p"), 0o644) }, "new p: special"},
		{"new directory", func(d string) error { return os.Mkdir(filepath.Join(d, "sub"), 0o755) }, "new sub"},
	}
	for _, c := range changes {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "f"), []byte("original"), 0o644)
		os.Symlink("f", filepath.Join(dir, "l"))
		before := Snapshot(t, dir)
		if d := before.Diff(Snapshot(t, dir)); d != "" {
			t.Fatalf("%s: an unchanged tree differs: %s", c.name, d)
		}
		if err := c.do(dir); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d := before.Diff(Snapshot(t, dir)); !strings.Contains(d, c.want) {
			t.Errorf("%s: Diff = %q, want %q", c.name, d, c.want)
		}
	}
	if len(Snapshot(t, filepath.Join(t.TempDir(), "absent"))) != 0 {
		t.Error("a missing root is not an empty tree")
	}
}

func TestFailAfter(t *testing.T) {
	w := &FailAfter{N: 5}
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("first write: %d, %v", n, err)
	}
	if n, err := w.Write([]byte("defg")); n != 2 || !errors.Is(err, ErrFull) {
		t.Fatalf("write past the budget: %d, %v", n, err)
	}
	if n, err := w.Write([]byte("h")); n != 0 || !errors.Is(err, ErrFull) {
		t.Fatalf("write after full: %d, %v", n, err)
	}
}
