package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/stats"
	"github.com/statecraft/statecraft/stats/statshtml"
)

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "stats",
			Usage:     "sizes of the state: entries and bytes per operator, state, key group and subtask, skew, and the keys holding the most bytes",
			ArgsUsage: "PATH (a savepoint directory or its _metadata file)",
			Description: "Bytes are those of the key-group blocks, uncompressed: an entry counts its key, its value and\n" +
				"8 bytes of lengths; a state id and a block's end marker count 2. Skew is the largest over the mean.\n" +
				"A key's bytes are all its entries in a state (every list element, map entry and namespace).",
			Flags: []cli.Flag{
				pathMapFlag(),
				&cli.StringFlag{Name: "operator", Usage: "only this operator: uid:NAME or hash:HEX"},
				&cli.IntFlag{Name: "top", Value: 10, Usage: "how many keys to list per state, by bytes (0: none)"},
				&cli.StringFlag{Name: "at", Value: "now", Usage: "`TIME` TTL ages and timers are taken at: now, now+DURATION, now-DURATION, RFC 3339 or epoch ms"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				&cli.StringFlag{Name: "html", Usage: "write one self-contained HTML `FILE` (tables and inline SVG charts, no network) instead of the tables"},
				checkpointFlag(),
				wideFlag(),
				quietFlag(),
			},
			Action: runSavepointStats,
		}
	})
}

// statsOperator is one operator of the output: its keyed state measured, and its operator-state
// elements counted.
type statsOperator struct {
	*stats.Operator
	OperatorStates []statsOperatorState `json:"operatorStates,omitempty"`
}

// statsJSON is `savepoint stats --json`.
type statsJSON struct {
	Operators []statsOperator `json:"operators"`
}

type statsOperatorState struct {
	Name     string `json:"name"`
	Mode     string `json:"mode"`
	Elements int64  `json:"elements"` // as stored: a broadcast state once per subtask
	// PerCopy is, for broadcast state, the elements of one subtask's copy (what a restore reads).
	PerCopy int64 `json:"elementsPerCopy,omitempty"`

	first int32 // the subtask whose copy PerCopy counts
}

func runSavepointStats(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint stats: want exactly one PATH, got %s", english.Count(c.NArg(), "argument")))
	}
	if c.Int("top") < 0 {
		return withCode(exitFailure, fmt.Errorf("savepoint stats: --top %d: want 0 or more", c.Int("top")))
	}
	at, err := parseAt(c.String("at"), time.Now())
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("savepoint stats: %w", err))
	}
	sp, err := openSavepoint(c, c.Args().First())
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer sp.Close()
	ops := sp.Metadata.Operators
	if sel := c.String("operator"); sel != "" {
		op, err := findOperator(sp.Metadata, sel)
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("savepoint stats: %w", err))
		}
		ops = []*metadata.OperatorState{op}
	}
	var out []statsOperator
	pl := newProgressLine(progressOut(c), "savepoint stats")
	for i, op := range ops {
		pl.phase(fmt.Sprintf("reading operator %d/%d, %s", i+1, len(ops), opLabel(op)))
		so, err := measureOperator(sp, op, stats.Options{Top: c.Int("top"), At: at})
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("savepoint stats: operator %s: %w", opLabel(op), err))
		}
		if so.Entries == 0 && len(so.States) == 0 && len(so.OperatorStates) == 0 {
			continue
		}
		out = append(out, so)
	}
	pl.done()
	if f := c.String("html"); f != "" {
		if err := writeStatsHTML(f, c.Args().First(), at, out); err != nil {
			return withCode(exitFailure, fmt.Errorf("savepoint stats: --html: %w", err))
		}
		if !c.Bool("json") {
			fmt.Fprintf(c.App.Writer, "wrote %s\n", f)
			return nil
		}
	}
	if c.Bool("json") {
		return encodeJSON(c.App.Writer, statsJSON{out})
	}
	if len(out) == 0 {
		fmt.Fprintln(c.App.Writer, "no operator has state")
		return nil
	}
	// Charts are drawn to the terminal's width, or 80 columns when there is none.
	width := outputWidth(c.App.Writer)
	if width <= 0 {
		width = 80
	}
	w := tableOut(c)
	for i, o := range out {
		if i > 0 {
			fmt.Fprintln(w)
		}
		printStats(w, o, width)
	}
	return nil
}

