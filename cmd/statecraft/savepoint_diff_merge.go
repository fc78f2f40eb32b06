package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/statecraft/statecraft/spdiff"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// How diff holds memory. When both operators have the same max parallelism, a key is in the same
// key group on both sides, and both sides yield their key groups in ascending order (subtasks in
// index order own ascending ranges; blocks and RocksDB keys are in key-group order). So the two
// streams are read side by side, one key group at a time, and memory holds one key group of each.
// Otherwise (a max parallelism change moves keys between key groups, or a side's key groups come
// out of order), each side's keyed entries are sorted by identity within diffSpillBudget, spilling
// sorted runs to temporary files, and the two sorted streams are merged (spdiff.Sorter).

// kgBatch is one key group's keyed records of one side, or (kg -1) the operator-state records
// that follow them.
type kgBatch struct {
	kg      int
	records []spdiff.Record
}

var errNotAscending = errors.New("key groups not in ascending order")

// streamBatches reads op on its own goroutine and sends its records a key group at a time, then
// its operator-state records; the last value on the error channel is the read's result. Closing
// stop makes the reader give up.
func streamBatches(sp *savepoint.Savepoint, op *metadata.OperatorState, keep func(string) bool, stop <-chan struct{}) (<-chan kgBatch, <-chan error) {
	out := make(chan kgBatch, 1)
	errc := make(chan error, 1)
	errStopped := errors.New("stopped")
	go func() {
		defer close(out)
		cur := kgBatch{kg: -2}
		send := func() error {
			if cur.kg == -2 || len(cur.records) == 0 {
				return nil
			}
			select {
			case out <- cur:
			case <-stop:
				return errStopped
			}
			return nil
		}
		var ops []spdiff.Record
		err := dumpOperator(sp, op, "", func(r dumpRecord) error {
			rec, ok := diffRecord(r)
			if !ok || !keep(rec.State) {
				return nil
			}
			if r.Keyed == nil {
				ops = append(ops, rec)
				return nil
			}
			if kg := r.Keyed.KeyGroup; kg != cur.kg {
				if kg < cur.kg {
					return errNotAscending
				}
				if err := send(); err != nil {
					return err
				}
				cur = kgBatch{kg: kg}
			}
			cur.records = append(cur.records, rec)
			return nil
		})
		if err == nil {
			err = send()
		}
		if err == nil && len(ops) > 0 {
			cur = kgBatch{kg: -1, records: ops}
			err = send()
		}
		if errors.Is(err, errStopped) {
			err = nil
		}
		errc <- err
	}()
	return out, errc
}

// compareByKeyGroup feeds cmp both sides of a pair of operators with the same max parallelism,
// key group by key group. When a side's key groups come out of order it returns errNotAscending,
// and the caller starts over with a fresh comparison that holds all of A.
func compareByKeyGroup(spA, spB *savepoint.Savepoint, p opPair, keep func(string) bool, cmp *spdiff.Comparison) error {
	stop := make(chan struct{})
	as, aerr := streamBatches(spA, p.a, keep, stop)
	bs, berr := streamBatches(spB, p.b, keep, stop)
	finish := func(err error) error {
		close(stop)
		for range as {
		}
		for range bs {
		}
		ea, eb := <-aerr, <-berr
		if err != nil {
			return err
		}
		if ea != nil {
			return wrapSide("A", p.a, ea)
		}
		if eb != nil {
			return wrapSide("B", p.b, eb)
		}
		return nil
	}
	seenB := map[string]bool{}
	a, aok := <-as
	b, bok := <-bs
	var opA, opB []spdiff.Record
	for aok || bok {
		// Operator-state batches (kg -1) come last on each side; keep them for after the keys.
		if aok && a.kg == -1 {
			opA = a.records
			a, aok = <-as
			continue
		}
		if bok && b.kg == -1 {
			opB = b.records
			b, bok = <-bs
			continue
		}
		takeA := aok && (!bok || a.kg <= b.kg)
		takeB := bok && (!aok || b.kg <= a.kg)
		if takeA {
			for _, r := range a.records {
				if err := cmp.AddA(r); err != nil {
					return finish(err)
				}
			}
		}
		if takeB {
			for _, r := range b.records {
				if err := cmp.AddB(r, seenB); err != nil {
					return finish(err)
				}
			}
		}
		cmp.Settle()
		if takeA {
			a, aok = <-as
		}
		if takeB {
			b, bok = <-bs
		}
	}
	for _, r := range opA {
		if err := cmp.AddA(r); err != nil {
			return finish(err)
		}
	}
	for _, r := range opB {
		if err := cmp.AddB(r, seenB); err != nil {
			return finish(err)
		}
	}
	return finish(nil)
}

