// Package statshtml renders what package stats measured as one self-contained HTML page: the
// tables `savepoint stats` prints and its charts as inline SVG (key-group size distribution and
// subtask sizes per operator, top keys, TTL ages, timers of the next hour).
//
// Self-contained means no request leaves the page: no script, no external style sheet, font or
// image, and a Content-Security-Policy of default-src 'none' (styles inline only) so that a
// browser would refuse one even if a later change added it. The page can be mailed, attached to
// a ticket or opened offline.
package statshtml

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/statecraft/statecraft/stats"
)

// OperatorState is one operator-state entry of the page (list, union or broadcast state).
type OperatorState struct {
	Name     string
	Mode     string
	Elements int64
}

// Operator is one operator of the page: its keyed state measured, and its operator state.
type Operator struct {
	*stats.Operator
	OperatorStates []OperatorState
}

// Page is everything the page shows.
type Page struct {
	Source    string    // the savepoint path, for the title
	At        time.Time // the time TTL ages and timers are taken at
	Operators []Operator
}

// Write renders p to w.
func Write(w io.Writer, p Page) error {
	if err := page.Execute(w, p); err != nil {
		return fmt.Errorf("stats html: %w", err)
	}
	return nil
}

const chartW, chartH = 960, 160

// bar is one rectangle of a chart, in SVG user units, with its tooltip.
type bar struct {
	X, Y, W, H float64
	Title      string
}

// label is one text of a chart's axis.
type label struct {
	X, Y float64
	Text string
}

// chart is an SVG bar chart.
type chart struct {
	W, H   int
	Bars   []bar
	Labels []label
	Empty  string // shown instead when nothing is to draw
}

// columns draws one vertical bar per value, heights relative to the largest, labels under some.
func columns(vals []int64, title func(i int) string, axis func(i int) string, every int) chart {
	c := chart{W: chartW, H: chartH + 20}
	var most int64
	for _, v := range vals {
		most = max(most, v)
	}
	if most == 0 || len(vals) == 0 {
		c.Empty = "nothing to draw: every value is 0"
		return c
	}
	step := float64(chartW) / float64(len(vals))
	for i, v := range vals {
		h := float64(chartH) * float64(v) / float64(most)
		if v > 0 {
			h = math.Max(h, 1) // a non-empty key group stays visible
		}
		c.Bars = append(c.Bars, bar{X: float64(i) * step, Y: chartH - h, W: math.Max(step-0.5, 0.5), H: h, Title: title(i)})
		if every > 0 && i%every == 0 {
			c.Labels = append(c.Labels, label{X: float64(i) * step, Y: chartH + 14, Text: axis(i)})
		}
	}
	return c
}

// rows draws one horizontal bar per value with its label on the left.
func rows(names []string, vals []int64, title func(i int) string) chart {
	const rowH, left = 22, 140
	c := chart{W: chartW, H: rowH*len(vals) + 4}
	var most int64
	for _, v := range vals {
		most = max(most, v)
	}
	for i, v := range vals {
		w := 0.0
		if most > 0 {
			w = float64(chartW-left-10) * float64(v) / float64(most)
		}
		y := float64(i*rowH + 2)
		c.Bars = append(c.Bars, bar{X: left, Y: y, W: w, H: rowH - 6, Title: title(i)})
		c.Labels = append(c.Labels, label{X: 4, Y: y + rowH - 10, Text: names[i]})
	}
	return c
}

func keyGroupChart(o *stats.Operator) chart {
	gs := o.KeyGroups.All
	vals := make([]int64, len(gs))
	for i, g := range gs {
		vals[i] = g.Bytes
	}
	every := max(len(gs)/8, 1)
	return columns(vals, func(i int) string {
		return fmt.Sprintf("key group %d: %s, %d entries", gs[i].Index, humanBytes(gs[i].Bytes), gs[i].Entries)
	}, func(i int) string { return fmt.Sprint(gs[i].Index) }, every)
}

func subtaskChart(o *stats.Operator) chart {
	gs := o.Subtasks.All
	names := make([]string, len(gs))
	vals := make([]int64, len(gs))
	for i, g := range gs {
		names[i], vals[i] = fmt.Sprintf("subtask %d", g.Index), g.Bytes
	}
	return rows(names, vals, func(i int) string {
		return fmt.Sprintf("subtask %d: %s, %d entries", gs[i].Index, humanBytes(gs[i].Bytes), gs[i].Entries)
	})
}

func ttlChart(a *stats.TTLAges) chart {
	names := make([]string, len(a.Buckets))
	vals := make([]int64, len(a.Buckets))
	for i, b := range a.Buckets {
		names[i], vals[i] = b.Label, b.Count
	}
	return rows(names, vals, func(i int) string { return fmt.Sprintf("%s: %d values", names[i], vals[i]) })
}

func timerChart(t *stats.TimerSpread) chart {
	return columns(t.NextHour[:], func(i int) string { return fmt.Sprintf("minute %d: %d timers", i, t.NextHour[i]) },
		func(i int) string { return fmt.Sprintf("+%dm", i) }, 10)
}

func humanBytes(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}
	f, u := float64(n), -1
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

func millisUTC(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }

func opLabel(o *stats.Operator) string {
	if o.UID != "" {
		return "uid:" + o.UID
	}
	return "hash:" + o.ID
}

