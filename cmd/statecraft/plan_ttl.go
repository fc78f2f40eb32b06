package main

import (
	"fmt"
	"io"

	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/plan"
	"github.com/urfave/cli/v2"
)

// readPlan reads and parses PLAN ("-" is stdin). Errors name the file.
func readPlan(c *cli.Context, what string) (*plan.Plan, error) {
	if c.NArg() != 1 {
		return nil, withCode(exitFailure, fmt.Errorf("%s: want exactly one PLAN argument (a compiled plan JSON file, or - for stdin), got %d", what, c.NArg()))
	}
	return readPlanArg(c, c.Args().First())
}

// listRow is one state entry as `plan ttl list --json` prints it.
type listRow struct {
	Node        int    `json:"node"`
	Type        string `json:"type"`
	Version     int    `json:"version"`
	Description string `json:"description"`
	Index       int    `json:"index"`
	Name        string `json:"name"`
	Input       *int   `json:"input"` // upstream node id feeding the input this state holds
	TTL         string `json:"ttl"`   // as written in the plan
	TTLMillis   *int64 `json:"ttlMillis"`
	Human       string `json:"human"` // "never", "1h30m"; "" when the ttl does not parse
	Error       string `json:"error,omitempty"`
}

// noTTLRow is a stateful node without a settable TTL; type and version as in listRow (the type
// without its version suffix), so both lists name a node the same way.
type noTTLRow struct {
	Node    int    `json:"node"`
	Type    string `json:"type"`
	Version int    `json:"version"`
	Reason  string `json:"reason"`
}

type listOutput struct {
	File               string         `json:"file"`
	FlinkVersion       string         `json:"flinkVersion"`
	States             []listRow      `json:"states"`
	StatefulWithoutTTL []noTTLRow     `json:"statefulWithoutTTL"`
	Note               string         `json:"note,omitempty"`
	Problems           []plan.Finding `json:"problems"`
}

func buildList(p *plan.Plan) listOutput {
	out := listOutput{File: p.File, FlinkVersion: p.FlinkVersion, States: []listRow{}, StatefulWithoutTTL: []noTTLRow{}, Problems: p.Problems}
	if out.Problems == nil {
		out.Problems = []plan.Finding{}
	}
	for _, n := range p.Nodes {
		if c, why := n.Classify(); c == plan.StatefulNoTTL {
			out.StatefulWithoutTTL = append(out.StatefulWithoutTTL, noTTLRow{n.ID, n.Name, n.Version, why})
		}
		for _, s := range n.State {
			row := listRow{Node: n.ID, Type: n.Name, Version: n.Version, Description: n.Description,
				Index: s.Index, Name: s.Name, TTL: s.TTLText}
			if u := s.Upstream(); u != nil {
				id := u.ID
				row.Input = &id
			}
			if s.TTLErr == nil {
				ms := s.TTL.Millis()
				row.TTLMillis = &ms
				row.Human = s.TTL.String()
			} else {
				row.Error = s.TTLErr.Error()
			}
			out.States = append(out.States, row)
		}
	}
	if !p.HasAnyState() {
		out.Note = p.NoStateNote()
	}
	return out
}

func printList(w io.Writer, l listOutput) {
	if len(l.States) > 0 {
		tw := newTable(w, fittable.Column{Header: "TYPE", ElideFront: true, MinWidth: 12}, fittable.Column{Header: "STATE", Elide: true},
			fittable.Column{Header: "DESCRIPTION", Elide: true}, fittable.Column{Header: "INPUT", Drop: 1})
		fmt.Fprintln(tw, "NODE\tTYPE\tSTATE\tINPUT\tTTL\tHUMAN\tDESCRIPTION")
		for _, r := range l.States {
			in := "-"
			if r.Input != nil {
				in = fmt.Sprint(*r.Input)
			}
			human := r.Human
			if r.Error != "" {
				human = "INVALID"
			}
			fmt.Fprintf(tw, "%d\t%s_%d\t%d %s\t%s\t%s\t%s\t%s\n", r.Node, r.Type, r.Version, r.Index, r.Name, in, r.TTL, human, plan.ShortText(r.Description, 60))
		}
		tw.Flush()
	}
	if len(l.StatefulWithoutTTL) > 0 {
		fmt.Fprintln(w, "\nstateful nodes without a per-operator TTL:")
		tw := newTable(w)
		for _, r := range l.StatefulWithoutTTL {
			fmt.Fprintf(tw, "  %d\t%s_%d\t%s\n", r.Node, r.Type, r.Version, r.Reason)
		}
		tw.Flush()
	}
	if l.Note != "" {
		fmt.Fprintf(w, "\nnote: %s\n", l.Note)
	}
}

// printFindings writes findings for people, one block each.
func printFindings(w io.Writer, file string, fs []plan.Finding) {
	for _, f := range fs {
		loc := file
		if f.Path != "" {
			loc += ": " + f.Path
		}
		fmt.Fprintf(w, "%s: %s [%s]: %s\n", f.Severity, loc, f.Code, f.Message)
		if f.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", f.Fix)
		}
	}
}

func init() {
	register([]string{"plan", "ttl"}, func() *cli.Command {
		return &cli.Command{
			Name:      "list",
			Usage:     "list every per-operator state TTL of a compiled plan",
			ArgsUsage: "PLAN  (a compiled plan JSON file, or - for stdin)",
			Description: "One row per state entry: node id, exec node type and version, state index and name,\n" +
				"the upstream node whose input the state holds, the TTL as written and as a duration\n" +
				"(never = 0 ms). Stateful nodes whose TTL cannot be set per operator are listed after.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print JSON (full descriptions) instead of a table"},
				wideFlag(),
			},
			Action: func(c *cli.Context) error {
				p, err := readPlan(c, "plan ttl list")
				if err != nil {
					return err
				}
				l := buildList(p)
				if c.Bool("json") {
					if err := encodeJSON(c.App.Writer, l); err != nil {
						return withCode(exitFailure, err)
					}
				} else {
					printList(tableOut(c), l)
					printFindings(c.App.ErrWriter, p.File, p.Problems)
				}
				if len(p.Problems) > 0 {
					return withCode(exitFindings, fmt.Errorf("%s: %d structural %s (see 'statecraft plan validate')", p.File, len(p.Problems), plural(len(p.Problems), "error", "errors")))
				}
				return nil
			},
		}
	})
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
