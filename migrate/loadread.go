package migrate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// The reading half of a load (see Load): a JSONL data file is read in blocks of whole lines (a
// CSV file in blocks of whole records, turned into JSONL lines by the workers: loadcsv.go),
// each block encoded by one of the workers (one per core), and the blocks' entries are put into
// their key groups' blocks (loadDirect) or partitions (loadSpill) in the order of the file, so
// the output is the same whatever the workers' timing:
//
//	file --blocks of lines--> worker 1 \   entries in runs of one key group and
//	(mapped: read in place)   worker 2  >  state, per block, in file order --> loadDirect.addRun
//	                          ...      /                                       or loadSpill.putRun
//
// A worker takes a line of basic types (Integer, Long, String ... keys, values and map keys,
// see serializer.NewRawEncoder) by its tokens (scanFlat, RecordEncoder.EncodeRaw): no map, no
// message and no allocation. Every other line, and every line with a mistake, is decoded
// (lineDecoder) and encoded by RecordEncoder.Encode, whose errors name file, line and field.
// Each worker counts and sums its records; the counts and sums are added up at the end (a Sum
// is a count and a wrapping sum of hashes, so the order does not matter).

// loadBlock is the size of the blocks of lines a worker encodes at once.
const loadBlock = 2 << 20

// loadWorker encodes lines of a data file.
type loadWorker struct {
	name   string // the data file, for errors
	ops    map[string]*loadOp
	labels []string
	keep   bool
	dec    *lineDecoder
	in     serializer.Input
	per    map[*loadOp]*workerOp
	byTok  map[string]*loadOp // operator tokens seen, with their operator (nil: none)
	// the last line's operator token and operator: lines come in runs of one operator
	lastTok []byte
	lastLo  *loadOp
	lastWo  *workerOp
	raw     rawLine
	prefix  flatPrefix
	// the shapes of the last lines encoded by their tokens (two: runs of two states may
	// alternate), the older one replaced next
	tmpls [2]lineTemplate
	older int
	// the last key token encoded by the fast path, its operator and key group: a map state's
	// entries come in runs of one key
	kgTok []byte
	kgLo  *loadOp
	kg    int32
	// a CSV file's columns (nil: JSONL), and the JSON object of the row being encoded
	csv      *csvShape
	csvRec   []byte
	csvCells [][]byte
}

// workerOp is what a worker has of one keyed operator: its own encoder and hasher (they keep
// scratch buffers), and its counts and sums by state id.
type workerOp struct {
	enc     *keyed.RecordEncoder
	hasher  *keyHasher
	counts  []int
	sums    []Sum
	kgBytes []int64
}

// loadBatch is a block of lines and what a worker made of it: its records' entries laid out
// as a keyed-state block holds them, in runs of one operator, key group and state (a dump's
// lines come in long runs: a key group's entries of one state), so that a run goes into its
// key group's block in one piece (loadDirect.addRun):
//
//	out    | u32 key len | key (key-group prefix, rest) | u32 value len | value | next entry ...
//	runs   {lo, kg, sid, end, last, n}: the run ends at out[end], its last entry's key at out[last]
type loadBatch struct {
	data   []byte // whole lines
	first  int    // line number of data's first line
	off    int    // offset of data in the mapped file (when it is mapped)
	out    []byte // the entries
	runs   []batchRun
	opRecs []batchOpRec
	err    error
	done   chan struct{}
}

// batchRun is a run of entries of one operator, key group and state in loadBatch.out.
type batchRun struct {
	lo   *loadOp
	kg   int32
	sid  int32
	end  int32 // end of the run in out (it starts where the run before ends)
	last int32 // offset in out of the first key byte of the run's last entry
	n    int32 // entries
}

type batchOpRec struct {
	lo *loadOp
	r  opRecord
}

