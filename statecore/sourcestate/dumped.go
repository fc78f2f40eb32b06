package sourcestate

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// DumpedSplit turns a SourceReaderState value as savepoint dump prints it (a JSON object, numbers
// as json.Number) back into the element bytes Flink keeps: SimpleVersionedSerialization's frame
// around the split payload. A Kafka split is encoded from its fields (so an edited offset takes
// effect), another connector's from its serializer version and base64 payload. ok is false when
// v is not such an object (a plain base64 string, say), for the caller to take as it is. A
// FileSource split is refused: statecraft reads that connector only.
func DumpedSplit(v any) (b []byte, ok bool, err error) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return nil, false, nil
	}
	conn, _ := m["connector"].(string)
	version, verr := dumpedInt(m, "serializerVersion")
	if conn == "" || verr != nil {
		return nil, false, nil
	}
	switch conn {
	case ConnectorKafka:
		s := KafkaSplit{}
		s.Topic, _ = m["topic"].(string)
		p, err := dumpedInt(m, "partition")
		if err != nil {
			return nil, true, err
		}
		s.Partition = int32(p)
		if s.StartingOffset, err = dumpedInt(m, "startingOffset"); err != nil {
			return nil, true, err
		}
		if s.StoppingOffset, err = dumpedInt(m, "stoppingOffset"); err != nil {
			return nil, true, err
		}
		if version != KafkaSplitVersion {
			return nil, true, fmt.Errorf("serializerVersion: a Kafka split is version %d, got %d", KafkaSplitVersion, version)
		}
		payload, err := s.Encode()
		if err != nil {
			return nil, true, err
		}
		return Versioned{Version: KafkaSplitVersion, Payload: payload}.Bytes(), true, nil
	case ConnectorUnknown:
		s, _ := m["base64"].(string)
		payload, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return nil, true, fmt.Errorf("base64: %w", err)
		}
		return Versioned{Version: int32(version), Payload: payload}.Bytes(), true, nil
	case ConnectorFiles:
		return nil, true, fmt.Errorf("a FileSource split cannot be written back (statecraft reads that connector only); leave the operator's %s records out of the data to keep the source's splits", ReaderStateName)
	}
	return nil, true, fmt.Errorf("connector %q: want %s or %s (a split as savepoint dump prints it)", conn, ConnectorKafka, ConnectorUnknown)
}

func dumpedInt(m map[string]any, field string) (int64, error) {
	n, ok := m[field].(json.Number)
	if !ok {
		return 0, fmt.Errorf("%s: want a number, got %v", field, m[field])
	}
	v, err := n.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", field, err)
	}
	return v, nil
}
