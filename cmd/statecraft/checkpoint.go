package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

func init() {
	register([]string{"checkpoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "list",
			Usage:     "list every chk-N of a job's checkpoint directory: id, time, size, complete or not and why",
			ArgsUsage: "DIR (a job's checkpoint directory: <checkpoints>/<job-id>/)",
			Description: "time is when _metadata was written (Flink writes it last); size is the bytes in chk-N/\n" +
				"itself, state the checkpoint's full size as its _metadata says (shared files included).\n" +
				"A chk-N without a _metadata that decodes is incomplete: in progress, aborted or failed.",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}, wideFlag()},
			Action: runCheckpointList,
		}
	})
}

// checkpointListJSON is the output of checkpoint list --json.
type checkpointListJSON struct {
	Checkpoints []savepoint.CheckpointInfo `json:"checkpoints"`
}

// checkpointGCJSON is the output of checkpoint gc --json.
type checkpointGCJSON struct {
	GC      *savepoint.GCPlan `json:"gc"`
	Applied bool              `json:"applied"` // the garbage was deleted (--apply)
}

// checkpointFlag is --checkpoint N of every command that reads a savepoint or checkpoint.
func checkpointFlag() cli.Flag {
	return &cli.Int64Flag{Name: "checkpoint", Usage: "read chk-`N` of the job's checkpoint directory given (default: its latest complete checkpoint)"}
}

// snapshotPath is the path a command opens for its savepoint argument p: p itself, or with
// --checkpoint N the chk-N directory of the job's checkpoint directory p.
func snapshotPath(c *cli.Context, p string) (string, error) {
	if !c.IsSet("checkpoint") {
		return p, nil
	}
	if p == "" {
		return "", withCode(exitFailure, fmt.Errorf("--checkpoint %d: give the job's checkpoint directory it picks from", c.Int64("checkpoint")))
	}
	dir, err := savepoint.CheckpointDir(p, c.Int64("checkpoint"))
	if err != nil {
		return "", withCode(exitFailure, err)
	}
	return dir, nil
}

func runCheckpointList(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("checkpoint list: want exactly one DIR, got %d arguments", c.NArg()))
	}
	list, err := savepoint.ListCheckpoints(c.Args().First())
	if err != nil {
		return withCode(exitFailure, err)
	}
	if c.Bool("json") {
		return encodeJSON(c.App.Writer, checkpointListJSON{Checkpoints: list})
	}
	tw := newTable(tableOut(c), fittable.Column{Header: "id"}, fittable.Column{Header: "time"},
		fittable.Column{Header: "size"}, fittable.Column{Header: "state", Drop: 1},
		fittable.Column{Header: "complete"}, fittable.Column{Header: "why not", Elide: true})
	fmt.Fprintln(tw, "id\ttime\tsize\tstate\tcomplete\twhy not")
	for _, ck := range list {
		state, done := "-", "no"
		if ck.Complete {
			state, done = humanBytes(ck.StateSize), "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", strconv.FormatInt(ck.ID, 10), ck.Time.Format(time.RFC3339),
			humanBytes(ck.Size), state, done, ck.Reason)
	}
	return tw.Flush()
}

func init() {
	register([]string{"checkpoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "gc",
			Usage:     "list (or with --apply delete) the files under shared/ and taskowned/ that no complete checkpoint references",
			ArgsUsage: "DIR (a job's checkpoint directory: <checkpoints>/<job-id>/)",
			Description: "A dry run by default: prints the unreferenced files and their total size. A file is\n" +
				"referenced when any file handle of any complete chk-N/_metadata names it (by its UUID base\n" +
				"name, so a copied directory works too). --apply deletes exactly the files listed, and\n" +
				"refuses while an incomplete chk-N newer than the newest complete one exists (Flink may be\n" +
				"writing it) unless --force. An unreferenced file modified less than --min-age ago is kept\n" +
				"and listed as too new: Flink uploads a checkpoint's shared files before its chk-N/_metadata\n" +
				"exists, so those of a checkpoint in progress look unreferenced (modification times are\n" +
				"the only clue; --min-age 0 turns the caution off).",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "apply", Usage: "delete the unreferenced files"},
				&cli.BoolFlag{Name: "force", Usage: "with --apply: delete even while a newer incomplete checkpoint exists"},
				&cli.DurationFlag{Name: "min-age", Value: time.Hour, Usage: "keep unreferenced files modified less than `AGE` ago (a checkpoint in progress may own them)"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
				wideFlag(),
			},
			Action: runCheckpointGC,
		}
	})
}

func runCheckpointGC(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("checkpoint gc: want exactly one DIR, got %d arguments", c.NArg()))
	}
	if c.Bool("force") && !c.Bool("apply") {
		return withCode(exitFailure, fmt.Errorf("checkpoint gc: --force only applies with --apply"))
	}
	plan, err := savepoint.PlanGC(c.Args().First(), savepoint.GCOptions{MinAge: c.Duration("min-age")})
	if err != nil {
		return withCode(exitFailure, err)
	}
	if c.Bool("apply") {
		if err := plan.Apply(c.Bool("force")); err != nil {
			return withCode(exitFailure, err)
		}
	}
	if c.Bool("json") {
		return encodeJSON(c.App.Writer, checkpointGCJSON{GC: plan, Applied: c.Bool("apply")})
	}
	w := tableOut(c)
	tw := newTable(w, fittable.Column{Header: "file", Elide: true, ElideFront: true}, fittable.Column{Header: "size"})
	fmt.Fprintln(tw, "file\tsize")
	for _, g := range plan.Garbage {
		fmt.Fprintf(tw, "%s\t%s\n", g.Path, humanBytes(g.Size))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verb := "unreferenced (dry run; --apply deletes them)"
	if c.Bool("apply") {
		verb = "deleted"
	}
	fmt.Fprintf(w, "\n%d files, %s, %s; %d referenced by checkpoints %v kept\n", len(plan.Garbage), humanBytes(plan.Total), verb, plan.Referenced, plan.Complete)
	if len(plan.TooNew) > 0 {
		var size int64
		for _, f := range plan.TooNew {
			size += f.Size
		}
		fmt.Fprintf(w, "%d unreferenced files, %s, kept for being modified less than --min-age %s ago (a checkpoint in progress may own them):\n",
			len(plan.TooNew), humanBytes(size), plan.MinAge)
		for _, f := range plan.TooNew {
			fmt.Fprintf(w, "  %s\n", f.Path)
		}
	}
	if len(plan.InProgress) > 0 && !c.Bool("apply") {
		fmt.Fprintf(w, "checkpoint %v is incomplete and newer: --apply refuses while Flink may be writing it (--force)\n", plan.InProgress)
	}
	return nil
}
