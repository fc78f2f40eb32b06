package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/statecraft/statecraft/bridge"
	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/ttl"
	"github.com/urfave/cli/v2"
)

// parseAt reads --at: now (default), now+DURATION / now-DURATION (Flink duration syntax), an
// RFC 3339 time, or milliseconds since the epoch. now is passed in for tests.
func parseAt(s string, now time.Time) (int64, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "now":
		return now.UnixMilli(), nil
	case strings.HasPrefix(s, "now+") || strings.HasPrefix(s, "now-"):
		d, err := ttl.ParseInput(s[4:])
		if err != nil {
			return 0, fmt.Errorf("--at %q: %w", s, err)
		}
		if s[3] == '-' {
			return now.UnixMilli() - d.Millis(), nil
		}
		return now.UnixMilli() + d.Millis(), nil
	}
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("--at %q: want now, now+DURATION, now-DURATION, an RFC 3339 time or epoch milliseconds", s)
	}
	return t.UnixMilli(), nil
}

func init() {
	register([]string{"plan", "ttl"}, func() *cli.Command {
		nodes, types, states, sets := &listFlag{}, &listFlag{}, &listFlag{}, &listFlag{}
		return &cli.Command{
			Name:      "impact",
			Usage:     "how much of a savepoint's state would already be expired under a proposed TTL",
			ArgsUsage: "PLAN --savepoint PATH (--all|--node|--type|--state --ttl DURATION | --set SELECTOR=DURATION) [--at TIME]",
			Description: "Selects plan state entries as plan ttl set does, finds the operator holding each in the\n" +
				"savepoint (by UID, as savepoint check does) and counts, per keyed state, the entries whose\n" +
				"TTL timestamp (last write) plus the proposed TTL is at or before --at (Flink's rule), and their\n" +
				"bytes. States stored without TTL carry no timestamps: their impact cannot be known.",
			Flags: append(uidOptionFlags(), pathMapFlag(),
				&cli.StringFlag{Name: "savepoint", Usage: "savepoint `PATH` of the job running PLAN"},
				checkpointFlag(),
				&cli.BoolFlag{Name: "all", Usage: "every state entry"},
				&cli.GenericFlag{Name: "node", Value: nodes, Usage: "node `ID`, ID:NAME or ID:INDEX (repeatable)"},
				&cli.GenericFlag{Name: "type", Value: types, Usage: "exec node `TYPE` (repeatable)"},
				&cli.GenericFlag{Name: "state", Value: states, Usage: "state `NAME` in any node (repeatable)"},
				&cli.StringFlag{Name: "ttl", Usage: "the proposed `DURATION` for the selector flags"},
				&cli.GenericFlag{Name: "set", Value: sets, Usage: "`SELECTOR=DURATION` (repeatable)"},
				&cli.StringFlag{Name: "at", Value: "now", Usage: "`TIME` to evaluate at: now, now+DURATION, now-DURATION, RFC 3339 or epoch ms"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				wideFlag(),
				quietFlag(),
			),
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return withCode(exitFailure, fmt.Errorf("plan ttl impact: want one PLAN argument, got %d", c.NArg()))
				}
				if c.String("savepoint") == "" {
					return withCode(exitFailure, fmt.Errorf("plan ttl impact: --savepoint PATH is required"))
				}
				req, err := parseSetFlags(c, nodes, types, states, sets)
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan ttl impact: %w", err))
				}
				at, err := parseAt(c.String("at"), time.Now())
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan ttl impact: %w", err))
				}
				opts, err := uidOptions(c)
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan ttl impact: %w", err))
				}
				p, err := readPlanArg(c, c.Args().First())
				if err != nil {
					return err
				}
				var changes []plan.Change
				for i, sel := range req.sel {
					es, err := p.Select(sel)
					if err != nil {
						return withCode(exitFailure, fmt.Errorf("plan ttl impact: %s: %w", sel.Text, err))
					}
					for _, e := range es {
						changes = append(changes, plan.Change{Entry: e, TTL: req.ttl[i]})
					}
				}
				sp, err := openSavepoint(c, c.String("savepoint"))
				if err != nil {
					return withCode(exitFailure, err)
				}
				defer sp.Close()
				b, err := bridge.Open(p, opts, sp)
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan ttl impact: %s: %w", p.File, err))
				}
				pl := newProgressLine(progressOut(c), "plan ttl impact")
				pl.phase("reading the TTL timestamps of every entry of " + sp.Dir)
				rows, err := bridge.Impact(b, sp, changes, at)
				pl.done()
				if err != nil {
					return withCode(exitFailure, err)
				}
				if c.Bool("json") {
					v := struct {
						Savepoint string               `json:"savepoint"`
						Plan      string               `json:"plan"`
						At        int64                `json:"atMillis"`
						States    []bridge.StateImpact `json:"states"`
					}{sp.Dir, p.File, at, rows}
					if err := encodeJSON(c.App.Writer, v); err != nil {
						return withCode(exitFailure, err)
					}
					return nil
				}
				return writeImpact(tableOut(c), sp.Dir, at, rows)
			},
		}
	})
}

func writeImpact(w io.Writer, dir string, at int64, rows []bridge.StateImpact) error {
	tx := newTextWriter(w) // the lines around the table, wrapped to the width it fits
	fmt.Fprintf(tx, "savepoint %s, evaluated at %s (%d)\n\n", dir, time.UnixMilli(at).UTC().Format(time.RFC3339Nano), at)
	tw := newTable(w, fittable.Column{Header: "PLAN STATE", Elide: true}, fittable.Column{Header: "STATE", Elide: true},
		fittable.Column{Header: "BYTES", Drop: 2}, fittable.Column{Header: "EXPIRED BYTES", Short: "EXP. BYTES", Drop: 3},
		fittable.Column{Header: "LAST WRITES (UTC)", Short: "LAST WRITES", Elide: true, MinWidth: 12}, fittable.Column{Header: "TTL", Elide: true, MinWidth: 12})
	fmt.Fprintln(tw, "NODE\tPLAN STATE\tSTATE\tTTL\tENTRIES\tEXPIRED\tBYTES\tEXPIRED BYTES\tLAST WRITES (UTC)")
	var notes []string
	for _, r := range rows {
		ttlText := r.PlanTTL + " -> " + r.NewTTL
		if !r.Known {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\tunknown\t%d\tunknown\t-\n", r.Node, r.PlanState, orDash(r.State), ttlText, r.Entries, r.Bytes)
			notes = append(notes, fmt.Sprintf("node %d %s %s: %s", r.Node, r.PlanState, r.State, r.Note))
			continue
		}
		span := "-"
		if r.Timestamps > 0 {
			span = time.UnixMilli(r.Oldest).UTC().Format("2006-01-02 15:04:05.000") + " .. " + time.UnixMilli(r.Newest).UTC().Format("15:04:05.000")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d (%s)\t%d\t%d\t%s\n", r.Node, r.PlanState, r.State, ttlText, r.Entries, r.Expired, percent(r.Expired, r.Entries), r.Bytes, r.ExpiredBytes, span)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintf(tx, "\n%s", n)
	}
	if len(notes) > 0 {
		fmt.Fprintln(tx)
	}
	return nil
}

func percent(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(a)/float64(b), 'f', 1, 64) + "%"
}
