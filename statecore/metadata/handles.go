package metadata

import "strconv"

// Handle tags as Flink's MetadataV2V3SerializerBase numbers them (checked against the
// flink-runtime 2.3.0 class file).
const (
	TagNull                        = 0
	TagByteStream                  = 1
	TagFile                        = 2
	TagKeyGroups                   = 3
	TagPartitionableOperatorState  = 4
	TagIncrementalKeyGroups        = 5
	TagRelativeFile                = 6
	TagSavepointKeyGroups          = 7
	TagChangelog                   = 8
	TagChangelogByteIncrement      = 9
	TagChangelogFileIncrement      = 10
	TagIncrementalKeyGroupsV2      = 11
	TagKeyGroupsV2                 = 12
	TagChangelogFileIncrementV2    = 13
	TagChangelogV2                 = 14
	TagSegmentFile                 = 15
	TagEmptySegmentFile            = 16
	TagSegmentPartitionableOpState = 17
)

// StreamHandle points at a byte stream: inline bytes, a file, or a segment of a shared file.
// A nil StreamHandle is tag 0. The concrete types are *ByteStreamHandle, *FileHandle,
// *RelativeFileHandle, *SegmentFileHandle, *EmptySegmentFileHandle and *KeyGroupsHandle.
type StreamHandle interface {
	// Tag is the handle's tag byte.
	Tag() byte
	// StateSize is Flink's getStateSize(): the number of bytes of the stream.
	StateSize() int64
}

// KeyedHandle is a keyed-state handle: *KeyGroupsHandle, *IncrementalHandle, *ChangelogHandle,
// *ChangelogBytesHandle or *ChangelogFileHandle. A nil KeyedHandle is tag 0.
type KeyedHandle interface {
	Tag() byte
	StateSize() int64
	// CheckpointedSize is Flink's getCheckpointedSize(), which is what savepoint_metadata adds up.
	CheckpointedSize() int64
	// KeyGroups is the key-group range the handle covers.
	KeyGroups() KeyGroupRange
}

// OperatorHandle is an operator-state handle, *OperatorStreamHandle (tags 4 and 17).
type OperatorHandle interface {
	Tag() byte
	StateSize() int64
}

// KeyGroupRange is the inclusive range [Start, Start+Num-1], stored as start and count.
type KeyGroupRange struct {
	Start int32
	Num   int32
}

// End is the last key group of the range (Start-1 when the range is empty).
func (r KeyGroupRange) End() int32 { return r.Start + r.Num - 1 }

// Contains reports whether kg is in the range.
func (r KeyGroupRange) Contains(kg int32) bool { return kg >= r.Start && kg <= r.End() }

// ByteStreamHandle (tag 1) holds the stream's bytes inline. Name is the path Flink would have
// used had the stream been large enough for a file (no such file exists).
type ByteStreamHandle struct {
	Name string
	Data []byte
}

func (h *ByteStreamHandle) Tag() byte        { return TagByteStream }
func (h *ByteStreamHandle) StateSize() int64 { return int64(len(h.Data)) }

// FileHandle (tag 2) is a file named by an absolute URI or path, e.g. "file:/tmp/sp/abc".
type FileHandle struct {
	Path string
	Size int64 // -1 when the writer did not know it
}

func (h *FileHandle) Tag() byte        { return TagFile }
func (h *FileHandle) StateSize() int64 { return h.Size }

// RelativeFileHandle (tag 6) is a file named relative to the directory holding _metadata
// (savepoints, so that the directory can be moved).
type RelativeFileHandle struct {
	Path string
	Size int64
}

func (h *RelativeFileHandle) Tag() byte        { return TagRelativeFile }
func (h *RelativeFileHandle) StateSize() int64 { return h.Size }

// SegmentFileHandle (tag 15) is a byte range of a file shared by several handles (file merging).
type SegmentFileHandle struct {
	StartPos      int64
	Size          int64
	Scope         int32 // 0 EXCLUSIVE, 1 SHARED
	Path          string
	LogicalFileID string
}

func (h *SegmentFileHandle) Tag() byte        { return TagSegmentFile }
func (h *SegmentFileHandle) StateSize() int64 { return h.Size }

