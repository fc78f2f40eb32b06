package main

import (
	"fmt"

	"github.com/statecraft/statecraft/plan"
	"github.com/urfave/cli/v2"
)

// validateOutput is `plan validate --json`.
type validateOutput struct {
	File         string         `json:"file"`
	FlinkVersion string         `json:"flinkVersion"`
	Nodes        int            `json:"nodes"`
	States       int            `json:"states"`
	Errors       int            `json:"errors"`
	Warnings     int            `json:"warnings"`
	Findings     []plan.Finding `json:"findings"`
	Note         string         `json:"note,omitempty"`
}

func init() {
	register([]string{"plan"}, func() *cli.Command {
		return &cli.Command{
			Name:      "validate",
			Usage:     "check a compiled plan's structure, state entries and TTL ordering",
			ArgsUsage: "PLAN  (a compiled plan JSON file, or - for stdin)",
			Description: "Errors (exit 2): what Flink refuses when it loads the plan: missing nodes or edges,\n" +
				"duplicate node ids, edges to missing nodes, cycles, state entries with missing fields,\n" +
				"state indexes other than 0..k-1 for a node with k inputs, TTLs Flink cannot parse.\n" +
				"Warnings (exit 0, or 3 with --strict): plans Flink runs but that can give wrong results:\n" +
				"a stateful operator whose TTL is shorter than that of a stateful operator upstream of it\n" +
				"(0 ms = never counts as the longest), and TTLs below millisecond precision.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print the findings as JSON"},
				&cli.BoolFlag{Name: "strict", Usage: "exit 3 when there are warnings (and no errors)"},
			},
			Action: func(c *cli.Context) error {
				p, err := readPlan(c, "plan validate")
				if err != nil {
					return err
				}
				r := p.Validate()
				out := validateOutput{File: p.File, FlinkVersion: p.FlinkVersion, Nodes: len(p.Nodes), States: len(p.States()),
					Errors: r.Count(plan.Error), Warnings: r.Count(plan.Warning), Findings: r.Findings}
				if !p.HasAnyState() {
					out.Note = p.NoStateNote()
				}
				if c.Bool("json") {
					if err := encodeJSON(c.App.Writer, out); err != nil {
						return withCode(exitFailure, err)
					}
				} else {
					printFindings(c.App.Writer, p.File, r.Findings)
					if out.Note != "" {
						fmt.Fprintf(c.App.Writer, "note: %s\n", out.Note)
					}
					fmt.Fprintf(c.App.Writer, "%s: %d %s, %d %s, %d %s, %d %s\n", p.File,
						out.Nodes, plural(out.Nodes, "node", "nodes"), out.States, plural(out.States, "state entry", "state entries"),
						out.Errors, plural(out.Errors, "error", "errors"), out.Warnings, plural(out.Warnings, "warning", "warnings"))
				}
				switch {
				case out.Errors > 0:
					return withCode(exitFindings, nil)
				case out.Warnings > 0 && c.Bool("strict"):
					return withCode(exitWarnings, nil)
				}
				return nil
			},
		}
	})
}
