package migrate

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// Load replaces the keyed state of every keyed operator of the source with the entries of a
// data file in the shape `savepoint dump` prints without --operator (one JSON object a line,
// each naming its operator): operators, state names, types, parallelism and max parallelism
// stay the source's (`savepoint create --like`). Each entry is encoded with the serializers of
// the source's keyed-state header (serializer.NewEncoder), its key group computed from its key's
// Java hashCode, and the entries are sorted by key group with bounded memory:
//
//	data.jsonl --encode--> record (kg u16, sid u16, u32 klen, key, u32 vlen, value)
//	                         |  appended to the buffer of its partition: 64 (at most) runs of
//	                         |  consecutive key groups per operator; when the buffers pass the
//	                         v  spill budget, every buffer is appended to its partition's file
//	                       .spill/load-*  (inside the staging directory, removed with it)
//	partition by partition, in key-group order: load, counting sort by key group (stable), each
//	key group's block written to the file of the subtask whose range holds it
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
	counts  map[string]int
	sums    map[string]*Sum
	opRecs  []opRecord // operator-state records in the data
}

type loadPart struct {
	buf  bytes.Buffer
	file string
	size int64
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
	var buffered int64
	spill := filepath.Join(s.stage, spillDir)
	var in serializer.Input
	err = eachRecord(l.Data, f, func(b []byte, where string) error {
		n, err := loadRecord(ops, labels, b, where, &in, !dry)
		if err != nil {
			return err
		}
		buffered += int64(n)
		if buffered <= budget {
			return nil
		}
		if err := os.MkdirAll(spill, 0o755); err != nil {
			return err
		}
		for _, lo := range ops {
			if err := lo.spill(spill); err != nil {
				return err
			}
		}
		buffered = 0
		return nil
	})
	if err != nil {
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
		if !dry {
			if err := s.writeLoaded(lo); err != nil {
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
	lo.counts, lo.sums = map[string]int{}, map[string]*Sum{}
	for _, m := range lo.header.States {
		lo.counts[m.Name], lo.sums[m.Name] = 0, &Sum{}
	}
	return lo, nil
}

// loadRecord encodes one line of data and, with keep, appends it to its operator's partition
// buffer; it returns the bytes buffered.
func loadRecord(ops map[string]*loadOp, labels []string, line []byte, where string, in *serializer.Input, keep bool) (int, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var rec map[string]any
	if err := d.Decode(&rec); err != nil {
		return 0, fmt.Errorf("%s: not a JSON object: %w", where, err)
	}
	label, _ := rec["operator"].(string)
	lo := ops[strings.ToLower(label)]
	if lo == nil {
		lo = ops[label]
	}
	if lo == nil {
		return 0, fmt.Errorf("%s: operator %q: no such operator in the source savepoint (it has %s); every record names its operator as `savepoint dump` without --operator prints it",
			where, label, strings.Join(labels, ", "))
	}
	if mode, ok := rec["mode"].(string); ok && mode != "" {
		lo.opRecs = append(lo.opRecs, opRecord{rec: rec, where: where})
		return 0, nil
	}
	if lo.header == nil {
		return 0, fmt.Errorf("%s: operator %s has no keyed state in the source savepoint", where, label)
	}
	e, err := lo.enc.Encode(rec, where)
	if err != nil {
		return 0, err
	}
	var kg int32
	if lo.hasher != nil {
		in.Reset(e.Rest)
		in.Pos = e.KeyAt
		h, err := lo.hasher.hash(in)
		if err != nil {
			return 0, fmt.Errorf("%s: key: %w", where, err)
		}
		kg = modMax(keygroup.MurmurHash(h), lo.maxPar)
	} else {
		// A key whose hashCode is user code (a POJO): the data's keyGroup is taken as it is.
		g, err := int64Of(rec["keyGroup"])
		if err != nil || g < 0 || g >= int64(lo.maxPar) {
			return 0, fmt.Errorf("%s: keyGroup: want the key group (0..%d) of the key, as dump prints it: %v", where, lo.maxPar-1, lo.hashErr)
		}
		kg = int32(g)
	}
	name := lo.header.States[e.StateID].Name
	lo.counts[name]++
	if !keep {
		return 0, nil
	}
	p := &lo.parts[int(kg)*len(lo.parts)/int(lo.maxPar)]
	n := p.buf.Len()
	var hdr [8]byte
	binary.BigEndian.PutUint16(hdr[0:], uint16(kg))
	binary.BigEndian.PutUint16(hdr[2:], uint16(e.StateID))
	binary.BigEndian.PutUint32(hdr[4:], uint32(lo.prefix+len(e.Rest)))
	p.buf.Write(hdr[:])
	k := p.buf.Len()
	p.buf.Write(appendKeyGroupPrefix(hdr[:0], kg, lo.prefix))
	p.buf.Write(e.Rest)
	key := p.buf.Bytes()[k:]
	binary.BigEndian.PutUint32(hdr[:4], uint32(len(e.Value)))
	p.buf.Write(hdr[:4])
	p.buf.Write(e.Value)
	lo.sums[name].add(entryHash(key, lo.prefix, e.Value))
	return p.buf.Len() - n, nil
}

func int64Of(v any) (int64, error) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("not a number")
	}
	return n.Int64()
}

// spill appends every partition buffer to its file.
func (lo *loadOp) spill(dir string) error {
	for i := range lo.parts {
		p := &lo.parts[i]
		if p.buf.Len() == 0 {
			continue
		}
		if p.file == "" {
			f, err := os.CreateTemp(dir, "load-*")
			if err != nil {
				return err
			}
			p.file = f.Name()
			f.Close()
		}
		f, err := os.OpenFile(p.file, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return err
		}
		_, err = f.Write(p.buf.Bytes())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("spill: %w", err)
		}
		p.size += int64(p.buf.Len())
		p.buf.Reset()
	}
	return nil
}

