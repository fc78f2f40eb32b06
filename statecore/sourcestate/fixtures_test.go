package sourcestate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
)

// kafkaExpect is testdata/sources/NAME.expect.json as the oracle writes it: what the job read
// and what the connector's own serializers decode from the savepoint.
type kafkaExpect struct {
	OperatorUID string `json:"operatorUid"`
	Read        []struct {
		Topic      string `json:"topic"`
		Partition  int32  `json:"partition"`
		NextOffset int64  `json:"nextOffset"`
		Subtask    *int32 `json:"subtask"` // Flink 1.12 fixtures: the reader subtask that read it
	} `json:"read"`
	Splits     []expectSplit `json:"splits"`
	Enumerator struct {
		CoordinatorSerdeVersion  int32         `json:"coordinatorSerdeVersion"`
		SerializerVersion        int32         `json:"serializerVersion"`
		InitialDiscoveryFinished bool          `json:"initialDiscoveryFinished"`
		Partitions               []expectSplit `json:"partitions"`
		TrailingBytes            int           `json:"trailingBytes"` // after the checkpoint (coordinator serde 0)
	} `json:"enumerator"`
}

type expectSplit struct {
	Topic          string `json:"topic"`
	Partition      int32  `json:"partition"`
	StartingOffset int64  `json:"startingOffset"`
	StoppingOffset int64  `json:"stoppingOffset"`
	Status         string `json:"status"`  // enumerator only: ASSIGNED, UNASSIGNED
	Subtask        *int32 `json:"subtask"` // enumerator state version 0 only: the reader it was assigned to
}

// openFixture reads DIR.expect.json (what the oracle recorded of the job) into exp and opens the
// savepoint DIR, closed when the test ends.
func openFixture(t *testing.T, dir string, exp any) *savepoint.Savepoint {
	t.Helper()
	b, err := os.ReadFile(dir + ".expect.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, exp); err != nil {
		t.Fatalf("%s.expect.json: %v", dir, err)
	}
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}

func readKafkaFixture(t *testing.T, dir string) (*Source, kafkaExpect) {
	t.Helper()
	var exp kafkaExpect
	sp := openFixture(t, dir, &exp)
	want := uid.Hash(exp.OperatorUID)
	for _, op := range sp.Metadata.Operators {
		if op.ID.String() == want {
			if !IsSource(op) {
				t.Fatalf("operator %s: IsSource false", exp.OperatorUID)
			}
			src, err := Read(sp, op)
			if err != nil {
				t.Fatal(err)
			}
			return src, exp
		}
		if IsSource(op) {
			t.Errorf("operator %s (%s) taken for a source", op.ID, op.Name)
		}
	}
	t.Fatalf("no operator %s in %s", exp.OperatorUID, dir)
	return nil, exp
}

func sortedSplits(s []expectSplit) []string {
	var out []string
	for _, x := range s {
		line := fmt.Sprintf("%s-%d start=%d stop=%d %s", x.Topic, x.Partition, x.StartingOffset, x.StoppingOffset, x.Status)
		if x.Subtask != nil {
			line += fmt.Sprintf(" subtask=%d", *x.Subtask)
		}
		out = append(out, line)
	}
	sort.Strings(out)
	return out
}

