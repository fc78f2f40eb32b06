package metadata

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
)

// TestCrashEncodeShortWrite encodes every fixture into a writer that fails after n bytes, for
// every n short of the full length: Encode must report the failure (a silent short _metadata is
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
		for n := 0; n < len(b); n++ {
			w := &crashtest.FailAfter{N: n}
			err := Encode(w, m)
			if err == nil {
				t.Fatalf("%s: Encode into a writer that fails after %d of %d bytes returned no error", p, n, len(b))
			}
			if !errors.Is(err, crashtest.ErrFull) {
				t.Fatalf("%s: after %d bytes: %v does not wrap the writer's error", p, n, err)
			}
		}
		var full bytes.Buffer
		if err := Encode(&crashtest.FailAfter{N: len(b)}, m); err != nil {
			t.Fatalf("%s: Encode with exactly enough room: %v", p, err)
		}
		_ = full
	}
}
