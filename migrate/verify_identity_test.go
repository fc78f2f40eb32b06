package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// firstStateFile is a state file (not _metadata) of a staging directory.
func firstStateFile(t *testing.T, stage string) string {
	ents, _ := os.ReadDir(stage)
	for _, e := range ents {
		if e.Name() != "_metadata" && !e.IsDir() {
			return filepath.Join(stage, e.Name())
		}
	}
	t.Fatal("no state file in the staging directory")
	return ""
}

// TestUIDRunVerifiedByIdentity: a UID rename is verified by file identity and metadata, and
// each damage to the output (a linked file swapped for another of the same size, a copy
// changed in place, a key-group offset changed in _metadata, a file truncated) is caught and
// the output removed.
func TestUIDRunVerifiedByIdentity(t *testing.T) {
	steps := func() []Step {
		return []Step{&RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "counter-v2"}}}}
	}
	t.Run("clean", func(t *testing.T) {
		for _, link := range []LinkMode{LinkHard, LinkCopy} {
			_, rep := run(t, fixture(t, "keyed-hashmap"), Options{Link: link}, steps()...)
			files, ops := 0, 0
			for _, r := range rep.Verify {
				switch {
				case r.Kind == "file" && link == LinkHard && r.Proof == "same file (hard link)",
					r.Kind == "file" && link == LinkCopy && r.Proof == "same size and SHA-256 (copy)" && r.Expected == r.Actual && r.Actual.Hash != 0:
					files++
				case r.Kind == "metadata":
					ops++
				default:
					t.Errorf("link mode %d: unexpected row %+v", link, r)
				}
			}
			if files == 0 || ops == 0 {
				t.Errorf("link mode %d: %d file rows, %d operator rows; want both", link, files, ops)
			}
		}
	})
	cases := []struct {
		name   string
		link   LinkMode
		damage func(t *testing.T, stage string)
		want   string
	}{
		{"linked file replaced by one of the same size", LinkHard, func(t *testing.T, stage string) {
			p := firstStateFile(t, stage)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x01
			// A new file renamed over the link: another inode, same size.
			if err := os.WriteFile(p+".new", b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p+".new", p); err != nil {
				t.Fatal(err)
			}
		}, "SHA-256 differs"},
		{"copy changed in place", LinkCopy, func(t *testing.T, stage string) {
			p := firstStateFile(t, stage)
			b, _ := os.ReadFile(p)
			b[len(b)-3] ^= 0x80
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "SHA-256 differs"},
		{"copy truncated", LinkCopy, func(t *testing.T, stage string) {
			p := firstStateFile(t, stage)
			if err := os.Truncate(p, 10); err != nil {
				t.Fatal(err)
			}
		}, "truncated or replaced"}, // OpenStream checks the declared size first
		{"key-group offset changed in _metadata", LinkHard, func(t *testing.T, stage string) {
			p := filepath.Join(stage, "_metadata")
			b, _ := os.ReadFile(p)
			m, err := metadata.Decode(bytes.NewReader(b), p)
			if err != nil {
				t.Fatal(err)
			}
			changed := false
			for _, op := range m.Operators {
				for _, st := range op.Subtasks {
					if kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok && !changed && len(kh.Offsets) > 0 {
						kh.Offsets[len(kh.Offsets)-1]++
						changed = true
					}
				}
			}
			if !changed {
				t.Fatal("no key-groups handle to change")
			}
			var out bytes.Buffer
			if err := metadata.Encode(&out, m); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(p, out.Bytes(), 0o644)
		}, "differs from the source's in more than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			testHookBeforeVerify = func(stage string) { c.damage(t, stage) }
			defer func() { testHookBeforeVerify = nil }()
			_, err := Run(fixture(t, "keyed-hashmap"), filepath.Join(parent, "out"), steps(), Options{Link: c.link})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 0 {
				t.Errorf("a failed verification left %v", ents)
			}
		})
	}
}

// TestRewritingRunsKeepDigests: a run with a step that rewrites state is still verified by
// digests of every entry, even when a UID rename comes with it.
func TestRewritingRunsKeepDigests(t *testing.T) {
	_, rep := run(t, fixture(t, "keyed-hashmap"), Options{},
		&RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "counter-v2"}}}, &Rescale{MaxParallelism: 256})
	for _, r := range rep.Verify {
		if r.Proof != "" || r.Kind == "file" {
			t.Fatalf("row %+v: want entry digests only", r)
		}
	}
	if len(rep.Verify) == 0 {
		t.Fatal("no verification rows")
	}
}
