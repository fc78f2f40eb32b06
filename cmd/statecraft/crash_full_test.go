package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
	"github.com/statecraft/statecraft/internal/plangen"
)

// TestCrashDiskFull runs migrations whose DST lies on a tmpfs too small for the output, at
// sizes that run out at different files (state files, _metadata): each must exit 1 with an
// error that says the device is full, leave no DST and no staging directory, and leave the
// tmpfs usable for a run that fits.
func TestCrashDiskFull(t *testing.T) {
	fx := filepath.Join(crashtest.RepoRoot(), "testdata", "savepoints", "keyed-par3")
	if _, err := os.Stat(filepath.Join(fx, "_metadata")); err != nil {
		t.Skipf("fixture %s not present", fx)
	}
	src := filepath.Join(t.TempDir(), "src")
	crashtest.CopyTree(t, fx, src)
	srcTree := crashtest.Snapshot(t, src)
	for _, args := range [][]string{
		{"migrate", "rescale", "--max-parallelism", "256", "--parallelism", "2"},
		// A UID rename copies (hard links cannot cross file systems) the source's files.
		{"migrate", "uid", "--rename", "uid:int-keyed=uid:v2"},
	} {
		for _, size := range []int{4096, 8192, 12288} {
			mnt := crashtest.MountTmpfs(t, size)
			dst := filepath.Join(mnt, "out")
			var stdout, stderr bytes.Buffer
			code := run(append(append([]string{}, args...), src, dst), &stdout, &stderr)
			label := fmt.Sprintf("%s on a %d-byte tmpfs", args[1], size)
			if code != exitFailure {
				t.Fatalf("%s: exit %d, want 1\n%s%s", label, code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), "no space left on device") {
				t.Errorf("%s: error does not say the disk is full: %s", label, stderr.String())
			}
			ents, _ := os.ReadDir(mnt)
			for _, e := range ents {
				t.Errorf("%s: left %s behind after failing", label, e.Name())
			}
			if d := srcTree.Diff(crashtest.Snapshot(t, src)); d != "" {
				t.Fatalf("%s: the source changed:\n%s", label, d)
			}
		}
	}
	// The same run fits on a larger tmpfs: the failures above were the size, nothing else.
	mnt := crashtest.MountTmpfs(t, 1<<20)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"migrate", "rescale", src, filepath.Join(mnt, "out"), "--max-parallelism", "256"}, &stdout, &stderr); code != 0 {
		t.Fatalf("control run on 1 MiB: exit %d: %s", code, stderr.String())
	}
}

// TestCrashPlanTTLSetDiskFull writes an edited plan in place on a full tmpfs: exit 1 with the
// device-full error, and the plan still holds its old bytes.
func TestCrashPlanTTLSetDiskFull(t *testing.T) {
	old := plangen.Generate(plangen.Options{Nodes: 200, Seed: 3})
	mnt := crashtest.MountTmpfs(t, len(old)+len(old)/2)
	path := filepath.Join(mnt, "plan.json")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"plan", "ttl", "set", path, "--all", "--ttl", "3 d", "--force"}, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "no space left on device") {
		t.Fatalf("exit %d, want 1 with a device-full error: %s", code, stderr.String())
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, old) {
		t.Fatal("the plan changed although the write failed")
	}
	ents, _ := os.ReadDir(mnt)
	if len(ents) != 1 {
		t.Fatalf("%d entries on the tmpfs after the failed write, want only plan.json", len(ents))
	}
}
