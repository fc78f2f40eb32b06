package migrate

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// Verification of offsets steps.
//
// An offsets step re-encodes reader splits and the enumerator checkpoint, so the output's bytes
// cannot be compared with digests the step itself computed: that would only prove the step wrote
// what it wrote. Instead the reader state and the coordinator state of the edited source are
// taken out of the digest comparison (every other state of every operator, other operators'
// coordinator states included, is still compared entry by entry with the source's), and
// offsetsPromise.check re-decodes them from the re-opened output with the decoders the listings
// use and holds them against the source's, decoded before the step, and the changes as asked:
//
//   - a split no change names must be in the output at the same subtask with the source's bytes,
//     byte for byte;
//   - a split a change names must be there, at the same subtask, decoded as the change says
//     (set: that offset; shift: moved by N; rename: under the new topic; stopping offset as it
//     was), and a split of a dropped topic must be gone;
//   - the output holds no other split;
//   - the enumerator state has the source's versions and discovery flag and exactly the
//     source's partitions with the same changes (versions 1 and 2 record no offsets; the
//     enumerator keeps a marker it discovered a partition with when a shift moves the reader).
//
// The expected values come from promiseSplit, a second statement of the changes' meaning kept
// apart from sourcestate.ApplyKafka on purpose: a mistake in one is caught by the other.

// offsetsPromise is what offsets steps promised for one source operator.
type offsetsPromise struct {
	op     *metadata.OperatorState // the working operator (its id as the output has it)
	label  string
	src    *sourcestate.Source // decoded from the source before the first step changed it
	stages [][]sourcestate.OffsetChange
}

// proveOffsets records that op's splits and enumerator state changed by changes (to-timestamp
// and from-file resolved) and registers the check of the output.
func (s *session) proveOffsets(op *metadata.OperatorState, src *sourcestate.Source, changes []sourcestate.OffsetChange) {
	for _, p := range s.offsets {
		if p.op == op { // a later offsets step on the same operator: its changes come after
			p.stages = append(p.stages, changes)
			return
		}
	}
	p := &offsetsPromise{op: op, label: Label(op), src: src, stages: [][]sourcestate.OffsetChange{changes}}
	s.offsets = append(s.offsets, p)
	s.digest.proveElsewhere(op.ID, "operator", sourcestate.ReaderStateName)
	s.digest.proveElsewhere(op.ID, "coordinator", coordinatorState)
	s.checks = append(s.checks, func(out *savepoint.Savepoint) ([]VerifyRow, string, error) {
		for _, o := range s.m.Operators {
			if o == p.op {
				return p.check(out)
			}
		}
		return nil, "", nil // a later step dropped the operator; the digests say it is gone
	})
}

// promiseSplit is what the changes make of split s: the split, whether it stays and whether a
// change named it. recorded says whether the state keeps starting offsets (enumerator versions
// 1 and 2 do not); enumerator says the split is the enumerator's record, which keeps a marker.
func (p *offsetsPromise) promiseSplit(s sourcestate.KafkaSplit, recorded, enumerator bool) (n sourcestate.KafkaSplit, keep, named bool) {
	n = s
	for _, stage := range p.stages {
		topic := n.Topic // a stage's changes name topics as they were before it
		for _, c := range stage {
			if c.Topic != topic || c.Partition >= 0 && c.Partition != n.Partition {
				continue
			}
			named = true
			switch c.Kind {
			case sourcestate.KindDrop:
				return n, false, true
			case sourcestate.KindRename:
				n.Topic = c.NewTopic
			case sourcestate.KindSet:
				if recorded {
					n.StartingOffset = c.Offset
				}
			case sourcestate.KindShift:
				if recorded && (n.StartingOffset >= 0 || !enumerator) {
					n.StartingOffset += c.Delta
				}
			}
		}
	}
	return n, true, named
}

func splitText(s sourcestate.KafkaSplit) string {
	return fmt.Sprintf("%s (start %s, stop %s)", s.ID(), sourcestate.StartingText(s.StartingOffset), sourcestate.StoppingText(s.StoppingOffset))
}

// check holds the output's splits and enumerator state against the promise.
func (p *offsetsPromise) check(out *savepoint.Savepoint) ([]VerifyRow, string, error) {
	var dop *metadata.OperatorState
	for _, o := range out.Metadata.Operators {
		if o.ID == p.op.ID {
			dop = o
		}
	}
	if dop == nil {
		return nil, fmt.Sprintf("operator %s (%s) is missing from the output", p.label, p.op.ID), nil
	}
	got, err := sourcestate.Read(out, dop)
	if err != nil {
		return nil, "", fmt.Errorf("operator %s: %w", p.label, err)
	}
	first := ""
	note := func(format string, a ...any) {
		if first == "" {
			first = fmt.Sprintf("operator %s: ", p.label) + fmt.Sprintf(format, a...)
		}
	}
	readers := p.checkReaders(got, note)
	enum := p.checkEnumerator(got, note)
	return []VerifyRow{readers, enum}, first, nil
}

