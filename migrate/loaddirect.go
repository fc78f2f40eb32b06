package migrate

import (
	"encoding/binary"
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

// loadDirect writes one operator's records, coming in key-group order, to its output files.
type loadDirect struct {
	outs    []*loadedOut
	outOf   func(kg int32) *loadedOut
	budget  int64
	held    *int64 // what every operator's cur holds, with entryOverhead a record
	kg      int    // the key group gathered in cur (-1: none yet)
	cur     []byte // its spill records
	n       int
	entries []keyed.Entry
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

// add takes the next spill record of the operator (errUnsorted: it cannot).
func (d *loadDirect) add(rec []byte) error {
	if kg := int(binary.BigEndian.Uint16(rec)); kg != d.kg {
		if kg < d.kg {
			return errUnsorted
		}
		if err := d.flush(); err != nil {
			return err
		}
		d.kg = kg
	}
	d.cur = append(d.cur, rec...)
	d.n++
	if *d.held += int64(len(rec)) + entryOverhead; *d.held > d.budget {
		return errUnsorted // key groups the spill splits or streams
	}
	return nil
}

// flush writes the block of the key group gathered.
func (d *loadDirect) flush() error {
	if d.n == 0 {
		return nil
	}
	d.entries = d.entries[:0]
	err := walkSpill(d.cur, func(kg, sid int, key, value []byte) {
		d.entries = append(d.entries, keyed.Entry{KeyGroup: kg, StateID: sid, Key: key, Value: value})
	})
	if err != nil {
		return err
	}
	o := d.outOf(int32(d.kg))
	off, err := o.w.WriteKeyGroup(d.entries)
	if err != nil {
		return err
	}
	o.offsets[int32(d.kg)-o.rg.Start] = off
	*d.held -= int64(len(d.cur)) + int64(d.n)*entryOverhead
	d.cur, d.n = d.cur[:0], 0
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
