package migrate

import (
	"math/rand/v2"
	"testing"
)

// TestDigesterSameSums checks that the four-at-a-time digester gives every state the sum that
// entryHash, one entry at a time, gives: for entries of equal and of very different lengths
// (empty values, keys that are only a prefix, long values), flushed at every count.
func TestDigesterSameSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name         string
		n, maxKey    int
		maxVal       int
		prefix, nSID int
	}{
		{"uniform small", 1000, 6, 9, 1, 3},
		{"one entry", 1, 5, 8, 2, 1},
		{"three entries (no full group)", 3, 5, 8, 1, 2},
		{"mixed lengths", 2000, 40, 300, 2, 5},
		{"empty values", 500, 3, 0, 1, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := make([]Sum, c.nSID)
			d := &digester{sums: make([]Sum, c.nSID)}
			for i := 0; i < c.n; i++ {
				key := make([]byte, c.prefix+rng.IntN(c.maxKey+1))
				val := make([]byte, rng.IntN(c.maxVal+1))
				for j := range key {
					key[j] = byte(rng.Uint32())
				}
				for j := range val {
					val[j] = byte(rng.Uint32())
				}
				sid := rng.IntN(c.nSID)
				want[sid].add(entryHash(key, c.prefix, val))
				d.add(sid, key, c.prefix, val)
			}
			d.flush()
			for sid := range want {
				if d.sums[sid] != want[sid] {
					t.Errorf("state %d: %+v, want %+v", sid, d.sums[sid], want[sid])
				}
			}
		})
	}
}
