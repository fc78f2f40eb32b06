package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/internal/fittable"
	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/migrate"
)

// Flags every migrate command shares.
func migrateFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "dry-run", Usage: "print what would change and write nothing"},
		&cli.StringFlag{Name: "link", Value: "hard", Usage: "unchanged state files: hard (hard-link, copy across file systems) or copy"},
		&cli.BoolFlag{Name: "no-verify", Usage: "skip re-reading the output and comparing entry counts and checksums with the source"},
		&cli.BoolFlag{Name: "clean-partial", Usage: "first remove the objects an interrupted run left under an object-store DST (those its .statecraft-partial lists, never a finished savepoint)"},
		&cli.StringFlag{Name: "report", Usage: "write a JSON report of every step (before/after counts, checksums) to `FILE`"},
		checkpointFlag(),
		wideFlag(),
		quietFlag(),
		pathMapFlag(),
	}
}

func init() {
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "uid",
			Usage:     "write a copy of a savepoint in which operators have new UIDs",
			ArgsUsage: "SRC DST",
			Description: "Each rename is --rename SELECTOR=uid:NEW, or --operator SELECTOR --to uid:NEW (repeat both in\n" +
				"order). SELECTOR is uid:OLD or hash:HEX (an operator whose UID was never set). The operator id\n" +
				"becomes the one Flink derives from the new UID, the stored UID changes, the name is kept and no\n" +
				"state file is rewritten. A target that another operator has, or two renames to one target, is refused.",
			Flags: append([]cli.Flag{
				&cli.StringSliceFlag{Name: "rename", Usage: "SELECTOR=uid:NEW (repeatable)"},
				&cli.StringSliceFlag{Name: "operator", Usage: "uid:OLD or hash:HEX, paired with the --to at the same position (repeatable)"},
				&cli.StringSliceFlag{Name: "to", Usage: "uid:NEW (repeatable)"},
			}, migrateFlags()...),
			Action: runMigrateUID,
		}
	})
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "rescale",
			Usage:     "write a copy of a savepoint with keyed operators moved to a new max parallelism",
			ArgsUsage: "SRC DST",
			Description: "Every key's key group is recomputed from its Java hashCode (keys: primitives, String, Tuple,\n" +
				"Row, RowData; other key types are refused before anything is written), prefixes rewritten and\n" +
				"entries and timers regrouped into one file per subtask. Without --operator every keyed operator\n" +
				"is rescaled. --parallelism defaults to the old one, capped at the new max.",
			Flags: append([]cli.Flag{
				&cli.IntFlag{Name: "max-parallelism", Usage: "the new max parallelism (1..32768)", Required: true},
				&cli.IntFlag{Name: "parallelism", Usage: "the new parallelism (default: the old one, at most the new max)"},
				&cli.StringSliceFlag{Name: "operator", Usage: "uid:NAME or hash:HEX (repeatable; default: every keyed operator)"},
			}, migrateFlags()...),
			Action: runMigrateRescale,
		}
	})
}

