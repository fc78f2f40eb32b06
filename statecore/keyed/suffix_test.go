package keyed

import (
	"bytes"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestDecodeBeforeSuffix: an opaque namespace in the ambiguous key layout (key and namespace
// serializers both variable-length) is the bytes its length suffix names, for suffixes of one and
// two bytes and at their boundaries; a suffix that does not match the bytes before it is an error.
// Real keys of this layout are in the named-window fixtures (cmd/statecraft's dump tests).
func TestDecodeBeforeSuffix(t *testing.T) {
	opaque := serializer.NewCodec(&serializer.Snapshot{Class: "example.UnknownWindowSerializerSnapshot"})
	for _, n := range []int{0, 1, 254, 255, 256, 257, 300, 65535, 65536} {
		ns := bytes.Repeat([]byte{0xA5}, n)
		b := appendLengthSuffix(bytes.Clone(ns), n)
		in := serializer.NewInput(b)
		got := decodeBeforeSuffix(in, opaque)
		if in.Err() != nil {
			t.Fatalf("length %d: %v", n, in.Err())
		}
		o, ok := got.(serializer.Opaque)
		if !ok || !bytes.Equal(o.Base64, ns) {
			t.Fatalf("length %d: got %T of %d bytes", n, got, len(o.Base64))
		}
		if in.Pos != n {
			t.Errorf("length %d: stopped at %d, want %d (before the suffix)", n, in.Pos, n)
		}
		skipLengthSuffix(in, n)
		if in.Err() != nil || in.Remaining() != 0 {
			t.Errorf("length %d: suffix: %v, %d bytes left", n, in.Err(), in.Remaining())
		}
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "no length suffix fits the 0 bytes"},
		{"suffix says 2, 3 bytes before it", []byte{1, 2, 3, 2}, "give its length as 2, want 3"},
		{"two-byte suffix off by one", append(bytes.Repeat([]byte{7}, 300), 0x2D, 0x01), "give its length as 301, want 300"},
	} {
		in := serializer.NewInput(tc.b)
		decodeBeforeSuffix(in, opaque)
		if in.Err() == nil || !strings.Contains(in.Err().Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, in.Err(), tc.want)
		}
	}
	in := serializer.NewInput([]byte{5})
	skipLengthSuffix(in, 4)
	if in.Err() == nil || !strings.Contains(in.Err().Error(), "length suffix 5, want 4") {
		t.Errorf("wrong suffix: error %v", in.Err())
	}
}
