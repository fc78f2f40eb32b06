package migrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// Offsets changes where a KafkaSource resumes: its readers' splits (operator list state
// SourceReaderState) and its enumerator's checkpoint (the coordinator state) together, so that
// they agree. Every other state of the savepoint is carried over untouched.
//
// The operator-state stream of each subtask whose splits change is rewritten: Flink's header
// bytes as they were, then the new split elements, with new offsets in the handle. Subtasks
// whose splits stay as they were keep their handle (a state file is carried over untouched).
// Streams that hold other states besides the splits, compressed streams and file-merged handles
// are refused (not needed by KafkaSource's operator so far; refusing beats guessing).
//
// Verification does not trust what the step computed: offsetsPromise.check re-decodes the
// output's splits and enumerator state and holds them against the source's and the changes.
type Offsets struct {
	Operator Selector
	Changes  []sourcestate.OffsetChange
	// AtTime, when set, moves every partition (but dropped ones) to the offsets a Kafka cluster
	// gives for a point in time; looked up when the step runs.
	AtTime *TimeLookup
	// FromFile, when set, names a file of offsets to set (OffsetsFromFile), read when the step
	// runs: the script's from-file.
	FromFile string
}

// Describe implements Step.
func (o *Offsets) Describe() string {
	var cs []string
	for _, c := range o.Changes {
		cs = append(cs, c.String())
	}
	if o.FromFile != "" {
		cs = append(cs, "from-file "+o.FromFile)
	}
	if o.AtTime != nil {
		cs = append(cs, o.AtTime.String())
	}
	return "offsets " + o.Operator.String() + ": " + strings.Join(cs, ", ")
}