func init() {
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "convert",
			Usage:     "write a canonical copy of a native RocksDB savepoint",
			ArgsUsage: "SRC DST",
			Description: "Keyed state held as RocksDB files (a native savepoint, incremental or not, Flink 1.20 or 2.x)\n" +
				"is read in pure Go, merged, and written as canonical keyed state, one file per subtask; operator\n" +
				"state and canonical operators are carried over unchanged. Flink restores the result into the\n" +
				"hashmap or the RocksDB backend. A source without native keyed state is refused.",
			Flags:  migrateFlags(),
			Action: runMigrateConvert,
		}
	})
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "run",
			Usage:     "apply a YAML migration script (rename-uid, rescale, retype, rename-state, drop-state, drop-operator steps)",
			ArgsUsage: "SCRIPT SRC DST",
			Description: "Every step is validated against SRC before anything is written; the format, with an\n" +
				"example of every step: 'statecraft help scripts'.",
			Flags:  migrateFlags(),
			Action: runMigrateScript,
		}
	})
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "retype",
			Usage:     "change the value type of a keyed value, list or map state, or a map's key type (widening always; narrowing and String to number when every value converts), or add and drop fields of Row and POJO values",
			ArgsUsage: "SRC DST",
			Description: "Type conversion: --to, --key-to, --field. Field changes (a separate step): the value, list\n" +
				"element or map value must be a Row (fields f0, f1, ... by position) or a POJO (fields by name).\n" +
				"--drop-field names old fields; --add-field NAME:TYPE=DEFAULT (TYPE Integer, Long, Short, Byte,\n" +
				"Float, Double, Boolean or String; DEFAULT a literal, null, or a double-quoted string) adds one:\n" +
				"a Row field named fN is inserted at position N after the drops (f<arity> appends); POJO fields\n" +
				"are then ordered by name as Flink orders them. --class renames a POJO's class. A null default\n" +
				"for a primitive POJO field (int, long) makes Flink fail reading it: give a value.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "operator", Usage: "uid:NAME or hash:HEX", Required: true},
				&cli.StringFlag{Name: "state", Usage: "the keyed state's name", Required: true},
				&cli.StringFlag{Name: "to", Usage: "new value type: Integer, Long, Short, Byte, Float, Double or Boolean"},
				&cli.StringFlag{Name: "key-to", Usage: "new map key type (map states), same types"},
				&cli.StringFlag{Name: "field", Usage: "f0, f1, ...: apply --to to one field of a tuple value"},
				&cli.StringSliceFlag{Name: "drop-field", Usage: "`NAME` of a Row (f0, f1, ...) or POJO field to drop (repeatable, or a comma list)"},
				&cli.GenericFlag{Name: "add-field", Value: &listFlag{}, Usage: "`NAME:TYPE=DEFAULT`: a Row or POJO field to add (repeatable)"},
				&cli.StringFlag{Name: "class", Usage: "new class `NAME` of a POJO value"},
			}, migrateFlags()...),
			Action: func(c *cli.Context) error {
				var adds []migrate.AddField
				for _, s := range c.Generic("add-field").(*listFlag).vals {
					a, err := migrate.ParseAddField(s)
					if err != nil {
						return withCode(exitFailure, fmt.Errorf("migrate retype: --add-field: %w", err))
					}
					adds = append(adds, a)
				}
				return runOneStep(c, "migrate retype", func(op migrate.Selector) migrate.Step {
					return &migrate.Retype{Operator: op, State: c.String("state"), To: c.String("to"), KeyTo: c.String("key-to"), Field: c.String("field"),
						DropFields: c.StringSlice("drop-field"), AddFields: adds, Class: c.String("class")}
				})
			},
		}
	})
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "rename-state",
			Usage:     "rename a keyed state",
			ArgsUsage: "SRC DST",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "operator", Usage: "uid:NAME or hash:HEX", Required: true},
				&cli.StringFlag{Name: "state", Usage: "the keyed state's name", Required: true},
				&cli.StringFlag{Name: "to", Usage: "the new name", Required: true},
			}, migrateFlags()...),
			Action: func(c *cli.Context) error {
				return runOneStep(c, "migrate rename-state", func(op migrate.Selector) migrate.Step {
					return &migrate.RenameState{Operator: op, From: c.String("state"), To: c.String("to")}
				})
			},
		}
	})
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "drop-state",
			Usage:     "remove a keyed state and its entries",
			ArgsUsage: "SRC DST",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "operator", Usage: "uid:NAME or hash:HEX", Required: true},
				&cli.StringFlag{Name: "state", Usage: "the keyed state's name", Required: true},
			}, migrateFlags()...),
			Action: func(c *cli.Context) error {
				return runOneStep(c, "migrate drop-state", func(op migrate.Selector) migrate.Step {
					return &migrate.DropState{Operator: op, State: c.String("state")}
				})
			},
		}
	})
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "drop-operator",
			Usage:     "remove an operator and all its state",
			ArgsUsage: "SRC DST",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "operator", Usage: "uid:NAME or hash:HEX", Required: true},
			}, migrateFlags()...),
			Action: func(c *cli.Context) error {
				return runOneStep(c, "migrate drop-operator", func(op migrate.Selector) migrate.Step {
					return &migrate.DropOperator{Operator: op}
				})
			},
		}
	})
}

