package main

import (
	"fmt"
	"io"
	"strconv"

	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/statecore/metadata"
)

// inspectHandle describes one state handle of a subtask for `savepoint inspect --subtasks`.
type inspectHandle struct {
	Slot      string `json:"slot"`                // managedKeyed, rawKeyed, managedOperator, rawOperator, inputChannel, outputChannel
	Kind      string `json:"kind"`                // the handle type, e.g. "key-groups (savepoint)"
	Tag       int    `json:"tag"`                 // the _metadata tag byte
	KeyGroups string `json:"keyGroups,omitempty"` // "[start, end]" for keyed handles
	Stream    string `json:"stream,omitempty"`    // where the bytes are: "inline", a relative or absolute path
	Size      int64  `json:"size"`                // the handle's state size
}

// inspectSubtask is one subtask record of an operator.
type inspectSubtask struct {
	Index            int32           `json:"index"`
	Finished         bool            `json:"finished,omitempty"`
	CheckpointedSize int64           `json:"checkpointedSize"`
	Handles          []inspectHandle `json:"handles"`
}

// subtaskDetails lists the subtask records of op, in file order.
func subtaskDetails(op *metadata.OperatorState) []inspectSubtask {
	out := make([]inspectSubtask, 0, len(op.Subtasks))
	for _, st := range op.Subtasks {
		is := inspectSubtask{Index: st.Index, Finished: st.Finished, CheckpointedSize: st.CheckpointedSize(), Handles: []inspectHandle{}}
		for _, h := range []struct {
			slot string
			h    metadata.OperatorHandle
		}{{"managedOperator", st.ManagedOperator}, {"rawOperator", st.RawOperator}} {
			if h.h != nil {
				ih := inspectHandle{Slot: h.slot, Kind: handleKind(h.h.Tag()), Tag: int(h.h.Tag()), Size: h.h.StateSize()}
				if oh, ok := h.h.(*metadata.OperatorStreamHandle); ok {
					ih.Stream = streamWhere(oh.Delegate)
				}
				is.Handles = append(is.Handles, ih)
			}
		}
		for _, h := range []struct {
			slot string
			h    metadata.KeyedHandle
		}{{"managedKeyed", st.ManagedKeyed}, {"rawKeyed", st.RawKeyed}} {
			if h.h == nil {
				continue
			}
			r := h.h.KeyGroups()
			ih := inspectHandle{Slot: h.slot, Kind: handleKind(h.h.Tag()), Tag: int(h.h.Tag()), Size: h.h.StateSize(),
				KeyGroups: fmt.Sprintf("[%d, %d]", r.Start, r.End())}
			if kh, ok := h.h.(*metadata.KeyGroupsHandle); ok {
				ih.Stream = streamWhere(kh.Delegate)
			}
			is.Handles = append(is.Handles, ih)
		}
		for _, ch := range st.InputChannels {
			is.Handles = append(is.Handles, inspectHandle{Slot: "inputChannel", Kind: "channel state", Stream: streamWhere(ch.Delegate), Size: ch.StateSize()})
		}
		for _, ch := range st.OutputChannels {
			is.Handles = append(is.Handles, inspectHandle{Slot: "outputChannel", Kind: "channel state", Stream: streamWhere(ch.Delegate), Size: ch.StateSize()})
		}
		out = append(out, is)
	}
	return out
}

// handleKind names a handle tag for people.
func handleKind(tag byte) string {
	switch tag {
	case metadata.TagByteStream:
		return "inline bytes"
	case metadata.TagFile:
		return "file"
	case metadata.TagRelativeFile:
		return "relative file"
	case metadata.TagKeyGroups:
		return "key groups (legacy)"
	case metadata.TagSavepointKeyGroups:
		return "key groups (savepoint)"
	case metadata.TagKeyGroupsV2:
		return "key groups (checkpoint)"
	case metadata.TagPartitionableOperatorState:
		return "operator state"
	case metadata.TagSegmentPartitionableOpState:
		return "operator state (file merging)"
	case metadata.TagIncrementalKeyGroups, metadata.TagIncrementalKeyGroupsV2:
		return "RocksDB native/incremental"
	case metadata.TagChangelog, metadata.TagChangelogV2:
		return "changelog"
	case metadata.TagChangelogByteIncrement, metadata.TagChangelogFileIncrement, metadata.TagChangelogFileIncrementV2:
		return "changelog increment"
	case metadata.TagSegmentFile:
		return "file segment"
	case metadata.TagEmptySegmentFile:
		return "empty segment"
	}
	return "tag " + strconv.Itoa(int(tag))
}

// streamWhere says where a stream handle's bytes are.
func streamWhere(h metadata.StreamHandle) string {
	switch h := h.(type) {
	case nil:
		return ""
	case *metadata.ByteStreamHandle:
		return "inline"
	case *metadata.RelativeFileHandle:
		return h.Path
	case *metadata.FileHandle:
		return h.Path
	case *metadata.SegmentFileHandle:
		return fmt.Sprintf("%s@%d", h.Path, h.StartPos)
	case *metadata.KeyGroupsHandle:
		return streamWhere(h.Delegate)
	}
	return handleKind(h.Tag())
}

// writeSubtasksText prints the subtask records of every operator.
func writeSubtasksText(w io.Writer, out *inspectOutput) error {
	fmt.Fprintln(w, "\nsubtasks:")
	tw := newTable(w, fittable.Column{Header: "operator", Elide: true}, fittable.Column{Header: "slot", Drop: 1},
		fittable.Column{Header: "handle", Elide: true}, fittable.Column{Header: "stream", Elide: true, MinWidth: 12})
	fmt.Fprintln(tw, "operator\tsubtask\tslot\thandle\tkey groups\tstream\tsize")
	for _, op := range out.Operators {
		who := op.OperatorUIDHash
		if op.OperatorUID != nil {
			who = *op.OperatorUID
		}
		for _, st := range op.Subtasks {
			if st.Finished {
				fmt.Fprintf(tw, "%s\t%d\t(finished)\t\t\t\t\n", who, st.Index)
				continue
			}
			if len(st.Handles) == 0 {
				fmt.Fprintf(tw, "%s\t%d\t(no state)\t\t\t\t0\n", who, st.Index)
			}
			for _, h := range st.Handles {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\n", who, st.Index, h.Slot, h.Kind, orDash(h.KeyGroups), orDash(h.Stream), h.Size)
			}
		}
	}
	return tw.Flush()
}