func newLoadWorker(name string, ops map[string]*loadOp, labels []string, keep bool) *loadWorker {
	w := &loadWorker{name: name, ops: ops, labels: labels, keep: keep, dec: newLineDecoder(),
		per: map[*loadOp]*workerOp{}, byTok: map[string]*loadOp{}}
	for _, lo := range ops {
		if lo.header == nil || w.per[lo] != nil {
			continue
		}
		wo := &workerOp{enc: keyed.NewRecordEncoder(lo.header), counts: make([]int, len(lo.header.States)),
			sums: make([]Sum, len(lo.header.States)), kgBytes: make([]int64, len(lo.kgBytes))}
		if lo.hasher != nil {
			wo.hasher, _ = newKeyHasher(lo.header.KeySerializer)
		}
		w.per[lo] = wo
	}
	return w
}

// readData encodes every record of the data file name (read from r) and puts it into its
// operator's partition (with keep), in the file's order; the counts, sums and key-group sizes
// go to the operators.
func readData(name string, r io.Reader, ops map[string]*loadOp, labels []string, sp *loadSpill, keep bool) error {
	var ws []*loadWorker
	for range max(1, runtime.GOMAXPROCS(0)) {
		ws = append(ws, newLoadWorker(name, ops, labels, keep))
	}
	if err := readBlocks(name, r, ws, sp, strings.EqualFold(filepath.Ext(name), ".csv")); err != nil {
		return err
	}
	for _, w := range ws {
		w.addUp()
	}
	return nil
}

// addUp adds the worker's counts, sums and key-group sizes to its operators'.
func (w *loadWorker) addUp() {
	for lo, wo := range w.per {
		for id, n := range wo.counts {
			st := lo.header.States[id].Name
			lo.counts[st] += n
			s := lo.sums[st]
			s.Count += wo.sums[id].Count
			s.Hash += wo.sums[id].Hash
		}
		for kg, n := range wo.kgBytes {
			lo.kgBytes[kg] += n
		}
	}
}

// readBlocks reads a JSONL file, or a CSV file (isCSV), in blocks of whole records, encodes
// them on the workers and puts their records in order. A regular file is mapped into memory
// (mapData), its blocks handed to the workers where they lie; anything else is read into the
// blocks' buffers. A CSV file's header is read first: the workers read every block with its
// columns.
func readBlocks(name string, r io.Reader, ws []*loadWorker, sp *loadSpill, isCSV bool) error {
	n := 2*len(ws) + 2 // blocks in flight
	free := make(chan *loadBatch, n)
	for range n {
		free <- &loadBatch{}
	}
	var mapped []byte
	var rel *mappedReleaser
	if f, ok := r.(*os.File); ok {
		if mapped = mapData(f); mapped != nil {
			defer syscall.Munmap(mapped)
			rel = newMappedReleaser(mapped)
			if testHookMapped != nil {
				testHookMapped(f.Name())
			}
		}
	}
	cut := recordCut{last: lastLineEnd, first: firstLineEnd}
	start, line := 0, 1 // where the records start, in the mapping, and their first line
	if isCSV {
		cut = recordCut{last: func(b []byte) int { return csvCut(b, false) }, first: func(b []byte) int { return csvCut(b, true) }}
		var err error
		if start, line, r, err = csvStart(name, mapped, r, ws); err != nil {
			return err
		}
	}
	work, order := make(chan *loadBatch, n), make(chan *loadBatch, n)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for bt := range work {
				select {
				case <-quit:
				default:
					if mapped != nil {
						bt.err = whileMapped(name, func() error { w.batch(bt); return bt.err })
					} else {
						w.batch(bt)
					}
				}
				close(bt.done)
			}
		}()
	}
	var readErr error
	go func() {
		defer close(order)
		defer close(work)
		next := func() *loadBatch {
			select {
			case bt := <-free:
				bt.reset()
				return bt
			case <-quit:
				return nil
			}
		}
		send := func(bt *loadBatch) {
			order <- bt
			work <- bt
		}
		if mapped != nil {
			readErr = whileMapped(name, func() error { cutMapped(mapped, start, line, cut, next, send); return nil })
		} else {
			readErr = cutRead(name, r, line, cut, next, send)
		}
	}()
	var err error
	for bt := range order {
		<-bt.done
		if err == nil {
			if err = bt.apply(sp); err != nil {
				close(quit)
			}
		}
		if rel != nil {
			rel.release(bt.off + len(bt.data))
		}
		free <- bt
	}
	wg.Wait()
	if err == nil {
		err = readErr
	}
	return err
}

