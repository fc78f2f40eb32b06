package keyed

import (
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/statecore/serializer"
)

// maxSplitSearch bounds the key bytes splitOpaqueNamespace tries every split of (each try decodes
// a user key, so the search is quadratic in the length).
const maxSplitSearch = 64 << 10

// splitOpaqueNamespace reads the rest of a map state's key, a namespace whose serializer this
// package does not know (so its length is unknown) and a user key:
//
//	kg | key | namespace | user key                                (key or namespace fixed-length)
//	kg | key | len(key) | namespace | len(namespace) | user key   (both variable-length: ambiguous)
//
// A split is a candidate when the user key decodes to exactly the key's end and, in the ambiguous
// layout, the length after the namespace is the namespace's own. Flink's split is always a
// candidate, so a single candidate is the one Flink wrote; none, or more than one, is an error that
// says so (a fixed-length user key always gives one; a variable-length one, as a String, mostly).
func splitOpaqueNamespace(in *serializer.Input, sd *StateDecoder, ambiguous bool) (ns, userKey any) {
	rest := in.B[in.Pos:]
	class := "?"
	if s := sd.Meta.Serializer(SerNamespace); s != nil {
		class = s.Class
	}
	if len(rest) > maxSplitSearch {
		in.Failf("map state key: %d bytes after the key, a namespace of unknown serializer %s (no length) and a user key: more than %d to search for their split", len(rest), class, maxSplitSearch)
		return nil, nil
	}
	var sub serializer.Input
	var fits [][2]int // namespace length, user key start
	for l := 0; l <= len(rest); l++ {
		start := l
		if ambiguous {
			w := suffixWidth(l)
			if l+w > len(rest) || !suffixSays(rest[l:l+w], l) {
				continue
			}
			start += w
		}
		sub.Reset(rest[start:])
		sd.UserKey.Decode(&sub)
		if sub.Err() == nil && sub.Remaining() == 0 {
			fits = append(fits, [2]int{l, start})
		}
	}
	switch len(fits) {
	case 0:
		in.Failf("map state key: no split of its %d bytes after the key into a namespace of unknown serializer %s (no length) and a user key decodes", len(rest), class)
		return nil, nil
	case 1:
	default:
		lens := make([]string, len(fits))
		for i, f := range fits {
			lens[i] = fmt.Sprint(f[0])
		}
		in.Failf("map state key: the namespace's serializer %s is unknown (its snapshot gives no length), and %d splits of the %d bytes after the key into it and a user key decode (a namespace of %s bytes): which one Flink wrote cannot be told",
			class, len(fits), len(rest), strings.Join(lens, ", "))
		return nil, nil
	}
	sub.Reset(rest[:fits[0][0]])
	ns = sd.Namespace.Decode(&sub)
	sub.Reset(rest[fits[0][1]:])
	userKey = sd.UserKey.Decode(&sub)
	in.Pos = len(in.B)
	return ns, userKey
}

// suffixSays reports whether b, a length suffix as skipLengthSuffix reads it, is n.
func suffixSays(b []byte, n int) bool {
	got := 0
	for i, x := range b {
		got |= int(x) << (8 * i)
	}
	return got == n
}
