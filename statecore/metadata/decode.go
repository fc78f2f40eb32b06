package metadata

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Limits that keep a corrupt file from driving allocation or recursion. Every count is also
// read element by element, so memory grows only with bytes actually present in the file.
const (
	maxCount       = 1 << 28 // generic element count (a count above this is corruption)
	maxKeyGroups   = 1 << 15 // Flink's upper bound for max parallelism (32768)
	maxTail        = 64 << 20
	maxNesting     = 16 // changelog handles nest keyed handles
	preallocateMax = 1024
)

// Decode reads a whole _metadata file from r. name is used in errors (e.g. the file path).
func Decode(r io.Reader, name string) (*Metadata, error) {
	// The file is read into memory first: decoding from a slice is several times faster than
	// through a bufio.Reader, and _metadata files are small (MBs for the widest jobs).
	data, err := readAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return DecodeBytes(data, name)
}

// MaxFileSize bounds what Decode reads. Flink keeps inline state small (at most 1 MiB per
// handle, 20 KiB by default), so even the widest jobs' _metadata stay far below it.
const MaxFileSize = 1 << 30

// readAll is io.ReadAll bounded by MaxFileSize that sizes its buffer once when r knows its length
// (files, bytes readers), instead of doubling its way up.
func readAll(r io.Reader) ([]byte, error) {
	size := int64(-1)
	switch r := r.(type) {
	case interface{ Len() int }:
		size = int64(r.Len())
	case interface{ Stat() (fs.FileInfo, error) }:
		if fi, err := r.Stat(); err == nil && fi.Mode().IsRegular() {
			size = fi.Size()
		}
	}
	if size > MaxFileSize {
		return nil, fmt.Errorf("%d bytes is more than a _metadata file can be (limit %d)", size, MaxFileSize)
	}
	lr := io.LimitReader(r, MaxFileSize+1)
	var buf []byte
	if size >= 0 {
		buf = make([]byte, 0, size+1) // +1 so that EOF is seen without growing
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow (a reader of unknown length, or a growing file)
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if len(buf) > MaxFileSize {
			return nil, fmt.Errorf("more than %d bytes: too large for a _metadata file", MaxFileSize)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// DecodeBytes decodes a whole _metadata file held in memory. The result does not alias data.
func DecodeBytes(data []byte, name string) (*Metadata, error) {
	d := &decoder{r: javaio.NewBytesReader(data, name, 0), data: data, strs: map[string]string{}}
	m := d.metadata()
	if err := d.err(); err != nil {
		return nil, err
	}
	return m, nil
}

// decoder reads with a javaio.Reader and remembers where in the structure it is (operator,
// subtask, slot) so that an error says which record broke, without formatting a field path for
// every read.
type decoder struct {
	r       *javaio.Reader
	version int32
	op      int // operator index, -1 outside
	opUID   string
	sub     int // subtask record index, -1 outside
	slot    string
	depth   int

	// Slabs: wide jobs have 100,000s of subtask records, each with a handful of small objects;
	// carving them from chunks instead of allocating each one halves decoding time.
	subs  []SubtaskState
	kgs   []KeyGroupsHandle
	rels  []RelativeFileHandle
	longs []int64

	// data is the whole file when decoding from memory (the reader's offset indexes it); strs
	// maps the raw bytes of each string read by utf to its decoded value.
	data []byte
	strs map[string]string
}

// utf reads a writeUTF string as javaio.Reader.UTF does, but returns the same string for every
// occurrence of the same bytes: a wide savepoint repeats its file paths, state names and handle
// ids in every subtask record, and allocating each copy was a tenth of decoding time. The map is
// keyed by the raw (modified UTF-8) bytes, so what decodes differently, or fails to decode, never
// matches an earlier string; a first occurrence goes through Reader.UTF and its errors.
func (d *decoder) utf(field string) string {
	if d.data != nil {
		if off := d.r.Offset(); d.r.Err() == nil && off >= 0 && off+2 <= int64(len(d.data)) {
			n := int64(binary.BigEndian.Uint16(d.data[off:]))
			if end := off + 2 + n; end <= int64(len(d.data)) {
				raw := d.data[off+2 : end]
				if s, ok := d.strs[string(raw)]; ok {
					d.r.Skip(field, 2+n)
					return s
				}
				s := d.r.UTF(field)
				if d.r.Err() == nil {
					key := s
					if len(s) != len(raw) || s != string(raw) {
						key = string(raw)
					}
					d.strs[key] = s
				}
				return s
			}
		}
	}
	return d.r.UTF(field)
}

const slabSize = 256

func (d *decoder) newSubtask() *SubtaskState {
	if len(d.subs) == 0 {
		d.subs = make([]SubtaskState, slabSize)
	}
	s := &d.subs[0]
	d.subs = d.subs[1:]
	return s
}

func (d *decoder) newKeyGroups() *KeyGroupsHandle {
	if len(d.kgs) == 0 {
		d.kgs = make([]KeyGroupsHandle, slabSize)
	}
	h := &d.kgs[0]
	d.kgs = d.kgs[1:]
	return h
}

func (d *decoder) newRelative() *RelativeFileHandle {
	if len(d.rels) == 0 {
		d.rels = make([]RelativeFileHandle, slabSize)
	}
	h := &d.rels[0]
	d.rels = d.rels[1:]
	return h
}

// int64s returns a zeroed slice of n int64s with no spare capacity (appending to it copies).
func (d *decoder) int64s(n int) []int64 {
	if n > 1024 {
		return make([]int64, n)
	}
	if len(d.longs) < n {
		d.longs = make([]int64, 16*1024)
	}
	s := d.longs[:n:n]
	d.longs = d.longs[n:]
	return s
}

// err returns the reader's error with the structural position prefixed to its field.
func (d *decoder) err() error {
	err := d.r.Err()
	if err == nil {
		return nil
	}
	var fe *javaio.FormatError
	if errors.As(err, &fe) {
		prefix := ""
		if d.op >= 0 {
			prefix = "operator[" + strconv.Itoa(d.op) + "]"
			if d.opUID != "" {
				prefix += "(uid " + strconv.Quote(d.opUID) + ")"
			}
			if d.sub >= 0 {
				prefix += ".subtask[" + strconv.Itoa(d.sub) + "]"
			}
			if d.slot != "" {
				prefix += "." + d.slot
			}
		}
		if prefix != "" {
			if fe.Field != "" {
				fe.Field = prefix + "." + fe.Field
			} else {
				fe.Field = prefix
			}
		}
	}
	return err
}

func (d *decoder) failed() bool { return d.r.Err() != nil }

// at notes which part of a subtask is being read. After a failure the reader keeps returning
// zero values and the code runs on to the end of the record; the position must stay where the
// failure happened.
func (d *decoder) at(slot string) {
	if !d.failed() {
		d.slot = slot
	}
}

func (d *decoder) metadata() *Metadata {
	d.op, d.sub = -1, -1
	r := d.r
	magic := r.I32("magic")
	if r.Err() == nil && magic != Magic {
		r.FailAt(0, "magic", "want 0x%08X (a Flink _metadata file), got 0x%08X", uint32(Magic), uint32(magic))
	}
	m := &Metadata{}
	m.Version = r.I32("version")
	if d.failed() {
		return nil
	}
	d.version = m.Version
	switch {
	case m.Version == 1 || m.Version == 2:
		r.FailAt(4, "version", "metadata version %d (Flink 1.10 or older) is not supported; want %d..%d (Flink 1.11 to 2.x)", m.Version, MinVersion, MaxVersion)
		return nil
	case m.Version < MinVersion || m.Version > MaxVersion:
		r.FailAt(4, "version", "unknown metadata version %d; want %d..%d", m.Version, MinVersion, MaxVersion)
		return nil
	}

	off := r.Offset()
	m.CheckpointID = r.I64("checkpointId")
	if !d.failed() && m.CheckpointID < 0 {
		r.FailAt(off, "checkpointId", "negative checkpoint id %d", m.CheckpointID)
	}
	nMaster := r.Count("numMasterStates", maxCount)
	for i := 0; i < nMaster && !d.failed(); i++ {
		m.MasterStates = append(m.MasterStates, d.masterState(i))
	}
	nOps := r.Count("numOperatorStates", maxCount)
	if d.failed() {
		return nil
	}
	if nOps > 0 {
		m.Operators = make([]*OperatorState, 0, min(nOps, preallocateMax))
	}
	for i := 0; i < nOps; i++ {
		d.op = i
		op := d.operator()
		if d.failed() {
			return nil
		}
		m.Operators = append(m.Operators, op)
	}
	d.op, d.sub, d.slot, d.opUID = -1, -1, "", ""
	tailOff := r.Offset()
	m.Tail = r.Rest("properties", maxTail)
	if d.failed() {
		return nil
	}
	if len(m.Tail) == 0 {
		m.Tail = nil
	}
	if m.Version >= 4 {
		// The V4+ tail is an ObjectOutputStream: header AC ED 00 05, then an object or TC_NULL.
		if len(m.Tail) < 5 || m.Tail[0] != 0xAC || m.Tail[1] != 0xED || m.Tail[2] != 0x00 || m.Tail[3] != 0x05 {
			r.FailAt(tailOff, "properties", "want a Java-serialized CheckpointProperties (AC ED 00 05 ...), got %d bytes starting % x", len(m.Tail), m.Tail[:min(len(m.Tail), 5)])
			return nil
		}
	}
	return m
}

// +--------------+---------+-------------+----------+--------------+---------+
// | C96B1696 i32 | len i32 | version i32 | name UTF | nPayload i32 | payload |
// +--------------+---------+-------------+----------+--------------+---------+
func (d *decoder) masterState(i int) MasterState {
	r := d.r
	field := "masterState[" + strconv.Itoa(i) + "]"
	off := r.Offset()
	if magic := r.I32(field + ".magic"); !d.failed() && magic != masterStateMagic {
		r.FailAt(off, field+".magic", "want 0x%08X, got 0x%08X", 0xC96B1696, uint32(magic))
	}
	lenOff := r.Offset()
	n := r.I32(field + ".length")
	if d.failed() {
		return MasterState{}
	}
	if n <= 0 {
		r.FailAt(lenOff, field+".length", "want a positive length, got %d", n)
		return MasterState{}
	}
	start := r.Offset()
	var ms MasterState
	ms.Version = r.I32(field + ".version")
	ms.Name = r.UTF(field + ".name")
	pOff := r.Offset()
	np := r.I32(field + ".payloadLength")
	if d.failed() {
		return ms
	}
	if np < 0 || int64(np) > int64(n)-(pOff+4-start) {
		r.FailAt(pOff, field+".payloadLength", "payload length %d does not fit the record's %d bytes", np, n)
		return ms
	}
	ms.Payload = r.Bytes(field+".payload", int(np))
	if !d.failed() && r.Offset()-start != int64(n) {
		r.FailAt(r.Offset(), field, "record says %d bytes but its fields end after %d (trailing bytes in master state)", n, r.Offset()-start)
	}
	return ms
}

func (d *decoder) operator() *OperatorState {
	r := d.r
	d.sub, d.slot, d.opUID = -1, "", ""
	op := &OperatorState{}
	if d.version >= 5 {
		op.Name = r.UTF("name")
		op.UID = r.UTF("uid")
		if !d.failed() {
			d.opUID = op.UID
		}
	}
	idb := r.Bytes("operatorId", 16)
	if d.failed() {
		return nil
	}
	copy(op.ID[:], idb)
	pOff := r.Offset()
	const maxMaxParallelism = 1 << 15
	op.Parallelism = r.I32("parallelism")
	op.MaxParallelism = r.I32("maxParallelism")
	// Flink's OperatorState constructor has the same precondition, so Flink cannot load such
	// a file either; without it a corrupt parallelism sizes per-subtask tables downstream.
	if !d.failed() && op.Parallelism > op.MaxParallelism {
		r.FailAt(pOff, "parallelism", "parallelism %d is larger than the max parallelism %d", op.Parallelism, op.MaxParallelism)
		return nil
	}
	// Flink caps max parallelism at 2^15 (Transformation.UPPER_BOUND_MAX_PARALLELISM) and no
	// job can have written more; a corrupt value of millions would size per-key-group tables.
	if !d.failed() && (op.MaxParallelism < 1 || op.MaxParallelism > maxMaxParallelism) {
		r.FailAt(pOff+4, "maxParallelism", "max parallelism %d is outside Flink's 1..%d", op.MaxParallelism, maxMaxParallelism)
		return nil
	}
	d.at("coordinator")
	cOff := r.Offset()
	coord := d.streamHandle()
	if d.failed() {
		return nil
	}
	if coord != nil {
		bs, ok := coord.(*ByteStreamHandle)
		if !ok {
			r.FailAt(cOff, "", "coordinator state must be an inline byte stream (tag 1), got tag %d", coord.Tag())
			return nil
		}
		op.Coordinator = bs
	}
	d.at("")
	nOff := r.Offset()
	n := r.I32("numSubtaskStates")
	if d.failed() {
		return nil
	}
	if n < 0 {
		if op.Coordinator != nil {
			r.FailAt(nOff, "numSubtaskStates", "a fully finished operator (count %d) must not have coordinator state", n)
			return nil
		}
		op.FullyFinished = true
		return op
	}
	if n > 0 {
		op.Subtasks = make([]*SubtaskState, 0, min(int(n), preallocateMax))
	}
	for i := 0; i < int(n); i++ {
		d.sub = i
		d.at("")
		idx := r.I32("subtaskIndex")
		if d.failed() {
			return nil
		}
		if idx < 0 {
			op.Subtasks = append(op.Subtasks, &SubtaskState{Index: -idx - 1, Finished: true})
			continue
		}
		st := d.subtask(d.newSubtask())
		if d.failed() {
			return nil
		}
		st.Index = idx
		if d.version >= 7 {
			d.at("")
			st.HasRefCheckpoint = r.Bool("hasRefCheckpointId")
			if st.HasRefCheckpoint {
				st.RefCheckpointID = r.I64("refCheckpointId")
			}
		}
		op.Subtasks = append(op.Subtasks, st)
	}
	d.sub = -1
	return op
}

func (d *decoder) subtask(st *SubtaskState) *SubtaskState {
	r := d.r
	d.at("managedOperatorState")
	if r.I32("present") != 0 {
		st.ManagedOperator = d.operatorHandle()
	}
	d.at("rawOperatorState")
	if r.I32("present") != 0 {
		st.RawOperator = d.operatorHandle()
	}
	d.at("managedKeyedState")
	st.ManagedKeyed = d.keyedHandle()
	d.at("rawKeyedState")
	st.RawKeyed = d.keyedHandle()
	d.at("inputChannelState")
	st.InputChannels = d.channelHandles(ChannelInput)
	d.at("resultSubpartitionState")
	st.OutputChannels = d.channelHandles(ChannelOutput)
	return st
}

func (d *decoder) channelHandles(dir byte) []*ChannelHandle {
	r := d.r
	n := r.Count("count", maxCount)
	if d.failed() || n == 0 {
		return nil
	}
	out := make([]*ChannelHandle, 0, min(n, preallocateMax))
	for i := 0; i < n && !d.failed(); i++ {
		out = append(out, d.channelHandle(dir))
	}
	return out
}

func (d *decoder) channelHandle(dir byte) *ChannelHandle {
	r := d.r
	h := &ChannelHandle{}
	if d.version >= 6 {
		off := r.Offset()
		h.Type = r.U8("channelHandle.type")
		if d.failed() {
			return nil
		}
		okInput := h.Type == ChannelInput || h.Type == ChannelMergedInput
		okOutput := h.Type == ChannelOutput || h.Type == ChannelMergedOutput
		if (dir == ChannelInput && !okInput) || (dir == ChannelOutput && !okOutput) {
			r.FailAt(off, "channelHandle.type", "unknown channel handle type %d", h.Type)
			return nil
		}
	}
	h.SubtaskIndex = r.I32("channelHandle.subtaskIndex")
	if h.merged() {
		h.Size = r.I64("channelHandle.stateSize")
		h.Delegate = d.streamHandle()
		n := r.Count("channelHandle.serializedOffsets.length", maxCount)
		h.SerializedOffsets = r.Bytes("channelHandle.serializedOffsets", n)
		return h
	}
	h.Info[0] = r.I32("channelHandle.info0")
	h.Info[1] = r.I32("channelHandle.info1")
	h.Offsets = d.readLongs("channelHandle.offsets", r.Count("channelHandle.offsets.count", maxCount))
	h.Size = r.I64("channelHandle.size")
	h.Delegate = d.streamHandle()
	return h
}

// readLongs reads n int64s. Up to 1024 (the usual case) they come from a slab; longer lists grow
// as data arrives, so that a corrupt count cannot allocate more than the file holds.
func (d *decoder) readLongs(field string, n int) []int64 {
	if d.failed() || n == 0 {
		return nil
	}
	if n <= 1024 {
		out := d.int64s(n)
		d.r.I64s(field, out)
		if d.failed() {
			return nil
		}
		return out
	}
	out := make([]int64, 0, preallocateMax)
	for i := 0; i < n; i++ {
		v := d.r.I64(field)
		if d.failed() {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// streamHandle reads a handle in a stream slot (tags 0, 1, 2, 3, 6, 15, 16).
func (d *decoder) streamHandle() StreamHandle {
	r := d.r
	off := r.Offset()
	tag := r.U8("streamHandle.tag")
	if d.failed() {
		return nil
	}
	switch tag {
	case TagNull:
		return nil
	case TagByteStream:
		h := &ByteStreamHandle{}
		h.Name = d.utf("byteStream.name")
		n := r.Count("byteStream.length", maxCount)
		h.Data = r.Bytes("byteStream.data", n)
		return h
	case TagFile:
		h := &FileHandle{}
		h.Size = r.I64("file.size")
		d.checkFileSize(off+1, "file.size", h.Size)
		h.Path = d.utf("file.path")
		return h
	case TagRelativeFile:
		h := d.newRelative()
		h.Path = d.utf("relativeFile.path")
		sizeOff := r.Offset()
		h.Size = r.I64("relativeFile.size")
		d.checkFileSize(sizeOff, "relativeFile.size", h.Size)
		return h
	case TagSegmentFile:
		h := &SegmentFileHandle{}
		h.StartPos = r.I64("segmentFile.startPos")
		h.Size = r.I64("segmentFile.stateSize")
		h.Scope = r.I32("segmentFile.scope")
		h.Path = d.utf("segmentFile.path")
		h.LogicalFileID = r.UTF("segmentFile.logicalFileId")
		return h
	case TagEmptySegmentFile:
		return &EmptySegmentFileHandle{}
	case TagKeyGroups:
		return d.keyGroups(TagKeyGroups)
	}
	r.FailAt(off, "streamHandle.tag", "unknown stream handle tag %d (want 0, 1, 2, 3, 6, 15 or 16)", tag)
	return nil
}

// checkFileSize refuses a file handle's state size below -1: Flink's FileStateHandle (and so
// RelativeFileStateHandle) takes -1 for "unknown" and fails its precondition on anything lower,
// so such a file was not written by Flink, and reading the whole file instead would hide it.
func (d *decoder) checkFileSize(off int64, field string, size int64) {
	if !d.failed() && size < -1 {
		d.r.FailAt(off, field, "state size %d: want -1 (unknown) or more", size)
	}
}

// keyGroups reads the body of tags 3, 7 and 12 (after the tag).
func (d *decoder) keyGroups(tag byte) *KeyGroupsHandle {
	r := d.r
	h := d.newKeyGroups()
	h.TagByte = tag
	h.Range.Start = r.I32("keyGroups.startKeyGroup")
	h.Range.Num = int32(r.Count("keyGroups.numKeyGroups", maxKeyGroups))
	h.Offsets = d.readLongs("keyGroups.offsets", int(h.Range.Num))
	d.depth++
	if d.depth > maxNesting {
		r.Failf("keyGroups.delegate", "handles nested more than %d deep", maxNesting)
	}
	h.Delegate = d.streamHandle()
	d.depth--
	if tag == TagKeyGroupsV2 {
		h.StateHandleID = d.utf("keyGroups.stateHandleId")
	}
	return h
}

// keyedHandle reads a handle in a keyed slot (tags 0, 3, 5, 7..14).
func (d *decoder) keyedHandle() KeyedHandle {
	r := d.r
	off := r.Offset()
	tag := r.U8("keyedHandle.tag")
	if d.failed() {
		return nil
	}
	switch tag {
	case TagNull:
		return nil
	case TagKeyGroups, TagSavepointKeyGroups, TagKeyGroupsV2:
		return d.keyGroups(tag)
	case TagIncrementalKeyGroups, TagIncrementalKeyGroupsV2:
		h := &IncrementalHandle{TagByte: tag, PersistedSize: -1}
		h.CheckpointID = r.I64("incremental.checkpointId")
		h.BackendID = r.UTF("incremental.backendId")
		h.Range.Start = r.I32("incremental.startKeyGroup")
		h.Range.Num = r.I32("incremental.numKeyGroups")
		if tag == TagIncrementalKeyGroupsV2 {
			h.PersistedSize = r.I64("incremental.checkpointedSize")
		}
		h.MetaData = d.streamHandle()
		h.Shared = d.pathHandles("incremental.shared")
		h.Private = d.pathHandles("incremental.private")
		if tag == TagIncrementalKeyGroupsV2 {
			h.StateHandleID = d.utf("incremental.stateHandleId")
		}
		return h
	case TagChangelog, TagChangelogV2:
		h := &ChangelogHandle{TagByte: tag}
		h.Range.Start = r.I32("changelog.startKeyGroup")
		h.Range.Num = r.I32("changelog.numKeyGroups")
		h.PersistedSize = r.I64("changelog.checkpointedSize")
		d.depth++
		if d.depth > maxNesting {
			r.Failf("changelog", "handles nested more than %d deep", maxNesting)
		}
		nm := r.Count("changelog.materialized.count", maxCount)
		for i := 0; i < nm && !d.failed(); i++ {
			h.Materialized = append(h.Materialized, d.keyedHandle())
		}
		nn := r.Count("changelog.nonMaterialized.count", maxCount)
		for i := 0; i < nn && !d.failed(); i++ {
			h.NonMaterialized = append(h.NonMaterialized, d.keyedHandle())
		}
		d.depth--
		h.MaterializationID = r.I64("changelog.materializationId")
		if tag == TagChangelogV2 {
			h.CheckpointID = r.I64("changelog.checkpointId")
		} else {
			h.CheckpointID = h.MaterializationID
		}
		h.StateHandleID = r.UTF("changelog.stateHandleId")
		return h
	case TagChangelogByteIncrement:
		h := &ChangelogBytesHandle{}
		h.Range.Start = r.I32("changelogBytes.startKeyGroup")
		h.Range.Num = r.I32("changelogBytes.numKeyGroups")
		h.From = r.I64("changelogBytes.from")
		h.To = r.I64("changelogBytes.to")
		n := r.Count("changelogBytes.count", maxCount)
		for i := 0; i < n && !d.failed(); i++ {
			var c StateChange
			c.KeyGroup = r.I32("changelogBytes.keyGroup")
			c.Data = r.Bytes("changelogBytes.change", r.Count("changelogBytes.length", maxCount))
			h.Changes = append(h.Changes, c)
		}
		h.StateHandleID = r.UTF("changelogBytes.stateHandleId")
		return h
	case TagChangelogFileIncrement, TagChangelogFileIncrementV2:
		h := &ChangelogFileHandle{TagByte: tag}
		h.Range.Start = r.I32("changelogFile.startKeyGroup")
		h.Range.Num = r.I32("changelogFile.numKeyGroups")
		n := r.Count("changelogFile.count", maxCount)
		for i := 0; i < n && !d.failed(); i++ {
			var oh OffsetHandle
			oh.Offset = r.I64("changelogFile.offset")
			oh.Handle = d.streamHandle()
			h.Handles = append(h.Handles, oh)
		}
		h.Size = r.I64("changelogFile.size")
		h.PersistedSize = r.I64("changelogFile.checkpointedSize")
		h.StateHandleID = r.UTF("changelogFile.stateHandleId")
		if tag == TagChangelogFileIncrementV2 {
			h.StorageID = r.UTF("changelogFile.storageIdentifier")
		}
		return h
	}
	r.FailAt(off, "keyedHandle.tag", "unknown keyed state handle tag %d (want 0, 3, 5 or 7..14)", tag)
	return nil
}

func (d *decoder) pathHandles(field string) []PathHandle {
	r := d.r
	n := r.Count(field+".count", maxCount)
	if d.failed() || n == 0 {
		return nil
	}
	out := make([]PathHandle, 0, min(n, preallocateMax))
	for i := 0; i < n && !d.failed(); i++ {
		var p PathHandle
		p.LocalPath = d.utf(field + ".localPath")
		p.Handle = d.streamHandle()
		out = append(out, p)
	}
	return out
}

// operatorHandle reads a handle in an operator slot (tags 0, 4, 17).
func (d *decoder) operatorHandle() OperatorHandle {
	r := d.r
	off := r.Offset()
	tag := r.U8("operatorHandle.tag")
	if d.failed() {
		return nil
	}
	switch tag {
	case TagNull:
		return nil
	case TagPartitionableOperatorState, TagSegmentPartitionableOpState:
	default:
		r.FailAt(off, "operatorHandle.tag", "unknown operator state handle tag %d (want 0, 4 or 17)", tag)
		return nil
	}
	h := &OperatorStreamHandle{TagByte: tag}
	n := r.Count("operatorHandle.numStates", maxCount)
	if n > 0 {
		h.States = make([]OperatorStateInfo, 0, min(n, preallocateMax))
	}
	for i := 0; i < n && !d.failed(); i++ {
		var s OperatorStateInfo
		s.Name = d.utf("operatorHandle.stateName")
		mOff := r.Offset()
		s.Mode = r.U8("operatorHandle.mode")
		if !d.failed() && s.Mode > ModeBroadcast {
			r.FailAt(mOff, "operatorHandle.mode", "unknown distribution mode %d (want 0 split, 1 union, 2 broadcast)", s.Mode)
		}
		s.Offsets = d.readLongs("operatorHandle.offsets", r.Count("operatorHandle.offsets.count", maxCount))
		h.States = append(h.States, s)
	}
	if tag == TagSegmentPartitionableOpState {
		h.TaskOwnedDir = r.UTF("operatorHandle.taskOwnedDir")
		h.SharedDir = r.UTF("operatorHandle.sharedDir")
		h.IsEmpty = r.Bool("operatorHandle.isEmpty")
	}
	dOff := r.Offset()
	h.Delegate = d.streamHandle()
	if !d.failed() && tag == TagSegmentPartitionableOpState {
		if h.Delegate == nil || (h.Delegate.Tag() != TagSegmentFile && h.Delegate.Tag() != TagEmptySegmentFile) {
			r.FailAt(dOff, "operatorHandle.delegate", "a file-merging operator handle (tag 17) must delegate to a segment handle (tag 15 or 16)")
		}
	}
	return h
}
