package sourcestate

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
)

// hostileFixture is the Flink 2.3.0 KafkaSource savepoint: all its state is inline in _metadata,
// so a patch of a few bytes in place damages one field and leaves every frame around it intact.
const hostileFixture = "../../testdata/sources/kafka-datastream"

// readerSplitAt is where the payload of the reader split payments-1 starts in _metadata (after
// its i32 serializer version and i32 length), found by its bytes: the enumerator's copy (v3)
// comes first and is framed without a version, so the reader's is the match preceded by
// version 0 and its length.
func readerSplitAt(t *testing.T, md []byte) int {
	t.Helper()
	payload := splitBytes("payments", 1, 6, OffsetNone)
	head := cat(i32(KafkaSplitVersion), i32(int32(len(payload))))
	i := bytes.Index(md, cat(head, payload))
	if i < 0 {
		t.Fatal("reader split payments-1 (next offset 6) not found in the fixture's _metadata")
	}
	return i + len(head)
}

// patchedRead copies the fixture, lets patch change _metadata in place, and reads the source.
func patchedRead(t *testing.T, patch func(md []byte, coordinatorAt int)) (*Source, error) {
	t.Helper()
	md, err := os.ReadFile(filepath.Join(hostileFixture, "_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := savepoint.Open(hostileFixture)
	if err != nil {
		t.Fatal(err)
	}
	want := uid.Hash("kafka-source")
	at := -1
	for _, op := range sp.Metadata.Operators {
		if op.ID.String() == want {
			at = bytes.Index(md, op.Coordinator.Data)
		}
	}
	sp.Close()
	if at < 0 {
		t.Fatal("coordinator state of kafka-source not found in _metadata")
	}
	patch(md, at)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "_metadata"), md, 0o644); err != nil {
		t.Fatal(err)
	}
	sp, err = savepoint.Open(dir)
	if err != nil {
		t.Fatalf("the patch broke _metadata itself: %v", err)
	}
	defer sp.Close()
	for _, op := range sp.Metadata.Operators {
		if op.ID.String() == want {
			return Read(sp, op)
		}
	}
	t.Fatal("no kafka-source")
	return nil, nil
}

// TestReadHostileSplits: a damaged split of a Kafka source does not stop the listing (other
// connectors' splits must never be an error either); it is kept raw with one clear reason that
// names the operator, the subtask, the element and the byte offset in the split payload, and the
// other splits still decode. A damaged frame (an element or coordinator length that does not
// match its bytes) is an error naming the same.
func TestReadHostileSplits(t *testing.T) {
	op := "operator " + uid.Hash("kafka-source")
	put32 := func(b []byte, at int, v int32) { binary.BigEndian.PutUint32(b[at:], uint32(v)) }
	for _, tc := range []struct {
		name  string
		patch func(md []byte, split, coord int)
		note  []string // the damaged split's reason
		err   []string // Read fails with this
	}{
		{"unknown split serializer version", func(md []byte, split, _ int) { put32(md, split-8, 9) },
			[]string{op, "subtask 0 SourceReaderState[0]: ", "KafkaPartitionSplit serializer version 9 is not known (known: 0)"}, nil},
		{"truncated split", func(md []byte, split, _ int) {
			// the topic's length says 65535: the split ends long before
			binary.BigEndian.PutUint16(md[split:], 0xffff)
		}, []string{op, "subtask 0 SourceReaderState[0]: ", "topic: want 65535 bytes"}, nil},
		{"offset below -3", func(md []byte, split, _ int) {
			binary.BigEndian.PutUint64(md[split+2+8+4:], uint64(0xfffffffffffffffc))
		}, []string{op, "subtask 0 SourceReaderState[0]: ", "offset 14: startingOffset", "got -4"}, nil},
		{"negative partition", func(md []byte, split, _ int) { put32(md, split+2+8, -1) },
			[]string{op, "subtask 0 SourceReaderState[0]: ", "offset 10: partition: want a partition number >= 0, got -1"}, nil},
		{"element longer than its frame", func(md []byte, split, _ int) { put32(md, split-4, 29) }, nil,
			[]string{op, "subtask 0 SourceReaderState[0]", "offset 4: payload length: frame says 29 bytes, the element has 30 after the frame"}},
		{"enumerator state longer than its frame", func(md []byte, _, coord int) {
			n := int32(binary.BigEndian.Uint32(md[coord+8:]))
			put32(md, coord+8, n-1)
		}, nil, []string{op + " coordinator state", "1 bytes after the enumerator checkpoint (serde version 1 allows none)"}},
		{"unknown enumerator state version", func(md []byte, _, coord int) { put32(md, coord+4, 7) }, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src, err := patchedRead(t, func(md []byte, coord int) { tc.patch(md, readerSplitAt(t, md), coord) })
			if tc.err != nil {
				if err == nil {
					t.Fatal("read without an error")
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if src.Connector != ConnectorUnknown && tc.note != nil {
				t.Errorf("connector %s with a damaged split", src.Connector)
			}
			var bad []Split
			decoded := 0
			for _, s := range src.Splits {
				if s.Err != nil {
					bad = append(bad, s)
				} else if s.Kafka != nil {
					decoded++
				}
			}
			if tc.note == nil {
				// the enumerator is not Kafka's: kept raw with its reason, the splits still decode
				if src.EnumErr == nil || !strings.Contains(src.EnumErr.Error(), "KafkaSourceEnumState serializer version 7 is not known") || len(bad) != 0 {
					t.Errorf("enum err %v, %d bad splits", src.EnumErr, len(bad))
				}
				return
			}
			if len(bad) != 1 || decoded != len(src.Splits)-1 {
				t.Fatalf("%d damaged and %d decoded splits of %d, want exactly the patched one damaged", len(bad), decoded, len(src.Splits))
			}
			for _, w := range tc.note {
				if !strings.Contains(bad[0].Err.Error(), w) {
					t.Errorf("reason %q lacks %q", bad[0].Err, w)
				}
			}
		})
	}
}
