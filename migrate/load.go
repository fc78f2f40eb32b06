package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// Load replaces the keyed state of every keyed operator of the source with the entries of a
// data file in the shape `savepoint dump` prints without --operator (one JSON object a line,
// each naming its operator): operators, state names, types, parallelism and max parallelism
// stay the source's (`savepoint create --like`). Each entry is encoded with the serializers of
// the source's keyed-state header (serializer.NewEncoder), its key group computed from its key's
// Java hashCode (on every core, in blocks of lines put back in file order: loadread.go).
//
// Data in key-group order per operator (as `savepoint dump` prints it) is written straight into
// the output files, a key group's block at a time (loadDirect). Otherwise (the first record
// out of order drops those files and the data is read again), the entries are sorted by key
// group with bounded memory (the spill budget, Options.SpillBudget):
//
//	data.jsonl --encode--> record (kg u16, sid u16, u32 klen, key, u32 vlen, value)
//	                         |  appended to its partition: 64 (at most) runs of consecutive key
//	                         |  groups per operator. While everything buffered is under half
//	                         |  the budget, partitions are buffers; past it every partition
//	                         v  becomes a file written through a small fixed buffer
//	                       .spill/load-*  (inside the staging directory, removed with it)
//	partition by partition, in key-group order (writeLoaded): a partition whose entries fit the
//	budget is loaded and counting-sorted by key group (stable); a larger one is first split
//	into chunks of consecutive key groups that fit (the bytes of each key group are counted as
//	records arrive), and a key group larger than the budget by itself is streamed from its
//	chunk (spillChunk.stream). Each key group's block goes to the file of the subtask whose
//	range holds it.
//
// A partition's buffer is never kept past the switch to files: growing buffers kept for reuse
// held, for a dump sorted by key group (as dump prints it), every partition's whole share at
// once (579 MiB of RSS for 10M entries).
//
// Operator state is carried over from the source, except the operator states the data has
// records of, which take the data's elements (writeOperatorState).
type Load struct {
	Data string
}

// Describe says what the step does.
func (l *Load) Describe() string { return "load entries from " + l.Data }

// loadParts is the most partitions an operator's entries are spilled into.
const loadParts = 64

// loadOp is the load of one keyed operator.
type loadOp struct {
	op      *metadata.OperatorState
	header  *keyed.Header
	enc     *keyed.RecordEncoder
	hasher  *keyHasher // nil: the key type's hashCode is user code; keyGroup comes from the data
	hashErr error
	prefix  int
	maxPar  int32
	ranges  []keygroup.Range
	parts   []loadPart
	kgBytes []int64 // spilled bytes per key group, with what each entry costs loaded
	counts  map[string]int
	sums    map[string]*Sum
	opRecs  []opRecord // operator-state records in the data
	direct  *loadDirect
}

func (l *Load) apply(s *session) (*StepReport, error) {
	rep := &StepReport{Step: l.Describe()}
	f, err := os.Open(l.Data)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ops, labels, err := s.loadOps()
	if err != nil {
		return nil, err
	}
	if s.stage == "" && !s.opt.DryRun {
		// The validation pass of a real run: the data is read and encoded once, by the run,
		// before anything is published (a bad record removes the staging directory).
		return rep, nil
	}
	dry := s.stage == "" // a dry run reads and encodes everything, and counts, but keeps nothing
	budget := s.opt.SpillBudget
	if budget <= 0 {
		budget = defaultSpillBudget
	}
	sp := &loadSpill{dir: filepath.Join(s.stage, spillDir), budget: budget}
	for _, lo := range ops {
		sp.parts += len(lo.parts)
	}
	if !dry && !testNoDirectLoad.Load() {
		err = s.startDirect(ops, budget)
	}
	if err == nil {
		err = readData(l.Data, f, ops, labels, sp, !dry)
	}
	if errors.Is(err, errUnsorted) {
		// Read again, spilling (see loadDirect).
		directRestarts.Add(1)
		if err = s.dropDirect(ops); err == nil {
			if _, err = f.Seek(0, io.SeekStart); err == nil {
				err = readData(l.Data, f, ops, labels, sp, !dry)
			}
		}
	}
	if err != nil {
		s.dropDirect(ops)
		return nil, err
	}
	native := false
	for _, op := range s.m.Operators {
		lo := ops[Label(op)]
		if err := s.writeOperatorState(lo, dry); err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		if lo.header == nil {
			continue
		}
		native = native || nativeKeyed(op)
		if lo.direct != nil {
			if err := s.finishDirect(lo); err != nil {
				return nil, fmt.Errorf("operator %s: %w", Label(op), err)
			}
		} else if !dry {
			if err := s.writeLoaded(lo, sp); err != nil {
				return nil, fmt.Errorf("operator %s: %w", Label(op), err)
			}
		}
		ch := change(op, nil, lo.counts)
		ch.Note = "entries from " + l.Data
		rep.Operators = append(rep.Operators, ch)
	}
	if native && !dry {
		if err := setCanonicalFormat(s.m); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// loadOps prepares every operator of the working metadata for records naming it by label
// (uid:NAME or hash:HEX), and returns them with the labels for messages.
func (s *session) loadOps() (map[string]*loadOp, []string, error) {
	ops := map[string]*loadOp{}
	var labels []string
	for _, op := range s.m.Operators {
		labels = append(labels, Label(op))
		lo, err := s.newLoadOp(op)
		if err != nil {
			return nil, nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		ops[Label(op)], ops["hash:"+op.ID.String()] = lo, lo
	}
	return ops, labels, nil
}

// newLoadOp reads the header of op's keyed state (nil loadOp.header when it has none).
func (s *session) newLoadOp(op *metadata.OperatorState) (*loadOp, error) {
	lo := &loadOp{op: op}
	if !hasKeyed(op) {
		return lo, nil
	}
	subs, closeAll, err := keyed.OpenSubtasks(s.src, op)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	if len(subs) == 0 {
		return lo, nil
	}
	lo.header = subs[0].Header
	lo.enc = keyed.NewRecordEncoder(lo.header)
	lo.hasher, lo.hashErr = newKeyHasher(lo.header.KeySerializer)
	lo.maxPar = op.MaxParallelism
	lo.prefix = keyed.PrefixLen(int(op.MaxParallelism))
	for i := range op.Parallelism {
		rg, err := keygroup.RangeForOperator(op.MaxParallelism, op.Parallelism, i)
		if err != nil {
			return nil, err
		}
		lo.ranges = append(lo.ranges, rg)
	}
	lo.parts = make([]loadPart, min(loadParts, int(op.MaxParallelism)))
	lo.kgBytes = make([]int64, op.MaxParallelism)
	lo.counts, lo.sums = map[string]int{}, map[string]*Sum{}
	for _, m := range lo.header.States {
		lo.counts[m.Name], lo.sums[m.Name] = 0, &Sum{}
	}
	return lo, nil
}

func int64Of(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	return n.Int64()
}
