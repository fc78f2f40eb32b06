package metadata

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// nullTail is an ObjectOutputStream holding only null: what Flink writes when a
// CheckpointMetadata has no properties.
var nullTail = []byte{0xAC, 0xED, 0x00, 0x05, 0x70}

// everyHandle builds metadata that uses every handle type the codec knows, to prove that the
// writer and the reader agree on each layout. (Real Flink files are tested in fixtures_test.go;
// this covers the tags canonical savepoints never contain.)
func everyHandle(version int32) *Metadata {
	inline := &ByteStreamHandle{Name: "file:/sp/x/0a1b", Data: []byte{1, 2, 3, 4}}
	rel := &RelativeFileHandle{Path: "5c2e-uuid", Size: 1234}
	abs := &FileHandle{Path: "file:/sp/x/5c2e-uuid", Size: 99}
	seg := &SegmentFileHandle{StartPos: 10, Size: 20, Scope: 1, Path: "file:/ckp/shared/seg", LogicalFileID: "lf-1"}
	kg := &KeyGroupsHandle{TagByte: TagSavepointKeyGroups, Range: KeyGroupRange{0, 3}, Offsets: []int64{0, 5, 9}, Delegate: rel}
	kg2 := &KeyGroupsHandle{TagByte: TagKeyGroupsV2, Range: KeyGroupRange{3, 1}, Offsets: []int64{0}, Delegate: inline, StateHandleID: "sh-1"}
	legacyKG := &KeyGroupsHandle{TagByte: TagKeyGroups, Range: KeyGroupRange{4, 2}, Offsets: []int64{0, 1}, Delegate: abs}
	inc := &IncrementalHandle{TagByte: TagIncrementalKeyGroupsV2, CheckpointID: 7, BackendID: "2f4c6e1a-0000-0000-0000-000000000001",
		Range: KeyGroupRange{0, 64}, PersistedSize: 4096, MetaData: inline,
		Shared:        []PathHandle{{LocalPath: "000012.sst", Handle: abs}},
		Private:       []PathHandle{{LocalPath: "MANIFEST-000004", Handle: inline}, {LocalPath: "seg", Handle: seg}},
		StateHandleID: "sh-2"}
	incLegacy := &IncrementalHandle{TagByte: TagIncrementalKeyGroups, CheckpointID: 3, BackendID: "b", Range: KeyGroupRange{0, 1}, PersistedSize: -1, MetaData: &EmptySegmentFileHandle{}}
	clBytes := &ChangelogBytesHandle{Range: KeyGroupRange{0, 4}, From: 1, To: 9,
		Changes: []StateChange{{KeyGroup: -1, Data: []byte("meta")}, {KeyGroup: 2, Data: []byte{9}}}, StateHandleID: "sh-3"}
	clFile := &ChangelogFileHandle{TagByte: TagChangelogFileIncrementV2, Range: KeyGroupRange{0, 4},
		Handles: []OffsetHandle{{Offset: 0, Handle: abs}, {Offset: 5, Handle: legacyKG}}, Size: 30, PersistedSize: 12, StateHandleID: "sh-4", StorageID: "filesystem"}
	clFileLegacy := &ChangelogFileHandle{TagByte: TagChangelogFileIncrement, Range: KeyGroupRange{1, 1}, Size: 1, PersistedSize: 1, StateHandleID: "sh-5"}
	cl := &ChangelogHandle{TagByte: TagChangelogV2, Range: KeyGroupRange{0, 4}, PersistedSize: 77,
		Materialized: []KeyedHandle{inc, nil}, NonMaterialized: []KeyedHandle{clBytes, clFile, clFileLegacy},
		MaterializationID: 5, CheckpointID: 8, StateHandleID: "sh-6"}
	clLegacy := &ChangelogHandle{TagByte: TagChangelog, Range: KeyGroupRange{0, 1}, PersistedSize: 1,
		MaterializationID: 4, CheckpointID: 4, StateHandleID: "sh-7"}
	opState := &OperatorStreamHandle{TagByte: TagPartitionableOperatorState, States: []OperatorStateInfo{
		{Name: "buf", Mode: ModeSplitDistribute, Offsets: []int64{0, 8}},
		{Name: "bcast", Mode: ModeBroadcast, Offsets: []int64{16}},
		{Name: "ünïon", Mode: ModeUnion, Offsets: nil}}, Delegate: inline}
	opSeg := &OperatorStreamHandle{TagByte: TagSegmentPartitionableOpState, States: []OperatorStateInfo{{Name: "s", Mode: 0, Offsets: []int64{0}}},
		TaskOwnedDir: "file:/ckp/taskowned", SharedDir: "file:/ckp/shared", IsEmpty: false, Delegate: seg}
	var in, out []*ChannelHandle
	if version >= 6 {
		in = []*ChannelHandle{{Type: ChannelInput, SubtaskIndex: 1, Info: [2]int32{0, 3}, Offsets: []int64{0, 4}, Size: 8, Delegate: abs},
			{Type: ChannelMergedInput, SubtaskIndex: 1, Size: 5, Delegate: rel, SerializedOffsets: []byte{1, 2}}}
		out = []*ChannelHandle{{Type: ChannelOutput, SubtaskIndex: 1, Info: [2]int32{2, 1}, Size: 3, Delegate: inline},
			{Type: ChannelMergedOutput, SubtaskIndex: 1, Size: 6, Delegate: abs, SerializedOffsets: []byte{}}}
	} else {
		in = []*ChannelHandle{{SubtaskIndex: 1, Info: [2]int32{0, 3}, Offsets: []int64{0, 4}, Size: 8, Delegate: abs}}
		out = []*ChannelHandle{{SubtaskIndex: 1, Info: [2]int32{2, 1}, Size: 3, Delegate: legacyKG}}
	}
	ops := []*OperatorState{
		{ID: OperatorID{1, 2, 3}, Parallelism: 2, MaxParallelism: 128, Coordinator: &ByteStreamHandle{Name: "coord", Data: []byte("cccc")},
			Subtasks: []*SubtaskState{
				{Index: 0, ManagedOperator: opState, RawOperator: opSeg, ManagedKeyed: kg, RawKeyed: kg2},
				{Index: 1, ManagedKeyed: inc, RawKeyed: cl, InputChannels: in, OutputChannels: out},
				{Index: 2, ManagedKeyed: incLegacy, RawKeyed: clLegacy},
				{Index: 3, Finished: true},
			}},
		{ID: OperatorID{9}, Parallelism: 1, MaxParallelism: 1, FullyFinished: true},
		{ID: OperatorID{8}, Parallelism: 4, MaxParallelism: 32768},
	}
	if version >= 5 {
		ops[0].Name, ops[0].UID = "Keyed Process -> Sink: 😀", "my-uid"
		ops[2].Name = "Source: gen"
	}
	if version >= 7 {
		ops[0].Subtasks[0].HasRefCheckpoint = true
		ops[0].Subtasks[0].RefCheckpointID = 41
	}
	m := &Metadata{Version: version, CheckpointID: 42, Operators: ops,
		MasterStates: []MasterState{{Name: "hook", Version: 1, Payload: []byte("payload")}}}
	if version >= 4 {
		m.Tail = nullTail
	}
	return m
}

