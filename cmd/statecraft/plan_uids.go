package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/plan"
	"github.com/urfave/cli/v2"
)

// uidsOutput is `plan uids --json`.
type uidsOutput struct {
	File         string          `json:"file"`
	FlinkVersion string          `json:"flinkVersion"`
	UIDFormat    string          `json:"uidFormat"`     // the session format (nodes may override it)
	Generation   string          `json:"uidGeneration"` // the session generation
	Nodes        []plan.NodeUIDs `json:"nodes"`
	Collisions   []string        `json:"collisions,omitempty"`
}

// uidOptionFlags are the session options of UID generation, shared with `savepoint check`.
func uidOptionFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "uid-format", Usage: "session value of table.exec.uid.format (default \"" + plan.DefaultUIDFormat + "\"; Flink 1.15 used \"" + plan.UIDFormat115 + "\"); a node's own configuration still wins"},
		&cli.StringFlag{Name: "uid-generation", Usage: "session value of table.exec.uid.generation: PLAN_ONLY (default), ALWAYS or DISABLED; a node's own configuration still wins"},
	}
}

func uidOptions(c *cli.Context) (plan.UIDOptions, error) {
	o := plan.UIDOptions{Format: c.String("uid-format"), Generation: c.String("uid-generation")}
	if c.IsSet("uid-format") && o.Format == "" {
		return o, fmt.Errorf("--uid-format: empty format (every operator would get the UID \"\")")
	}
	if _, err := plan.NormalizeGeneration(o.Generation); err != nil {
		return o, fmt.Errorf("--uid-generation: %w", err)
	}
	return o, nil
}

func init() {
	register([]string{"plan"}, func() *cli.Command {
		return &cli.Command{
			Name:      "uids",
			Usage:     "list the operator UIDs and uid hashes Flink gives each exec node when it executes the plan",
			ArgsUsage: "PLAN  (a compiled plan JSON file, or - for stdin)",
			Description: "For each exec node: the transformations it creates (from the Flink 2.3.0 planner), the UID of\n" +
				"each (table.exec.uid.format with <id>, <type>, <version>, <transformation>; a node's\n" +
				"\"configuration\" overrides the session options) and the OperatorID hash a savepoint stores.\n" +
				"'partition' transformations (exchange, partitioner) have no operator and never hold state;\n" +
				"'maybe' marks transformations that depend on something the plan does not say (the reason is\n" +
				"shown). 'state' marks the operator that holds the node's state.",
			Flags: append(uidOptionFlags(), &cli.BoolFlag{Name: "json", Usage: "print JSON"}, wideFlag()),
			Action: func(c *cli.Context) error {
				p, err := readPlan(c, "plan uids")
				if err != nil {
					return err
				}
				opts, err := uidOptions(c)
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan uids: %w", err))
				}
				nodes, err := p.UIDs(opts)
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan uids: %w", err))
				}
				gen, _ := plan.NormalizeGeneration(opts.Generation)
				out := uidsOutput{File: p.File, FlinkVersion: p.FlinkVersion, UIDFormat: opts.Format, Generation: gen,
					Nodes: nodes, Collisions: plan.Index(nodes).Collisions()}
				if out.UIDFormat == "" {
					out.UIDFormat = plan.DefaultUIDFormat
				}
				if c.Bool("json") {
					err = encodeJSON(c.App.Writer, out)
				} else {
					err = writeUIDsTable(tableOut(c), out)
				}
				if err != nil {
					return withCode(exitFailure, err)
				}
				if len(out.Collisions) > 0 {
					return withCode(exitFindings, fmt.Errorf("plan uids: %d UIDs are shared by several operators (%s): Flink refuses the job with \"Hash collision on user-specified ID\"",
						len(out.Collisions), strings.Join(out.Collisions, ", ")))
				}
				return nil
			},
		}
	})
}

func writeUIDsTable(w io.Writer, out uidsOutput) error {
	tw := newTable(w, fittable.Column{Header: "TYPE", ElideFront: true, MinWidth: 12}, fittable.Column{Header: "TRANSFORMATION", Short: "TRANSF.", Elide: true, Drop: 1},
		fittable.Column{Header: "UID", Elide: true}, fittable.Column{Header: "NOTES", Elide: true, MinWidth: 5})
	fmt.Fprintln(tw, "NODE\tTYPE\tTRANSFORMATION\tUID\tUID HASH\tNOTES")
	var notes []string
	for _, n := range out.Nodes {
		if len(n.Transformations) == 0 {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t%s\n", n.ID, n.Type, n.Note)
			continue
		}
		for _, t := range n.Transformations {
			var flags []string
			if t.State {
				flags = append(flags, "state")
			}
			if !t.Operator {
				flags = append(flags, "partition")
			}
			if t.Presence == plan.Maybe {
				flags = append(flags, "maybe: "+t.Condition)
			}
			u, h := t.UID, t.Hash
			if u == "" {
				u, h = "(none)", "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", n.ID, n.Type, t.Transformation, u, h, strings.Join(flags, "; "))
		}
		if n.NoUID != "" {
			notes = append(notes, "node "+strconv.Itoa(n.ID)+": no UID: "+n.NoUID)
		}
		if n.FormatFrom == "node" {
			notes = append(notes, fmt.Sprintf("node %d: uid format %q from the node's configuration", n.ID, n.Format))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range notes {
		if _, err := fmt.Fprintln(w, "note: "+s); err != nil {
			return err
		}
	}
	return nil
}
