// Package fittable lays a table of text cells out within a width, the way kubectl keeps its
// tables readable on a narrow terminal: when the natural layout is too wide it first switches
// to the short headers, then hides the columns marked optional (least useful first) and
// finally elides the cells of the columns marked elidable, cutting their end with "…".
// Columns are two spaces apart; cell width counts runes, as text/tabwriter does.
//
//	natural:   operator-name         operator-uid  operator-uid-hash                 operator-parallelism ...
//	80 wide:   operator-name  uid        uid hash                          par  max par  bytes
//	           int-keyed      int-keyed  6d821971c3bfd7ae2c972e89d7414f7c  2    128      8114
//	           Source: fixe…  source     e5a72f353fc1e6bbf3bd96a41384998c  1    128      0
//
// A width of 0 means no limit: the natural layout, byte for byte what text/tabwriter prints
// with padding 2 (trailing spaces of the last column trimmed).
package fittable

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Column says how a column may give way. Columns without one keep their width and header.
type Column struct {
	Header string // the natural header, as the first row has it
	Short  string // the header used when the table does not fit (default: Header)
	Elide  bool   // cells may be cut to MinWidth (default 10) runes
	// ElideFront cuts the front instead of the end, for cells whose tail tells them apart
	// ("…table-source-scan_2" rather than "stream-exec-…").
	ElideFront bool
	// Drop > 0 lets the column be hidden when the table does not fit otherwise; the column with
	// the highest Drop goes first.
	Drop     int
	MinWidth int
}

const gap = 2

// Layout is the outcome of fitting: the rows as printed and the headers of hidden columns.
type Layout struct {
	Lines  []string
	Hidden []string
}

// Fit lays out rows (rows[0] is the header row) within width (0: no limit).
func Fit(rows [][]string, cols []Column, width int) Layout {
	ncol := 0
	for _, r := range rows {
		ncol = max(ncol, len(r))
	}
	spec := make([]Column, ncol)
	if len(rows) > 0 {
		for i, h := range rows[0] {
			for _, c := range cols {
				if c.Header == h {
					spec[i] = c
				}
			}
		}
	}
	keep := make([]bool, ncol)
	for i := range keep {
		keep[i] = true
	}
	natural := widths(rows, ncol)
	if width <= 0 || total(natural, keep) <= width {
		return Layout{Lines: render(rows, natural, keep, spec)}
	}
	// Short headers (the note on hidden columns names them by their natural header).
	natHeader := rows[0]
	rows = append([][]string{append([]string{}, rows[0]...)}, rows[1:]...)
	for i := range rows[0] {
		if i < ncol && spec[i].Short != "" {
			rows[0][i] = spec[i].Short
		}
	}
	natural = widths(rows, ncol)
	minw := make([]int, ncol)
	for i := range minw {
		minw[i] = natural[i]
		if spec[i].ElideFront {
			spec[i].Elide = true
		}
		if spec[i].Elide {
			m := spec[i].MinWidth
			if m == 0 {
				m = 10
			}
			minw[i] = min(natural[i], max(m, utf8.RuneCountInString(rows[0][i])))
		}
	}
	// Hide optional columns while even the elided layout is too wide.
	order := make([]int, 0, ncol)
	for i := range spec {
		if spec[i].Drop > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return spec[order[a]].Drop > spec[order[b]].Drop })
	var hidden []string
	for _, i := range order {
		if total(minw, keep) <= width {
			break
		}
		keep[i] = false
		hidden = append(hidden, natHeader[i])
	}
	// Elide: take runes from the widest elidable column until the table fits.
	w := append([]int{}, natural...)
	for total(w, keep) > width {
		best := -1
		for i := range w {
			if keep[i] && spec[i].Elide && w[i] > minw[i] && (best < 0 || w[i] > w[best]) {
				best = i
			}
		}
		if best < 0 {
			break // as narrow as it gets
		}
		w[best]--
	}
	return Layout{Lines: render(rows, w, keep, spec), Hidden: hidden}
}

