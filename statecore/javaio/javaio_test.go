package javaio

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestModifiedUTF8(t *testing.T) {
	cases := []struct {
		in   string
		want []byte
	}{
		{"", nil},
		{"abc", []byte("abc")},
		{"\x00", []byte{0xC0, 0x80}},
		{"ü", []byte{0xC3, 0xBC}},
		{"€", []byte{0xE2, 0x82, 0xAC}},
		// U+1F600 as the surrogates D83D DE00, 3 bytes each (what Java's writeUTF produces).
		{"😀", []byte{0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80}},
	}
	for _, tc := range cases {
		got := EncodeModifiedUTF8(tc.in)
		if !bytes.Equal(got, tc.want) {
			t.Errorf("encode %q = % x, want % x", tc.in, got, tc.want)
		}
		back, err := DecodeModifiedUTF8(got)
		if err != nil || back != tc.in {
			t.Errorf("decode(% x) = %q, %v; want %q", got, back, err, tc.in)
		}
	}
}

func TestModifiedUTF8Invalid(t *testing.T) {
	for _, b := range [][]byte{{0x00}, {0xC3}, {0xE2, 0x82}, {0xFF}, {0x80}} {
		if _, err := DecodeModifiedUTF8(b); err == nil {
			t.Errorf("decode(% x) succeeded, want an error", b)
		}
	}
}

func TestRoundTripPrimitives(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.I32(-2)
	w.I64(1 << 40)
	w.I16(-1)
	w.Bool(true)
	w.UTF("héllo")
	w.U8(7)
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	r := NewReader(bytes.NewReader(buf.Bytes()), "test", 0)
	if v := r.I32("a"); v != -2 {
		t.Errorf("I32 = %d", v)
	}
	if v := r.I64("b"); v != 1<<40 {
		t.Errorf("I64 = %d", v)
	}
	if v := r.I16("c"); v != -1 {
		t.Errorf("I16 = %d", v)
	}
	if v := r.Bool("d"); !v {
		t.Errorf("Bool = %v", v)
	}
	if v := r.UTF("e"); v != "héllo" {
		t.Errorf("UTF = %q", v)
	}
	if v := r.U8("f"); v != 7 {
		t.Errorf("U8 = %d", v)
	}
	if r.Err() != nil || !r.AtEOF() || r.Offset() != int64(buf.Len()) {
		t.Fatalf("err %v eof %v off %d", r.Err(), r.AtEOF(), r.Offset())
	}
}

func TestReaderErrorsCarryPosition(t *testing.T) {
	r := NewReader(bytes.NewReader([]byte{0, 0, 0, 5, 1, 2}), "f/_metadata", 100)
	n := r.Count("numStates", 3)
	if n != 0 {
		t.Fatalf("count = %d, want 0 after a range error", n)
	}
	var fe *FormatError
	if !errors.As(r.Err(), &fe) || fe.Offset != 100 || fe.Field != "numStates" {
		t.Fatalf("err = %#v", r.Err())
	}
	if !strings.Contains(r.Err().Error(), "f/_metadata: offset 100: numStates: count 5 out of range [0, 3]") {
		t.Fatalf("message %q", r.Err())
	}

	r = NewReader(bytes.NewReader([]byte{0, 0, 0}), "x", 0)
	r.I64("checkpointId")
	if !errors.Is(r.Err(), io.ErrUnexpectedEOF) || !strings.Contains(r.Err().Error(), "want 8 bytes, file has 3") {
		t.Fatalf("err = %v", r.Err())
	}
	// Sticky: later reads return zero values and keep the first error.
	if r.I32("next") != 0 || !strings.Contains(r.Err().Error(), "checkpointId") {
		t.Fatalf("error not sticky: %v", r.Err())
	}
}

func TestBytesDoesNotTrustLength(t *testing.T) {
	// A length of 2 GiB over a 4-byte stream must fail without allocating 2 GiB.
	r := NewReader(bytes.NewReader([]byte{1, 2, 3, 4}), "x", 0)
	if b := r.Bytes("payload", 1<<31-1); b != nil || r.Err() == nil {
		t.Fatalf("got %d bytes, err %v", len(b), r.Err())
	}
}

func TestWriterRefusesLongUTF(t *testing.T) {
	w := NewWriter(io.Discard)
	w.UTF(strings.Repeat("a", MaxUTFLen+1))
	if w.Err() == nil {
		t.Fatal("writeUTF of 65536 bytes succeeded; Java refuses it")
	}
}