// EmptySegmentFileHandle (tag 16) is an empty segment; it stores nothing.
type EmptySegmentFileHandle struct{}

func (h *EmptySegmentFileHandle) Tag() byte        { return TagEmptySegmentFile }
func (h *EmptySegmentFileHandle) StateSize() int64 { return 0 }

// KeyGroupsHandle is keyed state of a range of key groups in one stream, with the offset of each
// key group's data in that stream. Tag 7 (savepoints), 12 (checkpoints, with StateHandleID) and
// the legacy 3 (also used when such a handle sits in a stream slot).
type KeyGroupsHandle struct {
	TagByte       byte
	Range         KeyGroupRange
	Offsets       []int64 // one per key group, in key-group order
	Delegate      StreamHandle
	StateHandleID string // tag 12 only
}

func (h *KeyGroupsHandle) Tag() byte                { return h.TagByte }
func (h *KeyGroupsHandle) StateSize() int64         { return sizeOf(h.Delegate) }
func (h *KeyGroupsHandle) CheckpointedSize() int64  { return h.StateSize() }
func (h *KeyGroupsHandle) KeyGroups() KeyGroupRange { return h.Range }

// Offset returns the offset of key group kg in the delegate stream.
func (h *KeyGroupsHandle) Offset(kg int32) (int64, bool) {
	if !h.Range.Contains(kg) || int(kg-h.Range.Start) >= len(h.Offsets) {
		return 0, false
	}
	return h.Offsets[kg-h.Range.Start], true
}

// PathHandle is one file of an incremental snapshot: the name the backend used locally and the
// stream it was uploaded to.
type PathHandle struct {
	LocalPath string
	Handle    StreamHandle
}

// IncrementalHandle is a RocksDB/ForSt snapshot made of backend-native files (tag 11, legacy 5).
// It is read and written back but its files cannot be interpreted without RocksDB; a savepoint
// holding one is a native-format savepoint.
type IncrementalHandle struct {
	TagByte       byte
	CheckpointID  int64
	BackendID     string // UUID text, kept as written
	Range         KeyGroupRange
	PersistedSize int64 // tag 11 only (tag 5 files have none: -1)
	MetaData      StreamHandle
	Shared        []PathHandle
	Private       []PathHandle
	StateHandleID string // tag 11 only
}

func (h *IncrementalHandle) Tag() byte { return h.TagByte }

// StateSize is the sum of the meta-data stream and every shared and private file.
func (h *IncrementalHandle) StateSize() int64 {
	n := sizeOf(h.MetaData)
	for _, p := range h.Shared {
		n += sizeOf(p.Handle)
	}
	for _, p := range h.Private {
		n += sizeOf(p.Handle)
	}
	return n
}
func (h *IncrementalHandle) CheckpointedSize() int64  { return h.PersistedSize }
func (h *IncrementalHandle) KeyGroups() KeyGroupRange { return h.Range }

// ChangelogHandle is a changelog state backend snapshot (tag 14, legacy 8): materialized
// snapshots of the wrapped backend plus not-yet-materialized changes.
type ChangelogHandle struct {
	TagByte           byte
	Range             KeyGroupRange
	PersistedSize     int64
	Materialized      []KeyedHandle // entries may be nil (Flink drops them with a warning)
	NonMaterialized   []KeyedHandle
	MaterializationID int64
	CheckpointID      int64 // tag 14 only
	StateHandleID     string
}

func (h *ChangelogHandle) Tag() byte { return h.TagByte }
func (h *ChangelogHandle) StateSize() int64 {
	var n int64
	for _, k := range h.Materialized {
		n += keyedStateSize(k)
	}
	for _, k := range h.NonMaterialized {
		n += keyedStateSize(k)
	}
	return n
}
func (h *ChangelogHandle) CheckpointedSize() int64  { return h.PersistedSize }
func (h *ChangelogHandle) KeyGroups() KeyGroupRange { return h.Range }

// StateChange is one change of an in-memory changelog; KeyGroup -1 marks a metadata change.
type StateChange struct {
	KeyGroup int32
	Data     []byte
}

// ChangelogBytesHandle is an in-memory changelog increment (tag 9).
type ChangelogBytesHandle struct {
	Range         KeyGroupRange
	From, To      int64
	Changes       []StateChange
	StateHandleID string
}

