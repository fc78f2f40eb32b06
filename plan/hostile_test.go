package plan

import (
	"bytes"
	"strings"
	"testing"
)

// TestHostileDeepNesting: JSON nested deeper than Flink's reader accepts (Jackson's default
// StreamReadConstraints max depth, 1000 in the shaded Jackson of Flink 2.3.0) is refused with a
// position. Before the check, gjson's recursive validation overflowed the goroutine stack on
// 10,000,000 nested arrays (a fatal error no recover can catch) and took 1 GB on 5,000,000.
func TestHostileDeepNesting(t *testing.T) {
	nest := func(depth int, close bool) []byte {
		// {"nodes":[],"edges":[],"x": [[...]] }: the object is level 1, so depth-1 arrays.
		var b bytes.Buffer
		b.WriteString(`{"nodes":[],"edges":[],"x":`)
		b.WriteString(strings.Repeat("[", depth-1))
		if close {
			b.WriteString(strings.Repeat("]", depth-1))
			b.WriteString("}")
		}
		return b.Bytes()
	}
	cases := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"depth 1000 (Flink's limit) is read", nest(maxJSONDepth, true), true},
		{"depth 1001 is refused", nest(maxJSONDepth+1, true), false},
		{"10,000,000 open arrays", nest(10_000_000, false), false},
		{"brackets inside strings do not count", []byte(`{"nodes":[],"edges":[],"x":"` + strings.Repeat("[", 5000) + `\"` + `"}`), true},
	}
	for _, c := range cases {
		_, err := Parse("deep.json", c.data)
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("%s: accepted", c.name)
		case !c.ok && !strings.Contains(err.Error(), "nested deeper than 1000"):
			t.Errorf("%s: error does not say why: %v", c.name, err)
		}
	}
}