func wrapSide(side string, op *metadata.OperatorState, err error) error {
	if errors.Is(err, errNotAscending) {
		return err
	}
	return fmt.Errorf("%s: operator %s: %w", side, opLabel(op), err)
}

// diffSpillBudget bounds the bytes of encoded entries compareSorted holds in memory, both sides
// together; past it sorted runs go to temporary files. A variable so that tests force spills.
var diffSpillBudget int64 = 64 << 20

// diffSpills counts the runs compareSorted wrote to disk, for tests to see that they spilled.
var diffSpills atomic.Int64

// diffSortedHook, nil but in tests, runs when compareSorted has sorted side 0 (A) or 1 (B): a
// test holds a diff there, its spill directory on disk, to stop it with a signal.
var diffSortedHook func(side int)

// compareSorted feeds cmp both sides of a pair whose key groups do not line up: each side's keyed
// entries sorted by identity (spilled past half of diffSpillBudget each), merged, then the
// operator-state entries (few: Flink holds them in memory too).
func compareSorted(spA, spB *savepoint.Savepoint, p opPair, keep func(string) bool, cmp *spdiff.Comparison) (err error) {
	var ops [2][]spdiff.Record
	var its [2]*spdiff.Iter
	for i, side := range []struct {
		sp *savepoint.Savepoint
		op *metadata.OperatorState
	}{{spA, p.a}, {spB, p.b}} {
		s := spdiff.NewSorter(diffSpillBudget / 2)
		defer func() {
			// A spill directory left behind is an error of the diff: it names the directory.
			if cerr := s.Close(); err == nil {
				err = cerr
			}
		}()
		err := dumpOperator(side.sp, side.op, "", func(r dumpRecord) error {
			rec, ok := diffRecord(r)
			if !ok || !keep(rec.State) {
				return nil
			}
			if r.Keyed == nil {
				ops[i] = append(ops[i], rec)
				return nil
			}
			e, err := cmp.Encode(rec)
			if err != nil {
				return err
			}
			return s.Add(e)
		})
		if err == nil {
			its[i], err = s.Sorted()
		}
		diffSpills.Add(int64(s.Spills()))
		if err != nil {
			return fmt.Errorf("%s: operator %s: %w", "AB"[i:i+1], opLabel(side.op), err)
		}
		defer its[i].Close()
		if diffSortedHook != nil {
			diffSortedHook(i)
		}
	}
	if err := cmp.Merge(its[0], its[1]); err != nil {
		return err
	}
	for _, r := range ops[0] {
		if err := cmp.AddA(r); err != nil {
			return err
		}
	}
	seenB := map[string]bool{}
	for _, r := range ops[1] {
		if err := cmp.AddB(r, seenB); err != nil {
			return err
		}
	}
	return nil
}

// removeSpillsOnSignal makes a SIGINT or SIGTERM during a diff remove the sort's spill
// directories (statecraft-diff-* under $TMPDIR, as large as both savepoints' keyed entries)
// before the process exits with status 1; without it they outlive every interrupted diff. The
// message names a directory it could not remove. Call the returned function when the diff ends.
func removeSpillsOnSignal(stderr io.Writer) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			if err := spdiff.RemoveSpillDirs(); err != nil {
				fmt.Fprintf(stderr, "statecraft: savepoint diff: stopped by %v: %v\n", sig, err)
			} else {
				fmt.Fprintf(stderr, "statecraft: savepoint diff: stopped by %v; its spill directories are removed\n", sig)
			}
			os.Exit(exitFailure)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}