func TestSyntheticRoundTrip(t *testing.T) {
	for v := int32(MinVersion); v <= MaxVersion; v++ {
		m := everyHandle(v)
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			t.Fatalf("v%d encode: %v", v, err)
		}
		got, err := Decode(bytes.NewReader(buf.Bytes()), "synthetic")
		if err != nil {
			t.Fatalf("v%d decode: %v", v, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("v%d: decoded metadata differs from what was encoded", v)
		}
		var again bytes.Buffer
		if err := Encode(&again, got); err != nil {
			t.Fatalf("v%d re-encode: %v", v, err)
		}
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Errorf("v%d: re-encoded bytes differ", v)
		}
		// Every proper prefix must fail with a positioned error, never panic. (V3 has no tail, so
		// a cut after the last operator is a valid file there.)
		b := buf.Bytes()
		for n := 0; n < len(b)-len(m.Tail); n++ {
			_, err := Decode(bytes.NewReader(b[:n]), "cut")
			var fe *javaio.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("v%d cut at %d: err = %v, want a *javaio.FormatError", v, n, err)
			}
			if fe.Offset > int64(n) {
				t.Fatalf("v%d cut at %d: error offset %d beyond the data", v, n, fe.Offset)
			}
		}
	}
}

func TestSyntheticSizes(t *testing.T) {
	m := everyHandle(6)
	op := m.Operators[0]
	// subtask 0: operator handles 4+0(segment size 20) ; keyed: kg -> rel 1234, kg2 -> inline 4
	if got, want := op.Subtasks[0].CheckpointedSize(), int64(4+20+1234+4); got != want {
		t.Errorf("subtask 0 checkpointed size = %d, want %d", got, want)
	}
	// subtask 1: incremental 4096 (persisted), changelog 77, channels 8+5+3+6
	if got, want := op.Subtasks[1].CheckpointedSize(), int64(4096+77+8+5+3+6); got != want {
		t.Errorf("subtask 1 checkpointed size = %d, want %d", got, want)
	}
	// Parallelism 2: subtasks 2 and 3 are outside it and do not count; coordinator 4 bytes.
	if got, want := op.CheckpointedSize(), int64(4)+op.Subtasks[0].CheckpointedSize()+op.Subtasks[1].CheckpointedSize(); got != want {
		t.Errorf("operator checkpointed size = %d, want %d", got, want)
	}
	if got := op.SubtaskStateCount(); got != 4 {
		t.Errorf("subtask state count = %d, want 4", got)
	}
	if got := m.Operators[1].SubtaskStateCount(); got != 0 {
		t.Errorf("fully finished operator: count = %d, want 0", got)
	}
}

