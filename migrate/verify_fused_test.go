package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/uid"
)

// TestRescaleVerificationIsReal runs a verified rescale by each of its paths: the split path,
// which sums the source's entries as it reads them instead of in a read of their own, the
// per-subtask and spill paths, which sum the source first. For each, the expected side of the
// verification must be exactly the source's digest taken on its own (DigestOf), and an output
// damaged before verification (one value byte flipped: a wrong entry in a well-formed file; or
// a file cut short) must be refused, with nothing left behind.
func TestRescaleVerificationIsReal(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	want, err := DigestOf(open(t, src))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		step      *Rescale
		asRead    bool // the split path sums the source as it reads it
		spillOnly bool
	}{
		{"split path 128 -> 256", &Rescale{MaxParallelism: 256}, true, false},
		{"per-subtask path 128 -> 256, parallelism 3", &Rescale{MaxParallelism: 256, Parallelism: 3}, false, false},
		{"per-subtask path 128 -> 64", &Rescale{MaxParallelism: 64}, false, false},
		{"spill path 128 -> 200", &Rescale{MaxParallelism: 200}, false, false},
		{"spill path forced 128 -> 256", &Rescale{MaxParallelism: 256}, false, true},
	}
	damages := []struct {
		name, want string
		damage     func(b []byte) []byte
	}{
		{"wrong value byte", "checksum differs", func(b []byte) []byte { b[len(b)-3] ^= 0x01; return b }},
		{"file cut short", "verify", func(b []byte) []byte { return b[:len(b)-40] }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spillOnly = c.spillOnly
			defer func() { spillOnly = false }()
			before := summedAsRead.Load()
			_, rep := run(t, src, Options{}, c.step)
			if got := summedAsRead.Load() > before; got != c.asRead {
				t.Errorf("source summed as read: %v, want %v", got, c.asRead)
			}
			rows := 0
			for _, r := range rep.Verify {
				if r.Kind != "keyed" {
					continue
				}
				rows++
				var w *Sum
				for _, od := range want {
					if od.Label == r.Operator {
						w = od.Keyed[r.State]
					}
				}
				if w == nil || r.Expected != *w || r.Actual != *w {
					t.Errorf("%s %q: expected %+v, output %+v; the source's own digest %+v", r.Operator, r.State, r.Expected, r.Actual, w)
				}
			}
			if rows == 0 {
				t.Fatal("no keyed verification rows")
			}
			for _, d := range damages {
				t.Run(d.name, func(t *testing.T) {
					parent := t.TempDir()
					testHookBeforeVerify = func(stage string) {
						ents, _ := os.ReadDir(stage)
						for _, e := range ents {
							p := filepath.Join(stage, e.Name())
							if b, _ := os.ReadFile(p); e.Name() != "_metadata" && !e.IsDir() && len(b) > 100 {
								os.WriteFile(p, d.damage(b), 0o644)
								return
							}
						}
						t.Fatal("no state file to damage")
					}
					defer func() { testHookBeforeVerify = nil }()
					_, err := Run(src, filepath.Join(parent, "out"), []Step{c.step}, Options{})
					if err == nil || !strings.Contains(err.Error(), d.want) {
						t.Fatalf("error %v, want one saying %q", err, d.want)
					}
					if ents, _ := os.ReadDir(parent); len(ents) != 0 {
						t.Errorf("a failed verification left %v", ents)
					}
				})
			}
		})
	}
}

// TestRescaleNoChangeStillVerified: a rescale to the max parallelism and parallelism the
// operator already has keeps its files and reads nothing, yet the run's verification must
// still compare every state with the source's sums (taken from the source after that step).
func TestRescaleNoChangeStillVerified(t *testing.T) {
	src := fixture(t, "keyed-hashmap")
	want, err := DigestOf(open(t, src))
	if err != nil {
		t.Fatal(err)
	}
	_, rep := run(t, src, Options{}, &Rescale{MaxParallelism: 128}, &RenameUIDs{Renames: []Rename{{mustSel(t, "uid:int-keyed"), "counter-v2"}}})
	src0 := want[uid.OperatorID("int-keyed")]
	rows := 0
	for _, r := range rep.Verify {
		if r.Kind == "keyed" && strings.Contains(r.Operator, "counter-v2") {
			rows++
			if w := src0.Keyed[r.State]; w == nil || r.Expected != *w || r.Actual != *w {
				t.Errorf("%q: expected %+v, output %+v, source %+v", r.State, r.Expected, r.Actual, w)
			}
		}
	}
	if rows == 0 {
		t.Fatalf("no keyed rows for int-keyed in %+v", rep.Verify)
	}
}