func measureOperator(sp *savepoint.Savepoint, op *metadata.OperatorState, opt stats.Options) (statsOperator, error) {
	m, err := stats.Measure(sp, op, opt)
	if err != nil {
		return statsOperator{}, err
	}
	so := statsOperator{Operator: m}
	idx := map[string]int{}
	_, err = operatorElements(sp, op, "", func(r *operatorRecord) error {
		i, ok := idx[r.State]
		if !ok {
			i = len(so.OperatorStates)
			idx[r.State] = i
			so.OperatorStates = append(so.OperatorStates, statsOperatorState{Name: r.State, Mode: r.Mode, first: r.Subtask})
		}
		os := &so.OperatorStates[i]
		os.Elements++
		if r.Mode == "broadcast" && r.Subtask == os.first {
			os.PerCopy++
		}
		return nil
	})
	return so, err
}

func printStats(w io.Writer, o statsOperator, width int) {
	fmt.Fprint(w, fitProse(w, fmt.Sprintf("operator %s (hash %s), parallelism %d, max parallelism %d\n",
		statsLabel(o.Operator), o.ID, o.Parallelism, o.MaxParallelism)))
	if len(o.States) > 0 {
		where := fmt.Sprintf("in key-group blocks (%s stored)", humanBytes(o.StoredBytes))
		if o.Native {
			where = "of keys and values (native RocksDB files: no block framing)"
		}
		fmt.Fprint(w, fitProse(w, fmt.Sprintf("  %s, %s, %s %s\n\n",
			english.Count(int(o.Entries), "entry"), english.Count(int(o.DistinctKeys), "distinct key"), humanBytes(o.Bytes), where)))
		t := newTable(w, statsStateColumns...)
		fmt.Fprintln(t, "  STATE\tKIND\tENTRIES\tKEYS\tKEY BYTES\tVALUE BYTES\tFRAME BYTES\tMEAN VALUE\tMAX VALUE")
		for _, s := range o.States {
			fmt.Fprintf(t, "  %s\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%d\n", s.Name, s.Kind, s.Entries, s.DistinctKeys,
				s.KeyBytes, s.ValueBytes, s.FrameBytes, s.MeanValue, s.MaxValue)
		}
		t.Flush()
		fmt.Fprintf(w, "\n  subtasks (skew %.2f, largest over mean)\n", o.Subtasks.Skew)
		subtaskBars(w, o.Subtasks.All, width)
		used := 0
		for _, g := range o.KeyGroups.All {
			if g.Entries > 0 {
				used++
			}
		}
		fmt.Fprint(w, fitProse(w, fmt.Sprintf("\n  key groups: %d of %d hold entries (skew %.2f); one column per key group, height by bytes, '.' empty\n",
			used, len(o.KeyGroups.All), o.KeyGroups.Skew)))
		keyGroupChart(w, o.KeyGroups.All, width)
		printTopKeys(w, o.States)
		printTimes(w, o.States)
	}
	if len(o.OperatorStates) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, fittable.Column{Header: "  OPERATOR STATE", Elide: true, MinWidth: 12}, fittable.Column{Header: "ELEMENTS", Elide: true, MinWidth: 8})
		fmt.Fprintln(t, "  OPERATOR STATE\tMODE\tELEMENTS")
		for _, s := range o.OperatorStates {
			n := strconv.FormatInt(s.Elements, 10)
			if s.Mode == "broadcast" {
				n += fmt.Sprintf(" (%d per subtask's copy)", s.PerCopy)
			}
			fmt.Fprintf(t, "  %s\t%s\t%s\n", s.Name, s.Mode, n)
		}
		t.Flush()
	}
}