func runOneStep(c *cli.Context, cmd string, mk func(migrate.Selector) migrate.Step) error {
	src, dst, err := migrateArgs(c, cmd)
	if err != nil {
		return err
	}
	op, err := migrate.ParseSelector(c.String("operator"))
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("%s: %w", cmd, err))
	}
	return runMigration(c, src, dst, []migrate.Step{mk(op)})
}

func runMigrateScript(c *cli.Context) error {
	if c.NArg() != 3 {
		return withCode(exitFailure, fmt.Errorf("migrate run: want SCRIPT SRC DST, got %s", english.Count(c.NArg(), "argument")))
	}
	f, err := os.Open(c.Args().Get(0))
	if err != nil {
		return withCode(exitFailure, err)
	}
	steps, err := migrate.ParseScript(f, c.Args().Get(0))
	f.Close()
	if err != nil {
		return withCode(exitFailure, err)
	}
	return runMigration(c, c.Args().Get(1), c.Args().Get(2), steps)
}

func runMigrateConvert(c *cli.Context) error {
	src, dst, err := migrateArgs(c, "migrate convert")
	if err != nil {
		return err
	}
	return runMigration(c, src, dst, []migrate.Step{&migrate.Convert{}})
}

func runMigrateUID(c *cli.Context) error {
	src, dst, err := migrateArgs(c, "migrate uid")
	if err != nil {
		return err
	}
	step := &migrate.RenameUIDs{}
	for _, r := range c.StringSlice("rename") {
		from, to, ok := strings.Cut(r, "=")
		if !ok {
			return withCode(exitFailure, fmt.Errorf("migrate uid: --rename %q: want SELECTOR=uid:NEW", r))
		}
		x, err := parseRename(from, to)
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("migrate uid: --rename %q: %w", r, err))
		}
		step.Renames = append(step.Renames, x)
	}
	ops, tos := c.StringSlice("operator"), c.StringSlice("to")
	if len(ops) != len(tos) {
		return withCode(exitFailure, fmt.Errorf("migrate uid: %d --operator but %d --to; give them in pairs", len(ops), len(tos)))
	}
	for i := range ops {
		x, err := parseRename(ops[i], tos[i])
		if err != nil {
			return withCode(exitFailure, err)
		}
		step.Renames = append(step.Renames, x)
	}
	if len(step.Renames) == 0 {
		return withCode(exitFailure, fmt.Errorf("migrate uid: give at least one --rename SELECTOR=uid:NEW (or --operator/--to)"))
	}
	return runMigration(c, src, dst, []migrate.Step{step})
}

func parseRename(from, to string) (migrate.Rename, error) {
	sel, err := migrate.ParseSelector(from)
	if err != nil {
		return migrate.Rename{}, err
	}
	// uid:NEW or a bare NEW, as scripts take it; a hash names an operator id, which Flink
	// derives from the UID and cannot be set.
	if strings.HasPrefix(to, "hash:") {
		return migrate.Rename{}, fmt.Errorf("new UID %q: an operator id cannot be chosen, only a UID (uid:NEW or NEW)", to)
	}
	newUID := strings.TrimPrefix(to, "uid:")
	if newUID == "" {
		return migrate.Rename{}, fmt.Errorf("new UID %q: want uid:NEW or NEW", to)
	}
	return migrate.Rename{From: sel, To: newUID}, nil
}

