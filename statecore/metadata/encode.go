package metadata

import (
	"bufio"
	"fmt"
	"io"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Encode writes m in the layout of m.Version, the inverse of Decode: for a file Flink wrote,
// Decode followed by Encode reproduces it byte for byte. m.Tail is written as is; a V4+ file
// needs one (take it from the file being rewritten, see Metadata.Tail).
func Encode(w io.Writer, m *Metadata) error {
	if m.Version < MinVersion || m.Version > MaxVersion {
		return errorf("cannot write version %d; want %d..%d", m.Version, MinVersion, MaxVersion)
	}
	if m.CheckpointID < 0 {
		return errorf("negative checkpoint id %d", m.CheckpointID)
	}
	if m.Version >= 4 && len(m.Tail) == 0 {
		return errorf("version %d needs the serialized CheckpointProperties tail", m.Version)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	e := &encoder{w: javaio.NewWriter(bw), version: m.Version}
	e.metadata(m)
	if e.err != nil {
		return e.err
	}
	if err := e.w.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

// errorf reports a structural problem of the Metadata being encoded.
func errorf(format string, args ...any) error { return fmt.Errorf("metadata: "+format, args...) }

type encoder struct {
	w       *javaio.Writer
	version int32
	err     error // structural error (the javaio.Writer keeps I/O errors)
}

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = errorf(format, args...)
	}
}

func (e *encoder) metadata(m *Metadata) {
	w := e.w
	w.I32(Magic)
	w.I32(m.Version)
	w.I64(m.CheckpointID)
	w.I32(int32(len(m.MasterStates)))
	for _, ms := range m.MasterStates {
		e.masterState(ms)
	}
	w.I32(int32(len(m.Operators)))
	for i, op := range m.Operators {
		if op == nil {
			e.fail("operator[%d] is nil", i)
			return
		}
		e.operator(i, op)
		if e.err != nil {
			return
		}
	}
	w.Raw(m.Tail)
}

func (e *encoder) masterState(ms MasterState) {
	name := javaio.EncodeModifiedUTF8(ms.Name)
	if len(name) > javaio.MaxUTFLen {
		e.fail("master state name is %d bytes, more than %d", len(name), javaio.MaxUTFLen)
		return
	}
	w := e.w
	w.I32(masterStateMagic)
	w.I32(int32(4 + 2 + len(name) + 4 + len(ms.Payload)))
	w.I32(ms.Version)
	w.U16(uint16(len(name)))
	w.Raw(name)
	w.I32(int32(len(ms.Payload)))
	w.Raw(ms.Payload)
}

func (e *encoder) operator(i int, op *OperatorState) {
	w := e.w
	if e.version >= 5 {
		w.UTF(op.Name)
		w.UTF(op.UID)
	} else if op.Name != "" || op.UID != "" {
		e.fail("operator[%d]: version %d cannot store the operator name or UID (V5+ can)", i, e.version)
		return
	}
	w.Raw(op.ID[:])
	w.I32(op.Parallelism)
	w.I32(op.MaxParallelism)
	if op.Coordinator != nil {
		e.streamHandle(op.Coordinator)
	} else {
		w.U8(TagNull)
	}
	if op.FullyFinished {
		if op.Coordinator != nil || len(op.Subtasks) > 0 {
			e.fail("operator[%d]: a fully finished operator has no coordinator state and no subtasks", i)
			return
		}
		w.I32(-1)
		return
	}
	w.I32(int32(len(op.Subtasks)))
	for j, st := range op.Subtasks {
		if st == nil {
			e.fail("operator[%d].subtask[%d] is nil", i, j)
			return
		}
		if st.Index < 0 {
			e.fail("operator[%d].subtask[%d]: negative index %d", i, j, st.Index)
			return
		}
		if st.Finished {
			w.I32(-st.Index - 1)
			continue
		}
		w.I32(st.Index)
		e.subtask(st)
		if e.version >= 7 {
			w.Bool(st.HasRefCheckpoint)
			if st.HasRefCheckpoint {
				w.I64(st.RefCheckpointID)
			}
		}
	}
}

func (e *encoder) subtask(st *SubtaskState) {
	w := e.w
	for _, h := range []OperatorHandle{st.ManagedOperator, st.RawOperator} {
		if h == nil {
			w.I32(0)
			continue
		}
		w.I32(1)
		e.operatorHandle(h)
	}
	e.keyedHandle(st.ManagedKeyed)
	e.keyedHandle(st.RawKeyed)
	e.channelHandles(st.InputChannels)
	e.channelHandles(st.OutputChannels)
}

func (e *encoder) channelHandles(hs []*ChannelHandle) {
	w := e.w
	w.I32(int32(len(hs)))
	for _, h := range hs {
		if e.version >= 6 {
			if h.Type == ChannelUntagged {
				e.fail("version %d channel handles need a type (1..4)", e.version)
				return
			}
			w.U8(h.Type)
		} else if h.Type != ChannelUntagged && h.merged() {
			e.fail("version %d cannot store merged channel handles (V6+ can)", e.version)
			return
		}
		w.I32(h.SubtaskIndex)
		if h.merged() {
			w.I64(h.Size)
			e.streamHandle(h.Delegate)
			w.I32(int32(len(h.SerializedOffsets)))
			w.Raw(h.SerializedOffsets)
			continue
		}
		w.I32(h.Info[0])
		w.I32(h.Info[1])
		w.I32(int32(len(h.Offsets)))
		for _, o := range h.Offsets {
			w.I64(o)
		}
		w.I64(h.Size)
		e.streamHandle(h.Delegate)
	}
}

func (e *encoder) streamHandle(h StreamHandle) {
	w := e.w
	if h == nil {
		w.U8(TagNull)
		return
	}
	switch h := h.(type) {
	case *ByteStreamHandle:
		w.U8(TagByteStream)
		w.UTF(h.Name)
		w.I32(int32(len(h.Data)))
		w.Raw(h.Data)
	case *FileHandle:
		w.U8(TagFile)
		w.I64(h.Size)
		w.UTF(h.Path)
	case *RelativeFileHandle:
		w.U8(TagRelativeFile)
		w.UTF(h.Path)
		w.I64(h.Size)
	case *SegmentFileHandle:
		w.U8(TagSegmentFile)
		w.I64(h.StartPos)
		w.I64(h.Size)
		w.I32(h.Scope)
		w.UTF(h.Path)
		w.UTF(h.LogicalFileID)
	case *EmptySegmentFileHandle:
		w.U8(TagEmptySegmentFile)
	case *KeyGroupsHandle:
		// In a stream slot Flink writes every key-groups handle with the legacy tag 3.
		e.keyGroups(h, TagKeyGroups)
	default:
		e.fail("unsupported stream handle %T", h)
	}
}

func (e *encoder) keyGroups(h *KeyGroupsHandle, tag byte) {
	w := e.w
	if int(h.Range.Num) != len(h.Offsets) || h.Range.Num < 0 {
		e.fail("key-groups handle: %d key groups but %d offsets", h.Range.Num, len(h.Offsets))
		return
	}
	w.U8(tag)
	w.I32(h.Range.Start)
	w.I32(h.Range.Num)
	for _, o := range h.Offsets {
		w.I64(o)
	}
	e.streamHandle(h.Delegate)
	if tag == TagKeyGroupsV2 {
		w.UTF(h.StateHandleID)
	}
}

func (e *encoder) keyedHandle(h KeyedHandle) {
	w := e.w
	if h == nil {
		w.U8(TagNull)
		return
	}
	switch h := h.(type) {
	case *KeyGroupsHandle:
		tag := h.TagByte
		if tag != TagKeyGroups && tag != TagSavepointKeyGroups && tag != TagKeyGroupsV2 {
			e.fail("key-groups handle with tag %d", tag)
			return
		}
		e.keyGroups(h, tag)
	case *IncrementalHandle:
		if h.TagByte != TagIncrementalKeyGroups && h.TagByte != TagIncrementalKeyGroupsV2 {
			e.fail("incremental handle with tag %d", h.TagByte)
			return
		}
		v2 := h.TagByte == TagIncrementalKeyGroupsV2
		w.U8(h.TagByte)
		w.I64(h.CheckpointID)
		w.UTF(h.BackendID)
		w.I32(h.Range.Start)
		w.I32(h.Range.Num)
		if v2 {
			w.I64(h.PersistedSize)
		}
		e.streamHandle(h.MetaData)
		e.pathHandles(h.Shared)
		e.pathHandles(h.Private)
		if v2 {
			w.UTF(h.StateHandleID)
		}
	case *ChangelogHandle:
		if h.TagByte != TagChangelog && h.TagByte != TagChangelogV2 {
			e.fail("changelog handle with tag %d", h.TagByte)
			return
		}
		w.U8(h.TagByte)
		w.I32(h.Range.Start)
		w.I32(h.Range.Num)
		w.I64(h.PersistedSize)
		w.I32(int32(len(h.Materialized)))
		for _, k := range h.Materialized {
			e.keyedHandle(k)
		}
		w.I32(int32(len(h.NonMaterialized)))
		for _, k := range h.NonMaterialized {
			e.keyedHandle(k)
		}
		w.I64(h.MaterializationID)
		if h.TagByte == TagChangelogV2 {
			w.I64(h.CheckpointID)
		}
		w.UTF(h.StateHandleID)
	case *ChangelogBytesHandle:
		w.U8(TagChangelogByteIncrement)
		w.I32(h.Range.Start)
		w.I32(h.Range.Num)
		w.I64(h.From)
		w.I64(h.To)
		w.I32(int32(len(h.Changes)))
		for _, c := range h.Changes {
			w.I32(c.KeyGroup)
			w.I32(int32(len(c.Data)))
			w.Raw(c.Data)
		}
		w.UTF(h.StateHandleID)
	case *ChangelogFileHandle:
		if h.TagByte != TagChangelogFileIncrement && h.TagByte != TagChangelogFileIncrementV2 {
			e.fail("changelog file handle with tag %d", h.TagByte)
			return
		}
		w.U8(h.TagByte)
		w.I32(h.Range.Start)
		w.I32(h.Range.Num)
		w.I32(int32(len(h.Handles)))
		for _, oh := range h.Handles {
			w.I64(oh.Offset)
			e.streamHandle(oh.Handle)
		}
		w.I64(h.Size)
		w.I64(h.PersistedSize)
		w.UTF(h.StateHandleID)
		if h.TagByte == TagChangelogFileIncrementV2 {
			w.UTF(h.StorageID)
		}
	default:
		e.fail("unsupported keyed state handle %T", h)
	}
}

func (e *encoder) pathHandles(ps []PathHandle) {
	e.w.I32(int32(len(ps)))
	for _, p := range ps {
		e.w.UTF(p.LocalPath)
		e.streamHandle(p.Handle)
	}
}

func (e *encoder) operatorHandle(h OperatorHandle) {
	w := e.w
	oh, ok := h.(*OperatorStreamHandle)
	if !ok {
		e.fail("unsupported operator state handle %T", h)
		return
	}
	if oh.TagByte != TagPartitionableOperatorState && oh.TagByte != TagSegmentPartitionableOpState {
		e.fail("operator state handle with tag %d", oh.TagByte)
		return
	}
	w.U8(oh.TagByte)
	w.I32(int32(len(oh.States)))
	for _, s := range oh.States {
		w.UTF(s.Name)
		w.U8(s.Mode)
		w.I32(int32(len(s.Offsets)))
		for _, o := range s.Offsets {
			w.I64(o)
		}
	}
	if oh.TagByte == TagSegmentPartitionableOpState {
		w.UTF(oh.TaskOwnedDir)
		w.UTF(oh.SharedDir)
		w.Bool(oh.IsEmpty)
	}
	e.streamHandle(oh.Delegate)
}
