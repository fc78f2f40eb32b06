package sourcestate

import (
	"fmt"
	"sort"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// The legacy FlinkKafkaConsumer (a SourceFunction, in flink-connector-kafka up to 3.x for
// Flink 1.x; removed with Flink 2.0) keeps where each partition stands in union list state
// LegacyKafkaStateName. FlinkKafkaConsumerBase.createStateSerializer declares the element
// serializer: a TupleSerializer of (KryoSerializer for KafkaTopicPartition, LongSerializer), so an
// element is Kryo 2.x's writeClassAndObject of a KafkaTopicPartition followed by the offset:
//
//	+--------------+--------+-----------------+---------------+--------+-------------+--------+
//	| Kryo class   | ref    | cachedHash      | partition     | ref    | topic       | i64    |
//	| varint >= 1  | 0x01   | zigzag varint   | zigzag varint | 0x01   | Kryo string | offset |
//	+--------------+--------+-----------------+---------------+--------+-------------+--------+
//
// The class is a registration id + 2 (Flink's KryoSerializer registers the class it serializes;
// 0x57 in the Flink 1.17 fixture), or 1 followed by a varint name id and the class name. Flink
// enables Kryo references, so the object and its topic String are each preceded by the marker of a
// new object (1). Kryo's FieldSerializer writes the fields sorted by name (cachedHash, partition,
// topic); ints as zigzag varints (LEB128, 7 bits a byte, least significant first). A Kryo string
// of 2 to 63 ASCII characters is its bytes with the high bit set on the last; otherwise a varint
// of length+1 whose first byte carries the flag 0x80 (6 value bits, 0x40 = more), then the
// characters. Kafka topic names are ASCII ([a-zA-Z0-9._-]), so other characters are refused.
//
// The offset is the last one the consumer emitted (it resumes at offset+1), or one of the
// KafkaTopicPartitionStateSentinel values below for a partition it had not read yet. Flink 2.x
// cannot restore this state (its Kryo is 5.x and the consumer is gone): it is read only.

// LegacyKafkaStateName is FlinkKafkaConsumerBase's union list state.
const LegacyKafkaStateName = "topic-partition-offset-states"

// KafkaTopicPartitionStateSentinel values: the consumer has no offset of its own for the
// partition yet and starts as the marker says.
const (
	LegacyOffsetNotSet   int64 = -915623761776
	LegacyOffsetEarliest int64 = -915623761775
	LegacyOffsetLatest   int64 = -915623761774
	LegacyOffsetGroup    int64 = -915623761773
)

// ConnectorKafkaLegacy names the FlinkKafkaConsumer in listings.
const ConnectorKafkaLegacy = "kafka-legacy"

// LegacyKafkaOffset is one element of a FlinkKafkaConsumer's union state.
type LegacyKafkaOffset struct {
	Subtask   int32 // the subtask whose stream holds the element
	Index     int
	Topic     string
	Partition int32
	Offset    int64 // last offset emitted, or a sentinel
}

// LegacyOffsetText spells a stored offset out: a sentinel by name, else the number.
func LegacyOffsetText(o int64) string {
	switch o {
	case LegacyOffsetNotSet:
		return "not set"
	case LegacyOffsetEarliest:
		return "earliest"
	case LegacyOffsetLatest:
		return "latest"
	case LegacyOffsetGroup:
		return "committed"
	}
	return fmt.Sprint(o)
}

// LegacyResumeText is where the consumer resumes for a stored offset: the next offset after
// the last one emitted, or the sentinel's marker.
func LegacyResumeText(o int64) string {
	if o >= 0 {
		return fmt.Sprint(o + 1)
	}
	return LegacyOffsetText(o)
}

// IsLegacyKafka says whether op holds a FlinkKafkaConsumer's union state.
func IsLegacyKafka(op *metadata.OperatorState) bool {
	for _, st := range op.Subtasks {
		if st == nil {
			continue
		}
		if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok {
			for _, s := range oh.States {
				if s.Name == LegacyKafkaStateName {
					return true
				}
			}
		}
	}
	return false
}

// ReadLegacyKafka decodes every element of op's FlinkKafkaConsumer union state, sorted by topic
// and partition (then subtask). A damaged element is an error naming it.
func ReadLegacyKafka(sp *savepoint.Savepoint, op *metadata.OperatorState) ([]LegacyKafkaOffset, error) {
	var out []LegacyKafkaOffset
	for _, st := range op.Subtasks {
		if st == nil {
			continue
		}
		oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
		if !ok || oh.Delegate == nil {
			continue
		}
		str, err := sp.OpenStream(oh.Delegate)
		if err != nil {
			return nil, fmt.Errorf("operator %s subtask %d operator state: %w", op.ID, st.Index, err)
		}
		os, err := opstate.Open(str, str.Size(), str.Name, oh)
		if err == nil {
			err = os.Read(func(e opstate.Element) error {
				if e.State != LegacyKafkaStateName {
					return nil
				}
				o, err := DecodeLegacyKafkaElement(e.Raw, fmt.Sprintf("%s: %s[%d]", str.Name, LegacyKafkaStateName, e.Index))
				if err != nil {
					return err
				}
				o.Subtask, o.Index = st.Index, e.Index
				out = append(out, o)
				return nil
			})
		}
		str.Close()
		if err != nil {
			return nil, err
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.Subtask < b.Subtask
	})
	return out, nil
}

// maxTopic is the longest topic name Kafka allows.
const maxTopic = 249

// DecodeLegacyKafkaElement decodes one union-state element (see the layout above); name is used
// in errors, with byte offsets into b.
func DecodeLegacyKafkaElement(b []byte, name string) (LegacyKafkaOffset, error) {
	r := javaio.NewBytesReader(b, name, 0)
	var o LegacyKafkaOffset
	off := r.Offset()
	switch cls := kryoVarint(r, "kryo.class"); {
	case r.Err() != nil:
	case cls == 0:
		r.FailAt(off, "kryo.class", "a null KafkaTopicPartition")
	case cls == 1: // class by name
		kryoVarint(r, "kryo.classNameId")
		off = r.Offset()
		if n := kryoString(r, "kryo.className", 200); r.Err() == nil && n != "org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition" {
			r.FailAt(off, "kryo.className", "want KafkaTopicPartition, got class %q", n)
		}
	}
	kryoNewObject(r, "kryo.reference")
	off = r.Offset()
	hash := kryoZigzag(r, "cachedHash")
	off2 := r.Offset()
	o.Partition = kryoZigzag(r, "partition")
	if r.Err() == nil && o.Partition < 0 {
		r.FailAt(off2, "partition", "want a partition number >= 0, got %d", o.Partition)
	}
	kryoNewObject(r, "topic.reference")
	o.Topic = kryoString(r, "topic", maxTopic)
	if r.Err() == nil && hash != javaStringHash(o.Topic)*31+o.Partition {
		r.FailAt(off, "cachedHash", "%d is not the hash of %s-%d (%d): not a KafkaTopicPartition", hash, o.Topic, o.Partition, javaStringHash(o.Topic)*31+o.Partition)
	}
	off = r.Offset()
	o.Offset = r.I64("offset")
	if r.Err() == nil && o.Offset < 0 && (o.Offset < LegacyOffsetNotSet || o.Offset > LegacyOffsetGroup) {
		r.FailAt(off, "offset", "want an offset >= 0 or a KafkaTopicPartitionStateSentinel, got %d", o.Offset)
	}
	if r.Err() == nil && !r.AtEOF() {
		r.Failf("end of element", "%d bytes after the offset", len(b)-int(r.Offset()))
	}
	if err := r.Err(); err != nil {
		return LegacyKafkaOffset{}, err
	}
	return o, nil
}

// kryoVarint reads Kryo's unsigned varint (at most 5 bytes).
func kryoVarint(r *javaio.Reader, field string) uint32 {
	off := r.Offset()
	var v uint32
	for i := 0; i < 5; i++ {
		c := r.U8(field)
		if r.Err() != nil {
			return 0
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c&0x80 == 0 {
			return v
		}
	}
	r.FailAt(off, field, "varint longer than 5 bytes")
	return 0
}

// kryoZigzag reads an int written with optimizePositive false.
func kryoZigzag(r *javaio.Reader, field string) int32 {
	v := kryoVarint(r, field)
	return int32(v>>1) ^ -int32(v&1)
}

// kryoNewObject reads the reference marker of an object written for the first time.
func kryoNewObject(r *javaio.Reader, field string) {
	off := r.Offset()
	if m := r.U8(field); r.Err() == nil && m != 1 {
		r.FailAt(off, field, "want Kryo's marker of a new object (1), got %d", m)
	}
}

// kryoString reads a non-null Kryo string of ASCII characters, at most max of them.
func kryoString(r *javaio.Reader, field string, max int) string {
	off := r.Offset()
	first := r.Peek1()
	if first < 0 {
		r.U8(field) // fails: truncated
		return ""
	}
	if first&0x80 == 0 { // ASCII, the last byte has the high bit set
		var s []byte
		for len(s) <= max {
			c := r.U8(field)
			if r.Err() != nil {
				return ""
			}
			s = append(s, c&0x7f)
			if c&0x80 != 0 {
				return string(s)
			}
		}
		r.FailAt(off, field, "string longer than %d characters", max)
		return ""
	}
	// length+1 as a varint whose first byte has the flag 0x80 and 6 value bits (0x40: more)
	c := r.U8(field)
	n := uint32(c & 0x3f)
	if c&0x40 != 0 {
		n |= kryoVarint(r, field) << 6
	}
	if r.Err() != nil {
		return ""
	}
	if n == 0 {
		r.FailAt(off, field, "a null string")
		return ""
	}
	if n-1 > uint32(max) {
		r.FailAt(off, field, "string of %d characters, want at most %d", n-1, max)
		return ""
	}
	s := r.Bytes(field, int(n-1))
	for i, ch := range s {
		if ch >= 0x80 {
			r.FailAt(r.Offset()-int64(len(s)-i), field, "byte 0x%02x: want an ASCII character (Kafka topic names are ASCII)", ch)
			return ""
		}
	}
	return string(s)
}

// javaStringHash is Java's String.hashCode for an ASCII string.
func javaStringHash(s string) int32 {
	var h int32
	for i := 0; i < len(s); i++ {
		h = 31*h + int32(s[i])
	}
	return h
}
