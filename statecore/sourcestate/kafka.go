package sourcestate

import (
	"bytes"
	"fmt"
	"math"
	"strconv"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Offset markers of KafkaPartitionSplit.
const (
	OffsetLatest    int64 = -1 // deprecated as a starting offset, still read
	OffsetEarliest  int64 = -2
	OffsetCommitted int64 = -3
	// OffsetNone is both "no stopping offset" and, as a starting offset, "migrated": the
	// enumerator state of an older connector did not record where to start.
	OffsetNone int64 = math.MinInt64
)

// KafkaSplitVersion is the only KafkaPartitionSplitSerializer version.
const KafkaSplitVersion = 0

// KafkaSplit is one Kafka partition a source reader (or the enumerator, from v3) holds.
type KafkaSplit struct {
	Topic          string
	Partition      int32
	StartingOffset int64
	StoppingOffset int64
}

// ID is the connector's split id, "topic-partition".
func (s KafkaSplit) ID() string { return s.Topic + "-" + strconv.Itoa(int(s.Partition)) }

// DecodeKafkaSplit decodes a split payload written with serializer version.
func DecodeKafkaSplit(version int32, b []byte, name string) (KafkaSplit, error) {
	if version != KafkaSplitVersion {
		return KafkaSplit{}, &UnknownVersionError{Name: name, What: "KafkaPartitionSplit", Version: version, Known: "0"}
	}
	r := javaio.NewBytesReader(b, name, 0)
	s := readKafkaSplit(r)
	if r.Err() == nil && !r.AtEOF() {
		r.Failf("end of split", "%d bytes after the stopping offset", len(b)-int(r.Offset()))
	}
	if r.Err() != nil {
		return KafkaSplit{}, r.Err()
	}
	return s, nil
}

func readKafkaSplit(r *javaio.Reader) KafkaSplit {
	var s KafkaSplit
	s.Topic = r.UTF("topic")
	off := r.Offset()
	s.Partition = r.I32("partition")
	if r.Err() == nil && s.Partition < 0 {
		r.FailAt(off, "partition", "want a partition number >= 0, got %d", s.Partition)
	}
	off = r.Offset()
	s.StartingOffset = r.I64("startingOffset")
	if r.Err() == nil && !ValidStarting(s.StartingOffset) {
		r.FailAt(off, "startingOffset", "want an offset >= 0 or a marker (-1 latest, -2 earliest, -3 committed, %d migrated), got %d", OffsetNone, s.StartingOffset)
	}
	off = r.Offset()
	s.StoppingOffset = r.I64("stoppingOffset")
	if r.Err() == nil && !ValidStopping(s.StoppingOffset) {
		r.FailAt(off, "stoppingOffset", "want an offset >= 0 or a marker (-1 latest, -3 committed, %d none), got %d", OffsetNone, s.StoppingOffset)
	}
	return s
}

// ValidStarting says whether o is a starting offset the connector accepts.
func ValidStarting(o int64) bool {
	return o >= 0 || o == OffsetLatest || o == OffsetEarliest || o == OffsetCommitted || o == OffsetNone
}

// ValidStopping says whether o is a stopping offset the connector accepts.
func ValidStopping(o int64) bool {
	return o >= 0 || o == OffsetLatest || o == OffsetCommitted || o == OffsetNone
}

// Encode is the version-0 payload of the split.
func (s KafkaSplit) Encode() ([]byte, error) {
	if len(javaio.EncodeModifiedUTF8(s.Topic)) > javaio.MaxUTFLen {
		return nil, fmt.Errorf("kafka split %s: topic name longer than %d bytes", s.ID(), javaio.MaxUTFLen)
	}
	if s.Partition < 0 || !ValidStarting(s.StartingOffset) || !ValidStopping(s.StoppingOffset) {
		return nil, fmt.Errorf("kafka split %s: invalid partition or offsets (%d, %d)", s.ID(), s.StartingOffset, s.StoppingOffset)
	}
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	writeKafkaSplit(w, s)
	return buf.Bytes(), w.Err()
}

func writeKafkaSplit(w *javaio.Writer, s KafkaSplit) {
	w.UTF(s.Topic)
	w.I32(s.Partition)
	w.I64(s.StartingOffset)
	w.I64(s.StoppingOffset)
}

// StartingText spells a starting offset, markers by name.
func StartingText(o int64) string {
	switch o {
	case OffsetEarliest:
		return "earliest"
	case OffsetLatest:
		return "latest"
	case OffsetCommitted:
		return "committed"
	case OffsetNone:
		return "migrated"
	}
	return strconv.FormatInt(o, 10)
}

// StoppingText spells a stopping offset, markers by name ("none": unbounded).
func StoppingText(o int64) string {
	switch o {
	case OffsetNone:
		return "none"
	case OffsetLatest:
		return "latest"
	case OffsetCommitted:
		return "committed"
	}
	return strconv.FormatInt(o, 10)
}

// AssignmentStatus is the enumerator's view of a partition.
type AssignmentStatus int32

const (
	Assigned   AssignmentStatus = 0 // a reader has it
	Unassigned AssignmentStatus = 1 // discovered, not handed to a reader yet
)

func (a AssignmentStatus) String() string {
	switch a {
	case Assigned:
		return "assigned"
	case Unassigned:
		return "unassigned"
	}
	return "status(" + strconv.Itoa(int(a)) + ")"
}

// KafkaEnumPartition is one partition the enumerator knows.
type KafkaEnumPartition struct {
	// Split: from v3 the whole split; v1 and v2 record only topic and partition (offsets are
	// OffsetNone, "migrated"); v0 the split as assigned.
	Split   KafkaSplit
	Status  AssignmentStatus
	Subtask int32 // v0 only: the reader it was assigned to; -1 otherwise
}

// KafkaEnumState is a KafkaSourceEnumState checkpoint.
type KafkaEnumState struct {
	Version                  int32
	SplitVersion             int32 // v0 and v3: the split serializer version recorded
	Partitions               []KafkaEnumPartition
	InitialDiscoveryFinished bool // v0 and v1 imply true
}

// Enumerator state versions of the Kafka connector.
const (
	KafkaEnumV0 = 0
	KafkaEnumV3 = 3
)

// minKafkaSplit is the smallest split payload: empty topic, partition and two offsets.
const minKafkaSplit = 2 + 4 + 8 + 8

// DecodeKafkaEnum decodes a KafkaSourceEnumState payload written with serializer version.
func DecodeKafkaEnum(version int32, b []byte, name string) (*KafkaEnumState, error) {
	if version < KafkaEnumV0 || version > KafkaEnumV3 {
		return nil, &UnknownVersionError{Name: name, What: "KafkaSourceEnumState", Version: version, Known: "0, 1, 2, 3"}
	}
	r := javaio.NewBytesReader(b, name, 0)
	e := &KafkaEnumState{Version: version, InitialDiscoveryFinished: true}
	switch version {
	case 0:
		nSub := r.Count("numSubtasks", len(b)/8)
		e.SplitVersion = r.I32("splitVersion")
		seen := map[int32]bool{}
		for i := 0; i < nSub && r.Err() == nil; i++ {
			off := r.Offset()
			sub := r.I32(fmt.Sprintf("subtask[%d].id", i))
			if r.Err() == nil && seen[sub] {
				// the connector wrote a map (subtask -> splits); on a repeat its reader keeps only
				// the last list, so such bytes never came from Flink
				r.FailAt(off, fmt.Sprintf("subtask[%d].id", i), "subtask %d appears twice (the connector writes one record per subtask)", sub)
			}
			seen[sub] = true
			n := r.Count(fmt.Sprintf("subtask[%d].numSplits", i), len(b)/(4+minKafkaSplit))
			for j := 0; j < n && r.Err() == nil; j++ {
				s := readFramedSplit(r, e.SplitVersion, fmt.Sprintf("subtask[%d].split[%d]", i, j))
				e.Partitions = append(e.Partitions, KafkaEnumPartition{Split: s, Status: Assigned, Subtask: sub})
			}
		}
	case 1, 2:
		n := r.Count("numPartitions", len(b)/6)
		for i := 0; i < n && r.Err() == nil; i++ {
			p := KafkaEnumPartition{Status: Assigned, Subtask: -1}
			p.Split.Topic = r.UTF(fmt.Sprintf("partition[%d].topic", i))
			off := r.Offset()
			p.Split.Partition = r.I32(fmt.Sprintf("partition[%d].partition", i))
			if r.Err() == nil && p.Split.Partition < 0 {
				r.FailAt(off, fmt.Sprintf("partition[%d].partition", i), "want a partition number >= 0, got %d", p.Split.Partition)
			}
			p.Split.StartingOffset, p.Split.StoppingOffset = OffsetNone, OffsetNone
			if version == 2 {
				p.Status = readStatus(r, fmt.Sprintf("partition[%d].status", i))
			}
			e.Partitions = append(e.Partitions, p)
		}
		if version == 2 {
			e.InitialDiscoveryFinished = r.Bool("initialDiscoveryFinished")
		}
	case 3:
		n := r.Count("numPartitions", len(b)/(8+minKafkaSplit))
		e.SplitVersion = r.I32("splitVersion")
		for i := 0; i < n && r.Err() == nil; i++ {
			s := readFramedSplit(r, e.SplitVersion, fmt.Sprintf("partition[%d].split", i))
			st := readStatus(r, fmt.Sprintf("partition[%d].status", i))
			e.Partitions = append(e.Partitions, KafkaEnumPartition{Split: s, Status: st, Subtask: -1})
		}
		e.InitialDiscoveryFinished = r.Bool("initialDiscoveryFinished")
	}
	if r.Err() == nil && !r.AtEOF() {
		r.Failf("end of enumerator state", "%d bytes after the last field (version %d allows none)", len(b)-int(r.Offset()), version)
	}
	if r.Err() != nil {
		return nil, r.Err()
	}
	return e, nil
}

// readFramedSplit reads i32 length + split payload, decoding the payload in place so that an
// error points at the right offset of the enumerator state.
func readFramedSplit(r *javaio.Reader, version int32, field string) KafkaSplit {
	lenOff := r.Offset()
	n := r.Count(field+".length", math.MaxInt32)
	if r.Err() != nil {
		return KafkaSplit{}
	}
	if version != KafkaSplitVersion {
		r.FailAt(lenOff, field, "split serializer version %d is not known (known: 0)", version)
		return KafkaSplit{}
	}
	start := r.Offset()
	s := readKafkaSplit(r)
	if r.Err() == nil && r.Offset()-start != int64(n) {
		r.FailAt(lenOff, field+".length", "frame says %d bytes, the split has %d", n, r.Offset()-start)
	}
	return s
}

func readStatus(r *javaio.Reader, field string) AssignmentStatus {
	off := r.Offset()
	v := AssignmentStatus(r.I32(field))
	if r.Err() == nil && v != Assigned && v != Unassigned {
		r.FailAt(off, field, "want 0 (assigned) or 1 (unassigned), got %d", v)
	}
	return v
}

// Encode writes the state in its own Version's layout, as that connector release would.
func (e *KafkaEnumState) Encode() ([]byte, error) {
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	for _, p := range e.Partitions {
		if _, err := p.Split.Encode(); err != nil {
			return nil, fmt.Errorf("enumerator state: %w", err)
		}
	}
	switch e.Version {
	case 0:
		// one record per subtask, in the order the subtasks first appear
		var order []int32
		by := map[int32][]KafkaSplit{}
		for _, p := range e.Partitions {
			if _, ok := by[p.Subtask]; !ok {
				order = append(order, p.Subtask)
			}
			by[p.Subtask] = append(by[p.Subtask], p.Split)
		}
		w.I32(int32(len(order)))
		w.I32(e.SplitVersion)
		for _, sub := range order {
			w.I32(sub)
			w.I32(int32(len(by[sub])))
			for _, s := range by[sub] {
				framedSplit(w, s)
			}
		}
	case 1, 2:
		w.I32(int32(len(e.Partitions)))
		for _, p := range e.Partitions {
			w.UTF(p.Split.Topic)
			w.I32(p.Split.Partition)
			if e.Version == 2 {
				w.I32(int32(p.Status))
			}
		}
		if e.Version == 2 {
			w.Bool(e.InitialDiscoveryFinished)
		}
	case 3:
		w.I32(int32(len(e.Partitions)))
		w.I32(e.SplitVersion)
		for _, p := range e.Partitions {
			framedSplit(w, p.Split)
			w.I32(int32(p.Status))
		}
		w.Bool(e.InitialDiscoveryFinished)
	default:
		return nil, fmt.Errorf("enumerator state: cannot write KafkaSourceEnumState version %d (known: 0, 1, 2, 3)", e.Version)
	}
	return buf.Bytes(), w.Err()
}

func framedSplit(w *javaio.Writer, s KafkaSplit) {
	var b bytes.Buffer
	writeKafkaSplit(javaio.NewWriter(&b), s)
	w.I32(int32(b.Len()))
	w.Raw(b.Bytes())
}