// statsStateColumns say how the state table gives way on a narrow terminal: short headers, then
// the frame bytes, mean and largest value go (the sizes that matter most stay), then names are cut.
var statsStateColumns = []fittable.Column{
	{Header: "  STATE", Elide: true, MinWidth: 12}, {Header: "KIND", Elide: true, MinWidth: 6},
	{Header: "KEY BYTES", Short: "KEY B"}, {Header: "VALUE BYTES", Short: "VALUE B"},
	{Header: "FRAME BYTES", Short: "FRAME", Drop: 3}, {Header: "MEAN VALUE", Short: "MEAN", Drop: 2},
	{Header: "MAX VALUE", Short: "MAX", Drop: 1},
}

// fitProse wraps each line of s to the width tables fit on w (none with --wide or without a
// terminal or COLUMNS), keeping its newlines.
func fitProse(w io.Writer, s string) string {
	tw, ok := w.(tableWriter)
	if !ok || tw.width <= 0 {
		return s
	}
	return fittable.Wrap(s, tw.width)
}

func statsLabel(o *stats.Operator) string {
	if o.UID != "" {
		return "uid:" + o.UID
	}
	return "hash:" + o.ID
}

func printTopKeys(w io.Writer, states []*stats.State) {
	any := false
	for _, s := range states {
		any = any || len(s.Top) > 0
	}
	if !any {
		return
	}
	fmt.Fprintln(w, "\n  top keys by bytes")
	t := newTable(w, fittable.Column{Header: "  STATE", Elide: true, MinWidth: 12}, fittable.Column{Header: "KEY", Elide: true, MinWidth: 8})
	fmt.Fprintln(t, "  STATE\tKEY\tBYTES\tENTRIES")
	for _, s := range states {
		for _, k := range s.Top {
			fmt.Fprintf(t, "  %s\t%s\t%d\t%d\n", s.Name, k.Key, k.Bytes, k.Entries)
		}
	}
	t.Flush()
}

// printTimes prints the TTL ages and timer spreads of the states that have them.
func printTimes(w io.Writer, states []*stats.State) {
	for _, s := range states {
		if a := s.TTL; a != nil {
			var parts []string
			for _, b := range a.Buckets {
				if b.Count > 0 {
					parts = append(parts, fmt.Sprintf("%s %d", b.Label, b.Count))
				}
			}
			fmt.Fprint(w, fitProse(w, fmt.Sprintf("\n  ttl %s: %s last accessed %s .. %s; ages at --at: %s\n", s.Name, english.Count(int(a.Values), "value"),
				millisUTC(a.Oldest), millisUTC(a.Newest), strings.Join(parts, ", "))))
		}
		if tm := s.Timers; tm != nil {
			fmt.Fprint(w, fitProse(w, fmt.Sprintf("\n  timers %s: earliest %s, latest %s; %d due before --at, %d an hour or more after\n",
				s.Name, millisUTC(tm.Earliest), millisUTC(tm.Latest), tm.Due, tm.Later)))
			var most int64
			for _, n := range tm.NextHour {
				most = max(most, n)
			}
			if most > 0 {
				printNextHour(w, tm.NextHour[:])
			}
		}
	}
}

