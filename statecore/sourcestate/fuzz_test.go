package sourcestate

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// FuzzSourceState feeds bytes to every decoder of the package (reader split element, Kafka
// split, enumerator state of each version, coordinator frame, legacy FlinkKafkaConsumer element, FileSource split and enumerator). None may panic; whatever decodes
// must encode to bytes that decode to the same value, and the split and frame encoders must give
// back the very bytes they read.
func FuzzSourceState(f *testing.F) {
	// every enumerator state version as Flink wrote it: v3 (2.3.0), v2 (1.20), v1 and v0 (1.12,
	// the latter in a coordinator serde 0 frame with reader assignments after it)
	for _, dir := range []string{"../../testdata/sources/kafka-datastream", "../../testdata/flink-1.20/sources/kafka-datastream",
		"../../testdata/flink-1.12/sources-1.12.7/kafka-datastream", "../../testdata/flink-1.12/sources-1.12.2/kafka-datastream"} {
		sp, err := savepoint.Open(dir)
		if err != nil {
			f.Fatal(err)
		}
		for _, op := range sp.Metadata.Operators {
			if !IsSource(op) {
				continue
			}
			src, err := Read(sp, op)
			if err != nil {
				f.Fatal(err)
			}
			for _, s := range src.Splits {
				f.Add(uint8(0), s.Raw.Bytes())
				f.Add(uint8(1), s.Raw.Payload)
			}
			f.Add(uint8(2), src.Coordinator.Bytes())
			f.Add(uint8(3+src.Coordinator.Enum.Version), src.Coordinator.Enum.Payload)
		}
		sp.Close()
	}
	sp, err := savepoint.Open(fileFixture)
	if err != nil {
		f.Fatal(err)
	}
	for _, op := range sp.Metadata.Operators {
		if IsSource(op) {
			src, err := Read(sp, op)
			if err != nil {
				f.Fatal(err)
			}
			for _, s := range src.Splits {
				f.Add(uint8(8), s.Raw.Payload)
			}
			f.Add(uint8(9), src.Coordinator.Enum.Payload)
		}
	}
	sp.Close()
	if sp, err = savepoint.Open(legacyFixture); err != nil {
		f.Fatal(err)
	}
	for _, op := range sp.Metadata.Operators {
		if IsLegacyKafka(op) {
			for _, st := range op.Subtasks {
				if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok && oh.Delegate != nil {
					str, err := sp.OpenStream(oh.Delegate)
					if err != nil {
						f.Fatal(err)
					}
					os, err := opstate.Open(str, str.Size(), str.Name, oh)
					if err != nil {
						f.Fatal(err)
					}
					os.Read(func(e opstate.Element) error { f.Add(uint8(7), e.Raw); return nil })
					str.Close()
				}
			}
		}
	}
	sp.Close()
	f.Fuzz(func(t *testing.T, kind uint8, b []byte) {
		switch kind % 10 {
		case 0:
			if v, err := ReadVersionedBytes(b, "fuzz"); err == nil && !bytes.Equal(v.Bytes(), b) {
				t.Fatalf("element re-encoded %x, read %x", v.Bytes(), b)
			}
		case 1:
			s, err := DecodeKafkaSplit(0, b, "fuzz")
			if err != nil {
				return
			}
			enc, err := s.Encode()
			if err != nil || !bytes.Equal(enc, b) {
				t.Fatalf("split %+v re-encoded %x, %v; read %x", s, enc, err, b)
			}
		case 2:
			if c, err := ReadCoordinator(b, "fuzz"); err == nil && !bytes.Equal(c.Bytes(), b) {
				t.Fatalf("coordinator re-encoded %x, read %x", c.Bytes(), b)
			}
		case 8:
			// FileSource split and enumerator state: no panic, sane values
			if f, err := DecodeFileSplit(FileSplitVersion, b, "fuzz"); err == nil && len(f.Hostnames) > maxFileField {
				t.Fatalf("decoded %+v", f)
			}
		case 9:
			if e, err := DecodeFileEnum(FileEnumVersion, b, "fuzz"); err == nil && len(e.Pending)+len(e.ProcessedPaths) > len(b) {
				t.Fatalf("decoded %d splits and %d paths from %d bytes", len(e.Pending), len(e.ProcessedPaths), len(b))
			}
		case 7:
			// the legacy FlinkKafkaConsumer's union-state element: no panic, and what decodes is sane
			if o, err := DecodeLegacyKafkaElement(b, "fuzz"); err == nil && (o.Partition < 0 || len(o.Topic) > maxTopic) {
				t.Fatalf("decoded %+v", o)
			}
		default:
			v := int32(kind%10) - 3
			e, err := DecodeKafkaEnum(v, b, "fuzz")
			if err != nil {
				return
			}
			enc, err := e.Encode()
			if err != nil {
				t.Fatalf("enum v%d %+v does not encode: %v", v, e, err)
			}
			again, err := DecodeKafkaEnum(v, enc, "fuzz")
			if err != nil || !reflect.DeepEqual(again, e) {
				t.Fatalf("enum v%d re-decoded %+v, %v; want %+v", v, again, err, e)
			}
		}
	})
}
