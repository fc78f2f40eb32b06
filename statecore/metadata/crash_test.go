package metadata

import (
	"errors"
	"os"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
)

// TestCrashEncodeShortWrite encodes every fixture into a writer that fails after n bytes, for
// cuts short of the full length: Encode must report the failure (a silent short _metadata is
// exactly the "output that looks complete" a full disk must never produce).
func TestCrashEncodeShortWrite(t *testing.T) {
	for _, p := range fixtureFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := DecodeBytes(b, p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// Every cut in the header, then one every 61 bytes, and the last byte.
		cuts := []int{len(b) - 1}
		for n := 0; n < len(b)-1; n++ {
			if n < 256 || n%61 == 0 {
				cuts = append(cuts, n)
			}
		}
		for _, n := range cuts {
			w := &crashtest.FailAfter{N: n}
			err := Encode(w, m)
			if err == nil {
				t.Fatalf("%s: Encode into a writer that fails after %d of %d bytes returned no error", p, n, len(b))
			}
			if !errors.Is(err, crashtest.ErrFull) {
				t.Fatalf("%s: after %d bytes: %v does not wrap the writer's error", p, n, err)
			}
		}
		if err := Encode(&crashtest.FailAfter{N: len(b)}, m); err != nil {
			t.Fatalf("%s: Encode with exactly enough room: %v", p, err)
		}
	}
}
