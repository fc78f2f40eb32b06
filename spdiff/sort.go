package spdiff

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
)

// How a diff holds bounded memory when the key groups of the two sides do not line up (their max
// parallelism differs, so a key sits in another key group on each side, and the two reads cannot
// be walked side by side): each side's keyed entries are encoded (state, identity and value as
// the JSON texts a Comparison matches on) and sorted by state and identity, in runs of at most a
// budget of bytes; a run that fills the budget is written to a temporary file. The sorted runs of
// both sides are then merged in one ordered pass, so an identity of A meets the same identity of
// B, and memory holds one record per run:
//
//	side A --Encode--> buffer (budget) --sort--> run A1, A2, ..., rest of A in memory
//	side B --Encode--> buffer (budget) --sort--> run B1, B2, ..., rest of B in memory
//
//	merge(A1..An, rest) --+
//	                      +-- by (state, identity) --> Comparison: only in A, only in B, changed
//	merge(B1..Bm, rest) --+
//
// A side that fits the budget is never written. When maxRuns runs pile up they are merged into
// one, so that no merge keeps more than maxRuns files open.
//
// A run file is its records back to back in sorted order, each four length-prefixed texts:
//
//	+-----------+-------+-----------+------+-----------+----------+-----------+-------+
//	| uvarint n | state | uvarint n | kind | uvarint n | identity | uvarint n | value |
//	+-----------+-------+-----------+------+-----------+----------+-----------+-------+
//
// The files live in a directory of their own under the system's temporary directory ($TMPDIR),
// named statecraft-diff-*, removed by Close, or by RemoveSpillDirs when the process is told to
// stop (a SIGKILL leaves it: nothing runs then).

// maxRuns is the most run files one merge reads at once (a variable for tests).
var maxRuns = 64

// entryOverhead is what an Encoded costs in memory besides its identity and value text: its four
// string headers in the buffer (state and kind share the reader's strings).
const entryOverhead = 64

// Sorter sorts one side's encoded entries by state and identity within a memory budget.
type Sorter struct {
	budget int64
	dir    string // the temporary directory of the runs, made at the first spill
	buf    []Encoded
	size   int64
	runs   []string
	spills int
}

// NewSorter holds up to budget bytes of entries in memory before it writes a sorted run.
func NewSorter(budget int64) *Sorter { return &Sorter{budget: max(budget, 1)} }

// Spills is the number of runs written to disk (merged runs included).
func (s *Sorter) Spills() int { return s.spills }

// Add adds an entry.
func (s *Sorter) Add(e Encoded) error {
	s.buf = append(s.buf, e)
	s.size += int64(len(e.ID)+len(e.Val)) + entryOverhead
	if s.size >= s.budget {
		return s.spill()
	}
	return nil
}