var page = template.Must(template.New("page").Funcs(template.FuncMap{
	"keyGroupChart": keyGroupChart, "subtaskChart": subtaskChart, "ttlChart": ttlChart, "timerChart": timerChart,
	"bytes": humanBytes, "utc": millisUTC, "label": opLabel, "f1": func(f float64) string { return fmt.Sprintf("%.1f", f) },
	"f2": func(f float64) string { return fmt.Sprintf("%.2f", f) }, "join": strings.Join,
	"used": func(gs []stats.Group) int {
		n := 0
		for _, g := range gs {
			if g.Entries > 0 {
				n++
			}
		}
		return n
	},
}).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>statecraft savepoint stats: {{.Source}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d2530; max-width: 1000px; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 36px; border-top: 1px solid #ccd; padding-top: 12px; }
h3 { font-size: 14px; margin: 18px 0 6px; }
table { border-collapse: collapse; margin: 6px 0; } th, td { padding: 2px 10px 2px 0; text-align: left; }
td.n, th.n { text-align: right; } th { border-bottom: 1px solid #99a; font-weight: 600; }
code { font: 12px ui-monospace, monospace; }
svg { display: block; margin: 4px 0; } svg rect { fill: #3f6fb5; } svg text { font: 11px sans-serif; fill: #445; }
.note { color: #556; }
</style>
</head>
<body>
<h1>Savepoint stats</h1>
<p class="note"><code>{{.Source}}</code>; TTL ages and timers at {{.At.UTC.Format "2006-01-02T15:04:05Z07:00"}}.
Bytes are those of the key-group blocks, uncompressed; skew is the largest over the mean.</p>
{{range .Operators}}
<section class="operator">
<h2>operator {{label .Operator}} <span class="note">(hash <code>{{.ID}}</code>, parallelism {{.Parallelism}}, max parallelism {{.MaxParallelism}})</span></h2>
{{if .States}}
<p>{{.Entries}} entries, {{.DistinctKeys}} distinct keys, {{bytes .Bytes}}{{if .Native}} of keys and values (native RocksDB files){{else}} in key-group blocks ({{bytes .StoredBytes}} stored){{end}}.</p>
<table class="states">
<tr><th>state</th><th>kind</th><th class="n">entries</th><th class="n">keys</th><th class="n">key bytes</th><th class="n">value bytes</th><th class="n">frame bytes</th><th class="n">mean value</th><th class="n">max value</th></tr>
{{range .States}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td class="n">{{.Entries}}</td><td class="n">{{.DistinctKeys}}</td><td class="n">{{.KeyBytes}}</td><td class="n">{{.ValueBytes}}</td><td class="n">{{.FrameBytes}}</td><td class="n">{{f1 .MeanValue}}</td><td class="n">{{.MaxValue}}</td></tr>
{{end}}</table>
<h3>key groups: {{used .KeyGroups.All}} of {{len .KeyGroups.All}} hold entries (skew {{f2 .KeyGroups.Skew}}); one bar per key group, height by bytes</h3>
{{template "chart" keyGroupChart .Operator}}
<h3>subtasks (skew {{f2 .Subtasks.Skew}})</h3>
{{template "chart" subtaskChart .Operator}}
{{range .States}}{{if .Top}}
<h3>top keys of {{.Name}} by bytes</h3>
<table class="top"><tr><th>key</th><th class="n">bytes</th><th class="n">entries</th></tr>
{{range .Top}}<tr><td><code>{{printf "%s" .Key}}</code></td><td class="n">{{.Bytes}}</td><td class="n">{{.Entries}}</td></tr>
{{end}}</table>{{end}}{{end}}
{{range .States}}{{if .TTL}}
<h3 class="ttl">TTL {{.Name}}: {{.TTL.Values}} values last accessed {{utc .TTL.Oldest}} .. {{utc .TTL.Newest}}</h3>
{{template "chart" ttlChart .TTL}}{{end}}{{if .Timers}}
<h3 class="timers">timers {{.Name}}: earliest {{utc .Timers.Earliest}}, latest {{utc .Timers.Latest}}; {{.Timers.Due}} due before, {{.Timers.Later}} an hour or more after; per minute of the next hour:</h3>
{{template "chart" timerChart .Timers}}{{end}}{{end}}
{{end}}
{{if .OperatorStates}}
<table class="opstates"><tr><th>operator state</th><th>mode</th><th class="n">elements</th></tr>
{{range .OperatorStates}}<tr><td>{{.Name}}</td><td>{{.Mode}}</td><td class="n">{{.Elements}}</td></tr>
{{end}}</table>{{end}}
</section>
{{else}}<p>No operator has state.</p>
{{end}}
</body>
</html>
{{define "chart"}}{{if .Empty}}<p class="note">{{.Empty}}</p>{{else}}<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}">
{{range .Bars}}<rect x="{{printf "%.2f" .X}}" y="{{printf "%.2f" .Y}}" width="{{printf "%.2f" .W}}" height="{{printf "%.2f" .H}}"><title>{{.Title}}</title></rect>
{{end}}{{range .Labels}}<text x="{{printf "%.1f" .X}}" y="{{printf "%.1f" .Y}}">{{.Text}}</text>
{{end}}</svg>{{end}}{{end}}
`
