package migrate

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestRescaleDirectSameBytes checks that the direct rescale (one max parallelism a multiple of
// the other, output subtasks written concurrently) writes byte for byte what the spill path
// writes: the same state files (matched through _metadata, as their names are random), the same
// _metadata once the names are matched, and the same report. Every case below takes the direct
// path; TestRescale covers the rest with both spill budgets.
func TestRescaleDirectSameBytes(t *testing.T) {
	grown := filepath.Join(t.TempDir(), "grown")
	if err := os.MkdirAll(grown, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		src     string
		maxP, p int32
		budget  int64
	}{
		{"keyed-hashmap", 256, 3, 0},
		{"keyed-hashmap", 256, 0, 200},
		{"keyed-hashmap", 64, 1, 0},
		{"keyed-maxpar-256", 128, 0, 0},
		{"keyed-maxpar-256", 64, 3, 200},
		{"keyed-par3", 64, 2, 0},
		{"keyed-hashmap-compressed", 256, 3, 0},
		{"keyed-rocksdb", 4096, 4, 0},
		{"keyed-inline", 1024, 1, 0},
		{"types-rocksdb", 32768, 0, 0},
		{"types-hashmap", 256, 5, 0},
		{"window-hashmap", 512, 3, 0},
		{"grown", 256, 2, 0},
		{"grown", 256, 3, 4 << 10},
		{"grown", 32, 2, 0},
	}
	grownOnce := false
	for _, c := range cases {
		src := grown
		if c.src != "grown" {
			src = fixture(t, c.src)
		} else if !grownOnce {
			growSavepoint(t, grown, 3000)
			grownOnce = true
		}
		in := open(t, src)
		for _, op := range in.Metadata.Operators {
			if hasKeyed(op) && directPlan(nil, op.MaxParallelism, c.maxP) == nil {
				t.Fatalf("%s: %d -> %d does not take the direct path", c.src, op.MaxParallelism, c.maxP)
			}
		}
		steps := []Step{&Rescale{MaxParallelism: c.maxP, Parallelism: c.p}}
		spillOnly = true
		spillDst, spillRep := run(t, src, Options{SpillBudget: c.budget}, steps...)
		spillOnly = false
		dst, rep := run(t, src, Options{SpillBudget: c.budget}, steps...)
		if !reflect.DeepEqual(rep.Steps, spillRep.Steps) || !reflect.DeepEqual(rep.Verify, spillRep.Verify) {
			t.Errorf("%s -> %d/%d: reports differ:\ndirect %+v\nspill  %+v", c.src, c.maxP, c.p, rep.Steps[0], spillRep.Steps[0])
		}
		a, b := open(t, dst), open(t, spillDst)
		names := map[string]string{} // direct path's file -> spill path's
		files := 0
		for i, op := range a.Metadata.Operators {
			sop := b.Metadata.Operators[i]
			if len(op.Subtasks) != len(sop.Subtasks) {
				t.Fatalf("%s: operator %s: %d subtasks, spill path %d", c.src, Label(op), len(op.Subtasks), len(sop.Subtasks))
			}
			for j, st := range op.Subtasks {
				kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
				skh, sok := sop.Subtasks[j].ManagedKeyed.(*metadata.KeyGroupsHandle)
				if !ok || !sok || kh.Delegate == nil {
					continue
				}
				fa, fb := kh.Delegate.(*metadata.RelativeFileHandle), skh.Delegate.(*metadata.RelativeFileHandle)
				names[fa.Path] = fb.Path
				da, err := os.ReadFile(filepath.Join(dst, fa.Path))
				if err != nil {
					t.Fatal(err)
				}
				db, err := os.ReadFile(filepath.Join(spillDst, fb.Path))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(da, db) {
					t.Errorf("%s -> %d/%d: operator %s subtask %d: state file differs from the spill path's (%d and %d bytes)",
						c.src, c.maxP, c.p, Label(op), j, len(da), len(db))
				}
				files++
			}
		}
		if files == 0 {
			t.Fatalf("%s: no keyed state file compared", c.src)
		}
		ma, err := os.ReadFile(filepath.Join(dst, savepoint.MetadataFileName))
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(filepath.Join(spillDst, savepoint.MetadataFileName))
		if err != nil {
			t.Fatal(err)
		}
		for from, to := range names {
			ma = bytes.ReplaceAll(ma, []byte(from), []byte(to))
		}
		if !bytes.Equal(ma, mb) {
			t.Errorf("%s -> %d/%d: _metadata differs from the spill path's beyond the file names", c.src, c.maxP, c.p)
		}
	}
}
