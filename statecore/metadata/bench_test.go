package metadata

import (
	"bytes"
	"fmt"
	"testing"
)

// wide is a savepoint of nOps keyed operators of parallelism par, each subtask a tag-7 handle on
// a relative file: the shape Flink writes for keyed state above the inline threshold.
func wide(nOps, par int) []byte {
	m := &Metadata{Version: 6, CheckpointID: 9, Tail: nullTail}
	const maxPar = 1024
	for i := 0; i < nOps; i++ {
		op := &OperatorState{Name: fmt.Sprintf("KeyedProcess op-%04d", i), UID: fmt.Sprintf("op-%04d", i),
			ID: OperatorID{byte(i), byte(i >> 8)}, Parallelism: int32(par), MaxParallelism: maxPar}
		for s := 0; s < par; s++ {
			start, end := s*maxPar/par, (s+1)*maxPar/par
			offs := make([]int64, end-start)
			for j := range offs {
				offs[j] = int64(100 + j*16)
			}
			op.Subtasks = append(op.Subtasks, &SubtaskState{Index: int32(s),
				ManagedKeyed: &KeyGroupsHandle{TagByte: TagSavepointKeyGroups, Range: KeyGroupRange{int32(start), int32(end - start)},
					Offsets: offs, Delegate: &RelativeFileHandle{Path: fmt.Sprintf("%08x-3f1c-4b7e-9a0d-5e2c8b1f%04x", i, s), Size: 4096}}})
		}
		m.Operators = append(m.Operators, op)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

func BenchmarkDecodeWide1000x128(b *testing.B) {
	data := wide(1000, 128)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1000/float64(b.N), "cpu-ms/op") }()
	for i := 0; i < b.N; i++ {
		if _, err := Decode(bytes.NewReader(data), "wide"); err != nil {
			b.Fatal(err)
		}
	}
}