func (p *offsetsPromise) checkReaders(got *sourcestate.Source, note func(string, ...any)) VerifyRow {
	type key struct {
		subtask int32
		id      string
	}
	type promised struct {
		split sourcestate.KafkaSplit
		raw   []byte // the source's element when no change names the split
	}
	want := map[key]promised{}
	row := VerifyRow{Operator: p.label, Kind: "splits", State: sourcestate.ReaderStateName,
		Proof: "decoded from the output: splits no change names byte-identical to the source's, the others as the changes say"}
	for _, sp := range p.src.Splits {
		n, keep, named := p.promiseSplit(*sp.Kafka, true, false)
		if !keep {
			continue
		}
		pr := promised{split: n}
		if !named {
			pr.raw = sp.Raw.Bytes()
		}
		want[key{sp.Subtask, n.ID()}] = pr
		row.Expected.add(bytesHash(fmt.Appendf(nil, "%d %s", sp.Subtask, splitText(n))))
	}
	for _, sp := range got.Splits {
		if sp.Kafka == nil {
			note("subtask %d split %d is not a Kafka split: %v", sp.Subtask, sp.Index, sp.Err)
			continue
		}
		row.Actual.add(bytesHash(fmt.Appendf(nil, "%d %s", sp.Subtask, splitText(*sp.Kafka))))
		k := key{sp.Subtask, sp.Kafka.ID()}
		pr, ok := want[k]
		if !ok {
			note("subtask %d holds split %s, which no split of the source and no change promised", sp.Subtask, splitText(*sp.Kafka))
			continue
		}
		delete(want, k)
		switch {
		case pr.raw != nil && !bytes.Equal(sp.Raw.Bytes(), pr.raw):
			note("subtask %d split %s: no change names it, but its bytes differ from the source's (%s in the output)", sp.Subtask, splitText(pr.split), splitText(*sp.Kafka))
		case pr.raw == nil && *sp.Kafka != pr.split:
			note("subtask %d split %s, promised %s", sp.Subtask, splitText(*sp.Kafka), splitText(pr.split))
		case pr.raw == nil && sp.Raw.Version != sourcestate.KafkaSplitVersion:
			note("subtask %d split %s: serializer version %d, want %d", sp.Subtask, splitText(*sp.Kafka), sp.Raw.Version, sourcestate.KafkaSplitVersion)
		}
	}
	var missing []string
	for k, pr := range want {
		missing = append(missing, fmt.Sprintf("subtask %d split %s", k.subtask, splitText(pr.split)))
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		note("%s missing from the output", missing[0])
	}
	return row
}

func (p *offsetsPromise) checkEnumerator(got *sourcestate.Source, note func(string, ...any)) VerifyRow {
	row := VerifyRow{Operator: p.label, Kind: "coordinator", State: coordinatorState,
		Proof: "decoded from the output: the source's enumerator state with the changes applied"}
	sc, gc := p.src.Coordinator, got.Coordinator
	switch {
	case sc == nil && gc == nil:
		return row
	case sc == nil || gc == nil:
		note("coordinator state: the source has %t, the output %t", sc != nil, gc != nil)
		return row
	case sc.SerdeVersion != gc.SerdeVersion || sc.Enum.Version != gc.Enum.Version || !bytes.Equal(sc.Trailing, gc.Trailing):
		note("coordinator state: serde version %d, enumerator version %d, %d trailing bytes; the source's: %d, %d, %d",
			gc.SerdeVersion, gc.Enum.Version, len(gc.Trailing), sc.SerdeVersion, sc.Enum.Version, len(sc.Trailing))
		return row
	}
	se, ge := p.src.KafkaEnum, got.KafkaEnum
	if ge == nil {
		note("enumerator state does not decode: %v", got.EnumErr)
		return row
	}
	if se.Version != ge.Version || se.SplitVersion != ge.SplitVersion || se.InitialDiscoveryFinished != ge.InitialDiscoveryFinished {
		note("enumerator state version %d (split version %d, initial discovery finished %t); the source's: %d (%d, %t)",
			ge.Version, ge.SplitVersion, ge.InitialDiscoveryFinished, se.Version, se.SplitVersion, se.InitialDiscoveryFinished)
	}
	recorded := se.Version != 1 && se.Version != 2
	text := func(e sourcestate.KafkaEnumPartition) string {
		return fmt.Sprintf("%s %s subtask %d", splitText(e.Split), e.Status, e.Subtask)
	}
	want := map[string]sourcestate.KafkaEnumPartition{}
	for _, e := range se.Partitions {
		n, keep, _ := p.promiseSplit(e.Split, recorded, true)
		if !keep {
			continue
		}
		e.Split = n
		want[n.ID()] = e
		row.Expected.add(bytesHash([]byte(text(e))))
	}
	for _, e := range ge.Partitions {
		row.Actual.add(bytesHash([]byte(text(e))))
		w, ok := want[e.Split.ID()]
		switch {
		case !ok:
			note("enumerator state holds %s, which the source's did not or the changes removed", text(e))
		case w != e:
			note("enumerator state holds %s, promised %s", text(e), text(w))
		}
		delete(want, e.Split.ID())
	}
	var missing []string
	for _, e := range want {
		missing = append(missing, text(e))
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		note("enumerator state lacks %s", missing[0])
	}
	return row
}
