package migrate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestRescaleDirectSameBytes checks that the direct rescale (one max parallelism a multiple of
// the other, output subtasks written concurrently) writes byte for byte what the spill path
// writes: the same state files (matched through _metadata, as their names are random), the same
// _metadata once the names are matched, and the same report. Every case below takes the direct
// path, by per-subtask tasks or by the split path (each output subtask in one band of oldMax key
// groups); TestRescale covers the rest with both spill budgets.
func TestRescaleDirectSameBytes(t *testing.T) {
	source := rescaleSources(t)
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
		{"keyed-rocksdb", 512, 4, 0},
		{"keyed-inline", 256, 1, 0},
		{"types-rocksdb", 64, 0, 0},
		{"types-hashmap", 256, 5, 0},
		{"window-hashmap", 512, 3, 0},
		{"grown", 256, 2, 0},   // split path: each subtask in one band
		{"grown", 256, 2, 200}, // split path, one key group read ahead at a time
		{"grown", 256, 4, 0},   // split path, two subtasks per band
		{"grown", 512, 8, 0},   // split path, c = 4
		{"grown", 512, 2, 0},   // c = 4, subtasks across bands: per-subtask tasks
		{"grown", 256, 1, 0},
		{"grown", 256, 3, 4 << 10},
		{"grown", 32, 2, 0},
	}
	splitCases := 0
	defer func() {
		if splitCases < 4 {
			t.Errorf("%d operators took the split path, want at least 4", splitCases)
		}
	}()
	for _, c := range cases {
		src := source(c.src)
		in := open(t, src)
		for _, op := range in.Metadata.Operators {
			if !hasKeyed(op) {
				continue
			}
			if directPlan(nil, op.MaxParallelism, c.maxP) == nil {
				t.Fatalf("%s: %d -> %d does not take the direct path", c.src, op.MaxParallelism, c.maxP)
			}
			p := c.p
			if p == 0 {
				p = min(op.Parallelism, c.maxP)
			}
			ranges := make([]keygroup.Range, p)
			for i := range ranges {
				ranges[i], _ = keygroup.RangeForOperator(c.maxP, p, int32(i))
			}
			if split := bandAligned(ranges, op.MaxParallelism, c.maxP); split {
				splitCases++
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
		sameOutput(t, fmt.Sprintf("%s -> %d/%d", c.src, c.maxP, c.p), dst, spillDst)
	}
}

// TestRescaleSpillSameBytes checks that the spill path writes the same bytes however its work is
// cut: everything in memory, or many small chunks spilled to files by each source concurrently
// and read back in source order. The ratios here take the spill path (neither max parallelism
// divides the other, or the new one is more than maxDirectFactor times the old).
func TestRescaleSpillSameBytes(t *testing.T) {
	source := rescaleSources(t)
	cases := []struct {
		src     string
		maxP, p int32
	}{
		{"keyed-hashmap", 200, 3},
		{"keyed-hashmap-compressed", 200, 0},
		{"keyed-par3", 100, 2},
		{"types-hashmap", 300, 5},
		{"window-hashmap", 1000, 0},
		{"keyed-rocksdb", 4096, 4},  // scaling up by 32: more than maxDirectFactor
		{"keyed-inline", 1024, 1},   // by 8
		{"types-rocksdb", 32768, 0}, // by 256
		{"grown", 200, 2},
		{"grown", 100, 3},
	}
	for _, c := range cases {
		src := source(c.src)
		for _, op := range open(t, src).Metadata.Operators {
			if hasKeyed(op) && directPlan(nil, op.MaxParallelism, c.maxP) != nil {
				t.Fatalf("%s: %d -> %d takes the direct path", c.src, op.MaxParallelism, c.maxP)
			}
		}
		steps := []Step{&Rescale{MaxParallelism: c.maxP, Parallelism: c.p}}
		mem, memRep := run(t, src, Options{}, steps...)
		for _, budget := range []int64{200, 16 << 10} {
			spilled, rep := run(t, src, Options{SpillBudget: budget}, steps...)
			if !reflect.DeepEqual(rep.Steps, memRep.Steps) {
				t.Errorf("%s -> %d/%d budget %d: reports differ:\n%+v\n%+v", c.src, c.maxP, c.p, budget, rep.Steps[0], memRep.Steps[0])
			}
			sameOutput(t, fmt.Sprintf("%s -> %d/%d budget %d", c.src, c.maxP, c.p, budget), spilled, mem)
		}
	}
}

// rescaleSources returns a function giving the directory of the fixture name, or for "grown" the
// keyed-hashmap savepoint grown to 3,000 keys (growSavepoint), made on first use.
func rescaleSources(t *testing.T) func(name string) string {
	var grown string
	return func(name string) string {
		if name != "grown" {
			return fixture(t, name)
		}
		if grown == "" {
			grown = filepath.Join(t.TempDir(), "grown")
			if err := os.MkdirAll(grown, 0o755); err != nil {
				t.Fatal(err)
			}
			growSavepoint(t, grown, 3000)
		}
		return grown
	}
}

// sameOutput checks that the savepoints a and b hold the same bytes: every keyed-state file of
// a rescaled operator (matched by operator and subtask, as the names are random), and _metadata
// once those names are matched.
func sameOutput(t *testing.T, what, dirA, dirB string) {
	t.Helper()
	a, b := open(t, dirA), open(t, dirB)
	names := map[string]string{} // a's file -> b's
	files := 0
	for i, op := range a.Metadata.Operators {
		sop := b.Metadata.Operators[i]
		if len(op.Subtasks) != len(sop.Subtasks) {
			t.Fatalf("%s: operator %s: %d subtasks and %d", what, Label(op), len(op.Subtasks), len(sop.Subtasks))
		}
		for j, st := range op.Subtasks {
			kh, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle)
			skh, sok := sop.Subtasks[j].ManagedKeyed.(*metadata.KeyGroupsHandle)
			if !ok || !sok || kh.Delegate == nil {
				continue
			}
			fa, fb := kh.Delegate.(*metadata.RelativeFileHandle), skh.Delegate.(*metadata.RelativeFileHandle)
			names[fa.Path] = fb.Path
			da, err := os.ReadFile(filepath.Join(dirA, fa.Path))
			if err != nil {
				t.Fatal(err)
			}
			db, err := os.ReadFile(filepath.Join(dirB, fb.Path))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(da, db) {
				t.Errorf("%s: operator %s subtask %d: state file differs (%d and %d bytes)",
					what, Label(op), j, len(da), len(db))
			}
			files++
		}
	}
	if files == 0 {
		t.Fatalf("%s: no keyed state file compared", what)
	}
	ma, err := os.ReadFile(filepath.Join(dirA, savepoint.MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := os.ReadFile(filepath.Join(dirB, savepoint.MetadataFileName))
	if err != nil {
		t.Fatal(err)
	}
	for from, to := range names {
		ma = bytes.ReplaceAll(ma, []byte(from), []byte(to))
	}
	if !bytes.Equal(ma, mb) {
		t.Errorf("%s: _metadata differs beyond the file names", what)
	}
}

// TestRescaleErrorsSameAsSpill damages two keys of a real savepoint so that they hash to another
// key group than the one they are stored in, one in each source subtask, and checks that every
// rescale path refuses it with the error the sequential spill path reports (the first damaged
// key in scan order), whatever the concurrent tasks met first.
func TestRescaleErrorsSameAsSpill(t *testing.T) {
	src := filepath.Join(t.TempDir(), "damaged")
	if err := os.CopyFS(src, os.DirFS(fixture(t, "keyed-hashmap"))); err != nil {
		t.Fatal(err)
	}
	sp := open(t, src)
	op, err := mustSel(t, "uid:int-keyed").find(sp.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) < 2 || subs[0].Header.Compressed {
		t.Fatalf("want an uncompressed fixture with two subtasks, have %d", len(subs))
	}
	// Subtask 0: a key in its last block; subtask 1: a key in its first block.
	type hit struct {
		file string
		at   int64 // file offset of the key's last Integer byte
		b    byte
	}
	var hits []hit
	for i, st := range subs {
		var pick *hit
		st.Entries(func(e *keyed.Entry) error {
			if st.Header.States[e.StateID].Type == keyed.PriorityQueue || len(e.Key) < 5 {
				return nil
			}
			if i == 1 && pick != nil {
				return nil
			}
			v := int32(binary.BigEndian.Uint32(e.Key[1:]))
			for x := byte(1); x != 0; x++ {
				if keygroup.ForHash(v^int32(x), op.MaxParallelism) != int32(e.KeyGroup) {
					pick = &hit{st.Name, e.Offset + 4 + 4, e.Key[4] ^ x}
					break
				}
			}
			return nil
		})
		if pick == nil {
			t.Fatalf("subtask %d: no key to damage", i)
		}
		hits = append(hits, *pick)
	}
	closeAll()
	for _, h := range hits {
		f, err := os.OpenFile(h.file, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt([]byte{h.b}, h.at); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	for _, c := range []struct{ maxP, p int32 }{{256, 2}, {256, 3}, {64, 0}, {512, 4}, {200, 0}} {
		steps := []Step{&Rescale{MaxParallelism: c.maxP, Parallelism: c.p}}
		spillOnly = true
		_, want := Run(src, filepath.Join(t.TempDir(), "out"), steps, Options{})
		spillOnly = false
		_, got := Run(src, filepath.Join(t.TempDir(), "out"), steps, Options{})
		if want == nil || !strings.Contains(want.Error(), "disagrees with the job's") || !strings.Contains(want.Error(), filepath.Base(hits[0].file)) {
			t.Fatalf("%d/%d: spill path: %v, want the first damaged key's refusal", c.maxP, c.p, want)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%d/%d: error\n%v\nwant (spill path)\n%v", c.maxP, c.p, got, want)
		}
	}
}

func TestModMax(t *testing.T) {
	for _, max := range []int32{1, 2, 7, 128, 200, 256, 32768} {
		for _, m := range []int32{0, 1, 127, 128, 255, 1 << 30, 2147483647} {
			if got, want := modMax(m, max), m%max; got != want {
				t.Errorf("modMax(%d, %d) = %d, want %d", m, max, got, want)
			}
		}
	}
}

// TestScratchStage: files in a stage marked scratch (an object-store run's) skip the fsync and
// the early writeback; a directory whose name only begins like the stage's, and the stage once
// unmarked, do not.
func TestScratchStage(t *testing.T) {
	stage := filepath.Join(t.TempDir(), "statecraft-stage-1")
	unmark := markScratch(stage)
	for _, c := range []struct {
		path string
		want bool
	}{
		{filepath.Join(stage, "state"), true},
		{filepath.Join(stage, "sub", "state"), true},
		{stage + "0/state", false},
		{filepath.Join(filepath.Dir(stage), "state"), false},
	} {
		if got := inScratch(c.path); got != c.want {
			t.Errorf("inScratch(%s) = %v, want %v", c.path, got, c.want)
		}
	}
	unmark()
	if inScratch(filepath.Join(stage, "state")) {
		t.Error("a file of the unmarked stage is still scratch")
	}
}