func compareEncoded(a, b Encoded) int {
	if c := strings.Compare(a.State, b.State); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func sameEntry(a, b Encoded) bool { return a.State == b.State && a.ID == b.ID }

// spill writes the buffer as a sorted run.
func (s *Sorter) spill() error {
	slices.SortFunc(s.buf, compareEncoded)
	name, err := s.writeRun(func(w *bufio.Writer) error {
		for _, e := range s.buf {
			if err := writeEncoded(w, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	clear(s.buf)
	s.buf, s.size = s.buf[:0], 0
	s.runs = append(s.runs, name)
	if len(s.runs) < maxRuns {
		return nil
	}
	// Too many runs for one merge: merge them into one.
	it, err := s.openRuns(s.runs, nil)
	if err != nil {
		return err
	}
	defer it.Close()
	name, err = s.writeRun(func(w *bufio.Writer) error {
		for {
			e, ok, err := it.Next()
			if err != nil || !ok {
				return err
			}
			if err := writeEncoded(w, e); err != nil {
				return err
			}
		}
	})
	if err != nil {
		return err
	}
	for _, r := range s.runs {
		os.Remove(r)
	}
	s.runs = []string{name}
	return nil
}

// The spill directories of every live Sorter, so that a process told to stop (SIGINT, SIGTERM)
// removes them before it exits (RemoveSpillDirs) instead of leaving gigabytes under $TMPDIR.
// Once RemoveSpillDirs ran, no Sorter may make a new one: a spill racing the removal would
// leave a directory behind that nobody removes.
var spillDirs = struct {
	sync.Mutex
	live    map[string]bool
	stopped bool
}{live: map[string]bool{}}

// removeAll is os.RemoveAll; a variable so that tests make a removal fail (the tests run as
// root, which no permission stops).
var removeAll = os.RemoveAll

// ErrStopped is what a spill returns once RemoveSpillDirs has run.
var ErrStopped = errors.New("diff spill: stopped: the process is exiting")

func makeSpillDir() (string, error) {
	spillDirs.Lock()
	defer spillDirs.Unlock()
	if spillDirs.stopped {
		return "", ErrStopped
	}
	d, err := os.MkdirTemp("", "statecraft-diff-")
	if err != nil {
		return "", fmt.Errorf("diff spill: %w", err)
	}
	spillDirs.live[d] = true
	return d, nil
}

// removeSpillDir removes one Sorter's directory, naming it when it cannot.
func removeSpillDir(d string) error {
	spillDirs.Lock()
	defer spillDirs.Unlock()
	if !spillDirs.live[d] {
		return nil // RemoveSpillDirs took it
	}
	if err := removeAll(d); err != nil {
		return fmt.Errorf("diff spill: cannot remove its directory %s (remove it by hand): %w", d, err)
	}
	delete(spillDirs.live, d)
	return nil
}

// RemoveSpillDirs removes the spill directories of every Sorter not yet closed, and stops any
// Sorter from making another: it is for a process about to exit on a signal. The error names
// each directory it could not remove.
func RemoveSpillDirs() error {
	spillDirs.Lock()
	defer spillDirs.Unlock()
	spillDirs.stopped = true
	var errs []error
	for _, d := range slices.Sorted(maps.Keys(spillDirs.live)) {
		if err := removeAll(d); err != nil {
			errs = append(errs, fmt.Errorf("diff spill: cannot remove its directory %s (remove it by hand): %w", d, err))
			continue
		}
		delete(spillDirs.live, d)
	}
	return errors.Join(errs...)
}

// writeRun writes a new run file with fill.
func (s *Sorter) writeRun(fill func(*bufio.Writer) error) (string, error) {
	if s.dir == "" {
		d, err := makeSpillDir()
		if err != nil {
			return "", err
		}
		s.dir = d
	}
	f, err := os.CreateTemp(s.dir, "run-")
	if err != nil {
		return "", fmt.Errorf("diff spill: %w", err)
	}
	w := bufio.NewWriterSize(f, 256<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("diff spill %s: %w", f.Name(), err)
	}
	s.spills++
	return f.Name(), nil
}

func writeEncoded(w *bufio.Writer, e Encoded) error {
	var n [binary.MaxVarintLen64]byte
	for _, t := range [...]string{e.State, e.Kind, e.ID, e.Val} {
		w.Write(n[:binary.PutUvarint(n[:], uint64(len(t)))])
		if _, err := w.WriteString(t); err != nil {
			return err
		}
	}
	return nil
}

// Sorted returns the entries in order of state and identity: the runs merged with what is still
// in memory. Close the Sorter when done with it.
func (s *Sorter) Sorted() (*Iter, error) {
	slices.SortFunc(s.buf, compareEncoded)
	return s.openRuns(s.runs, s.buf)
}

// Close removes the run files and their directory; the error names a directory it could not
// remove.
func (s *Sorter) Close() error {
	s.buf = nil
	if s.dir == "" {
		return nil
	}
	err := removeSpillDir(s.dir)
	s.dir, s.runs = "", nil
	return err
}

// Iter yields entries in order of state and identity.
type Iter struct {
	h cursors
}

// cursor is the next entry of one run.
type cursor struct {
	e    Encoded
	next func() (Encoded, bool, error)
	f    *os.File // nil for the in-memory rest
}

type cursors []*cursor

func (h cursors) Len() int           { return len(h) }
func (h cursors) Less(i, j int) bool { return compareEncoded(h[i].e, h[j].e) < 0 }
func (h cursors) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

func (s *Sorter) openRuns(runs []string, mem []Encoded) (*Iter, error) {
	it := &Iter{}
	add := func(c *cursor) error {
		e, ok, err := c.next()
		if err != nil {
			return err
		}
		if !ok {
			if c.f != nil {
				c.f.Close()
			}
			return nil
		}
		c.e = e
		it.h = append(it.h, c)
		return nil
	}
	for _, name := range runs {
		f, err := os.Open(name)
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("diff spill: %w", err)
		}
		if err := add(&cursor{f: f, next: runReader(f)}); err != nil {
			f.Close()
			it.Close()
			return nil, err
		}
	}
	i := 0
	if err := add(&cursor{next: func() (Encoded, bool, error) {
		if i == len(mem) {
			return Encoded{}, false, nil
		}
		i++
		return mem[i-1], true, nil
	}}); err != nil {
		return nil, err
	}
	heap.Init(&it.h)
	return it, nil
}

// runReader reads a run file's records one by one.
func runReader(f *os.File) func() (Encoded, bool, error) {
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	text := func() (string, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return "", err
		}
		if n > 1<<30 {
			return "", fmt.Errorf("length %d", n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		off += int64(n) + 1
		return string(b), nil
	}
	return func() (Encoded, bool, error) {
		var t [4]string
		for i := range t {
			var err error
			if t[i], err = text(); err != nil {
				if i == 0 && errors.Is(err, io.EOF) {
					return Encoded{}, false, nil
				}
				return Encoded{}, false, fmt.Errorf("diff spill %s near byte %d: %w", f.Name(), off, err)
			}
		}
		return Encoded{State: t[0], Kind: t[1], ID: t[2], Val: t[3]}, true, nil
	}
}

// Next returns the next entry; false at the end.
func (it *Iter) Next() (Encoded, bool, error) {
	if len(it.h) == 0 {
		return Encoded{}, false, nil
	}
	c := it.h[0]
	e := c.e
	ne, ok, err := c.next()
	if err != nil {
		return Encoded{}, false, err
	}
	if ok {
		c.e = ne
		heap.Fix(&it.h, 0)
	} else {
		if c.f != nil {
			c.f.Close()
		}
		heap.Pop(&it.h)
	}
	return e, true, nil
}

// Close closes the run files still open.
func (it *Iter) Close() {
	for _, c := range it.h {
		if c.f != nil {
			c.f.Close()
		}
	}
	it.h = nil
}

// settleEvery is how many identities Merge compares between two Settles: often enough that the
// comparison holds few entries of A, seldom enough that settling costs nothing.
const settleEvery = 4096

// Merge compares the keyed entries of both sides, each in order of state and identity (as
// Sorted yields them). Operator-state entries are added with AddA and AddB after it.
func (c *Comparison) Merge(a, b *Iter) error {
	ea, aok, err := a.Next()
	if err != nil {
		return err
	}
	eb, bok, err := b.Next()
	if err != nil {
		return err
	}
	for n := 1; aok || bok; n++ {
		k := ea
		if !aok || (bok && compareEncoded(eb, ea) < 0) {
			k = eb
		}
		for aok && sameEntry(ea, k) {
			c.addA(ea)
			if ea, aok, err = a.Next(); err != nil {
				return err
			}
		}
		for bok && sameEntry(eb, k) {
			c.addB(eb, nil)
			if eb, bok, err = b.Next(); err != nil {
				return err
			}
		}
		if n%settleEvery == 0 {
			c.Settle()
		}
	}
	c.Settle()
	return nil
}