func (h *ChangelogBytesHandle) Tag() byte { return TagChangelogByteIncrement }
func (h *ChangelogBytesHandle) StateSize() int64 {
	var n int64
	for _, c := range h.Changes {
		n += int64(len(c.Data))
	}
	return n
}
func (h *ChangelogBytesHandle) CheckpointedSize() int64  { return h.StateSize() }
func (h *ChangelogBytesHandle) KeyGroups() KeyGroupRange { return h.Range }

// OffsetHandle is a stream with the offset where a changelog increment starts in it.
type OffsetHandle struct {
	Offset int64
	Handle StreamHandle
}

// ChangelogFileHandle is a changelog increment stored in files (tag 13, legacy 10).
type ChangelogFileHandle struct {
	TagByte       byte
	Range         KeyGroupRange
	Handles       []OffsetHandle
	Size          int64
	PersistedSize int64
	StateHandleID string
	StorageID     string // tag 13 only ("filesystem" implied for 10)
}

func (h *ChangelogFileHandle) Tag() byte                { return h.TagByte }
func (h *ChangelogFileHandle) StateSize() int64         { return h.Size }
func (h *ChangelogFileHandle) CheckpointedSize() int64  { return h.PersistedSize }
func (h *ChangelogFileHandle) KeyGroups() KeyGroupRange { return h.Range }

// Distribution modes of operator state (OperatorStateHandle.Mode ordinals).
const (
	ModeSplitDistribute = 0 // ListState: split among subtasks on restore
	ModeUnion           = 1 // UnionListState: every subtask gets everything
	ModeBroadcast       = 2 // BroadcastState: every subtask has the same copy
)

// ModeName names a distribution mode as the expectation files do: split, union, broadcast.
func ModeName(m byte) string {
	switch m {
	case ModeSplitDistribute:
		return "split"
	case ModeUnion:
		return "union"
	case ModeBroadcast:
		return "broadcast"
	}
	return "mode(" + strconv.Itoa(int(m)) + ")"
}

// OperatorStateInfo locates one named operator state in the handle's stream: its mode and the
// offsets of its partitions (list elements, or the single broadcast map).
type OperatorStateInfo struct {
	Name    string
	Mode    byte
	Offsets []int64
}

// OperatorStreamHandle is operator state (tag 4); with file merging (tag 17) it also names the
// directories and must delegate to a segment handle.
type OperatorStreamHandle struct {
	TagByte      byte
	States       []OperatorStateInfo // in file order (a Java HashMap's order)
	TaskOwnedDir string              // tag 17 only
	SharedDir    string              // tag 17 only
	IsEmpty      bool                // tag 17 only
	Delegate     StreamHandle
}

func (h *OperatorStreamHandle) Tag() byte        { return h.TagByte }
func (h *OperatorStreamHandle) StateSize() int64 { return sizeOf(h.Delegate) }

// Channel-state handle types (V6+ type byte; 0 for the untagged V3..V5 layout, where the slot
// says input or output).
const (
	ChannelUntagged     = 0
	ChannelInput        = 1
	ChannelOutput       = 2
	ChannelMergedInput  = 3
	ChannelMergedOutput = 4
)

// ChannelHandle is in-flight data of one input channel or result subpartition (unaligned
// checkpoints). For plain handles Info is (gate, channel) or (partition, subpartition); merged
// handles (types 3 and 4) carry serialized offsets instead.
type ChannelHandle struct {
	Type              byte
	SubtaskIndex      int32
	Info              [2]int32
	Offsets           []int64
	Size              int64
	Delegate          StreamHandle
	SerializedOffsets []byte // merged only
}

func (h *ChannelHandle) merged() bool {
	return h.Type == ChannelMergedInput || h.Type == ChannelMergedOutput
}

// StateSize is the stored size.
func (h *ChannelHandle) StateSize() int64 { return h.Size }

func sizeOf(h StreamHandle) int64 {
	if h == nil {
		return 0
	}
	return h.StateSize()
}

func keyedStateSize(h KeyedHandle) int64 {
	if h == nil {
		return 0
	}
	return h.StateSize()
}