// recordCut finds where records end in a block of data that starts at a record's start: after
// the last whole record in it, or after the first (-1: none ends in it).
type recordCut struct {
	last, first func(data []byte) int
}

// lastLineEnd and firstLineEnd are a JSONL file's recordCut: a record is a line.
func lastLineEnd(data []byte) int  { return endAfter(bytes.LastIndexByte(data, '\n')) }
func firstLineEnd(data []byte) int { return endAfter(bytes.IndexByte(data, '\n')) }

// cutRead reads r into blocks of whole records (a record longer than a block makes its block
// longer) and sends them in order; line is the number of the first line read, next gives the
// block to fill (nil: stop).
func cutRead(name string, r io.Reader, line int, cut recordCut, next func() *loadBatch, send func(*loadBatch)) error {
	eof := false
	var carry []byte
	for !eof {
		bt := next()
		if bt == nil {
			return nil
		}
		data := append(bt.data[:0], carry...)
		data = slices.Grow(data, max(0, loadBlock-len(data)))
		end := 0
		for {
			for !eof && len(data) < cap(data) {
				k, err := r.Read(data[len(data):cap(data)])
				data = data[:len(data)+k]
				switch {
				case errors.Is(err, io.EOF):
					eof = true
				case err != nil:
					return fmt.Errorf("%s: line %d: %w", name, line+bytes.Count(data, []byte{'\n'}), err)
				}
			}
			if eof {
				end = len(data)
				break
			}
			if i := cut.last(data); i >= 0 {
				end = i
				break
			}
			data = slices.Grow(data, cap(data)) // a record longer than the block
		}
		carry = append(carry[:0], data[end:]...)
		bt.data, bt.first = data[:end], line
		line += bytes.Count(bt.data, []byte{'\n'})
		if len(bt.data) == 0 {
			return nil
		}
		send(bt)
	}
	return nil
}

// cutMapped cuts a mapped file, from offset start (line number line), into blocks of whole
// records, as cutRead does, without copying.
func cutMapped(m []byte, start, line int, cut recordCut, next func() *loadBatch, send func(*loadBatch)) {
	for off := start; off < len(m); {
		bt := next()
		if bt == nil {
			return
		}
		end := min(len(m), off+loadBlock)
		if end < len(m) {
			if i := cut.last(m[off:end]); i >= 0 {
				end = off + i
			} else if j := cut.first(m[off:]); j >= 0 {
				end = off + j // a record longer than the block
			} else {
				end = len(m)
			}
		}
		bt.data, bt.first, bt.off = m[off:end], line, off
		populate(m, off, end)
		line += bytes.Count(bt.data, []byte{'\n'})
		off = end
		send(bt)
	}
}

func (bt *loadBatch) reset() {
	bt.out, bt.runs, bt.opRecs, bt.err = bt.out[:0], bt.runs[:0], bt.opRecs[:0], nil
	bt.done = make(chan struct{})
}

// batch encodes the lines of bt (blank lines skipped, as jsonlRecords does), stopping at the
// first error.
func (w *loadWorker) batch(bt *loadBatch) {
	if w.csv != nil {
		w.batchCSV(bt)
		return
	}
	data, n := bt.data, bt.first
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i+1], data[i+1:]
		} else {
			data = nil
		}
		if line[0] == '{' || len(bytes.TrimSpace(line)) > 0 {
			if bt.err = w.record(bt, line, n); bt.err != nil {
				return
			}
		}
		n++
	}
}

