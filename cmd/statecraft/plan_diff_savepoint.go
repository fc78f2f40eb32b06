package main

import (
	"fmt"
	"io"

	"github.com/statecraft/statecraft/bridge"
	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/urfave/cli/v2"
)

// upgradeFlags are the flags of `plan upgrade`, and what `plan diff --savepoint` passes on.
func upgradeFlags() []cli.Flag {
	return append(uidOptionFlags(),
		&cli.StringFlag{Name: "savepoint", Usage: "savepoint `PATH` taken while OLD ran (directory or its _metadata)"},
		checkpointFlag(),
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the migration script to `SCRIPT` (default: print it)"},
		&cli.IntFlag{Name: "max-parallelism", Usage: "NEW job's pipeline.max-parallelism, when it sets one"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON (renames, blocked nodes, restore checks before/after)"},
		pathMapFlag(),
		wideFlag(),
	)
}

func init() {
	register([]string{"plan"}, func() *cli.Command {
		return &cli.Command{
			Name:      "upgrade",
			Usage:     "carry a savepoint taken under OLD over to NEW: a migration script renaming its operators to NEW's UIDs",
			ArgsUsage: "OLD NEW --savepoint PATH [-o SCRIPT]",
			Description: "Matches NEW's nodes with OLD's (plan diff), and for every stateful node that kept its state\n" +
				"layout but whose operator UID changed (ids renumbered, stateless nodes added, TTLs changed)\n" +
				"writes a rename-uid step for the savepoint's operator (run it with statecraft migrate run\n" +
				"SCRIPT SRC DST). A node whose state layout changed gets no rename: it is listed as blocked.\n" +
				"Then checks, as savepoint check does, whether Flink restores the savepoint under NEW before\n" +
				"and after the renames. Exit 0: it restores after the script; 2: blocked state or refused.",
			Flags: upgradeFlags(),
			Action: func(c *cli.Context) error {
				if c.NArg() != 2 {
					return withCode(exitFailure, fmt.Errorf("plan upgrade: want two arguments OLD NEW (compiled plan JSON files), got %d", c.NArg()))
				}
				if c.String("savepoint") == "" {
					return withCode(exitFailure, fmt.Errorf("plan upgrade: --savepoint PATH is required (the savepoint taken while OLD ran)"))
				}
				if c.Args().Get(0) == "-" && c.Args().Get(1) == "-" {
					return withCode(exitFailure, fmt.Errorf("plan upgrade: only one of OLD and NEW can be - (stdin)"))
				}
				oldp, err := readPlanArg(c, c.Args().Get(0))
				if err != nil {
					return err
				}
				newp, err := readPlanArg(c, c.Args().Get(1))
				if err != nil {
					return err
				}
				if err := ineffectiveFlags(c, "plan upgrade", with("json", "wide")); err != nil {
					return err
				}
				return runUpgrade(c, tableOut(c), oldp, newp)
			},
		}
	})
}

// upgradeJSON is what `plan upgrade --json` prints (and `plan diff --json --savepoint` embeds).
type upgradeJSON struct {
	Savepoint string `json:"savepoint"`
	Script    string `json:"script"`
	*bridge.UpgradeReport
}

// upgradeResult computes `plan upgrade` for OLD and NEW against --savepoint and writes the script
// to -o when given. Blocked reports whether the upgrade must fail the command (exit 2).
func upgradeResult(c *cli.Context, oldp, newp *plan.Plan) (v upgradeJSON, sp *savepoint.Savepoint, blocked bool, err error) {
	if c.String("output") == "-" {
		// A file named "-" would be written; the script goes to stdout when -o is not given.
		return v, nil, false, withCode(exitFailure, fmt.Errorf("-o -: the script is printed when -o is not given; -o names a file"))
	}
	mp := c.Int("max-parallelism")
	if mp < 0 || mp > 32768 || (c.IsSet("max-parallelism") && mp == 0) { // 0 means "not set": it cannot be given
		return v, nil, false, withCode(exitFailure, fmt.Errorf("--max-parallelism %d: want 1..32768", mp))
	}
	opts, err := uidOptions(c)
	if err != nil {
		return v, nil, false, withCode(exitFailure, err)
	}
	sp, err = openSavepoint(c, c.String("savepoint"))
	if err != nil {
		return v, nil, false, withCode(exitFailure, err)
	}
	r, err := bridge.Upgrade(oldp, newp, opts, sp, bridge.CheckOptions{MaxParallelism: mp})
	if err != nil {
		sp.Close()
		return v, nil, false, withCode(exitFailure, err)
	}
	script := r.Script(fmt.Sprintf("savepoint %s (checkpoint %d), taken under %s", sp.Dir, sp.Metadata.CheckpointID, oldp.File),
		"so that it restores under "+newp.File+" (statecraft plan upgrade)")
	if out := c.String("output"); out != "" {
		if err := safeio.WriteFile(out, script, 0o644); err != nil {
			sp.Close()
			return v, nil, false, withCode(exitFailure, fmt.Errorf("write script: %w", err))
		}
	}
	return upgradeJSON{Savepoint: sp.Dir, Script: string(script), UpgradeReport: r}, sp, len(r.Blocked) > 0 || !r.After.Restores, nil
}

// runUpgrade is `plan upgrade`; `plan diff --savepoint` calls it after printing the diff.
func runUpgrade(c *cli.Context, w io.Writer, oldp, newp *plan.Plan) error {
	v, sp, blocked, err := upgradeResult(c, oldp, newp)
	if err != nil {
		return err
	}
	defer sp.Close()
	if c.Bool("json") {
		if err := encodeJSON(w, v); err != nil {
			return withCode(exitFailure, err)
		}
	} else {
		tw := newTextWriter(w)
		writeUpgrade(tw, sp, v.UpgradeReport, []byte(v.Script), c.String("output"))
		if err := tw.flush(); err != nil {
			return withCode(exitFailure, err)
		}
	}
	if blocked {
		return withCode(exitFindings, nil)
	}
	return nil
}

func writeUpgrade(w io.Writer, sp *savepoint.Savepoint, r *bridge.UpgradeReport, script []byte, out string) {
	fmt.Fprintf(w, "\nSavepoint %s (checkpoint %d, %s)\n", sp.Dir, sp.Metadata.CheckpointID, english.Count(len(sp.Metadata.Operators), "operator"))
	// Blocked nodes first: "no operator needs a new UID" would read as "nothing to do" above them.
	for _, b := range r.Blocked {
		fmt.Fprintf(w, "  blocked %s: %s\n", b.Type, b.Reason)
	}
	switch {
	case len(r.Renames) == 0 && len(r.Blocked) > 0:
		fmt.Fprintln(w, "  no rename can carry the blocked state over; no other operator needs a new UID")
	case len(r.Renames) == 0:
		fmt.Fprintln(w, "  no operator needs a new UID")
	}
	for _, rn := range r.Renames {
		fmt.Fprintf(w, "  rename  node %d -> %d %s: %s (%s) -> %s (%s), %s\n", rn.OldNode, rn.Node, rn.Type, rn.From, rn.FromHash, rn.To, rn.ToHash, rn.StateNote())
	}
	fmt.Fprintf(w, "  restore under NEW as it is:        %s\n", restoreWord(r.Before))
	fmt.Fprintf(w, "  restore under NEW after the script: %s\n", restoreWord(r.After))
	for _, f := range r.After.Findings {
		if f.Severity == bridge.SevError {
			fmt.Fprintf(w, "    %s: %s\n", f.Severity, f.Message)
		}
	}
	if out != "" {
		fmt.Fprintf(w, "  script written to %s (statecraft migrate run %s %s DST)\n", out, out, sp.Dir)
		return
	}
	// The script is YAML to run as it is: never wrapped.
	fmt.Fprintln(w)
	if t, ok := w.(*textWriter); ok {
		t.flush()
		w = t.raw()
	}
	w.Write(script)
}

func restoreWord(r *bridge.Report) string {
	if r.Restores && r.TypesNotChecked > 0 {
		return fmt.Sprintf("restores as far as checked (types of %s not checked)", english.Count(r.TypesNotChecked, "node"))
	}
	if r.Restores {
		return "restores"
	}
	return fmt.Sprintf("refused (%s)", english.Count(r.Count(bridge.SevError), "error"))
}