// printNextHour draws the timers due in each minute of the next hour as one bar. Where tables
// are fitted (a terminal or COLUMNS) and the bar does not fit beside its label, it goes on a line
// of its own, and where it does not fit there either, one column counts several minutes (a
// divisor of 60, so that every column counts as many).
func printNextHour(w io.Writer, perMinute []int64) {
	const label = "  next hour, "
	width := 0
	if tw, ok := w.(tableWriter); ok {
		width = tw.width
	}
	step := 1
	for _, d := range []int{1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60} {
		step = d
		if width <= 0 || 2+(len(perMinute)+d-1)/d <= width {
			break
		}
	}
	var cols []int64
	var most int64
	for i := 0; i < len(perMinute); i += step {
		var n int64
		for _, x := range perMinute[i:min(i+step, len(perMinute))] {
			n += x
		}
		cols = append(cols, n)
		most = max(most, n)
	}
	var b strings.Builder
	for _, n := range cols {
		if n == 0 {
			b.WriteByte('.')
		} else {
			b.WriteRune(levels[int(float64(len(levels)-1)*float64(n)/float64(most))])
		}
	}
	per := "one column per minute:"
	if step > 1 {
		per = fmt.Sprintf("one column per %d minutes:", step)
	}
	if width > 0 && len(label)+len(per)+1+len(cols) > width {
		fmt.Fprintf(w, "%s%s\n  %s\n", label, per, b.String())
		return
	}
	fmt.Fprintf(w, "%s%s %s\n", label, per, b.String())
}

func millisUTC(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

// subtaskBars draws one bar per subtask, scaled so that the largest fills what the line leaves.
func subtaskBars(w io.Writer, gs []stats.Group, width int) {
	var most int64
	for _, g := range gs {
		most = max(most, g.Bytes)
	}
	label := len(strconv.Itoa(len(gs) - 1))
	tail := 0
	lines := make([]string, len(gs))
	for i, g := range gs {
		lines[i] = fmt.Sprintf("%s, %s", humanBytes(g.Bytes), english.Count(int(g.Entries), "entry"))
		tail = max(tail, len(lines[i]))
	}
	room := max(width-2-label-2-2-tail, 1)
	for i, g := range gs {
		n := 0
		if most > 0 {
			n = int(math.Round(float64(room) * float64(g.Bytes) / float64(most)))
		}
		fmt.Fprintf(w, "  %*d  %s%s  %s\n", label, g.Index, strings.Repeat("█", n), strings.Repeat(" ", room-n), lines[i])
	}
}

var levels = []rune("▁▂▃▄▅▆▇█")

// keyGroupChart draws one column per key group in rows as wide as the terminal allows, each row
// labelled with its first key group; a column's height is its bytes over the largest's.
func keyGroupChart(w io.Writer, gs []stats.Group, width int) {
	var most int64
	for _, g := range gs {
		most = max(most, g.Bytes)
	}
	label := len(strconv.Itoa(len(gs) - 1))
	per := max(width-2-label-2, 8)
	for start := 0; start < len(gs); start += per {
		var b strings.Builder
		for _, g := range gs[start:min(start+per, len(gs))] {
			switch {
			case g.Bytes == 0:
				b.WriteByte('.')
			default:
				l := int(float64(len(levels)-1) * float64(g.Bytes) / float64(most))
				b.WriteRune(levels[l])
			}
		}
		fmt.Fprintf(w, "  %*d  %s\n", label, start, b.String())
	}
}

// humanBytes spells n in binary units with one decimal (exact below 1 KiB).
func humanBytes(n int64) string {
	if n < 1024 {
		return english.Count(int(n), "byte")
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	u := -1
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// writeStatsHTML writes the page of package statshtml to path, atomically.
func writeStatsHTML(path, source string, at int64, ops []statsOperator) error {
	p := statshtml.Page{Source: source, At: time.UnixMilli(at)}
	for _, o := range ops {
		po := statshtml.Operator{Operator: o.Operator}
		for _, s := range o.OperatorStates {
			po.OperatorStates = append(po.OperatorStates, statshtml.OperatorState{Name: s.Name, Mode: s.Mode, Elements: s.Elements})
		}
		p.Operators = append(p.Operators, po)
	}
	var b bytes.Buffer
	if err := statshtml.Write(&b, p); err != nil {
		return err
	}
	return safeio.WriteFile(path, b.Bytes(), 0o644)
}