func TestDecodeRejects(t *testing.T) {
	valid := func() []byte {
		var buf bytes.Buffer
		if err := Encode(&buf, everyHandle(6)); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	cases := []struct {
		name   string
		mutate func([]byte) []byte
		off    int64
	}{
		{"bad magic", func(b []byte) []byte { b[0] = 0; return b }, 0},
		{"version 2", func(b []byte) []byte { b[7] = 2; return b }, 4},
		{"version 99", func(b []byte) []byte { b[7] = 99; return b }, 4},
		{"negative checkpoint id", func(b []byte) []byte { b[8] = 0x80; return b }, 8},
		{"no tail", func(b []byte) []byte { return b[:len(b)-len(nullTail)] }, int64(len(b0) - len(nullTail))},
	}
	for _, tc := range cases {
		_, err := Decode(bytes.NewReader(tc.mutate(valid())), "m")
		var fe *javaio.FormatError
		if !errors.As(err, &fe) || fe.Offset != tc.off {
			t.Errorf("%s: err = %v, want a format error at offset %d", tc.name, err, tc.off)
		}
	}
	if _, err := Decode(bytes.NewReader(nil), "m"); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("empty file: err = %v, want ErrUnexpectedEOF", err)
	}
}

var b0 = func() []byte {
	var buf bytes.Buffer
	_ = Encode(&buf, everyHandle(6))
	return buf.Bytes()
}()

// TestNestingBounded: key-groups handles can nest through stream slots (tag 3 inside tag 3...);
// a corrupt or hostile file must not drive unbounded recursion.
func TestNestingBounded(t *testing.T) {
	var h StreamHandle = &ByteStreamHandle{Name: "x", Data: []byte{1}}
	for i := 0; i < 100; i++ {
		h = &KeyGroupsHandle{TagByte: TagKeyGroups, Range: KeyGroupRange{0, 1}, Offsets: []int64{0}, Delegate: h}
	}
	m := &Metadata{Version: 6, Tail: nullTail, Operators: []*OperatorState{{Parallelism: 1, MaxParallelism: 128,
		Subtasks: []*SubtaskState{{ManagedKeyed: h.(*KeyGroupsHandle)}}}}}
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	_, err := Decode(bytes.NewReader(buf.Bytes()), "deep")
	if err == nil || !strings.Contains(err.Error(), "nested more than") {
		t.Errorf("100 nested handles: err = %v, want a nesting error", err)
	}
}

