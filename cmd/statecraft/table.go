package main

import (
	"bytes"
	"io"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/fittable"
)

// Tables fit the terminal: on a terminal (or wherever COLUMNS is set, as ps does) a table too
// wide for it gets short headers, hides its least useful columns and elides long cells (package
// fittable); --wide prints everything. Piped output without COLUMNS is never cut, and
// neither are --json and --csv, which do not go through here.

// wideFlag is the --wide flag of every command that prints a table.
func wideFlag() cli.Flag {
	return &cli.BoolFlag{Name: "wide", Usage: "print tables at full width even when they are wider than the terminal ($COLUMNS)"}
}

// tableWriter is the command's stdout with the width its tables must fit (0: no limit).
type tableWriter struct {
	io.Writer
	width int
}

// tableOut returns where a command prints its tables: stdout, carrying the width to fit.
func tableOut(c *cli.Context) io.Writer {
	w := c.App.Writer
	if c.Bool("wide") {
		return w
	}
	return tableWriter{w, outputWidth(w)}
}

// outputWidth is $COLUMNS when set, or else the width of the terminal w is, or 0.
func outputWidth(w io.Writer) int {
	if s := os.Getenv("COLUMNS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	if f, ok := w.(*os.File); ok {
		return fittable.TerminalWidth(f)
	}
	return 0
}

// newTable returns the writer every table is printed through: tab-separated cells, columns two
// spaces apart, fitted to the width tableOut gave w (none for any other writer).
func newTable(w io.Writer, cols ...fittable.Column) *fittable.Writer {
	width := 0
	if tw, ok := w.(tableWriter); ok {
		width = tw.width
	}
	return fittable.NewWriter(w, width, cols...)
}

// textWriter fits a command's free text (report lines, not tables) to the width tableOut gave
// its writer: each complete line written is wrapped by fittable.Wrap as it arrives. Tables
// and text that must stay byte for byte (a migration script, a unified diff) are written to
// raw() instead, after flush().
type textWriter struct {
	out     io.Writer
	width   int
	pending []byte
}

// newTextWriter wraps the lines written to it within w's width (tableOut); none for another w.
func newTextWriter(w io.Writer) *textWriter {
	if t, ok := w.(*textWriter); ok {
		return t
	}
	width := 0
	if tw, ok := w.(tableWriter); ok {
		width = tw.width
	}
	return &textWriter{out: w, width: width}
}

func (t *textWriter) Write(p []byte) (int, error) {
	t.pending = append(t.pending, p...)
	i := bytes.LastIndexByte(t.pending, '\n')
	if i < 0 {
		return len(p), nil
	}
	lines := string(t.pending[:i+1])
	t.pending = append(t.pending[:0], t.pending[i+1:]...)
	if _, err := io.WriteString(t.out, fittable.Wrap(lines, t.width)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes a last line that had no newline yet.
func (t *textWriter) flush() error {
	if len(t.pending) == 0 {
		return nil
	}
	s := string(t.pending)
	t.pending = t.pending[:0]
	_, err := io.WriteString(t.out, fittable.Wrap(s, t.width))
	return err
}

// raw is the writer beneath, for text that must not be wrapped; flush first.
func (t *textWriter) raw() io.Writer { return t.out }
