package savepoint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/statecraft/statecraft/statecore/metadata"
)

// TestGC: a job directory whose older checkpoints' directories are gone but whose shared files
// Flink left behind (the subsumed files of a killed job) has exactly those files as garbage: none
// that the remaining checkpoint names, all that it does not. --apply refuses while a newer
// incomplete checkpoint exists, then deletes exactly the garbage, and every file of the latest
// checkpoint still opens.
func TestGC(t *testing.T) {
	job := chainCopy(t) // chk-6..8 complete, chk-9 in progress, chk-10 torn
	if err := os.RemoveAll(filepath.Join(job, "chk-10")); err != nil {
		t.Fatal(err)
	}
	p, err := PlanGC(job, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Garbage) != 0 || len(p.Complete) != 3 {
		t.Fatalf("with every retained checkpoint: %d garbage files, %v complete; want 0 and 3", len(p.Garbage), p.Complete)
	}
	for _, d := range []string{"chk-6", "chk-7"} {
		if err := os.RemoveAll(filepath.Join(job, d)); err != nil {
			t.Fatal(err)
		}
	}
	// What chk-8 names, found independently of gc (through the relocation the reader uses).
	latest, _, err := LatestCheckpoint(job)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Open(latest)
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	var handles []metadata.StreamHandle
	for _, op := range sp.Metadata.Operators {
		for _, st := range op.Subtasks {
			if inc, ok := st.ManagedKeyed.(*metadata.IncrementalHandle); ok {
				handles = append(handles, inc.MetaData)
				for _, ph := range append(append([]metadata.PathHandle{}, inc.Shared...), inc.Private...) {
					handles = append(handles, ph.Handle)
				}
			}
			walkPaths(st.ManagedKeyed, func(p string) { live[filepath.Base(p)] = true })
		}
	}
	sp.Close()
	shared, _ := os.ReadDir(filepath.Join(job, "shared"))

	p, err = PlanGC(job, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Garbage) == 0 || p.Referenced+len(p.Garbage) != len(shared) || len(p.InProgress) != 1 {
		t.Fatalf("%d garbage + %d referenced of %d shared files, in progress %v", len(p.Garbage), p.Referenced, len(shared), p.InProgress)
	}
	var total int64
	for _, g := range p.Garbage {
		if live[filepath.Base(g.Path)] || !strings.HasPrefix(g.Path, "shared/") {
			t.Errorf("%s is garbage but chk-8 names it", g.Path)
		}
		total += g.Size
	}
	if total != p.Total {
		t.Errorf("total %d, sizes sum to %d", p.Total, total)
	}
	if err := p.Apply(false); err == nil || !strings.Contains(err.Error(), "checkpoint 9 is incomplete") {
		t.Fatalf("apply with chk-9 in progress: %v", err)
	}
	if after, _ := os.ReadDir(filepath.Join(job, "shared")); len(after) != len(shared) {
		t.Fatalf("a refused apply deleted %d files", len(shared)-len(after))
	}
	if err := p.Apply(true); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadDir(filepath.Join(job, "shared"))
	if len(after) != p.Referenced {
		t.Errorf("%d shared files left, want the %d referenced", len(after), p.Referenced)
	}
	sp, err = Open(job)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for _, h := range handles {
		s, err := sp.OpenStream(h)
		if err != nil {
			t.Fatalf("after gc: %v", err)
		}
		s.Close()
	}
	if again, err := PlanGC(job, GCOptions{}); err != nil || len(again.Garbage) != 0 {
		t.Errorf("second gc: %v garbage, %v", again, err)
	}
}

