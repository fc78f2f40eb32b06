package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/statecraft/statecraft/statecore/keyed"
)

// A dump lists each operator's entries in key-group order, so a load of a dump needs no sort:
// a load first writes every operator's records straight into its output files, one key group's
// block as soon as the next key group begins (loadDirect). A record of a key group before the
// one being written, or key groups being gathered (one per operator) larger than the spill
// budget together, ends that: the output files go, and the load reads the data again, sorting
// it by key group with spill files (see loadSpill). Both ways write the same bytes: a key
// group's entries in the order of the data.

var (
	// testNoDirectLoad makes every load spill, for tests to compare the two ways.
	testNoDirectLoad atomic.Bool
	// directRestarts counts the loads read again with spilling, for tests.
	directRestarts atomic.Int64
)

// errUnsorted stops a direct load (see loadDirect).
var errUnsorted = errors.New("the data is not in key-group order")

// loadDirect writes one operator's records, coming in key-group order, to its output files:
// each run of entries (see loadBatch) goes straight into the block of its key group
// (keyed.BlockBuilder, one copy), which is written when the next key group begins.
type loadDirect struct {
	outs   []*loadedOut
	outOf  func(kg int32) *loadedOut
	budget int64
	held   *int64 // what every operator's block holds, with entryOverhead a record
	kg     int    // the key group being assembled (-1: none yet)
	block  keyed.BlockBuilder
	bytes  int64 // what it holds, as counted in held
}

// startDirect opens the outputs of every keyed operator for a direct load.
func (s *session) startDirect(ops map[string]*loadOp, budget int64) error {
	held := new(int64)
	for _, lo := range ops {
		if lo.header == nil || lo.direct != nil {
			continue
		}
		outs, err := s.openLoaded(lo)
		lo.direct = &loadDirect{outs: outs, outOf: outputOf(lo, outs), budget: budget, held: held, kg: -1}
		if err != nil {
			return err
		}
	}
	return nil
}

// addRun takes the operator's next run of entries, of key group kg and state sid, laid out
// as a block holds them (see loadBatch); last is the offset in run of its last entry's first
// key byte, n its entries (errUnsorted: it cannot).
func (d *loadDirect) addRun(kg, sid int, run []byte, last, n int) error {
	if kg != d.kg {
		if kg < d.kg {
			return errUnsorted
		}
		if err := d.flush(); err != nil {
			return err
		}
		d.kg = kg
	}
	d.block.AddRun(sid, run, last, n)
	// as the entries' spill records count (the spill's budget)
	b := int64(len(run)) + int64(n)*(spillHeadLen-4+entryOverhead)
	d.bytes += b
	if *d.held += b; *d.held > d.budget {
		return errUnsorted // key groups the spill splits or streams
	}
	return nil
}

// flush writes the block of the key group assembled.
func (d *loadDirect) flush() error {
	if d.block.Len() == 0 {
		return nil
	}
	o := d.outOf(int32(d.kg))
	off, err := o.w.WriteBlock(&d.block)
	if err != nil {
		return err
	}
	o.offsets[int32(d.kg)-o.rg.Start] = off
	*d.held -= d.bytes
	d.bytes = 0
	d.block.Reset()
	return nil
}

// finishDirect writes the last key group of every operator loaded directly and finishes its
// files.
func (s *session) finishDirect(lo *loadOp) error {
	d := lo.direct
	defer closeLoaded(d.outs)
	if err := d.flush(); err != nil {
		return err
	}
	return s.finishLoaded(lo, d.outs)
}

// dropDirect removes the output files of every operator loaded directly and forgets what was
// read, for the load to start over with spilling.
func (s *session) dropDirect(ops map[string]*loadOp) error {
	var first error
	for _, lo := range ops {
		lo.opRecs = nil
		d := lo.direct
		if d == nil {
			continue
		}
		closeLoaded(d.outs)
		for _, o := range d.outs {
			delete(s.fresh, o.name)
			if err := os.Remove(filepath.Join(s.stage, o.name)); err != nil && first == nil {
				first = err
			}
		}
		lo.direct = nil
		clear(lo.kgBytes)
		for st := range lo.counts {
			lo.counts[st], *lo.sums[st] = 0, Sum{}
		}
	}
	return first
}
