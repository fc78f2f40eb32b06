package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/sergi/go-diff/diffmatchpatch"
	"github.com/statecraft/statecraft/internal/safeio"
	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/ttl"
	"github.com/urfave/cli/v2"
)

// listFlag collects every value of a repeatable flag verbatim. urfave/cli's StringSliceFlag
// would split values at commas, and "PT1,5S" is a valid Flink duration.
type listFlag struct{ vals []string }

func (l *listFlag) Set(v string) error { l.vals = append(l.vals, v); return nil }
func (l *listFlag) String() string     { return strings.Join(l.vals, " ") }

// ttlSetRequest is what the flags of `plan ttl set` ask for, as an ordered list of changes.
type ttlSetRequest struct {
	sel []plan.Selector
	ttl []ttl.TTL
}

func parseSetFlags(c *cli.Context, nodes, types, states, sets *listFlag) (ttlSetRequest, error) {
	var req ttlSetRequest
	var flagSels []plan.Selector
	for _, v := range nodes.vals {
		s, err := plan.ParseNodeSelector(v, "--node "+v)
		if err != nil {
			return req, fmt.Errorf("--node %s", err)
		}
		flagSels = append(flagSels, s)
	}
	for _, v := range types.vals {
		s, err := plan.ParseSelector("type:" + v)
		if err != nil {
			return req, err
		}
		s.Text = "--type " + v
		flagSels = append(flagSels, s)
	}
	for _, v := range states.vals {
		s, err := plan.ParseSelector("state:" + v)
		if err != nil {
			return req, err
		}
		s.Text = "--state " + v
		flagSels = append(flagSels, s)
	}
	if c.Bool("all") {
		flagSels = append(flagSels, plan.Selector{Text: "--all", All: true, StateIdx: -1})
	}
	ttlText := c.String("ttl")
	switch {
	case len(flagSels) > 0 && ttlText == "":
		return req, fmt.Errorf("selectors (--node, --type, --state, --all) need --ttl DURATION")
	case len(flagSels) == 0 && ttlText != "":
		return req, fmt.Errorf("--ttl %s: say which states: --all, --node ID[:STATE], --type TYPE or --state NAME", ttlText)
	}
	if ttlText != "" {
		v, err := ttl.ParseInput(ttlText)
		if err != nil {
			return req, fmt.Errorf("--ttl: %w", err)
		}
		for _, s := range flagSels {
			req.sel = append(req.sel, s)
			req.ttl = append(req.ttl, v)
		}
	}
	for _, v := range sets.vals {
		i := strings.LastIndexByte(v, '=')
		if i < 0 {
			return req, fmt.Errorf("--set %q: want SELECTOR=DURATION, e.g. 5:leftState=1d, type:join=12h, state:rankState=2h, all=1h", v)
		}
		s, err := plan.ParseSelector(v[:i])
		if err != nil {
			return req, fmt.Errorf("--set %q: %w", v, err)
		}
		s.Text = v[:i]
		d, err := ttl.ParseInput(v[i+1:])
		if err != nil {
			return req, fmt.Errorf("--set %q: %w", v, err)
		}
		req.sel = append(req.sel, s)
		req.ttl = append(req.ttl, d)
	}
	if len(req.sel) == 0 {
		return req, fmt.Errorf("nothing to set: give --all/--node/--type/--state with --ttl, or --set SELECTOR=DURATION")
	}
	return req, nil
}