// TestGCRefuses: no complete checkpoint, and a handle kind gc does not know, stop it.
func TestGCRefuses(t *testing.T) {
	job := chainCopy(t)
	for _, d := range []string{"chk-6", "chk-7", "chk-8"} {
		if err := os.RemoveAll(filepath.Join(job, d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := PlanGC(job, GCOptions{}); err == nil || !strings.Contains(err.Error(), "no complete checkpoint") {
		t.Errorf("no complete checkpoint: %v", err)
	}
	if err := handleFiles(struct{}{}, func(string) {}); err == nil || !strings.Contains(err.Error(), "not known") {
		t.Errorf("unknown handle: %v", err)
	}
}

// TestGCMinAge: an unreferenced file younger than the minimum age (a checkpoint in progress that
// has no chk-N yet looks like that) is kept and listed as too new, older ones are garbage, and
// the age is the file's modification time against the plan's clock (set with os.Chtimes, no
// sleeping). A file touched between plan and apply is not deleted.
func TestGCMinAge(t *testing.T) {
	job := chainCopy(t)
	for _, d := range []string{"chk-6", "chk-7", "chk-10"} {
		if err := os.RemoveAll(filepath.Join(job, d)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := PlanGC(job, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Garbage) < 2 {
		t.Fatalf("%d garbage files; the test needs two", len(all.Garbage))
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	old, fresh := now.Add(-2*time.Hour), now.Add(-59*time.Minute)
	shared, _ := os.ReadDir(filepath.Join(job, "shared"))
	for _, e := range shared {
		if err := os.Chtimes(filepath.Join(job, "shared", e.Name()), old, old); err != nil {
			t.Fatal(err)
		}
	}
	young := all.Garbage[0].Path
	if err := os.Chtimes(filepath.Join(job, filepath.FromSlash(young)), fresh, fresh); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		minAge  time.Duration
		tooNew  []string
		garbage int
	}{
		{0, nil, len(all.Garbage)},
		{time.Hour, []string{young}, len(all.Garbage) - 1},
		{58 * time.Minute, nil, len(all.Garbage)},
		{3 * time.Hour, nil, 0}, // everything is too new, referenced files are not listed
	} {
		p, err := PlanGC(job, GCOptions{MinAge: c.minAge, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var tooNew []string
		for _, f := range p.TooNew {
			tooNew = append(tooNew, f.Path)
		}
		if c.minAge == 3*time.Hour {
			c.tooNew = nil
			for _, g := range all.Garbage {
				c.tooNew = append(c.tooNew, g.Path)
			}
		}
		if len(p.Garbage) != c.garbage || strings.Join(tooNew, ",") != strings.Join(c.tooNew, ",") || p.MinAge != c.minAge.String() {
			t.Errorf("min age %s: %d garbage (want %d), too new %v (want %v), minAge %q", c.minAge, len(p.Garbage), c.garbage, tooNew, c.tooNew, p.MinAge)
		}
		for _, g := range p.Garbage {
			if g.Path == young && c.minAge >= time.Hour {
				t.Errorf("min age %s: %s is 59 minutes old but garbage", c.minAge, young)
			}
		}
	}
	if _, err := PlanGC(job, GCOptions{MinAge: -time.Second}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative min age: %v", err)
	}

	p, err := PlanGC(job, GCOptions{MinAge: time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	touched := filepath.Join(job, filepath.FromSlash(p.Garbage[0].Path))
	if err := os.Chtimes(touched, fresh, fresh); err != nil { // written to since the plan
		t.Fatal(err)
	}
	if err := p.Apply(true); err == nil || !strings.Contains(err.Error(), "after the plan's minimum-age cutoff") {
		t.Errorf("apply over a file touched since the plan: %v", err)
	}
	if _, err := os.Stat(touched); err != nil {
		t.Errorf("the touched file was deleted: %v", err)
	}
	if err := os.Chtimes(touched, old, old); err != nil {
		t.Fatal(err)
	}
	if err := p.Apply(true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(job, filepath.FromSlash(young))); err != nil {
		t.Errorf("the too-new file was deleted: %v", err)
	}
	if again, err := PlanGC(job, GCOptions{}); err != nil || len(again.Garbage) != 1 || again.Garbage[0].Path != young {
		t.Errorf("after apply, without a minimum age: %+v, %v; want only %s left", again, err, young)
	}
}
