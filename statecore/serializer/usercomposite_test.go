package serializer

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// TestUserComposite: a snapshot class this package does not know is read when its payload is a
// composite's with no outer snapshot (the two magic numbers; Flink wrote such ones in the
// named-window fixtures, see TestWriterRoundTripsFixtures), and its values are opaque; any other
// payload of an unknown class is refused with its class and offset, never guessed.
func TestUserComposite(t *testing.T) {
	const class = "example.WindowSerializerSnapshot"
	versioned := func(version int32, payload ...int32) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.BigEndian, uint16(len(class)))
		b.WriteString(class)
		binary.Write(&b, binary.BigEndian, version)
		for _, p := range payload {
			binary.Write(&b, binary.BigEndian, p)
		}
		return b.Bytes()
	}
	// nested: one LongSerializer snapshot (simple, version 3)
	long := "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"
	var nested bytes.Buffer
	binary.Write(&nested, binary.BigEndian, uint16(len(long)))
	nested.WriteString(long)
	binary.Write(&nested, binary.BigEndian, int32(3))

	good := append(versioned(3, compositeMagic, 1, nestedDelegateMagic, 1, 1), nested.Bytes()...)
	r := javaio.NewReader(bytes.NewReader(good), "header", 0)
	s := ReadVersioned(r, "ns")
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if s.Kind != KindComposite || len(s.Nested) != 1 || s.End != int64(len(good)) {
		t.Fatalf("got kind %v, %d nested, end %d", s.Kind, len(s.Nested), s.End)
	}
	if c := NewCodec(s); c.Known() || c.FixedLen() >= 0 {
		t.Errorf("codec of an unknown composite: known %v, fixed length %d; want opaque", c.Known(), c.FixedLen())
	}
	back, err := EncodeVersioned(s)
	if err != nil || !bytes.Equal(back, good) {
		t.Errorf("re-encoded: %v, equal %v", err, bytes.Equal(back, good))
	}

	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"simple-like, empty payload", versioned(3), "unknown serializer snapshot class"},
		{"other payload", versioned(3, 42), "unknown serializer snapshot class"},
		{"composite magic, legacy version", versioned(2, compositeMagic, 1, nestedDelegateMagic, 1, 0), "unknown serializer snapshot class"},
		{"outer snapshot of its own", versioned(3, compositeMagic, 1, 7, nestedDelegateMagic, 1, 0), "writes an outer snapshot of its own"},
		{"cut after the magic", versioned(3, compositeMagic), "outerVersion"},
	} {
		r := javaio.NewReader(bytes.NewReader(tc.b), "header", 0)
		if s := ReadVersioned(r, "ns"); s != nil || r.Err() == nil || !strings.Contains(r.Err().Error(), tc.want) {
			t.Errorf("%s: snapshot %v, error %v; want one containing %q", tc.name, s, r.Err(), tc.want)
		}
	}
}
