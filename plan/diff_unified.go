package plan

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// UnifiedDiff returns a unified text diff (as diff -u writes it) of two files line by line,
// with context lines of context around each change; "" when the texts are equal. The line
// alignment is diff-match-patch's (github.com/sergi/go-diff) in line mode.
func UnifiedDiff(oldName, newName string, a, b []byte, context int) string {
	if string(a) == string(b) {
		return ""
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // exact, not a time-boxed approximation
	c1, c2, lines := dmp.DiffLinesToChars(string(a), string(b))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(c1, c2, false), lines)

	// Flatten to one op per line.
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var ls []line
	for _, d := range diffs {
		for _, t := range splitLines(d.Text) {
			ls = append(ls, line{d.Type, t})
		}
	}
	var b2 strings.Builder
	fmt.Fprintf(&b2, "--- %s\n+++ %s\n", oldName, newName)
	// Walk the lines, emitting hunks: a change plus up to context equal lines around it;
	// changes closer than 2*context lines share a hunk.
	oldLine, newLine := 1, 1
	i := 0
	for i < len(ls) {
		if ls[i].op == diffmatchpatch.DiffEqual {
			i++
			oldLine++
			newLine++
			continue
		}
		// Hunk start: back up over up to context equal lines.
		start := i
		for start > 0 && i-start < context && ls[start-1].op == diffmatchpatch.DiffEqual {
			start--
		}
		hOld, hNew := oldLine-(i-start), newLine-(i-start)
		end := i
		for end < len(ls) {
			if ls[end].op != diffmatchpatch.DiffEqual {
				end++
				continue
			}
			run := end
			for run < len(ls) && ls[run].op == diffmatchpatch.DiffEqual {
				run++
			}
			if run == len(ls) || run-end > 2*context {
				end = min(end+context, run)
				break
			}
			end = run
		}
		var body strings.Builder
		nOld, nNew := 0, 0
		for _, l := range ls[start:end] {
			switch l.op {
			case diffmatchpatch.DiffEqual:
				body.WriteString(" ")
				nOld++
				nNew++
			case diffmatchpatch.DiffDelete:
				body.WriteString("-")
				nOld++
			case diffmatchpatch.DiffInsert:
				body.WriteString("+")
				nNew++
			}
			body.WriteString(l.text)
			if !strings.HasSuffix(l.text, "\n") {
				body.WriteString("\n\\ No newline at end of file\n")
			}
		}
		if nOld == 0 {
			hOld-- // diff -u numbers an empty range by the line before it
		}
		if nNew == 0 {
			hNew--
		}
		fmt.Fprintf(&b2, "@@ -%s +%s @@\n", hunkRange(hOld, nOld), hunkRange(hNew, nNew))
		b2.WriteString(body.String())
		for _, l := range ls[i:end] {
			if l.op != diffmatchpatch.DiffInsert {
				oldLine++
			}
			if l.op != diffmatchpatch.DiffDelete {
				newLine++
			}
		}
		i = end
	}
	return b2.String()
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

// splitLines splits s after each newline, keeping the newlines.
func splitLines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
