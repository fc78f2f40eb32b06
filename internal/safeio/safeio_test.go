package safeio

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(p, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new" {
		t.Fatalf("content = %q, %v; want new", got, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o640 {
		t.Fatalf("mode = %v, want 0640 kept", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Fatalf("directory has %d entries, want only the target (no temporary leftovers)", len(ents))
	}
}

func TestWriteFileNewFileUsesPerm(t *testing.T) {
	p := filepath.Join(t.TempDir(), "out.json")
	if err := WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestWriteFileRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFile(dir, []byte("x"), 0o600); err == nil {
		t.Fatal("writing over a directory succeeded; want an error")
	}
}

func TestIsTemp(t *testing.T) {
	if !IsTemp(TempPrefix+"x") || IsTemp("plan.json") {
		t.Fatal("IsTemp does not recognise its own prefix")
	}
}

// TestWriteFileThroughSymlink: writing to a link (relative, absolute, chained or dangling)
// replaces the file it points to, keeps that file's mode and leaves the link a link.
func TestWriteFileThroughSymlink(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string) (link, real string)
		mode  os.FileMode // of the target afterwards
	}{
		{"relative link into another directory", func(t *testing.T, dir string) (string, string) {
			mustMkdir(t, filepath.Join(dir, "plans"))
			real := filepath.Join(dir, "plans", "real.json")
			mustWrite(t, real, 0o640)
			link := filepath.Join(dir, "link.json")
			mustSymlink(t, filepath.Join("plans", "real.json"), link)
			return link, real
		}, 0o640},
		{"absolute link", func(t *testing.T, dir string) (string, string) {
			real := filepath.Join(dir, "real.json")
			mustWrite(t, real, 0o640)
			link := filepath.Join(dir, "link.json")
			mustSymlink(t, real, link)
			return link, real
		}, 0o640},
		{"chain of two links", func(t *testing.T, dir string) (string, string) {
			real := filepath.Join(dir, "real.json")
			mustWrite(t, real, 0o640)
			mustSymlink(t, "real.json", filepath.Join(dir, "mid.json"))
			link := filepath.Join(dir, "link.json")
			mustSymlink(t, "mid.json", link)
			return link, real
		}, 0o640},
		{"dangling link creates its target", func(t *testing.T, dir string) (string, string) {
			link := filepath.Join(dir, "link.json")
			mustSymlink(t, "new.json", link)
			return link, filepath.Join(dir, "new.json")
		}, 0o600},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			link, real := c.setup(t, dir)
			if err := WriteFile(link, []byte("new"), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(real)
			if err != nil || string(got) != "new" {
				t.Fatalf("target content = %q, %v; want new", got, err)
			}
			fi, err := os.Lstat(link)
			if err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Fatalf("%s is no longer a symbolic link (%v, %v)", link, fi.Mode(), err)
			}
			if st, _ := os.Stat(real); st.Mode().Perm() != c.mode {
				t.Fatalf("mode = %v, want %v", st.Mode().Perm(), c.mode)
			}
		})
	}
}

func TestWriteFileSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	mustSymlink(t, "b", a)
	mustSymlink(t, "a", b)
	if err := WriteFile(a, []byte("x"), 0o600); err == nil {
		t.Fatal("writing through a symbolic-link loop succeeded")
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, path string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("old"), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