// TestKafkaFixtures decodes every Kafka source savepoint the oracle made and compares with what
// the connector's serializers decoded (splits, enumerator) and what the job read (each split
// resumes at the offset after the last record read); re-encoding gives the same bytes.
func TestKafkaFixtures(t *testing.T) {
	dirs, _ := filepath.Glob("../../testdata/sources/kafka-*.expect.json")
	// Flink 1.20 with its connector (3.4.0-1.20): enumerator state version 2, no offsets in it
	old, _ := filepath.Glob("../../testdata/flink-1.20/sources/kafka-*.expect.json")
	dirs = append(dirs, old...)
	// Flink 1.17 with connector 3.1.0-1.17: operator state proxy version 5 (TestFlink117ProxyVersion)
	older, _ := filepath.Glob("../../testdata/flink-1.17/sources/kafka-*.expect.json")
	dirs = append(dirs, older...)
	// Flink 1.12's in-tree connector: 1.12.2 wrote enumerator state version 0 (the splits per
	// reader, in coordinator serde version 0 with the reader assignments after it), 1.12.7
	// version 1 (assigned partitions only)
	oldest, _ := filepath.Glob("../../testdata/flink-1.12/sources-*/kafka-*.expect.json")
	if len(oldest) != 2 {
		t.Errorf("%d Flink 1.12 fixtures, want 2 (1.12.2 and 1.12.7)", len(oldest))
	}
	dirs = append(dirs, oldest...)
	if len(dirs) == 0 {
		t.Fatal("no Kafka source fixtures under testdata/sources")
	}
	for _, e := range dirs {
		dir := e[:len(e)-len(".expect.json")]
		t.Run(strings.TrimPrefix(dir, "../../testdata/"), func(t *testing.T) {
			src, exp := readKafkaFixture(t, dir)
			if src.Connector != ConnectorKafka {
				t.Fatalf("connector %q, want kafka (enum err %v)", src.Connector, src.EnumErr)
			}
			var got []expectSplit
			subtasks := map[int32]bool{}
			for _, s := range src.Splits {
				k := s.Kafka
				got = append(got, expectSplit{Topic: k.Topic, Partition: k.Partition, StartingOffset: k.StartingOffset, StoppingOffset: k.StoppingOffset})
				subtasks[s.Subtask] = true
				if enc, err := k.Encode(); err != nil || !bytes.Equal(enc, s.Raw.Payload) {
					t.Errorf("split %s re-encoded %x, %v; Flink wrote %x", k.ID(), enc, err, s.Raw.Payload)
				}
			}
			// kafka-files (splits in state files) records only what the job read: its splits are
			// held to that alone
			decoded := exp.Splits != nil
			if g, w := sortedSplits(got), sortedSplits(exp.Splits); decoded && fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("splits\n got %v\nwant %v", g, w)
			}
			if !decoded && len(got) != len(exp.Read) {
				t.Errorf("%d splits, the job read %d partitions", len(got), len(exp.Read))
			}
			if len(subtasks) < 2 {
				t.Errorf("splits of %d subtasks, want them spread over the job's parallelism", len(subtasks))
			}
			next, reader := map[string]int64{}, map[string]int32{}
			for _, r := range exp.Read {
				next[fmt.Sprintf("%s-%d", r.Topic, r.Partition)] = r.NextOffset
				if r.Subtask != nil {
					reader[fmt.Sprintf("%s-%d", r.Topic, r.Partition)] = *r.Subtask
				}
			}
			for _, s := range src.Splits {
				if w, ok := reader[s.Kafka.ID()]; ok && s.Subtask != w {
					t.Errorf("split %s in subtask %d; subtask %d read it", s.Kafka.ID(), s.Subtask, w)
				}
			}
			for _, s := range got {
				if w, ok := next[fmt.Sprintf("%s-%d", s.Topic, s.Partition)]; !ok || s.StartingOffset != w {
					t.Errorf("%s-%d starts at %d; the job read up to %d", s.Topic, s.Partition, s.StartingOffset, w-1)
				}
			}
			e := src.KafkaEnum
			if decoded && (src.Coordinator.SerdeVersion != exp.Enumerator.CoordinatorSerdeVersion || e.Version != exp.Enumerator.SerializerVersion ||
				e.InitialDiscoveryFinished != exp.Enumerator.InitialDiscoveryFinished) {
				t.Errorf("enumerator serde %d version %d discovery %v, want %+v", src.Coordinator.SerdeVersion, e.Version, e.InitialDiscoveryFinished, exp.Enumerator)
			}
			var ge []expectSplit
			for _, p := range e.Partitions {
				status := map[AssignmentStatus]string{Assigned: "ASSIGNED", Unassigned: "UNASSIGNED"}[p.Status]
				x := expectSplit{p.Split.Topic, p.Split.Partition, p.Split.StartingOffset, p.Split.StoppingOffset, status, nil}
				if e.Version == KafkaEnumV0 {
					sub := p.Subtask
					x.Subtask = &sub
					// the enumerator assigned it to the reader that read it
					if w, ok := reader[p.Split.ID()]; !ok || w != sub {
						t.Errorf("enumerator assigned %s to subtask %d; the job read it in %d (known %v)", p.Split.ID(), sub, w, ok)
					}
				}
				ge = append(ge, x)
			}
			if len(src.Coordinator.Trailing) != exp.Enumerator.TrailingBytes {
				t.Errorf("%d bytes after the enumerator checkpoint, Flink's reader left %d", len(src.Coordinator.Trailing), exp.Enumerator.TrailingBytes)
			}
			if g, w := sortedSplits(ge), sortedSplits(exp.Enumerator.Partitions); decoded && fmt.Sprint(g) != fmt.Sprint(w) {
				t.Errorf("enumerator partitions\n got %v\nwant %v", g, w)
			}
			if enc, err := e.Encode(); err != nil || !bytes.Equal(enc, src.Coordinator.Enum.Payload) {
				t.Errorf("enumerator re-encoded %x, %v\nFlink wrote %x", enc, err, src.Coordinator.Enum.Payload)
			}
			if !bytes.Equal(src.Coordinator.Bytes(), src.Operator.Coordinator.Data) {
				t.Error("coordinator state re-encoded differs")
			}
		})
	}
}
