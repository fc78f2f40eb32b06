package fittable

import (
	"bytes"
	"strings"
	"testing"
	"text/tabwriter"
	"unicode/utf8"
)

const sample = "name\tuid\thash\tpar\tnote\n" +
	"Source: fixed-source\tsource\te5a72f353fc1e6bbf3bd96a41384998c\t1\tthe first operator of the job\n" +
	"int-keyed\tint-keyed\t6d821971c3bfd7ae2c972e89d7414f7c\t2\t\n"

var sampleCols = []Column{
	{Header: "name", Elide: true},
	{Header: "hash", Short: "h", Drop: 1},
	{Header: "note", Elide: true, MinWidth: 6},
	{Header: "par", Short: "p"},
}

func fit(t *testing.T, width int, cols ...Column) string {
	t.Helper()
	var b bytes.Buffer
	w := NewWriter(&b, width, cols...)
	w.Write([]byte(sample))
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// With no limit, or when the table fits, the output is text/tabwriter's, byte for byte.
func TestNaturalIsTabwriter(t *testing.T) {
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
	tw.Write([]byte(sample))
	tw.Flush()
	for _, width := range []int{0, 200} {
		if got := fit(t, width, sampleCols...); got != want.String() {
			t.Errorf("width %d:\n%s\nwant\n%s", width, got, want.String())
		}
	}
}

func TestFitWidths(t *testing.T) {
	for _, tc := range []struct {
		width  int
		want   string // the output
		maxLen int
	}{
		{80, "name             uid        h                                 p  note\n" +
			"Source: fixed-…  source     e5a72f353fc1e6bbf3bd96a41384998c  1  the first oper…\n" +
			"int-keyed        int-keyed  6d821971c3bfd7ae2c972e89d7414f7c  2\n", 80},
		{60, "name                  uid        p  note\n" +
			"Source: fixed-source  source     1  the first operator of t…\n" +
			"int-keyed             int-keyed  2\n" +
			"(1 more column with --wide: hash)\n", 60},
		{40, "name          uid        p  note\n" +
			"Source: fix…  source     1  the first o…\n" +
			"int-keyed     int-keyed  2\n" +
			"(1 more column with --wide: hash)\n", 40},
		{20, "name        uid        p  note\n" + // as narrow as it gets: wider than asked
			"Source: f…  source     1  the f…\n" +
			"int-keyed   int-keyed  2\n" +
			"(1 more column with --wide)\n", 34},
	} {
		got := fit(t, tc.width, sampleCols...)
		if got != tc.want {
			t.Errorf("width %d:\n%s\nwant\n%s", tc.width, got, tc.want)
		}
		for _, l := range strings.Split(got, "\n") {
			if n := utf8.RuneCountInString(l); n > tc.maxLen && !strings.HasPrefix(l, "(") {
				t.Errorf("width %d: line of %d: %q", tc.width, n, l)
			}
		}
	}
}

func TestElideFront(t *testing.T) {
	if got := elide("stream-exec-table-source-scan_2", 12, true); got != "…rce-scan_2" && got != "…urce-scan_2" {
		t.Errorf("front: %q", got)
	}
	if got := elide("stream-exec-table-source-scan_2", 12, false); got != "stream-exec…" {
		t.Errorf("end: %q", got)
	}
	if got := elide("short", 12, false); got != "short" {
		t.Errorf("no cut: %q", got)
	}
}

// Lines without a tab (titles between tables) stay where they are and are never cut.
func TestPlainLinesPassThrough(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, 20, Column{Header: "a", Elide: true})
	w.Write([]byte("a title line that is long\na\tb\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\ty\n"))
	w.Flush()
	want := "a title line that is long\na                  b\nxxxxxxxxxxxxxxxx…  y\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}