// apply puts bt's runs of entries into their key groups' blocks (an operator loaded directly)
// or their partitions, and its operator-state records into their operators, in order, and
// returns bt's error.
func (bt *loadBatch) apply(sp *loadSpill) error {
	start := int32(0)
	for _, r := range bt.runs {
		run := bt.out[start:r.end]
		var err error
		if d := r.lo.direct; d != nil {
			err = d.addRun(int(r.kg), int(r.sid), run, int(r.last-start), int(r.n))
		} else {
			err = sp.putRun(r.lo, &r.lo.parts[int(r.kg)*len(r.lo.parts)/int(r.lo.maxPar)], int(r.kg), int(r.sid), run)
		}
		if err != nil {
			return err
		}
		start = r.end
	}
	for _, o := range bt.opRecs {
		o.lo.opRecs = append(o.lo.opRecs, o.r)
	}
	return bt.err
}

// record encodes line number n: by its tokens when it can, else decoded.
func (w *loadWorker) record(bt *loadBatch, line []byte, n int) error {
	switch t0, t1 := &w.tmpls[1-w.older], &w.tmpls[w.older]; {
	case t0.match(line, &w.raw):
		if w.encodeFast(bt, t0.lo, t0.wo, t0.st) {
			return nil
		}
	case t1.match(line, &w.raw):
		if w.encodeFast(bt, t1.lo, t1.wo, t1.st) {
			w.older = 1 - w.older
			return nil
		}
	case scanFlat(line, &w.raw, &w.prefix) && w.fast(bt):
		// fast found the operator (w.lastLo) and the state
		st, _ := w.lastWo.enc.RawStateOf(w.raw.rec.State)
		if t1.learn(line, &w.raw) {
			t1.lo, t1.wo, t1.st = w.lastLo, w.lastWo, st
			w.older = 1 - w.older
		}
		return nil
	}
	return w.decoded(bt, line, w.name+":"+strconv.Itoa(n))
}

// fast encodes the scanned line when it is a keyed record of basic types without a mistake.
func (w *loadWorker) fast(bt *loadBatch) bool {
	r := &w.raw
	if r.mode != nil || len(r.operator) < 2 || r.operator[0] != '"' {
		return false
	}
	lo, seen := w.lastLo, bytes.Equal(r.operator, w.lastTok)
	if !seen {
		lo, seen = w.byTok[string(r.operator)]
	}
	if !seen {
		label := string(r.operator[1 : len(r.operator)-1])
		if lo = w.ops[strings.ToLower(label)]; lo == nil {
			lo = w.ops[label]
		}
		if len(w.byTok) < 1024 {
			w.byTok[string(r.operator)] = lo
		}
	}
	if lo != w.lastLo || w.lastWo == nil {
		w.lastWo = w.per[lo]
	}
	w.lastTok, w.lastLo = append(w.lastTok[:0], r.operator...), lo
	if lo == nil || lo.header == nil {
		return false
	}
	st, ok := w.lastWo.enc.RawStateOf(r.rec.State)
	return ok && w.encodeFast(bt, lo, w.lastWo, st)
}

// encodeFast encodes the scanned line, a record of state st of operator lo, when its types
// are basic and it has no mistake.
func (w *loadWorker) encodeFast(bt *loadBatch, lo *loadOp, wo *workerOp, st keyed.RawState) bool {
	r := &w.raw
	if wo.hasher == nil {
		return false
	}
	e, ok := wo.enc.EncodeRawIn(st, &r.rec)
	if !ok {
		return false
	}
	kg := w.kg
	if lo != w.kgLo || !bytes.Equal(r.rec.Key, w.kgTok) {
		var err error
		if kg, err = w.keyGroup(lo, wo, e); err != nil {
			w.kgLo = nil
			return false
		}
		w.kgTok, w.kgLo, w.kg = append(w.kgTok[:0], r.rec.Key...), lo, kg
	}
	w.put(bt, lo, wo, e, kg)
	return true
}

