package fittable

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Wrap fits free text (a report's "why:" lines, file names, messages) within width the way a
// table's cells are fitted: a line wider than width is broken at spaces, and its continuation
// lines are indented under the text that follows the line's marker, so the shape of a report
// survives a narrow terminal:
//
//	80 wide:  ~ output-type outputType: column user_id0 removed; columns reordered (order_id, ...
//	40 wide:  ~ output-type outputType: column
//	            user_id0 removed; columns
//	            reordered (order_id, user_id,
//
// A marker is the first word of the line when it is "~", "+", "-", "*" or a label of letters
// ending with ":" (as "why:" and "error:" are). A word wider than the room is kept whole on a
// line of its own: a hash or a path cut in the middle would be worse than a long line (it
// could not be copied). ANSI colour sequences (ESC [ ... m) take no room. A width of 0 means
// no limit: text is returned unchanged.
func Wrap(text string, width int) string {
	if width <= 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text))
	lines := strings.SplitAfter(text, "\n")
	for _, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		wrapLine(&b, body, width)
		if len(body) < len(l) {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// wrapLine writes one line (without its newline), broken within width.
func wrapLine(b *strings.Builder, line string, width int) {
	if visibleWidth(line) <= width {
		b.WriteString(line)
		return
	}
	indent := len(line) - len(strings.TrimLeft(line, " "))
	// Split at single spaces, so that runs of spaces inside the line (two between a node's
	// id and its type) survive as empty words; they are dropped only at a break.
	words := strings.Split(strings.TrimRight(line[indent:], " "), " ")
	hang := indent + 4
	if len(words) > 1 && isMarker(stripANSI(words[0])) {
		hang = indent + visibleWidth(words[0]) + 1
	}
	if hang > width/2 {
		hang = min(indent, width/2)
	}
	cur := indent // columns used on the current output line
	b.WriteString(strings.Repeat(" ", indent))
	first := true // no word on the current output line yet
	gap := 0      // spaces owed before the next word: one per separator passed
	for i, w := range words {
		if i > 0 {
			gap++
		}
		if w == "" {
			continue
		}
		ww := visibleWidth(w)
		if first {
			gap = 0
		} else if cur+gap+ww > width {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(" ", hang))
			cur, first, gap = hang, true, 0
		}
		b.WriteString(strings.Repeat(" ", gap))
		cur, gap = cur+gap, 0
		b.WriteString(w) // whole, even when wider than the room: see the doc comment
		cur += ww
		first = false
	}
}

func isMarker(w string) bool {
	switch w {
	case "~", "+", "-", "*":
		return true
	}
	// A label such as "why:" or "error:", not a selector such as "uid:source:".
	label, ok := strings.CutSuffix(w, ":")
	if !ok || label == "" || len(label) > 11 {
		return false
	}
	for _, r := range label {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// visibleWidth counts the runes of s that take room on a terminal: all but ANSI CSI sequences.
func visibleWidth(s string) int {
	return utf8.RuneCountInString(stripANSI(s))
}

func stripANSI(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if n := csiLen(s[i:]); n > 0 {
			i += n
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// csiLen returns the length of the CSI sequence (ESC [ params final-byte) at the start of s, or 0.
func csiLen(s string) int {
	if len(s) < 2 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s); i++ {
		if c := s[i]; c >= 0x40 && c <= 0x7e {
			return i + 1
		}
	}
	return 0
}