// unifiedDiff renders a line diff of a and b with 3 lines of context, like diff -u.
func unifiedDiff(name string, a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, lines := dmp.DiffLinesToRunes(a, b)
	diffs := dmp.DiffCharsToLines(dmp.DiffMainRunes(ca, cb, false), lines)
	type line struct {
		op   diffmatchpatch.Operation
		text string
	}
	var ls []line
	for _, d := range diffs {
		parts := strings.SplitAfter(d.Text, "\n")
		for _, p := range parts {
			if p != "" {
				ls = append(ls, line{d.Type, p})
			}
		}
	}
	const ctx = 3
	var out strings.Builder
	fmt.Fprintf(&out, "--- a/%s\n+++ b/%s\n", name, name)
	aLine, bLine := 1, 1
	for i := 0; i < len(ls); {
		if ls[i].op == diffmatchpatch.DiffEqual {
			aLine++
			bLine++
			i++
			continue
		}
		// A hunk: back up ctx lines, then extend while changes are within 2*ctx of each other.
		start := i
		for k := 0; k < ctx && start > 0 && ls[start-1].op == diffmatchpatch.DiffEqual; k++ {
			start--
		}
		hA, hB := aLine-(i-start), bLine-(i-start)
		end := i
		for {
			for end < len(ls) && ls[end].op != diffmatchpatch.DiffEqual {
				end++
			}
			eq := 0
			for end+eq < len(ls) && ls[end+eq].op == diffmatchpatch.DiffEqual {
				eq++
			}
			if end+eq < len(ls) && eq <= 2*ctx {
				end += eq
				continue
			}
			end += min(eq, ctx)
			break
		}
		var body strings.Builder
		na, nb := 0, 0
		for _, l := range ls[start:end] {
			text := l.text
			if !strings.HasSuffix(text, "\n") {
				text += "\n\\ No newline at end of file\n"
			}
			switch l.op {
			case diffmatchpatch.DiffEqual:
				body.WriteString(" " + text)
				na++
				nb++
			case diffmatchpatch.DiffDelete:
				body.WriteString("-" + text)
				na++
			case diffmatchpatch.DiffInsert:
				body.WriteString("+" + text)
				nb++
			}
		}
		fmt.Fprintf(&out, "@@ -%d,%d +%d,%d @@\n%s", hA, na, hB, nb, body.String())
		for _, l := range ls[i:end] {
			if l.op != diffmatchpatch.DiffInsert {
				aLine++
			}
			if l.op != diffmatchpatch.DiffDelete {
				bLine++
			}
		}
		i = end
	}
	return out.String()
}

