package fittable

import (
	"strings"
	"testing"
)

func TestWrap(t *testing.T) {
	const why = "  why: state key or distribution changed: joinSpec.leftKeys [1] -> [0]"
	cases := []struct {
		name  string
		text  string
		width int
		want  string
	}{
		{"no limit", why + "\n", 0, why + "\n"},
		{"fits", why + "\n", 80, why + "\n"},
		{"marker hangs", why + "\n", 40,
			"  why: state key or distribution\n" +
				"       changed: joinSpec.leftKeys [1] ->\n" +
				"       [0]\n"},
		{"change marker", "    ~ keys joinSpec.leftKeys: [1] -> [0]", 24,
			"    ~ keys\n" +
				"      joinSpec.leftKeys:\n" +
				"      [1] -> [0]"},
		{"a word wider than the room stays whole", "Savepoint /very/long/path/to/a/savepoint (checkpoint 3)", 30,
			"Savepoint\n" +
				"    /very/long/path/to/a/savepoint\n" +
				"    (checkpoint 3)"},
		{"from the stats report", "  one two three four", 12, "  one two\n      three\n      four"},
		{"colour takes no room", "\x1b[1mVerdict:\x1b[0m incompatible — 1 node changed", 30,
			"\x1b[1mVerdict:\x1b[0m incompatible — 1 node\n" +
				"         changed"},
		{"lines apart, no room to hang", "a b c\n\nd e f\n", 3, "a b\nc\n\nd e\nf\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Wrap(c.text, c.width)
			if got != c.want {
				t.Fatalf("Wrap(%q, %d):\n%s\nwant:\n%s", c.text, c.width, got, c.want)
			}
			if c.width == 0 {
				return
			}
			for _, l := range strings.Split(got, "\n") {
				if n := visibleWidth(l); n > c.width && len(strings.Fields(l)) > 1 {
					t.Errorf("line %q is %d wide, over %d", l, n, c.width)
				}
			}
		})
	}
}

// Every word survives wrapping whole and in order, whatever the width, and only a line of one
// word wider than the room is wider than the width.
func TestWrapKeepsText(t *testing.T) {
	text := "    ~ output-type outputType: column user_id0 removed; columns reordered (order_id, user_id, amount, name) -> (order_id, amount, user_id, name) /a/very/long/path/that/must/be/cut/somewhere"
	for width := 8; width <= 120; width++ {
		got := Wrap(text, width)
		for _, l := range strings.Split(got, "\n") {
			if n := visibleWidth(l); n > width && len(strings.Fields(l)) > 1 {
				t.Fatalf("width %d: line %q is %d wide", width, l, n)
			}
		}
		if strings.Join(strings.Fields(got), " ") != strings.Join(strings.Fields(text), " ") {
			t.Fatalf("width %d: text changed:\n%s", width, got)
		}
	}
}

func TestWrapKeepsInnerSpaces(t *testing.T) {
	got := Wrap("~ node 2 -> 3  stream-exec-exchange_1  [compatible: stateless, matched by structure]", 50)
	want := "~ node 2 -> 3  stream-exec-exchange_1\n  [compatible: stateless, matched by structure]"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
}
