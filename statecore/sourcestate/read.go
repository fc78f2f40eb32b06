package sourcestate

import (
	"fmt"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// ReaderStateName is the operator list state in which a SourceOperator keeps its splits.
const ReaderStateName = "SourceReaderState"

// Connector names as listings print them.
const (
	ConnectorKafka   = "kafka"
	ConnectorUnknown = "unknown"
)

// Source is the source state of one operator of a savepoint.
type Source struct {
	Operator  *metadata.OperatorState
	Connector string // ConnectorKafka when every split and the enumerator decode as Kafka's
	Splits    []Split
	// Coordinator is the framed enumerator checkpoint; nil when the operator has none.
	Coordinator *Coordinator
	// KafkaEnum is the decoded enumerator state when Connector is kafka; EnumErr says why it
	// could not be decoded (an unknown version, for example) when there is a coordinator.
	KafkaEnum *KafkaEnumState
	EnumErr   error
	// FileEnum is the decoded enumerator state when Connector is files.
	FileEnum *FileEnumState
}

// Split is one element of a reader subtask's SourceReaderState.
type Split struct {
	Subtask int32
	Index   int // position in the subtask's list
	Raw     Versioned
	Kafka   *KafkaSplit // nil when not decoded as Kafka's
	File    *FileSplit  // a FileSource's split, when the source is one (Connector files)
	Err     error       // why not, when the bytes are not a Kafka split
}

// IsSource says whether op looks like a FLIP-27 source: a reader list state of that name in
// some subtask's operator state.
func IsSource(op *metadata.OperatorState) bool {
	for _, st := range op.Subtasks {
		if st == nil {
			continue
		}
		if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok {
			for _, s := range oh.States {
				if s.Name == ReaderStateName {
					return true
				}
			}
		}
	}
	return false
}

// Read collects the splits of every subtask of op and its coordinator state, decoding what
// looks like the Kafka connector's. Bytes that are not Kafka's are kept raw (with the reason),
// never an error; a damaged frame (a truncated element, a coordinator length past its end) is.
func Read(sp *savepoint.Savepoint, op *metadata.OperatorState) (*Source, error) {
	src := &Source{Operator: op, Connector: ConnectorUnknown}
	for _, st := range op.Subtasks {
		if st == nil || st.ManagedOperator == nil {
			continue
		}
		oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
		if !ok || oh.Delegate == nil {
			continue
		}
		has := false
		for _, s := range oh.States {
			has = has || s.Name == ReaderStateName
		}
		if !has {
			continue
		}
		if err := readSubtask(sp, op, st.Index, oh, src); err != nil {
			return nil, err
		}
	}
	kafka := len(src.Splits) > 0
	for i := range src.Splits {
		s := &src.Splits[i]
		// offsets in its errors count from the start of the split payload (after the i32 version
		// and i32 length of SimpleVersionedSerialization)
		name := fmt.Sprintf("operator %s subtask %d %s[%d]", op.ID, s.Subtask, ReaderStateName, s.Index)
		k, err := DecodeKafkaSplit(s.Raw.Version, s.Raw.Payload, name)
		if err != nil {
			s.Err, kafka = err, false
			continue
		}
		s.Kafka = &k
	}
	if op.Coordinator != nil {
		c, err := ReadCoordinator(op.Coordinator.Data, fmt.Sprintf("operator %s coordinator state", op.ID))
		if err != nil {
			return nil, err
		}
		src.Coordinator = c
		e, err := DecodeKafkaEnum(c.Enum.Version, c.Enum.Payload, fmt.Sprintf("operator %s enumerator state", op.ID))
		switch {
		case err == nil && (kafka || len(src.Splits) == 0):
			src.KafkaEnum, kafka = e, true
		case err == nil:
			src.EnumErr = fmt.Errorf("not taken as Kafka's: it would decode as KafkaSourceEnumState version %d, but the splits are not Kafka's", c.Enum.Version)
		default:
			src.EnumErr, kafka = err, false
		}
	}
	if kafka {
		src.Connector = ConnectorKafka
	} else {
		readFileSource(src)
	}
	return src, nil
}

// readFileSource decodes src as a FileSource's when every split and the enumerator state (if
// any) decode as flink-connector-files' do; otherwise src is left as it is.
func readFileSource(src *Source) {
	files := make([]FileSplit, len(src.Splits))
	for i, s := range src.Splits {
		f, err := DecodeFileSplit(s.Raw.Version, s.Raw.Payload, "split")
		if err != nil {
			return
		}
		files[i] = f
	}
	var enum *FileEnumState
	if c := src.Coordinator; c != nil {
		e, err := DecodeFileEnum(c.Enum.Version, c.Enum.Payload, "enumerator")
		if err != nil {
			return
		}
		enum = e
	}
	if len(files) == 0 && enum == nil {
		return
	}
	for i := range src.Splits {
		src.Splits[i].File, src.Splits[i].Err = &files[i], nil
	}
	src.FileEnum, src.EnumErr, src.Connector = enum, nil, ConnectorFiles
}

func readSubtask(sp *savepoint.Savepoint, op *metadata.OperatorState, idx int32, oh *metadata.OperatorStreamHandle, src *Source) error {
	str, err := sp.OpenStream(oh.Delegate)
	if err != nil {
		return fmt.Errorf("operator %s subtask %d operator state: %w", op.ID, idx, err)
	}
	defer str.Close()
	os, err := opstate.Open(str, str.Size(), str.Name, oh)
	if err != nil {
		return err
	}
	return os.Read(func(e opstate.Element) error {
		if e.State != ReaderStateName {
			return nil
		}
		b, ok := e.Value.([]byte)
		if !ok {
			return fmt.Errorf("%s: operator %s subtask %d %s[%d]: want byte[] elements (BytePrimitiveArraySerializer), got %T", str.Name, op.ID, idx, ReaderStateName, e.Index, e.Value)
		}
		v, err := ReadVersionedBytes(b, fmt.Sprintf("%s: operator %s subtask %d %s[%d]", str.Name, op.ID, idx, ReaderStateName, e.Index))
		if err != nil {
			return err
		}
		src.Splits = append(src.Splits, Split{Subtask: idx, Index: e.Index, Raw: v})
		return nil
	})
}