func runMigrateRescale(c *cli.Context) error {
	src, dst, err := migrateArgs(c, "migrate rescale")
	if err != nil {
		return err
	}
	step := &migrate.Rescale{MaxParallelism: int32(c.Int("max-parallelism")), Parallelism: int32(c.Int("parallelism"))}
	if c.Int("max-parallelism") < 1 || c.Int("max-parallelism") > 32768 {
		return withCode(exitFailure, fmt.Errorf("--max-parallelism %d: want 1..32768", c.Int("max-parallelism")))
	}
	if c.Int("parallelism") < 0 || c.Int("parallelism") > c.Int("max-parallelism") || (c.IsSet("parallelism") && c.Int("parallelism") == 0) {
		return withCode(exitFailure, fmt.Errorf("--parallelism %d: want 1..%d (the max parallelism)", c.Int("parallelism"), c.Int("max-parallelism")))
	}
	if step.Operators, err = operatorSelectors(c); err != nil {
		return err
	}
	return runMigration(c, src, dst, []migrate.Step{step})
}

// operatorSelectors parses the repeatable --operator flag of the migrations that default to
// every keyed operator (nil without it).
func operatorSelectors(c *cli.Context) ([]migrate.Selector, error) {
	var out []migrate.Selector
	for _, o := range c.StringSlice("operator") {
		sel, err := migrate.ParseSelector(o)
		if err != nil {
			return nil, withCode(exitFailure, err)
		}
		out = append(out, sel)
	}
	return out, nil
}

func migrateArgs(c *cli.Context, cmd string) (string, string, error) {
	if c.NArg() != 2 {
		return "", "", withCode(exitFailure, fmt.Errorf("%s: want SRC DST (the savepoint and a new output directory), got %s", cmd, english.Count(c.NArg(), "argument")))
	}
	return c.Args().Get(0), c.Args().Get(1), nil
}

// runMigration runs steps and prints the outcome; the report goes to --report.
func runMigration(c *cli.Context, src, dst string, steps []migrate.Step) error {
	link, err := migrate.ParseLinkMode(c.String("link"))
	if err != nil {
		return withCode(exitFailure, err)
	}
	if src, err = snapshotPath(c, src); err != nil {
		return err
	}
	report := c.String("report")
	if report != "" {
		// Checked before any work: a report that cannot be written must not turn a finished
		// migration into a failure (DST exists then, and a rerun is refused).
		if err := checkWritable(report); err != nil {
			return withCode(exitFailure, fmt.Errorf("--report: %w", err))
		}
	}
	spOpt, err := savepointOptions(c)
	if err != nil {
		return err
	}
	opt := migrate.Options{PathMap: spOpt.PathMap, Link: link, DryRun: c.Bool("dry-run"), NoVerify: c.Bool("no-verify"), CleanPartial: c.Bool("clean-partial"), Notes: c.App.ErrWriter}
	opt.Progress = progressOut(c)
	// A soft limit makes the collector work harder before the heap outgrows what a rescale's
	// spill budget intends (the target is < 256 MiB RSS whatever the savepoint's size).
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(160 << 20))
	rep, err := migrate.Run(src, dst, steps, opt)
	var reportErr error
	if rep != nil && report != "" {
		b, jerr := json.MarshalIndent(rep, "", "  ")
		if jerr == nil {
			jerr = safeio.WriteFile(report, append(b, '\n'), 0o644)
		}
		reportErr = jerr
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	printMigrateReport(tableOut(c), rep, opt.NoVerify)
	if reportErr != nil {
		// The migration succeeded and DST is complete: say so (exit 0), and that the report is missing.
		fmt.Fprintf(c.App.ErrWriter, "statecraft: warning: the migration succeeded, but the report was not written: %v\n", reportErr)
	}
	return nil
}