func init() {
	register([]string{"plan", "ttl"}, func() *cli.Command {
		nodes, types, states, sets := &listFlag{}, &listFlag{}, &listFlag{}, &listFlag{}
		return &cli.Command{
			Name:      "set",
			Usage:     "set per-operator state TTLs in a compiled plan, changing no other byte",
			ArgsUsage: "PLAN  (a compiled plan JSON file, or - for stdin)",
			Description: "Select states with --all, --node ID, --node ID:NAME, --node ID:INDEX, --type TYPE\n" +
				"(stream-exec-join, join, stream-exec-join_1) or --state NAME, and give --ttl DURATION; or give\n" +
				"--set SELECTOR=DURATION (repeatable; SELECTOR is all, 5, 5:leftState, 5:0, type:join,\n" +
				"state:leftState). Selector flags apply first, then each --set in order; the last change to a\n" +
				"state wins. DURATION: Flink text (\"1 h\", \"3600000 ms\", \"PT1H\"), Go style (90m, 1h30m, 2d)\n" +
				"or never/0. Values are written as Flink writes them (\"1 h\", \"90 min\", \"0 ms\").\n" +
				"The plan is rewritten in place atomically (mode kept) unless -o FILE or -o - (stdout);\n" +
				"a plan read from stdin goes to stdout. --dry-run prints a unified diff and writes nothing.\n" +
				"A result with validation errors is not written unless --force; findings are shown either way.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "all", Usage: "every state entry"},
				&cli.GenericFlag{Name: "node", Value: nodes, Usage: "node `ID`, ID:NAME or ID:INDEX (repeatable)"},
				&cli.GenericFlag{Name: "type", Value: types, Usage: "exec node `TYPE`, e.g. stream-exec-join or join (repeatable)"},
				&cli.GenericFlag{Name: "state", Value: states, Usage: "state `NAME` in any node, e.g. leftState (repeatable)"},
				&cli.StringFlag{Name: "ttl", Usage: "the `DURATION` for the selector flags"},
				&cli.GenericFlag{Name: "set", Value: sets, Usage: "`SELECTOR=DURATION` (repeatable)"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (- for stdout) instead of in place"},
				&cli.BoolFlag{Name: "dry-run", Usage: "print a unified diff of the change; write nothing"},
				&cli.BoolFlag{Name: "force", Usage: "write even when the result has validation errors"},
			},
			Action: func(c *cli.Context) error {
				req, err := parseSetFlags(c, nodes, types, states, sets)
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("plan ttl set: %w", err))
				}
				p, err := readPlan(c, "plan ttl set")
				if err != nil {
					return err
				}
				var changes []plan.Change
				for i, sel := range req.sel {
					picked, err := p.Select(sel)
					if err != nil {
						return withCode(exitFailure, fmt.Errorf("%s: %w", p.File, err))
					}
					for _, s := range picked {
						if !s.HasTTLSpan() {
							return withCode(exitFailure, fmt.Errorf("%s: %s: the state entry has no \"ttl\" string to set", p.File, s.Path()))
						}
						changes = append(changes, plan.Change{Entry: s, TTL: req.ttl[i]})
					}
				}
				out, edits, err := p.Apply(changes)
				if err != nil {
					return withCode(exitFailure, err)
				}
				errw := c.App.ErrWriter
				printEdits(errw, p.File, edits)

				// Validate the result: that is what Flink will load.
				report := p.Edited(out, edits).Validate()
				printFindings(errw, p.File, report.Findings)
				nerr := report.Count(plan.Error)

				if c.Bool("dry-run") {
					if bytes.Equal(out, p.Raw) {
						// A diff header over no hunks reads like a broken diff.
						fmt.Fprintf(errw, "%s: no TTL would change; nothing would be written\n", p.File)
					} else {
						fmt.Fprint(c.App.Writer, unifiedDiff(diffName(p.File), string(p.Raw), string(out)))
					}
					if nerr > 0 && !c.Bool("force") {
						return withCode(exitFindings, fmt.Errorf("%s: the result has %d validation %s: it would not be written without --force", p.File, nerr, plural(nerr, "error", "errors")))
					}
					return nil
				}
				if nerr > 0 && !c.Bool("force") {
					return withCode(exitFindings, fmt.Errorf("%s: the result has %d validation %s; nothing written (use --force to write anyway)", p.File, nerr, plural(nerr, "error", "errors")))
				}
				dest := c.String("output")
				if dest == "" {
					dest = c.Args().First()
				}
				if dest == "-" {
					if _, err := c.App.Writer.Write(out); err != nil {
						return withCode(exitFailure, err)
					}
					return nil
				}
				if dest == c.Args().First() && bytes.Equal(out, p.Raw) {
					fmt.Fprintf(errw, "%s: no TTL changed; file left as it was\n", dest)
					return nil
				}
				if err := safeio.WriteFile(dest, out, 0o644); err != nil {
					return withCode(exitFailure, err)
				}
				fmt.Fprintf(errw, "wrote %s\n", dest)
				return nil
			},
		}
	})
}

func diffName(file string) string {
	if file == "<stdin>" {
		return "stdin"
	}
	return strings.TrimPrefix(file, "/")
}

func printEdits(w io.Writer, file string, edits []plan.Edit) {
	changed := 0
	for _, e := range edits {
		if e.Changed {
			changed++
		}
	}
	fmt.Fprintf(w, "%s: %d %s selected, %d changed\n", file, len(edits), plural(len(edits), "state", "states"), changed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	const maxRows = 50 // a long list helps nobody; 'plan ttl list' shows everything
	for i, e := range edits {
		if i == maxRows {
			fmt.Fprintf(tw, "  ... %d more\n", len(edits)-maxRows)
			break
		}
		mark := "unchanged"
		if e.Changed {
			mark = "->"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%q\t%s\t%q\n", e.Entry.Label(), e.Entry.Node.Type, e.Old, mark, e.New)
	}
	tw.Flush()
}
