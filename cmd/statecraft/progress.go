package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/storage"
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
// given, or nil. Every line written there gets the bytes read and written per store so far
// through the storage seam (see storeMeter).
func progressOut(c *cli.Context) io.Writer {
	if c.Bool("quiet") || !isTerminalWriter(c.App.ErrWriter) {
		return nil
	}
	if m, ok := c.App.Metadata[meterKey].(*storeMeter); ok {
		return m
	}
	m := newStoreMeter(c.App.ErrWriter, progressTick)
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	c.App.Metadata[meterKey] = m
	return m
}

// stopProgress stops the app's store meter, if a command started one (run calls it when the
// command returns).
func stopProgress(app *cli.App) {
	if m, ok := app.Metadata[meterKey].(*storeMeter); ok {
		m.stop()
	}
}

const meterKey = "statecraft.progress"

// progressTick is how often the meter redraws the line while the bytes move under it.
const progressTick = 500 * time.Millisecond

// storeMeter is the progress terminal of one command: progress lines are written to it as
// "\r\033[K" + text, and it shows each with the bytes every store read and wrote since the
// command started ("s3 read 1.2 MiB, wrote 40.0 MiB"), redrawn every tick, so that a long
// upload or download under one phase still shows it moving. What is counted is what passes
// through the storage seam: a local migration's staging files, written in place, are not.
type storeMeter struct {
	mu    sync.Mutex
	w     io.Writer
	line  string // the text of the line shown now, "" when cleared
	drawn string // what was drawn last
	base  map[storage.Kind]storage.Stats
	quit  chan struct{}
	once  sync.Once
}

// meteredKinds are the stores a progress line reports, in this order.
var meteredKinds = []storage.Kind{storage.Local, storage.S3, storage.GCS, storage.AzBlob}

func newStoreMeter(w io.Writer, tick time.Duration) *storeMeter {
	m := &storeMeter{w: w, base: map[storage.Kind]storage.Stats{}, quit: make(chan struct{})}
	for _, k := range meteredKinds {
		m.base[k] = storage.Transferred(k)
	}
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-m.quit:
				return
			case <-t.C:
				m.mu.Lock()
				m.draw()
				m.mu.Unlock()
			}
		}
	}()
	return m
}

// Write takes progress text: "\r" (with or without "\033[K") starts a new line in place of the
// one before, "\n" keeps the line on the terminal as it is (without the bytes).
func (m *storeMeter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := strings.ReplaceAll(string(p), "\033[K", "")
	shown := m.drawn != ""
	for s != "" {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			m.line += s
			break
		}
		m.line += s[:i]
		if s[i] == '\n' {
			if _, err := io.WriteString(m.w, "\r\033[K"+m.line+"\n"); err != nil {
				return 0, err
			}
			shown = false
		}
		m.line, m.drawn, s = "", "", s[i+1:]
	}
	if m.line == "" {
		if shown {
			_, err := io.WriteString(m.w, "\r\033[K")
			return len(p), err
		}
		return len(p), nil
	}
	m.draw()
	return len(p), nil
}

// draw shows the line with the bytes so far, unless that is what the terminal shows already.
func (m *storeMeter) draw() {
	if m.line == "" {
		return
	}
	text := strings.TrimRight(m.line, " ")
	if b := m.bytes(); b != "" {
		text += " [" + b + "]"
	}
	if text == m.drawn {
		return
	}
	m.drawn = text
	io.WriteString(m.w, "\r\033[K"+text)
}

// bytes spells what each store moved since the meter started; stores that moved nothing are left out.
func (m *storeMeter) bytes() string {
	var parts []string
	for _, k := range meteredKinds {
		now, was := storage.Transferred(k), m.base[k]
		if r, w := now.Read-was.Read, now.Written-was.Written; r != 0 || w != 0 {
			parts = append(parts, storeBytes(k, r, w))
		}
	}
	return strings.Join(parts, "; ")
}

// storeBytes spells one store's bytes: "s3 read 1.2 MiB, wrote 40.0 MiB".
func storeBytes(k storage.Kind, read, written int64) string {
	name := string(k)
	if k == storage.Local {
		name = "local"
	}
	return fmt.Sprintf("%s read %s, wrote %s", name, humanBytes(read), humanBytes(written))
}

func (m *storeMeter) stop() { m.once.Do(func() { close(m.quit) }) }

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
