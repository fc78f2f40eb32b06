package serializer

import (
	"bytes"
	"strconv"
	"testing"
)

// TestRawIntEncoderAgrees: for an integer token of at most 18 digits, the RawIntEncoder of a
// type appends exactly what its RawEncoder appends for the token and refuses what it refuses
// (the ranges' edges), and the types without one (String, Double) have none.
func TestRawIntEncoderAgrees(t *testing.T) {
	const base = "org.apache.flink.api.common.typeutils.base."
	values := []int64{0, 1, -1, 127, 128, -128, -129, 32767, 32768, -32768, -32769, 2147483647, 2147483648,
		-2147483648, -2147483649, 999999999999999999, -999999999999999999}
	for _, class := range []string{"IntSerializer$IntSerializerSnapshot", "LongSerializer$LongSerializerSnapshot",
		"ShortSerializer$ShortSerializerSnapshot", "ByteSerializer$ByteSerializerSnapshot"} {
		s := &Snapshot{Class: base + class}
		enc, encInt := NewRawEncoder(s), NewRawIntEncoder(s)
		if enc == nil || encInt == nil {
			t.Fatalf("%s: no raw encoders (%v, %v)", class, enc != nil, encInt != nil)
		}
		for _, n := range values {
			want, wantOK := enc([]byte("x"), []byte(strconv.FormatInt(n, 10)))
			got, gotOK := encInt([]byte("x"), n)
			if gotOK != wantOK || wantOK && !bytes.Equal(got, want) {
				t.Errorf("%s %d: got %x %v, the token's encoder %x %v", class, n, got, gotOK, want, wantOK)
			}
		}
	}
	for _, class := range []string{"StringSerializer$StringSerializerSnapshot", "DoubleSerializer$DoubleSerializerSnapshot"} {
		if NewRawIntEncoder(&Snapshot{Class: base + class}) != nil {
			t.Errorf("%s: an integer encoder, want none (its tokens are read by the RawEncoder)", class)
		}
	}
}
