package spdiff

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSorterSpillsAndMerges: entries come out of a Sorter in order of state and identity whatever
// the budget: all in memory, spilled in runs, and with so many runs that they are merged before
// the end (maxRuns lowered); the run files are gone after Close.
func TestSorterSpillsAndMerges(t *testing.T) {
	defer func(n int) { maxRuns = n }(maxRuns)
	maxRuns = 3
	rng := rand.New(rand.NewPCG(1, 2))
	var in []Encoded
	for i := range 500 {
		in = append(in, Encoded{State: fmt.Sprint("s", i%3), Kind: "value", ID: fmt.Sprintf("[%d]", rng.IntN(1000)), Val: fmt.Sprint(i)})
	}
	want := slices.Clone(in)
	slices.SortStableFunc(want, compareEncoded)
	t.Setenv("TMPDIR", t.TempDir())
	for _, c := range []struct {
		budget    int64
		minSpills int
	}{{1 << 30, 0}, {4 << 10, 2}, {200, 20}} {
		t.Run(fmt.Sprint(c.budget), func(t *testing.T) {
			s := NewSorter(c.budget)
			for _, e := range in {
				if err := s.Add(e); err != nil {
					t.Fatal(err)
				}
			}
			it, err := s.Sorted()
			if err != nil {
				t.Fatal(err)
			}
			var got []Encoded
			for {
				e, ok, err := it.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, e)
			}
			it.Close()
			if !slices.IsSortedFunc(got, compareEncoded) || len(got) != len(want) {
				t.Fatalf("%d entries out, %d in; sorted %v", len(got), len(want), slices.IsSortedFunc(got, compareEncoded))
			}
			key := func(es []Encoded) []string {
				var out []string
				for _, e := range es {
					out = append(out, e.State+e.ID+"="+e.Val)
				}
				slices.Sort(out)
				return out
			}
			if !slices.Equal(key(got), key(want)) {
				t.Error("other entries out than in")
			}
			if s.Spills() < c.minSpills || (c.minSpills == 0) != (s.Spills() == 0) {
				t.Errorf("%d spills, want at least %d", s.Spills(), c.minSpills)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "*")); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// TestMergeCountsAsHolding: comparing two sides sorted and merged counts what adding all of A and
// then all of B counts, samples included.
func TestMergeCountsAsHolding(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b []Record
	for k := range 3000 {
		r := Record{State: fmt.Sprint("s", k%4), Kind: "value", Key: k, Value: k % 7}
		switch rng.IntN(10) {
		case 0: // only in A
			a = append(a, r)
		case 1: // only in B
			b = append(b, r)
		case 2: // changed
			a = append(a, r)
			r.Value = 100
			b = append(b, r)
		default:
			a = append(a, r)
			b = append(b, r)
		}
	}
	rng.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
	held := NewComparison(5)
	for _, r := range a {
		held.AddA(r)
	}
	for _, r := range b {
		held.AddB(r, nil)
	}
	merged := NewComparison(5)
	var its []*Iter
	for _, side := range [][]Record{a, b} {
		s := NewSorter(8 << 10)
		defer s.Close()
		for _, r := range side {
			e, err := merged.Encode(r)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		if s.Spills() == 0 {
			t.Fatal("no spill: the test would not merge runs")
		}
		it, err := s.Sorted()
		if err != nil {
			t.Fatal(err)
		}
		its = append(its, it)
	}
	if err := merged.Merge(its[0], its[1]); err != nil {
		t.Fatal(err)
	}
	spell := func(ss []*StateDiff) string {
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%s %d/%d -%d +%d ~%d samples %d %d %d", s.Name, s.EntriesA, s.EntriesB, s.OnlyA, s.OnlyB, s.Changed, len(s.OnlyASam), len(s.OnlyBSam), len(s.ChgSam)))
		}
		return strings.Join(out, "\n")
	}
	x, y := spell(held.Finish()), spell(merged.Finish())
	if x != y {
		t.Errorf("holding A:\n%s\nsorted and merged:\n%s", x, y)
	}
	if !strings.Contains(x, "~") || strings.Contains(x, "-0 +0 ~0") {
		t.Errorf("a state without differences: the test checks less than it says:\n%s", x)
	}
}

// TestSorterDamagedRun: a run file cut short is an error naming the file, not a short result.
func TestSorterDamagedRun(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	s := NewSorter(100)
	defer s.Close()
	for i := range 20 {
		s.Add(Encoded{State: "s", Kind: "value", ID: fmt.Sprintf("[%d]", i), Val: "[1,null]"})
	}
	run := s.runs[0]
	fi, err := os.Stat(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(run, fi.Size()-3); err != nil {
		t.Fatal(err)
	}
	it, err := s.Sorted()
	if err == nil {
		defer it.Close()
		for {
			var ok bool
			if _, ok, err = it.Next(); err != nil || !ok {
				break
			}
		}
	}
	if err == nil || !strings.Contains(err.Error(), run) {
		t.Errorf("err %v, want one naming %s", err, run)
	}
}

// TestSpillDirRemoval: Close removes a Sorter's spill directory, and when it cannot, its error
// names the directory; RemoveSpillDirs (what a process stopped by a signal runs) removes the
// directories of Sorters not yet closed, names those it cannot remove, and keeps any Sorter from
// making a new one afterwards.
func TestSpillDirRemoval(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	defer func(f func(string) error) { removeAll = f }(removeAll)
	defer func() { spillDirs.stopped = false }()
	spilled := func() *Sorter {
		s := NewSorter(1)
		if err := s.Add(Encoded{State: "s", Kind: "value", ID: "[1]", Val: "[2,null]"}); err != nil {
			t.Fatal(err)
		}
		if s.dir == "" || s.Spills() != 1 {
			t.Fatalf("no spill: dir %q, %d spills", s.dir, s.Spills())
		}
		return s
	}
	left := func() []string {
		d, _ := filepath.Glob(filepath.Join(tmp, "statecraft-diff-*"))
		return d
	}
	failing := func(d string) error { return fmt.Errorf("device busy") }

	// Close, failing then not.
	s := spilled()
	dir := s.dir
	removeAll = failing
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "cannot remove its directory "+dir) || !strings.Contains(err.Error(), "device busy") {
		t.Errorf("Close with a failing removal: %v; want an error naming %s", err, dir)
	}
	removeAll = os.RemoveAll
	if err := RemoveSpillDirs(); err != nil { // what Close could not remove is still known
		t.Fatal(err)
	}
	if l := left(); len(l) != 0 {
		t.Errorf("left after RemoveSpillDirs: %v", l)
	}
	spillDirs.stopped = false

	// RemoveSpillDirs with two live Sorters, one directory failing.
	a, b := spilled(), spilled()
	removeAll = func(d string) error {
		if d == b.dir {
			return failing(d)
		}
		return os.RemoveAll(d)
	}
	err := RemoveSpillDirs()
	if err == nil || !strings.Contains(err.Error(), b.dir) || strings.Contains(err.Error(), a.dir) {
		t.Errorf("RemoveSpillDirs: %v; want an error naming %s only", err, b.dir)
	}
	if l := left(); len(l) != 1 || l[0] != b.dir {
		t.Errorf("left: %v; want only %s", l, b.dir)
	}
	// Stopped: no new spill directory, and Close of a removed Sorter is quiet.
	c := NewSorter(1)
	if err := c.Add(Encoded{State: "s", Kind: "value", ID: "[1]", Val: "[2,null]"}); !errors.Is(err, ErrStopped) {
		t.Errorf("spill after RemoveSpillDirs: %v; want ErrStopped", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("Close after RemoveSpillDirs took its directory: %v", err)
	}
	removeAll = os.RemoveAll
	if err := b.Close(); err != nil {
		t.Error(err)
	}
	if l := left(); len(l) != 0 {
		t.Errorf("left at the end: %v", l)
	}
}