// load returns the partition's records: its spill file, then what is still buffered.
func (p *loadPart) load() ([]byte, error) {
	if p.file == "" {
		return p.buf.Bytes(), nil
	}
	data, err := os.ReadFile(p.file)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != p.size {
		return nil, fmt.Errorf("spill %s: %d bytes, %d written", p.file, len(data), p.size)
	}
	os.Remove(p.file)
	return append(data, p.buf.Bytes()...), nil
}

// writeLoaded writes one canonical keyed-state file per subtask of lo.op from its partitions,
// installs their handles and makes the operator's digest what was written.
func (s *session) writeLoaded(lo *loadOp) error {
	type out struct {
		name    string
		f       *os.File
		bw      *bufio.Writer
		w       *keyed.Writer
		offsets []int64
	}
	outs := make([]*out, len(lo.ranges))
	defer func() {
		for _, o := range outs {
			if o != nil && o.f != nil {
				o.f.Close()
			}
		}
	}()
	for i, rg := range lo.ranges {
		o := &out{name: newStateFileName(), offsets: make([]int64, rg.Len())}
		outs[i] = o
		f, err := os.OpenFile(filepath.Join(s.stage, o.name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		o.f, o.bw = f, bufio.NewWriterSize(f, 256<<10)
		s.fresh[o.name] = 0
		if o.w, err = keyed.NewWriter(o.bw, lo.header); err != nil {
			return err
		}
	}
	sub := 0
	for i := range lo.parts {
		data, err := lo.parts[i].load()
		if err != nil {
			return err
		}
		entries, err := parseSpill(data, 0)
		if err != nil {
			return err
		}
		for len(entries) > 0 {
			kg := entries[0].KeyGroup
			n := 1
			for n < len(entries) && entries[n].KeyGroup == kg {
				n++
			}
			for !lo.ranges[sub].Contains(int32(kg)) {
				sub++
			}
			o := outs[sub]
			off, err := o.w.WriteKeyGroup(entries[:n])
			if err != nil {
				return err
			}
			o.offsets[int32(kg)-lo.ranges[sub].Start] = off
			entries = entries[n:]
		}
		lo.parts[i] = loadPart{}
	}
	for i, o := range outs {
		if err := finishFile(o.bw, o.f); err != nil {
			return err
		}
		o.f = nil
		size := o.w.Offset()
		s.fresh[o.name] = size
		rg := lo.ranges[i]
		kh := &metadata.KeyGroupsHandle{TagByte: metadata.TagSavepointKeyGroups,
			Range:    metadata.KeyGroupRange{Start: rg.Start, Num: rg.Len()},
			Offsets:  o.offsets,
			Delegate: &metadata.RelativeFileHandle{Path: o.name, Size: size}}
		if st := lo.op.Subtask(int32(i)); st != nil {
			st.ManagedKeyed = kh
		} else {
			lo.op.Subtasks = append(lo.op.Subtasks, &metadata.SubtaskState{Index: int32(i), ManagedKeyed: kh})
			slices.SortFunc(lo.op.Subtasks, func(a, b *metadata.SubtaskState) int { return int(a.Index - b.Index) })
		}
	}
	if dg := s.digest[lo.op.ID]; dg != nil {
		dg.Keyed = lo.sums
		dg.pendingKeyed = false
	}
	return nil
}
