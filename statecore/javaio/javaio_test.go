package javaio

import (
	"bytes"
	"errors"
	"io"
	"reflect"
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

// TestBytesReaderMatchesStream reads the same data through NewReader and NewBytesReader, whole
// and cut at every length: values, offsets and errors must agree.
func TestBytesReaderMatchesStream(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.I32(-7)
	w.UTF("héllo 😀")
	w.I64(1 << 40)
	w.U8(9)
	w.I32(3)
	w.Raw([]byte{1, 2, 3})
	w.Raw([]byte("rest"))
	data := buf.Bytes()
	type result struct {
		I32  int32
		S    string
		I64  int64
		Peek int
		U8   uint8
		Raw  []byte
		Rest []byte
		EOF  bool
		Off  int64
		Err  string
	}
	read := func(r *Reader) result {
		var res result
		res.I32 = r.I32("a")
		res.S = r.UTF("s")
		res.I64 = r.I64("b")
		res.Peek = r.Peek1()
		res.U8 = r.U8("c")
		res.Raw = r.Bytes("raw", r.Count("n", 10))
		res.Rest = r.Rest("rest", 100)
		res.EOF = r.AtEOF()
		res.Off = r.Offset()
		if r.Err() != nil {
			res.Err = r.Err().Error()
		}
		return res
	}
	for n := 0; n <= len(data); n++ {
		a := read(NewReader(bytes.NewReader(data[:n]), "f", 10))
		b := read(NewBytesReader(data[:n], "f", 10))
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("cut at %d:\nstream %+v\nbytes  %+v", n, a, b)
		}
		if n == len(data) && (a.Err != "" || a.S != "héllo 😀" || string(a.Rest) != "rest" || !a.EOF) {
			t.Fatalf("whole stream: %+v", a)
		}
	}
	r := NewBytesReader(data, "f", 0)
	r.Skip("skip", int64(len(data)+1))
	if r.Err() == nil {
		t.Error("skip past the end: want an error")
	}
}

// TestLongUTF reads a 65535-byte string, longer than the stream reader's buffer, through both
// readers.
func TestLongUTF(t *testing.T) {
	long := strings.Repeat("ab€", 65535/5) // 5 bytes per repetition
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.UTF(long)
	w.I32(42)
	for _, r := range []*Reader{
		NewReader(io.MultiReader(bytes.NewReader(buf.Bytes())), "f", 0), // hides Len: 16 KiB buffer
		NewBytesReader(buf.Bytes(), "f", 0),
	} {
		if got := r.UTF("s"); got != long || r.I32("i") != 42 || r.Err() != nil {
			t.Errorf("long UTF: got %d bytes, err %v", len(got), r.Err())
		}
	}
}

// TestI64s: the array read agrees with element-by-element reads, including where a cut array
// reports its error (at the first missing element).
func TestI64s(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for i := int64(0); i < 5; i++ {
		w.I64(i*1000 - 2)
	}
	data := buf.Bytes()
	for n := 0; n <= len(data); n++ {
		var got [2][5]int64
		var errs [2]string
		for i, r := range []*Reader{NewReader(bytes.NewReader(data[:n]), "f", 0), NewBytesReader(data[:n], "f", 0)} {
			r.I64s("a", got[i][:])
			if r.Err() != nil {
				errs[i] = r.Err().Error()
			}
		}
		if errs[0] != errs[1] || (errs[0] == "" && got[0] != got[1]) {
			t.Fatalf("cut at %d: stream %v %q, bytes %v %q", n, got[0], errs[0], got[1], errs[1])
		}
	}
}
