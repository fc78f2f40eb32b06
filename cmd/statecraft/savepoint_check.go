package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/bridge"
	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/plan"
	"github.com/urfave/cli/v2"
)

// checkOutput is `savepoint check --json`.
type checkOutput struct {
	Savepoint    string `json:"savepoint"`
	CheckpointID int64  `json:"checkpointId"`
	Plan         string `json:"plan"`
	UIDFormat    string `json:"uidFormat"`
	Generation   string `json:"uidGeneration"`
	*bridge.Report
}

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "check",
			Usage:     "would this savepoint restore into the job of this compiled plan?",
			ArgsUsage: "PATH --plan PLAN  (a savepoint/checkpoint directory or its _metadata file; a compiled plan JSON file)",
			Description: "Matches the savepoint's operators to the plan's exec nodes by OperatorID (the hash of the UID\n" +
				"Flink gives each transformation of the plan; see 'statecraft plan uids'), then decides as\n" +
				"Flink's restore does. For each stateful exec node: the state it finds (names, size, max\n" +
				"parallelism) or 'starts empty'. Errors (exit 2): savepoint operators with state that no\n" +
				"operator of the plan claims (restore fails unless non-restored state is allowed) and, with\n" +
				"--max-parallelism, max parallelism mismatches. Warnings: state names the node's operator does\n" +
				"not use, state dropped under --allow-non-restored-state, operators without a UID.\n" +
				"Types: for each restored node, the key serializer and each state's value serializer stored in\n" +
				"the savepoint (RowData field types) are compared with the key and value types the node declares\n" +
				"under the plan; a difference is an error (Flink refuses the restore with a\n" +
				"StateMigrationException). A type statecraft does not derive is reported as 'types not\n" +
				"checked' (exit 2 with --strict).",
			Flags: append(uidOptionFlags(), pathMapFlag(),
				&cli.StringFlag{Name: "plan", Usage: "the compiled plan of the new job (required; - for stdin)"},
				&cli.IntFlag{Name: "max-parallelism", Usage: "the new job's pipeline.max-parallelism, when it sets one (then it must equal the savepoint's)"},
				&cli.BoolFlag{Name: "allow-non-restored-state", Usage: "the job is submitted with --allowNonRestoredState: unclaimed state is dropped, not an error"},
				&cli.StringFlag{Name: "old-plan", Usage: "the compiled plan the savepoint was taken under: also report restored nodes whose state NEW reads with another meaning (plan diff: incompatible), which Flink restores silently with wrong results"},
				&cli.BoolFlag{Name: "strict", Usage: "exit 2 also when a restored node's state types could not be checked (\"types not checked\")"},
				checkpointFlag(),
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				wideFlag(),
			),
			Action: runSavepointCheck,
		}
	})
}

func runSavepointCheck(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint check: want exactly one PATH (a savepoint directory or its _metadata file), got %s", english.Count(c.NArg(), "argument")))
	}
	if c.String("plan") == "" {
		return withCode(exitFailure, fmt.Errorf("savepoint check: --plan PLAN is required (the compiled plan of the job to restore)"))
	}
	if c.Int("max-parallelism") < 0 || c.Int("max-parallelism") > 32768 || (c.IsSet("max-parallelism") && c.Int("max-parallelism") == 0) {
		return withCode(exitFailure, fmt.Errorf("savepoint check: --max-parallelism %d: want 1..32768", c.Int("max-parallelism")))
	}
	opts, err := uidOptions(c)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("savepoint check: %w", err))
	}
	p, err := readPlanArg(c, c.String("plan"))
	if err != nil {
		return err
	}
	sp, err := openSavepoint(c, c.Args().First())
	if err != nil {
		return withCode(exitFailure, err)
	}
	defer sp.Close()
	b, err := bridge.Open(p, opts, sp)
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("savepoint check: %s: %w", p.File, err))
	}
	r := bridge.Check(b, bridge.CheckOptions{MaxParallelism: c.Int("max-parallelism"), AllowNonRestoredState: c.Bool("allow-non-restored-state")})
	if op := c.String("old-plan"); op != "" {
		oldp, err := readPlanArg(c, op)
		if err != nil {
			return err
		}
		bridge.CheckMeaning(r, plan.Diff(oldp, p))
	}
	gen, _ := plan.NormalizeGeneration(opts.Generation)
	out := checkOutput{Savepoint: sp.Dir, CheckpointID: sp.Metadata.CheckpointID, Plan: p.File, UIDFormat: opts.Format, Generation: gen, Report: r}
	if out.UIDFormat == "" {
		out.UIDFormat = plan.DefaultUIDFormat
	}
	if c.Bool("json") {
		err = encodeJSON(c.App.Writer, out)
	} else {
		err = writeCheckText(tableOut(c), out, len(b.Operators))
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	if !r.Restores || (c.Bool("strict") && r.TypesNotChecked > 0) {
		return withCode(exitFindings, nil)
	}
	return nil
}

