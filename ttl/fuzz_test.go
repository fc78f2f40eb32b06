package ttl

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// durationSeeds are the inputs Flink 2.3.0 parsed for testdata/durations (the oracle's list),
// so the fuzzer starts from every form Flink knows: labels, ISO-8601, whitespace, overflows.
func durationSeeds(f *testing.F) {
	fh, err := os.Open(filepath.Join("..", "testdata", "durations", "inputs.txt"))
	if err != nil {
		f.Fatalf("seed corpus: %v", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		f.Add(sc.Text())
	}
	for _, s := range []string{"never", "90m", "1h30m", "1.5h", "2d12h", "500ms", "PT1H", "-PT1H", "P1DT-1H", " 1 h ", "9223372036854775807 d"} {
		f.Add(s)
	}
}

// FuzzParseFlink: ParseFlink never panics; whatever it accepts, Format writes a text that parses
// back to the same duration (Format is what a plan edit writes, so it must stay readable), and
// every error is the ErrSyntax kind callers branch on.
func FuzzParseFlink(f *testing.F) {
	durationSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseFlink(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseFlink(%q): error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		if d.Sec < 0 || d.Nano < 0 || d.Nano > 999_999_999 {
			t.Fatalf("ParseFlink(%q) = %+v: out of range", s, d)
		}
		text := Format(d)
		back, err := ParseFlink(text)
		if err != nil {
			t.Fatalf("ParseFlink(%q) = %+v, Format = %q does not parse back: %v", s, d, text, err)
		}
		if back != d {
			t.Fatalf("ParseFlink(%q) = %+v, Format = %q parses back as %+v", s, d, text, back)
		}
	})
}

// FuzzParseInput: a user's TTL either is refused or becomes a TTL whose plan text (what
// plan ttl set writes) Flink reads back as the same number of milliseconds.
func FuzzParseInput(f *testing.F) {
	durationSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseInput(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseInput(%q) = %d: negative TTL", s, v)
		}
		back, _, err := ParseFlinkTTL(v.Text())
		if err != nil {
			t.Fatalf("ParseInput(%q) = %d, Text %q does not parse: %v", s, v, v.Text(), err)
		}
		if back != v {
			t.Fatalf("ParseInput(%q) = %d, Text %q parses back as %d", s, v, v.Text(), back)
		}
		if v.String() == "" {
			t.Fatalf("ParseInput(%q) = %d has an empty String()", s, v)
		}
	})
}
