package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/urfave/cli/v2"
)

// Long-running commands (migrate, savepoint dump and stats, plan ttl impact) show progress on stderr when
// it is a terminal, never in a pipe or a log file, and never with --quiet. savepoint dump also
// stays quiet when stdout is the terminal too: its records are the progress then.

func quietFlag() cli.Flag {
	return &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "show no progress on the terminal"}
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// isTerminalWriter reports whether w is a terminal; tests replace it to see the progress a
// terminal would.
var isTerminalWriter = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isTerminal(f)
}

// progressOut returns where progress goes: stderr when it is a terminal and --quiet is not
// given, or nil.
func progressOut(c *cli.Context) io.Writer {
	if c.Bool("quiet") || !isTerminalWriter(c.App.ErrWriter) {
		return nil
	}
	return c.App.ErrWriter
}

// progressLine keeps one line of progress up to date: at most twice a second, the first at
// once, cleared by done.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer // nil: quiet
	what  string
	n     int64
	shown int64 // n when the clock was last looked at
	start time.Time
	last  time.Time
}

func newProgressLine(w io.Writer, what string) *progressLine {
	return &progressLine{w: w, what: what, start: time.Now()}
}

// add counts n more records.
func (p *progressLine) add(n int64) {
	if p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	if !p.last.IsZero() && p.n-p.shown < 4096 {
		return // the clock is read every few thousand records, not per record
	}
	p.shown = p.n
	if now := time.Now(); p.last.IsZero() || now.Sub(p.last) >= 500*time.Millisecond {
		p.last = now
		fmt.Fprintf(p.w, "\r\033[K%s: %d records, %.1fs", p.what, p.n, now.Sub(p.start).Seconds())
	}
}

// phase shows what is being done now, in place of the line before.
func (p *progressLine) phase(text string) {
	if p.w != nil {
		fmt.Fprintf(p.w, "\r\033[K%s: %s", p.what, text)
	}
}

// done clears the line, so that what follows on the terminal starts clean.
func (p *progressLine) done() {
	if p.w != nil {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
