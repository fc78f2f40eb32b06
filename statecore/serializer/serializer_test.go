package serializer

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// javaSerStreams returns Java serialization streams Flink wrote: the CheckpointProperties object
// at the end of every fixture's _metadata (the same ObjectOutputStream format as the LogicalTypes
// inside RowData snapshots).
func javaSerStreams(t *testing.T) map[string][]byte {
	t.Helper()
	dirs, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	out := map[string][]byte{}
	for _, m := range dirs {
		sp, err := savepoint.Open(filepath.Dir(m))
		if err != nil {
			t.Fatal(err)
		}
		if tail := sp.Metadata.Tail; len(tail) > 4 && tail[0] == 0xAC && tail[1] == 0xED {
			out[filepath.Base(filepath.Dir(m))] = tail
		}
		sp.Close()
	}
	if len(out) == 0 {
		t.Skip("no savepoint fixtures with a Java-serialized tail in testdata/savepoints")
	}
	return out
}

func skip(b []byte) (got []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	r := javaio.NewReader(bytes.NewReader(b), "stream", 0)
	got = skipJavaSerStream(r, "obj")
	return got, r.Err()
}

// TestJavaSerSkipperOnFlinkStreams: the skipper walks a whole stream Flink wrote and stops exactly
// at its end; cut streams fail with an offset, flipped bytes never panic.
func TestJavaSerSkipperOnFlinkStreams(t *testing.T) {
	for name, tail := range javaSerStreams(t) {
		got, err := skip(tail)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, tail) {
			t.Errorf("%s: skipped %d bytes of a %d-byte stream", name, len(got), len(tail))
		}
		// Followed by other bytes, the skipper must not read past the object.
		r := javaio.NewReader(bytes.NewReader(append(bytes.Clone(tail), 1, 2, 3)), "stream", 0)
		skipJavaSerStream(r, "obj")
		if r.Err() != nil || r.Offset() != int64(len(tail)) {
			t.Errorf("%s: stopped at %d (err %v), want %d", name, r.Offset(), r.Err(), len(tail))
		}
		for cut := 0; cut < len(tail); cut++ {
			if _, err := skip(tail[:cut]); err == nil || strings.HasPrefix(err.Error(), "panic") {
				t.Fatalf("%s: cut at %d: %v", name, cut, err)
			}
		}
		for pos := 0; pos < len(tail); pos++ {
			b := bytes.Clone(tail)
			b[pos] ^= 0xFF
			if _, err := skip(b); err != nil && strings.HasPrefix(err.Error(), "panic") {
				t.Fatalf("%s: flip at %d: %v", name, pos, err)
			}
		}
		break // one stream is enough: they are alike
	}
}

// TestLengthsAreBounded: a length larger than the bytes left is refused before allocation.
func TestLengthsAreBounded(t *testing.T) {
	long := NewCodec(&Snapshot{Class: "org.apache.flink.api.common.typeutils.base.LongSerializer$LongSerializerSnapshot"})
	str := NewCodec(&Snapshot{Class: "org.apache.flink.api.common.typeutils.base.StringSerializer$StringSerializerSnapshot"})
	bytesC := NewCodec(&Snapshot{Class: "org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer$BytePrimitiveArraySerializerSnapshot"})
	list := listValueCodec{elem: long}
	for _, tc := range []struct {
		name  string
		codec Codec
		in    []byte
		want  string
	}{
		{"list of 2^31-1 longs", list, []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1}, "list size: length 2147483647"},
		{"negative list size", list, []byte{0xff, 0xff, 0xff, 0xff}, "length -1"},
		{"string of 2^28 chars", str, []byte{0x81, 0x80, 0x80, 0x80, 0x01, 'a'}, "do not fit"},
		{"string varint too long", str, []byte{0x81, 0x80, 0x80, 0x80, 0x80, 0x01}, "longer than 5 bytes"},
		{"byte[] longer than input", bytesC, []byte{0, 0, 1, 0, 1, 2}, "length 256"},
		{"truncated long", long, []byte{0, 0, 0}, "want 8 bytes, 3 left"},
	} {
		var err error
		allocs := testing.AllocsPerRun(10, func() {
			in := NewInput(tc.in)
			tc.codec.Decode(in)
			err = in.Err()
		})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if allocs > 10 {
			t.Errorf("%s: %v allocations", tc.name, allocs)
		}
	}
}
