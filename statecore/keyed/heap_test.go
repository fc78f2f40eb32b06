package keyed

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

const heapFixture = "../../testdata/checkpoints/hashmap-full"

// copyHeapCheckpoint copies the fixture's latest chk-N into a temporary directory (its files are
// found there by name) and returns it with the keyed operator and its first subtask's handle and
// state file.
func copyHeapCheckpoint(t *testing.T) (dir string, op *metadata.OperatorState, kh *metadata.KeyGroupsHandle, file string) {
	t.Helper()
	chks, _ := filepath.Glob(filepath.Join(heapFixture, "chk-*"))
	if len(chks) != 1 {
		t.Skipf("fixture %s: want one chk-N, have %d", heapFixture, len(chks))
	}
	dir = t.TempDir()
	ents, err := os.ReadDir(chks[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(chks[0], e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for _, o := range sp.Metadata.Operators {
		for _, st := range o.Subtasks {
			if h, ok := st.ManagedKeyed.(*metadata.KeyGroupsHandle); ok && st.Index == 0 {
				op, kh = o, h
				switch d := h.Delegate.(type) {
				case *metadata.FileHandle:
					file = filepath.Join(dir, filepath.Base(d.Path))
				case *metadata.RelativeFileHandle:
					file = filepath.Join(dir, filepath.Base(d.Path))
				default:
					t.Fatalf("subtask 0: keyed state in a %T", d)
				}
			}
		}
	}
	if kh == nil {
		t.Fatal("no keyed subtask 0 in the fixture")
	}
	return dir, op, kh, file
}

// heapRead opens dir's keyed operator and reads every entry.
func heapRead(dir string, opID metadata.OperatorID) (n int, heap bool, err error) {
	sp, err := savepoint.Open(dir)
	if err != nil {
		return 0, false, err
	}
	defer sp.Close()
	var op *metadata.OperatorState
	for _, o := range sp.Metadata.Operators {
		if o.ID == opID {
			op = o
		}
	}
	subs, closeAll, err := OpenSubtasks(sp, op)
	if err != nil {
		return 0, false, err
	}
	defer closeAll()
	heap = true
	for _, s := range subs {
		heap = heap && s.Heap
		if err := s.CheckBlocks(); err != nil {
			return n, heap, err
		}
		err := s.Records(nil, func(Record) error { n++; return nil })
		if err != nil {
			return n, heap, err
		}
	}
	return n, heap, nil
}

// TestHeapCheckpointHostile: the hashmap full checkpoint Flink wrote reads as heap layout, and
// each damage to its first key-group block is refused with an error naming the block.
func TestHeapCheckpointHostile(t *testing.T) {
	dir, op, kh, file := copyHeapCheckpoint(t)
	n, heap, err := heapRead(dir, op.ID)
	if err != nil || !heap || n == 0 {
		t.Fatalf("intact fixture: %d records, heap layout %v, err %v", n, heap, err)
	}
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first, second := kh.Offsets[0], kh.Offsets[1]
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"key-group number", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[second:], 99)
			return b
		}, "key-group number 99"},
		{"state id out of range", func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[first+4:], 0x7000)
			return b
		}, "state id 28672"},
		{"entry count past the block", func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[first+6:], 1<<30)
			return b
		}, "keyGroup["},
		{"truncated", func(b []byte) []byte { return b[:len(b)-3] }, "truncated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.edit(append([]byte(nil), orig...))
			if err := os.WriteFile(file, b, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.WriteFile(file, orig, 0o644)
			_, _, err := heapRead(dir, op.ID)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
			t.Log(err)
		})
	}
}
