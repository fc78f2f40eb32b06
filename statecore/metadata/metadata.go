package metadata

import (
	"encoding/hex"
	"strconv"
)

// Magic is the int32 every _metadata file starts with.
const Magic int32 = 0x4960672D

// masterStateMagic starts every master state record.
const masterStateMagic int32 = -915728746 // 0xC96B1696

// Versions this package reads and writes. Flink 2.3.0 writes 6.
const (
	MinVersion = 3
	MaxVersion = 7
)

// Metadata is the content of a _metadata file.
type Metadata struct {
	Version      int32
	CheckpointID int64
	MasterStates []MasterState
	Operators    []*OperatorState // in file order
	// Tail is everything after the operator list. From V4 on it is the Java-serialized
	// CheckpointProperties object (an ObjectOutputStream stream starting AC ED 00 05); Flink's
	// class descriptors in it carry JVM-computed serial version ids, so it is kept verbatim.
	Tail []byte
}

// MasterState is the state of a master hook (checkpoints only, rare).
type MasterState struct {
	Name    string
	Version int32
	Payload []byte
}

// OperatorID is the 16-byte id of an operator: the murmur3_128 hash of its UID when it has one.
// The bytes are stored in file order (Flink's lower long, then upper long, both big-endian).
type OperatorID [16]byte

// String is the 32-digit lowercase hex form Flink prints (the "uid hash").
func (id OperatorID) String() string { return hex.EncodeToString(id[:]) }

// ParseOperatorID parses the 32-hex-digit form.
func ParseOperatorID(s string) (OperatorID, error) {
	var id OperatorID
	if len(s) != 32 {
		return id, &parseError{s}
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, &parseError{s}
	}
	return id, nil
}

type parseError struct{ s string }

func (e *parseError) Error() string {
	return "operator id " + strconv.Quote(e.s) + ": want 32 hexadecimal digits"
}

// OperatorState is the snapshot of one operator (one JobVertex operator of a chain).
type OperatorState struct {
	Name           string // V5+: "" when absent
	UID            string // V5+: "" when absent (the operator had no .uid(...))
	ID             OperatorID
	Parallelism    int32
	MaxParallelism int32
	Coordinator    *ByteStreamHandle // nil when there is none
	// FullyFinished means every subtask had finished: Flink writes the count -1 and no records.
	FullyFinished bool
	Subtasks      []*SubtaskState // in file order (ascending index as Flink writes them)
}

// SubtaskState is the state of one subtask of an operator, or a marker that it finished.
type SubtaskState struct {
	Index    int32
	Finished bool // a finished subtask has no handles

	ManagedOperator OperatorHandle // nil when absent
	RawOperator     OperatorHandle
	ManagedKeyed    KeyedHandle
	RawKeyed        KeyedHandle
	InputChannels   []*ChannelHandle
	OutputChannels  []*ChannelHandle // result subpartitions

	// V7 only: the checkpoint a regional checkpoint reuses this state from.
	HasRefCheckpoint bool
	RefCheckpointID  int64
}

// Subtask returns the record of subtask i, or nil. Like Flink's map, a later record for the same
// index wins.
func (o *OperatorState) Subtask(i int32) *SubtaskState {
	var found *SubtaskState
	for _, s := range o.Subtasks {
		if s.Index == i {
			found = s
		}
	}
	return found
}