func widths(rows [][]string, ncol int) []int {
	w := make([]int, ncol)
	for _, r := range rows {
		for i, c := range r {
			w[i] = max(w[i], utf8.RuneCountInString(c))
		}
	}
	return w
}

// total is the width of the widest line: every kept column but the last is followed by the gap.
func total(w []int, keep []bool) int {
	t, n := 0, 0
	for i := range w {
		if keep[i] {
			t += w[i]
			n++
		}
	}
	if n > 1 {
		t += gap * (n - 1)
	}
	return t
}

func render(rows [][]string, w []int, keep []bool, spec []Column) []string {
	last := -1
	for i := range keep {
		if keep[i] {
			last = i
		}
	}
	lines := make([]string, 0, len(rows))
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i := 0; i <= last; i++ {
			if !keep[i] {
				continue
			}
			c := ""
			if i < len(r) {
				c = r[i]
			}
			c = elide(c, w[i], spec[i].ElideFront)
			b.WriteString(c)
			if i < last {
				b.WriteString(strings.Repeat(" ", w[i]-utf8.RuneCountInString(c)+gap))
			}
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	return lines
}

// elide cuts s to n runes, the last (or with front, the first) being "…" when anything was cut.
func elide(s string, n int, front bool) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	if front {
		return "…" + string(r[len(r)-n+1:])
	}
	return string(r[:n-1]) + "…"
}

// Writer collects tab-separated lines (as written for text/tabwriter) and prints them on Flush:
// as text/tabwriter would (padding 2) when that fits the width, or else fitted, lines without a
// tab staying where they were.
type Writer struct {
	out   io.Writer
	cols  []Column
	width int
	buf   []byte
}

// NewWriter returns a Writer that fits its table within width (0: no limit).
func NewWriter(out io.Writer, width int, cols ...Column) *Writer {
	return &Writer{out: out, cols: cols, width: width}
}

func (t *Writer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// Flush prints the table, then a note naming the hidden columns, if any.
func (t *Writer) Flush() error {
	raw := t.buf
	t.buf = nil
	var natural bytes.Buffer
	tw := tabwriter.NewWriter(&natural, 0, 0, gap, ' ', 0)
	tw.Write(raw)
	tw.Flush()
	fits := t.width <= 0
	if !fits {
		fits = true
		for _, l := range strings.Split(natural.String(), "\n") {
			if utf8.RuneCountInString(l) > t.width {
				fits = false
				break
			}
		}
	}
	if fits {
		_, err := t.out.Write(natural.Bytes())
		return err
	}
	text := strings.TrimSuffix(string(raw), "\n")
	var rows [][]string
	var where []int // index in rows of each line, -1 for a line without a tab
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if strings.Contains(l, "\t") {
			where = append(where, len(rows))
			rows = append(rows, strings.Split(l, "\t"))
		} else {
			where = append(where, -1)
		}
	}
	lay := Fit(rows, t.cols, t.width)
	var b strings.Builder
	for i, l := range lines {
		if where[i] >= 0 {
			l = lay.Lines[where[i]]
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if len(lay.Hidden) > 0 {
		b.WriteString(hiddenNote(lay.Hidden, t.width) + "\n")
	}
	_, err := io.WriteString(t.out, b.String())
	return err
}

// hiddenNote says which columns --wide would add, naming them when that fits the width.
func hiddenNote(hidden []string, width int) string {
	what := "1 more column"
	if len(hidden) > 1 {
		what = fmt.Sprintf("%d more columns", len(hidden))
	}
	note := fmt.Sprintf("(%s with --wide: %s)", what, strings.Join(hidden, ", "))
	if utf8.RuneCountInString(note) > width {
		note = fmt.Sprintf("(%s with --wide)", what)
	}
	return note
}
