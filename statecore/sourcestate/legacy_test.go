package sourcestate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/uid"
)

const legacyFixture = "../../testdata/flink-1.17/sources/flink-kafka-consumer"

// legacyExpect is flink-kafka-consumer.expect.json as the Flink 1.17 oracle wrote it: what the
// job read and the union state decoded by the connector's own state serializer.
type legacyExpect struct {
	OperatorUID string `json:"operatorUid"`
	Read        []struct {
		Topic      string `json:"topic"`
		Partition  int32  `json:"partition"`
		NextOffset int64  `json:"nextOffset"`
	} `json:"read"`
	Offsets []struct {
		Topic     string `json:"topic"`
		Partition int32  `json:"partition"`
		Offset    int64  `json:"offset"`
	} `json:"offsets"`
}

func openLegacy(t *testing.T) (*savepoint.Savepoint, *metadata.OperatorState, legacyExpect) {
	t.Helper()
	var exp legacyExpect
	sp := openFixture(t, legacyFixture, &exp)
	for _, op := range sp.Metadata.Operators {
		if op.ID.String() == uid.Hash(exp.OperatorUID) {
			return sp, op, exp
		}
		if IsLegacyKafka(op) {
			t.Errorf("operator %s taken for a FlinkKafkaConsumer", op.ID)
		}
	}
	t.Fatalf("no operator %s in %s", exp.OperatorUID, legacyFixture)
	return nil, nil, exp
}

// TestLegacyKafkaFixture decodes the FlinkKafkaConsumer union state Flink 1.17 wrote and compares
// it with what the connector's serializer read back and with what the job read (the state holds
// the last offset emitted, so one less than the next to read).
func TestLegacyKafkaFixture(t *testing.T) {
	sp, op, exp := openLegacy(t)
	if !IsLegacyKafka(op) || IsSource(op) {
		t.Fatalf("IsLegacyKafka %v IsSource %v", IsLegacyKafka(op), IsSource(op))
	}
	got, err := ReadLegacyKafka(sp, op)
	if err != nil {
		t.Fatal(err)
	}
	var g, w []string
	subtasks := map[int32]bool{}
	for _, o := range got {
		g = append(g, fmt.Sprintf("%s-%d@%d", o.Topic, o.Partition, o.Offset))
		subtasks[o.Subtask] = true
	}
	for _, o := range exp.Offsets {
		w = append(w, fmt.Sprintf("%s-%d@%d", o.Topic, o.Partition, o.Offset))
	}
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Errorf("union state\n got %v\nwant %v", g, w)
	}
	if len(subtasks) < 2 {
		t.Errorf("elements of %d subtasks, want them spread over the job's parallelism", len(subtasks))
	}
	next := map[string]int64{}
	for _, r := range exp.Read {
		next[fmt.Sprintf("%s-%d", r.Topic, r.Partition)] = r.NextOffset
	}
	for _, o := range got {
		if want := fmt.Sprint(next[fmt.Sprintf("%s-%d", o.Topic, o.Partition)]); LegacyResumeText(o.Offset) != want {
			t.Errorf("%s-%d resumes at %s; the job read up to %s", o.Topic, o.Partition, LegacyResumeText(o.Offset), want)
		}
	}
}

// TestFlink117ProxyVersion: the Flink 1.17 fixtures really are the old operator-state format
// (proxy version 5, no compression flag) that Flink 2.3.0 still restores.
func TestFlink117ProxyVersion(t *testing.T) {
	for _, dir := range []string{legacyFixture, "../../testdata/flink-1.17/sources/kafka-datastream"} {
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
				if !ok || oh.Delegate == nil {
					continue
				}
				str, err := sp.OpenStream(oh.Delegate)
				if err != nil {
					t.Fatal(err)
				}
				os, err := opstate.Open(str, str.Size(), str.Name, oh)
				str.Close()
				if err != nil {
					t.Fatal(err)
				}
				if os.Header.Version != 5 {
					t.Errorf("%s: operator state proxy version %d, want 5", str.Name, os.Header.Version)
				}
				seen++
			}
		}
		sp.Close()
		if seen == 0 {
			t.Errorf("%s: no operator state", dir)
		}
	}
}

// TestLegacyKafkaBadElements: damaged elements (derived from a real one) are one error naming
// the field.
func TestLegacyKafkaBadElements(t *testing.T) {
	sp, op, _ := openLegacy(t)
	var raw []byte
	for _, st := range op.Subtasks {
		oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
		if !ok || oh.Delegate == nil || raw != nil {
			continue
		}
		str, err := sp.OpenStream(oh.Delegate)
		if err != nil {
			t.Fatal(err)
		}
		os, err := opstate.Open(str, str.Size(), str.Name, oh)
		if err != nil {
			t.Fatal(err)
		}
		os.Read(func(e opstate.Element) error {
			if e.State == LegacyKafkaStateName && raw == nil {
				raw = append([]byte(nil), e.Raw...)
			}
			return nil
		})
		str.Close()
	}
	if raw == nil {
		t.Fatal("no element")
	}
	if _, err := DecodeLegacyKafkaElement(raw, "el"); err != nil {
		t.Fatalf("real element: %v", err)
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), raw...)) }
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"truncated", raw[:len(raw)-3], "offset"},
		{"trailing", append(append([]byte(nil), raw...), 0), "1 bytes after the offset"},
		{"null object", mod(func(b []byte) []byte { b[0] = 0; return b }), "null KafkaTopicPartition"},
		{"reference", mod(func(b []byte) []byte { b[1] = 2; return b }), "kryo.reference"},
		{"hash", mod(func(b []byte) []byte { b[2] ^= 0x02; return b }), "is not the hash"},
		{"offset", mod(func(b []byte) []byte { b[len(b)-8] = 0xff; return b }), "KafkaTopicPartitionStateSentinel"},
		{"empty", nil, "kryo.class"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeLegacyKafkaElement(c.b, "el")
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "el") {
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
