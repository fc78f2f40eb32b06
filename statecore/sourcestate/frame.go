package sourcestate

import (
	"bytes"
	"fmt"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// Versioned is one value written by a SimpleVersionedSerializer, with the serializer version it
// was written with. Payload is the serializer's own bytes.
type Versioned struct {
	Version int32
	Payload []byte
}

// ReadVersionedBytes decodes SimpleVersionedSerialization's byte-array form, which
// SimpleVersionedListState keeps per list element: i32 version, i32 length, then exactly that
// many payload bytes (Flink 2.3.0 refuses an array whose length does not match). name says
// where the bytes came from, for errors.
func ReadVersionedBytes(b []byte, name string) (Versioned, error) {
	r := javaio.NewBytesReader(b, name, 0)
	v := r.I32("serializer version")
	lenOff := r.Offset()
	n := r.I32("payload length")
	if r.Err() != nil {
		return Versioned{}, r.Err()
	}
	if int64(n) != int64(len(b)-8) {
		return Versioned{}, r.FailAt(lenOff, "payload length", "frame says %d bytes, the element has %d after the frame", n, len(b)-8)
	}
	return Versioned{Version: v, Payload: b[8:]}, nil
}

// Bytes is the byte-array form ReadVersionedBytes reads.
func (v Versioned) Bytes() []byte {
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	w.I32(v.Version)
	w.I32(int32(len(v.Payload)))
	w.Raw(v.Payload)
	return buf.Bytes()
}

// Coordinator is a source operator's coordinator state: Flink's SourceCoordinator framing
// around the enumerator's checkpoint.
type Coordinator struct {
	SerdeVersion int32 // 0 or 1
	Enum         Versioned
	// Trailing is what followed the enumerator checkpoint in serde version 0 (the reader
	// assignments Flink 1.11-1.12 wrote, ignored on restore); always empty in version 1.
	Trailing []byte
}

// Coordinator serde versions Flink 2.3.0 reads (SourceCoordinatorSerdeUtils).
const (
	CoordinatorSerdeV0 = 0
	CoordinatorSerdeV1 = 1
)

// ReadCoordinator decodes a source coordinator's state. A length that runs past the end, a
// version Flink does not know, or bytes after the payload in version 1 are errors naming the
// offset.
func ReadCoordinator(b []byte, name string) (*Coordinator, error) {
	r := javaio.NewBytesReader(b, name, 0)
	c := &Coordinator{}
	off := r.Offset()
	c.SerdeVersion = r.I32("coordinator serde version")
	if r.Err() == nil && (c.SerdeVersion < CoordinatorSerdeV0 || c.SerdeVersion > CoordinatorSerdeV1) {
		r.FailAt(off, "coordinator serde version", "want %d or %d (Flink's SourceCoordinator), got %d",
			CoordinatorSerdeV0, CoordinatorSerdeV1, c.SerdeVersion)
	}
	c.Enum.Version = r.I32("enumerator serializer version")
	n := r.Count("enumerator checkpoint length", len(b))
	c.Enum.Payload = r.Bytes("enumerator checkpoint", n)
	if r.Err() != nil {
		return nil, r.Err()
	}
	rest := b[r.Offset():]
	if len(rest) > 0 {
		if c.SerdeVersion != CoordinatorSerdeV0 {
			return nil, r.Failf("end of coordinator state", "%d bytes after the enumerator checkpoint (serde version %d allows none)", len(rest), c.SerdeVersion)
		}
		c.Trailing = rest
	}
	return c, nil
}

// Bytes encodes the coordinator state as ReadCoordinator reads it.
func (c *Coordinator) Bytes() []byte {
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	w.I32(c.SerdeVersion)
	w.I32(c.Enum.Version)
	w.I32(int32(len(c.Enum.Payload)))
	w.Raw(c.Enum.Payload)
	w.Raw(c.Trailing)
	return buf.Bytes()
}

// UnknownVersionError says a serializer version is not one this package decodes; listings show
// such values raw instead of failing.
type UnknownVersionError struct {
	Name    string
	What    string // "KafkaPartitionSplit", "KafkaSourceEnumState"
	Version int32
	Known   string
}

func (e *UnknownVersionError) Error() string {
	return fmt.Sprintf("%s: %s serializer version %d is not known (known: %s)", e.Name, e.What, e.Version, e.Known)
}
