package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
)

// TestHostileDestination points migrate's DST at places that lead elsewhere through symbolic
// links. The source savepoint and a sentinel directory must stay as they were in every case;
// a DST that resolves into the source is refused.
func TestHostileDestination(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(t *testing.T, work, sp string) string // returns DST
		refuse string                                     // "" when the run may succeed
	}{
		{"DST is a symlink to an empty sentinel directory", func(t *testing.T, work, sp string) string {
			setupOK(t, os.Mkdir(filepath.Join(work, "sentinel", "empty"), 0o755))
			setupOK(t, os.Symlink(filepath.Join(work, "sentinel", "empty"), filepath.Join(work, "dst")))
			return filepath.Join(work, "dst")
		}, ""},
		{"DST is a dangling symlink into the sentinel", func(t *testing.T, work, sp string) string {
			setupOK(t, os.Symlink(filepath.Join(work, "sentinel", "nothing-here"), filepath.Join(work, "dst")))
			return filepath.Join(work, "dst")
		}, "not a directory"},
		{"DST's parent is a symlink to the source", func(t *testing.T, work, sp string) string {
			setupOK(t, os.Symlink(sp, filepath.Join(work, "link")))
			return filepath.Join(work, "link", "out")
		}, "inside the source savepoint"},
		{"DST is the source through a symlink", func(t *testing.T, work, sp string) string {
			setupOK(t, os.Symlink(sp, filepath.Join(work, "link")))
			return filepath.Join(work, "link")
		}, "is not empty"},
		{"DST is the source's _metadata", func(t *testing.T, work, sp string) string {
			return filepath.Join(sp, "_metadata")
		}, "inside the source savepoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			sp, _ := hostileSetup(t, "keyed-hashmap", work)
			setupOK(t, os.Mkdir(filepath.Join(work, "sentinel"), 0o755))
			setupOK(t, os.WriteFile(filepath.Join(work, "sentinel", "keep"), []byte("sentinel"), 0o644))
			dst := c.setup(t, work, sp)
			spTree := crashtest.Snapshot(t, sp)
			sentinel := crashtest.Snapshot(t, filepath.Join(work, "sentinel"))
			var stdout, stderr bytes.Buffer
			code := run([]string{"migrate", "rescale", sp, dst, "--max-parallelism", "256"}, &stdout, &stderr)
			if d := spTree.Diff(crashtest.Snapshot(t, sp)); d != "" {
				t.Errorf("the source changed (exit %d):\n%s", code, d)
			}
			if d := sentinel.Diff(crashtest.Snapshot(t, filepath.Join(work, "sentinel"))); d != "" {
				t.Errorf("the sentinel directory changed (exit %d):\n%s", code, d)
			}
			if c.refuse != "" {
				if code != exitFailure || !strings.Contains(stderr.String(), c.refuse) {
					t.Errorf("exit %d, want 1 naming %q: %s", code, c.refuse, stderr.String())
				}
			} else if code != exitOK {
				t.Errorf("exit %d: %s", code, stderr.String())
			}
			ents, _ := os.ReadDir(work)
			for _, e := range ents {
				if strings.Contains(e.Name(), ".statecraft-tmp-") {
					t.Errorf("staging directory %s left behind", e.Name())
				}
			}
		})
	}
}

// setupOK stops the test when building its hostile layout failed: a symlink not made would leave
// an ordinary DST, and the case would pass without testing anything.
func setupOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
}