// TestErrorPosition: an error names the record and slot where reading failed, not where the
// decoder happened to be when it noticed.
func TestErrorPosition(t *testing.T) {
	m := &Metadata{Version: 6, Tail: nullTail, Operators: []*OperatorState{{UID: "keyed", Parallelism: 1, MaxParallelism: 128,
		Subtasks: []*SubtaskState{{ManagedKeyed: &KeyGroupsHandle{TagByte: TagSavepointKeyGroups, Range: KeyGroupRange{0, 128},
			Offsets: make([]int64, 128), Delegate: &RelativeFileHandle{Path: "f", Size: 1}}}}}}}
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for n := 0; n < buf.Len(); n++ {
		_, err := Decode(bytes.NewReader(buf.Bytes()[:n]), "m")
		var fe *javaio.FormatError
		if !errors.As(err, &fe) {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if strings.Contains(fe.Field, "keyGroups.offsets") {
			seen++
			if want := `operator[0](uid "keyed").subtask[0].managedKeyedState.keyGroups.offsets`; fe.Field != want {
				t.Fatalf("cut at %d: field %q, want %q", n, fe.Field, want)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no cut fell in the offsets")
	}
}

// TestPropertiesSelfAncestor: a class descriptor whose superclass is a reference to itself is
// refused (a naive reader loops forever on it).
func TestPropertiesSelfAncestor(t *testing.T) {
	tail := []byte{0xAC, 0xED, 0x00, 0x05, 0x73, 0x72, 0x00, 0x01, 'A', 0, 0, 0, 0, 0, 0, 0, 1, 0x02, 0x00, 0x00, 0x78,
		0x71, 0x00, 0x7E, 0x00, 0x00}
	m := &Metadata{Version: 6, Tail: tail}
	if _, err := m.ParseProperties("cycle"); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("err = %v, want a cycle error", err)
	}
}

// hugeReader claims and produces more bytes than any _metadata file has.
type hugeReader struct{ n int64 }

func (h *hugeReader) Len() int { return int(h.n) }
func (h *hugeReader) Read(p []byte) (int, error) {
	if h.n <= 0 {
		return 0, io.EOF
	}
	n := min(int64(len(p)), h.n)
	clear(p[:n])
	h.n -= n
	return int(n), nil
}

func TestDecodeTooLarge(t *testing.T) {
	_, err := Decode(&hugeReader{n: MaxFileSize + 1}, "huge")
	if err == nil || !strings.Contains(err.Error(), "huge") || !strings.Contains(err.Error(), "more than") {
		t.Errorf("err = %v, want a size refusal naming the file", err)
	}
}

// TestMaxParallelismBounded: a max parallelism Flink cannot have written (over 2^15, or below 1)
// is refused where it is read, before anything is sized by it (a flipped bit made 2^23, and a
// rescale of that allocated 193 MiB before another check refused it; found by the length sweep).
func TestMaxParallelismBounded(t *testing.T) {
	for _, c := range []struct {
		max  int32
		want string
	}{
		{1 << 15, ""},
		{1<<15 + 1, "max parallelism 32769 is outside Flink's 1..32768"},
		{1 << 23, "max parallelism 8388608 is outside Flink's 1..32768"},
	} {
		m := &Metadata{Version: 6, Tail: nullTail, Operators: []*OperatorState{{Parallelism: 1, MaxParallelism: c.max}}}
		var buf bytes.Buffer
		if err := Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		_, err := Decode(bytes.NewReader(buf.Bytes()), "mp")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("max parallelism %d: %v", c.max, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "maxParallelism")):
			t.Errorf("max parallelism %d: err = %v, want %q naming the field", c.max, err, c.want)
		}
	}
}