// checkWritable checks that a file can be created at path: its directory exists and takes a
// new file, and path is not a directory.
func checkWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: directory %s does not exist", path, dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	f, err := os.CreateTemp(dir, safeio.TempPrefix+"probe-*")
	if err != nil {
		return fmt.Errorf("%s: directory %s does not take new files: %w", path, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func printMigrateReport(w io.Writer, rep *migrate.Report, noVerify bool) {
	tx := newTextWriter(w) // the lines above the result table, wrapped to the width it fits
	if rep.DryRun {
		fmt.Fprintf(tx, "dry run: nothing written; %s would become %s\n", rep.Source, rep.Target)
	} else {
		linked := "linked"
		if strings.Contains(rep.Target, "://") {
			linked = "copied server-side" // an object store's counterpart of a hard link
		}
		fmt.Fprintf(tx, "wrote %s (%s written, %d %s, %d copied; %s)\n",
			rep.Target, english.Count(rep.Written, "state file"), rep.Linked, linked, rep.Copied, verification(rep, noVerify))
	}
	for _, st := range rep.Steps {
		fmt.Fprintf(tx, "step: %s\n", st.Step)
		for _, o := range st.Operators {
			if o.UIDHashAfter == "" { // dropped: there is no "after"
				fmt.Fprintf(tx, "  %s: uid hash %s, parallelism %d, max parallelism %d",
					o.Operator, o.UIDHashBefore, o.ParallelismBefore, o.MaxParBefore)
			} else {
				fmt.Fprintf(tx, "  %s: uid hash %s -> %s, parallelism %d -> %d, max parallelism %d -> %d",
					o.Operator, o.UIDHashBefore, o.UIDHashAfter, o.ParallelismBefore, o.ParallelismAfter, o.MaxParBefore, o.MaxParAfter)
			}
			if o.UIDAfter != "" {
				fmt.Fprintf(tx, ", uid %q", o.UIDAfter)
			}
			if len(o.EntriesPerSubtask) > 0 {
				fmt.Fprintf(tx, ", entries per subtask %v", o.EntriesPerSubtask)
			}
			if o.Note != "" {
				fmt.Fprintf(tx, " (%s)", o.Note)
			}
			fmt.Fprintln(tx)
			for _, r := range o.Offsets {
				to := r.After
				if r.NewTopic != "" {
					to = r.NewTopic + ":" + strconv.Itoa(int(r.Partition)) + " " + to
				}
				fmt.Fprintf(tx, "    subtask %d  %s:%d  %s -> %s\n", r.Subtask, r.Topic, r.Partition, r.Before, to)
			}
			for _, name := range sortedNames(o.EntriesBefore) {
				fmt.Fprintf(tx, "    %-40s %d -> %s", name, o.EntriesBefore[name], english.Count(o.EntriesAfter[name], "entry"))
				if b, ok := o.BytesRemoved[name]; ok {
					fmt.Fprintf(tx, " (%d bytes removed)", b)
				}
				fmt.Fprintln(tx)
			}
			for _, name := range sortedNames(o.Set) {
				if o.Set[name]+o.Added[name]+o.Deleted[name] == 0 {
					continue
				}
				fmt.Fprintf(tx, "    %-40s %d set, %d added, %d deleted\n", name, o.Set[name], o.Added[name], o.Deleted[name])
			}
		}
	}
	tw := newTable(w, fittable.Column{Header: "operator-name", Short: "name", Elide: true}, fittable.Column{Header: "operator-uid", Short: "uid", Elide: true},
		fittable.Column{Header: "operator-uid-hash", Short: "uid hash", Drop: 1}, fittable.Column{Header: "parallelism", Short: "par"},
		fittable.Column{Header: "max-parallelism", Short: "max par"}, fittable.Column{Header: "subtask-states", Short: "subtasks", Drop: 2})
	fmt.Fprintln(tw, "result:\toperator-name\toperator-uid\toperator-uid-hash\tparallelism\tmax-parallelism\tsubtask-states")
	for _, r := range rep.Result {
		fmt.Fprintf(tw, "\t%s\t%s\t%s\t%d\t%d\t%d\n", deref(r.OperatorName), deref(r.OperatorUID), r.OperatorUIDHash, r.Parallelism, r.MaxParallelism, r.SubtaskStateCount)
	}
	tw.Flush()
}

// verification says what the run verified: the output re-read and compared with the source,
// or why nothing was.
func verification(rep *migrate.Report, noVerify bool) string {
	switch {
	case noVerify:
		return "not verified: --no-verify"
	case len(rep.Verify) == 0:
		return "nothing to verify: the output holds no state"
	}
	return "verified: " + english.Count(len(rep.Verify), "check") + " against the source passed"
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func sortedNames(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