// decoded encodes a line decoded into a map (where: FILE:LINE for errors).
func (w *loadWorker) decoded(bt *loadBatch, line []byte, where string) error {
	rec, err := w.dec.decode(line)
	if err != nil {
		return fmt.Errorf("%s: not a JSON object: %w", where, err)
	}
	label, _ := rec["operator"].(string)
	lo := w.ops[strings.ToLower(label)]
	if lo == nil {
		lo = w.ops[label]
	}
	if lo == nil {
		return fmt.Errorf("%s: operator %q: no such operator in the source savepoint (it has %s); every record names its operator as `savepoint dump` without --operator prints it",
			where, label, strings.Join(w.labels, ", "))
	}
	if mode, ok := rec["mode"].(string); ok && mode != "" {
		if mode == "coordinator" {
			// an operator's coordinator state (a source's enumerator, as dump shows it): carried
			// over with the operator like its operator state, never loaded from the data
			return nil
		}
		// The record is kept: the decoder's map is reused by the next line (its nested values
		// are not).
		bt.opRecs = append(bt.opRecs, batchOpRec{lo: lo, r: opRecord{rec: maps.Clone(rec), where: where}})
		return nil
	}
	if lo.header == nil {
		return fmt.Errorf("%s: operator %s has no keyed state in the source savepoint", where, label)
	}
	wo := w.per[lo]
	e, err := wo.enc.Encode(rec, where)
	if err != nil {
		return err
	}
	var kg int32
	if wo.hasher != nil {
		if kg, err = w.keyGroup(lo, wo, e); err != nil {
			return fmt.Errorf("%s: key: %w", where, err)
		}
	} else {
		// A key whose hashCode is user code (a POJO): the data's keyGroup is taken as it is.
		g, err := int64Of(rec["keyGroup"])
		if err != nil || g < 0 || g >= int64(lo.maxPar) {
			return fmt.Errorf("%s: keyGroup: want the key group (0..%d) of the key, as dump prints it: %v", where, lo.maxPar-1, lo.hashErr)
		}
		kg = int32(g)
	}
	w.put(bt, lo, wo, e, kg)
	return nil
}

// keyGroup is the key group of the encoded entry's key (by its Java hashCode).
func (w *loadWorker) keyGroup(lo *loadOp, wo *workerOp, e keyed.Encoded) (int32, error) {
	w.in.Reset(e.Rest)
	w.in.Pos = e.KeyAt
	h, err := wo.hasher.hash(&w.in)
	if err != nil {
		return 0, err
	}
	return modMax(keygroup.MurmurHash(h), lo.maxPar), nil
}

// put counts the entry and, with keep, appends it to bt's runs (sums and key-group sizes
// counted).
func (w *loadWorker) put(bt *loadBatch, lo *loadOp, wo *workerOp, e keyed.Encoded, kg int32) {
	wo.counts[e.StateID]++
	if !w.keep {
		return
	}
	start := len(bt.out)
	b := binary.BigEndian.AppendUint32(bt.out, uint32(lo.prefix+len(e.Rest)))
	k := len(b)
	b = appendKeyGroupPrefix(b, kg, lo.prefix)
	b = append(b, e.Rest...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(e.Value)))
	b = append(b, e.Value...)
	bt.out = b
	key := b[k : k+lo.prefix+len(e.Rest)]
	wo.sums[e.StateID].add(entryHash(key, lo.prefix, b[len(b)-len(e.Value):]))
	// as the entry's spill record counts, should the load spill
	wo.kgBytes[kg] += int64(spillHeadLen-4+len(b)-start) + entryOverhead
	if n := len(bt.runs); n > 0 {
		if r := &bt.runs[n-1]; r.lo == lo && r.kg == kg && r.sid == int32(e.StateID) {
			r.end, r.last = int32(len(b)), int32(k)
			r.n++
			return
		}
	}
	bt.runs = append(bt.runs, batchRun{lo: lo, kg: kg, sid: int32(e.StateID), end: int32(len(b)), last: int32(k), n: 1})
}