// OffsetRow is one partition before and after an offsets step (reader splits; the enumerator's
// record follows them).
type OffsetRow struct {
	Subtask   int32  `json:"subtask"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Before    string `json:"before"`
	After     string `json:"after"` // "dropped" when the split was dropped
	NewTopic  string `json:"newTopic,omitempty"`
}

func (o *Offsets) apply(s *session) (*StepReport, error) {
	if len(o.Changes) == 0 && o.AtTime == nil && o.FromFile == "" {
		return nil, fmt.Errorf("%s: no changes given", o.Describe())
	}
	op, err := o.Operator.find(s.m)
	if err != nil {
		return nil, err
	}
	if !sourcestate.IsSource(op) {
		return nil, fmt.Errorf("operator %s is not a source (no %s state)", Label(op), sourcestate.ReaderStateName)
	}
	src, err := sourcestate.Read(s.src, op)
	if err != nil {
		return nil, err
	}
	if src.Connector != sourcestate.ConnectorKafka {
		why := "its splits are not KafkaPartitionSplits"
		if src.EnumErr != nil {
			why = src.EnumErr.Error()
		}
		for _, sp := range src.Splits {
			if sp.Err != nil { // the first split that is not Kafka's says more than the enumerator
				why = sp.Err.Error() // names the subtask and element
				break
			}
		}
		return nil, fmt.Errorf("operator %s: offsets can be changed for KafkaSource only: %s", Label(op), why)
	}
	var before []sourcestate.ReaderSplit
	for _, sp := range src.Splits {
		before = append(before, sourcestate.ReaderSplit{Subtask: sp.Subtask, Split: *sp.Kafka})
	}
	changes := o.Changes
	if o.FromFile != "" {
		more, err := OffsetsFromFile(o.FromFile)
		if err != nil {
			return nil, fmt.Errorf("from-file %s: %w", o.FromFile, err)
		}
		changes = append(append([]sourcestate.OffsetChange(nil), changes...), more...)
	}
	if o.AtTime != nil {
		held := make([]sourcestate.KafkaSplit, 0, len(before))
		for _, b := range before {
			held = append(held, b.Split)
		}
		if src.KafkaEnum != nil {
			for _, p := range src.KafkaEnum.Partitions {
				held = append(held, p.Split)
			}
		}
		more, err := o.AtTime.changes(held, changes)
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		changes = append(append([]sourcestate.OffsetChange(nil), changes...), more...)
	}
	after, enum, err := sourcestate.ApplyKafka(before, src.KafkaEnum, changes)
	if err != nil {
		return nil, fmt.Errorf("operator %s: %w", Label(op), err)
	}
	ch := OperatorChange{Operator: Label(op), UIDHashBefore: op.ID.String(), UIDHashAfter: op.ID.String(), UIDAfter: op.UID,
		ParallelismBefore: op.Parallelism, ParallelismAfter: op.Parallelism, MaxParBefore: op.MaxParallelism, MaxParAfter: op.MaxParallelism,
		Offsets: offsetRows(before, after, changes)}

	bySubtask, was := map[int32][]sourcestate.KafkaSplit{}, map[int32][]sourcestate.KafkaSplit{}
	for _, a := range after {
		bySubtask[a.Subtask] = append(bySubtask[a.Subtask], a.Split)
	}
	for _, b := range before {
		was[b.Subtask] = append(was[b.Subtask], b.Split)
	}
	for _, st := range op.Subtasks {
		if st == nil || st.Finished {
			continue
		}
		oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
		if !ok || oh.Delegate == nil || !hasReaderState(oh) || slices.Equal(was[st.Index], bySubtask[st.Index]) {
			continue
		}
		nh, err := s.rewriteReaderState(op, st.Index, oh, bySubtask[st.Index])
		if err != nil {
			return nil, err
		}
		st.ManagedOperator = nh
	}
	if enum != nil {
		payload, err := enum.Encode()
		if err != nil {
			return nil, fmt.Errorf("operator %s: %w", Label(op), err)
		}
		c := *src.Coordinator
		c.Enum.Payload = payload
		op.Coordinator = &metadata.ByteStreamHandle{Name: op.Coordinator.Name, Data: c.Bytes()}
	}
	if s.digest != nil && s.stage != "" {
		s.proveOffsets(op, src, changes)
	}
	return &StepReport{Step: o.Describe(), Operators: []OperatorChange{ch}}, nil
}

func hasReaderState(oh *metadata.OperatorStreamHandle) bool {
	for _, st := range oh.States {
		if st.Name == sourcestate.ReaderStateName {
			return true
		}
	}
	return false
}

// rewriteReaderState writes one subtask's operator-state stream with splits as its reader
// state and returns the new handle.
func (s *session) rewriteReaderState(op *metadata.OperatorState, idx int32, oh *metadata.OperatorStreamHandle, splits []sourcestate.KafkaSplit) (*metadata.OperatorStreamHandle, error) {
	where := fmt.Sprintf("operator %s subtask %d operator state", Label(op), idx)
	if oh.TagByte != metadata.TagPartitionableOperatorState {
		return nil, fmt.Errorf("%s: file-merged operator state (handle tag %d) cannot be rewritten yet", where, oh.TagByte)
	}
	if len(oh.States) != 1 {
		var names []string
		for _, st := range oh.States {
			names = append(names, st.Name)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("%s holds %s besides %s: rewriting such a stream is not supported", where, strings.Join(names, ", "), sourcestate.ReaderStateName)
	}
	str, err := s.src.OpenStream(oh.Delegate)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	os_, err := opstate.Open(str, str.Size(), str.Name, oh)
	str.Close()
	if err != nil {
		return nil, err
	}
	if os_.Header.Compressed {
		return nil, fmt.Errorf("%s is compressed (execution.checkpointing.snapshot-compression): rewriting compressed operator state is not supported yet", where)
	}
	var buf bytes.Buffer
	buf.Write(os_.Data[:os_.Header.Size])
	w := javaio.NewWriter(&buf)
	info := metadata.OperatorStateInfo{Name: oh.States[0].Name, Mode: oh.States[0].Mode}
	for _, sp := range splits {
		payload, err := sp.Encode()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		el := sourcestate.Versioned{Version: sourcestate.KafkaSplitVersion, Payload: payload}.Bytes()
		start := int64(buf.Len())
		info.Offsets = append(info.Offsets, start)
		w.I32(int32(len(el))) // BytePrimitiveArraySerializer: length, then the bytes
		w.Raw(el)
	}
	if w.Err() != nil {
		return nil, w.Err()
	}
	data := buf.Bytes()
	nh := &metadata.OperatorStreamHandle{TagByte: oh.TagByte, States: []metadata.OperatorStateInfo{info}}
	if inline, ok := oh.Delegate.(*metadata.ByteStreamHandle); ok {
		nh.Delegate = &metadata.ByteStreamHandle{Name: inline.Name, Data: data}
		return nh, nil
	}
	if s.stage == "" { // dry run: the size is what the real run writes
		nh.Delegate = &metadata.RelativeFileHandle{Path: "(dry-run)", Size: int64(len(data))}
		return nh, nil
	}
	file := newStateFileName()
	if err := writeSynced(filepath.Join(s.stage, file), data); err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	s.fresh[file] = int64(len(data))
	nh.Delegate = &metadata.RelativeFileHandle{Path: file, Size: int64(len(data))}
	return nh, nil
}

func writeSynced(p string, data []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// offsetRows pairs each reader split before the step with what became of it.
func offsetRows(before, after []sourcestate.ReaderSplit, changes []sourcestate.OffsetChange) []OffsetRow {
	renamed := map[string]string{}
	for _, c := range changes {
		if c.Kind == sourcestate.KindRename {
			renamed[c.Topic] = c.NewTopic
		}
	}
	now := map[string]sourcestate.KafkaSplit{}
	for _, a := range after {
		now[a.Split.ID()] = a.Split
	}
	var rows []OffsetRow
	for _, b := range before {
		r := OffsetRow{Subtask: b.Subtask, Topic: b.Split.Topic, Partition: b.Split.Partition, Before: sourcestate.StartingText(b.Split.StartingOffset), After: "dropped"}
		id := b.Split.ID()
		if nt, ok := renamed[b.Split.Topic]; ok {
			r.NewTopic = nt
			id = nt + b.Split.ID()[len(b.Split.Topic):]
		}
		if a, ok := now[id]; ok {
			r.After = sourcestate.StartingText(a.StartingOffset)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		return rows[i].Topic < rows[j].Topic || rows[i].Topic == rows[j].Topic && rows[i].Partition < rows[j].Partition
	})
	return rows
}
