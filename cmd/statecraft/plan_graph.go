package main

import (
	"fmt"

	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/plan"
	"github.com/urfave/cli/v2"
)

func init() {
	register([]string{"plan"}, func() *cli.Command {
		return &cli.Command{
			Name:      "graph",
			Usage:     "draw a compiled plan's DAG as Graphviz DOT or Mermaid",
			ArgsUsage: "PLAN  (a compiled plan JSON file, or - for stdin)",
			Description: "One box per exec node: id, type and a short description. Nodes with per-operator TTL\n" +
				"state are filled blue and list each state with its TTL; stateful nodes without a\n" +
				"per-operator TTL are dashed grey; TTL-ordering warnings of 'plan validate' are drawn in\n" +
				"red (both nodes and the edges between them). The output is deterministic.\n" +
				"Render DOT with: statecraft plan graph plan.json | dot -Tsvg > plan.svg",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "format", Value: "dot", Usage: "dot (Graphviz) or mermaid"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout"},
			},
			Action: func(c *cli.Context) error {
				var render func(*plan.Plan, []plan.Finding) []byte
				switch f := c.String("format"); f {
				case "dot", "graphviz":
					render = plan.DOT
				case "mermaid":
					render = plan.Mermaid
				default:
					return withCode(exitFailure, fmt.Errorf("plan graph: --format %q: want dot or mermaid", f))
				}
				p, err := readPlan(c, "plan graph")
				if err != nil {
					return err
				}
				out := render(p, p.Validate().Findings)
				if o := c.String("output"); o != "" && o != "-" { // -o - is stdout, as for plan ttl set
					if err := safeio.WriteFile(o, out, 0o644); err != nil {
						return withCode(exitFailure, fmt.Errorf("plan graph: %w", err)) // err names the file
					}
					return nil
				}
				if _, err := c.App.Writer.Write(out); err != nil {
					return withCode(exitFailure, err)
				}
				return nil
			},
		}
	})
}