func writeCheckText(w io.Writer, out checkOutput, operators int) error {
	tx := newTextWriter(w) // the lines around the table, wrapped to the width it fits
	fmt.Fprintf(tx, "savepoint %s (checkpoint %d, %s)\nplan      %s (uid format %q, generation %s)\n\n",
		out.Savepoint, out.CheckpointID, english.Count(operators, "operator"), out.Plan, out.UIDFormat, out.Generation)
	tw := newTable(w, fittable.Column{Header: "TYPE", ElideFront: true, MinWidth: 12}, fittable.Column{Header: "UID", Elide: true},
		fittable.Column{Header: "STATUS", Elide: true, MinWidth: 12}, fittable.Column{Header: "STATE", Elide: true}, fittable.Column{Header: "SIZE", Drop: 1})
	fmt.Fprintln(tw, "NODE\tTYPE\tUID\tSTATUS\tSTATE\tMAX PAR\tSIZE")
	for _, n := range out.Nodes {
		states, maxPar, size := "-", "-", "-"
		if n.State != nil {
			states = describeStates(n.State)
			maxPar = strconv.Itoa(int(n.State.MaxParallelism))
			size = strconv.FormatInt(n.State.Size, 10) + " B"
		}
		u := n.UID
		if u == "" {
			u = "(none)"
		}
		status := n.Status
		if status == "starts-empty" {
			status = "no state: starts empty"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", n.ID, n.Type, u, status, states, maxPar, size)
	}
	if len(out.Nodes) == 0 {
		fmt.Fprintln(tw, "-\t(no stateful exec node)\t\t\t\t\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// "starts empty" is in the table already.
	first := true
	for _, f := range out.Findings {
		if f.Code == "starts-empty" {
			continue
		}
		if first {
			fmt.Fprintln(tx)
			first = false
		}
		fmt.Fprintf(tx, "%s: %s\n", f.Severity, f.Message)
	}
	verdict := "restores: every operator with state in the savepoint is claimed by the plan, with the state types checked"
	if out.TypesNotChecked > 0 {
		verdict = fmt.Sprintf("restores as far as checked: every operator with state in the savepoint is claimed by the plan, but the types of %s were not checked (see the info lines)",
			english.Count(out.TypesNotChecked, "node"))
	}
	meaning, migrates := 0, 0
	for _, f := range out.Findings {
		switch f.Code {
		case "state-meaning":
			meaning++
		case "type-migrates":
			migrates++
		}
	}
	if migrates > 0 {
		// TTL switched on or off: it restores only because Flink 2.2+ migrates the values.
		verdict += fmt.Sprintf("; Flink migrates %s on restore (see the info lines)", english.Count(migrates, "state"))
	}
	if !out.Restores && meaning == out.Count(bridge.SevError) {
		verdict = fmt.Sprintf("do NOT restore: Flink would, but %s would read state written with another meaning (wrong results)", english.Count(meaning, "node"))
	} else if !out.Restores {
		verdict = fmt.Sprintf("would NOT restore: %d %s", out.Count(bridge.SevError), plural(out.Count(bridge.SevError), "error", "errors"))
	} else if n := out.Count(bridge.SevWarning); n > 0 {
		verdict += fmt.Sprintf(" (%d %s)", n, plural(n, "warning", "warnings"))
	}
	_, err := fmt.Fprintf(tx, "\n%s\n", verdict)
	return err
}

// describeStates lists an operator's state names for the table: keyed states, then operator
// states, then the number of timer services.
func describeStates(o *bridge.Operator) string {
	var parts []string
	parts = append(parts, o.KeyedStates...)
	parts = append(parts, o.OperatorStates...)
	if len(o.Timers) > 0 {
		parts = append(parts, fmt.Sprintf("(+%d %s)", len(o.Timers), plural(len(o.Timers), "timer service", "timer services")))
	}
	if o.StateError != "" {
		parts = append(parts, "(state names unreadable: "+o.StateError+")")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
