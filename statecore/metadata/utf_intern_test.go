package metadata

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/statecraft/statecraft/statecore/javaio"
)

// TestUTFInterning: decoder.utf returns what javaio.Reader.UTF returns, string for string, error
// for error, offset for offset, when a string follows one it may be mistaken for: the same bytes,
// or other bytes that decode to the same string (modified UTF-8 NUL and surrogate pairs against
// their standard UTF-8 forms, which modified UTF-8 refuses), or a cut stream. Equal bytes share
// one string.
func TestUTFInterning(t *testing.T) {
	cases := []struct{ first, second string }{
		{"680849db-c795-4c09-948d-65637a0704b2", "680849db-c795-4c09-948d-65637a0704b2"},
		{"state", "state"},
		{"", ""},
		{"\xc3\xa9", "\xc3\xa9"},
		{"a\xc0\x80b", "a\xc0\x80b"},
		{"a\xc0\x80b", "a\x00b"}, // raw NUL: refused
		{"\xed\xa0\xbd\xed\xb8\x80", "\xf0\x9f\x98\x80"},         // 4-byte UTF-8: refused
		{"\xed\xa0\xbd\xed\xb8\x80", "\xed\xa0\xbd\xed\xb8\x80"}, // the same pair: shared
		{"abc", "abd"},
	}
	enc := func(items ...string) []byte {
		var b []byte
		for _, it := range items {
			b = binary.BigEndian.AppendUint16(b, uint16(len(it)))
			b = append(b, it...)
		}
		return b
	}
	for _, c := range cases {
		for _, data := range [][]byte{enc(c.first, c.second), enc(c.first, c.second)[:2+len(c.first)+1+len(c.second)]} {
			ref := javaio.NewBytesReader(data, "t", 0)
			d := &decoder{r: javaio.NewBytesReader(data, "t", 0), data: data, strs: map[string]string{}}
			var got, want [2]string
			for i := range 2 {
				want[i], got[i] = ref.UTF("f"), d.utf("f")
			}
			we, ge := ref.Err(), d.r.Err()
			if got != want || (we == nil) != (ge == nil) || (we != nil && we.Error() != ge.Error()) || ref.Offset() != d.r.Offset() {
				t.Errorf("%q then %q (%d bytes): utf %q (err %v, offset %d), Reader.UTF %q (err %v, offset %d)",
					c.first, c.second, len(data), got, ge, d.r.Offset(), want, we, ref.Offset())
			}
			if we == nil && c.first == c.second && c.first != "" && unsafe.StringData(got[0]) != unsafe.StringData(got[1]) {
				t.Errorf("%q read twice: not shared", c.first)
			}
		}
	}
}
