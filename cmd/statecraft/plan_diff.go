package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/plan"
	"github.com/urfave/cli/v2"
)

// readPlanArg reads one plan argument ("-" is stdin); errors name the file.
func readPlanArg(c *cli.Context, name string) (*plan.Plan, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(c.App.Reader)
		name = "<stdin>"
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, withCode(exitFailure, fmt.Errorf("read plan: %w", err))
	}
	p, err := plan.Parse(name, data)
	if err != nil {
		return nil, withCode(exitFailure, err)
	}
	return p, nil
}

// useColor decides whether to colour output: --color always/never, or (auto) only when w is
// a terminal and NO_COLOR is unset or empty (https://no-color.org).
func useColor(mode string, w io.Writer) (bool, error) {
	switch mode {
	case "always":
		return true, nil
	case "never":
		return false, nil
	case "", "auto":
	default:
		return false, fmt.Errorf("--color %q: want auto, always or never", mode)
	}
	if os.Getenv("NO_COLOR") != "" {
		return false, nil
	}
	f, ok := w.(*os.File)
	if !ok {
		return false, nil
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0, nil
}

// palette holds ANSI colour codes, or empty strings without colour.
type palette struct{ add, del, mod, bold, dim, reset string }

func newPalette(on bool) palette {
	if !on {
		return palette{}
	}
	return palette{add: "\x1b[32m", del: "\x1b[31m", mod: "\x1b[33m", bold: "\x1b[1m", dim: "\x1b[2m", reset: "\x1b[0m"}
}

func (p palette) verdict(v plan.Verdict) string {
	c := p.add
	switch v {
	case plan.Compatible, plan.UIDRemap:
		c = p.mod
	case plan.Incompatible:
		c = p.del
	}
	return p.bold + c + v.String() + p.reset
}

// parseFailOn reads --fail-on: a verdict name, or "any" (anything but identical).
func parseFailOn(s string) (plan.Verdict, bool, error) {
	if s == "" {
		return 0, false, nil
	}
	if strings.EqualFold(s, "any") {
		return plan.TTLOnly, true, nil
	}
	v, err := plan.ParseVerdict(s)
	if err != nil {
		return 0, false, fmt.Errorf("--fail-on: %w (or any)", err)
	}
	return v, true, nil
}

func init() {
	register([]string{"plan"}, func() *cli.Command {
		return &cli.Command{
			Name:      "diff",
			Usage:     "compare two compiled plans: what changed, which stateful operators, will the savepoint map",
			ArgsUsage: "OLD NEW  (compiled plan JSON files; one of them may be - for stdin)",
			Description: "Matches nodes by id, and by structure (exec node type, inputs, description) where ids\n" +
				"were renumbered, then reports per node what changed and a verdict, worst first:\n" +
				"  identical     nothing Flink reads differs\n" +
				"  ttl-only      only state TTL values differ: the savepoint restores\n" +
				"  compatible    only stateless nodes changed\n" +
				"  uid-remap     state layouts match, but operator UIDs (<id>_<transformation>) change:\n" +
				"                the savepoint restores only after renaming its operators\n" +
				"  incompatible  a stateful operator's state layout or key changed, or one was added/removed\n" +
				"--fail-on VERDICT exits 2 when the overall verdict is that one or worse (any: not identical).",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "json", Usage: "print the diff as JSON (schema documented in the README)"},
				&cli.BoolFlag{Name: "text", Usage: "print a unified text diff of the two files instead"},
				&cli.StringFlag{Name: "fail-on", Usage: "exit 2 when the verdict is `VERDICT` or worse: ttl-only, compatible, uid-remap, incompatible, any"},
				&cli.StringFlag{Name: "color", Value: "auto", Usage: "colour: auto (terminal and no NO_COLOR), always, never"},
				&cli.BoolFlag{Name: "all", Usage: "also list unchanged nodes"},
				wideFlag(),
				// --savepoint hands over to plan upgrade (plan_diff_savepoint.go) after the diff.
				&cli.StringFlag{Name: "savepoint", Usage: "savepoint `PATH` taken under OLD: also write the migration script that renames its operators for NEW (as plan upgrade; -o SCRIPT)"},
				&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "with --savepoint: write the migration script to `SCRIPT`"},
				&cli.IntFlag{Name: "max-parallelism", Usage: "with --savepoint: NEW job's pipeline.max-parallelism, when it sets one"},
				&cli.StringFlag{Name: "uid-format", Usage: "with --savepoint: session table.exec.uid.format of NEW"},
				&cli.StringFlag{Name: "uid-generation", Usage: "with --savepoint: session table.exec.uid.generation of NEW"},
				pathMapFlag(),
			},
			Action: func(c *cli.Context) error {
				if c.NArg() != 2 {
					return withCode(exitFailure, fmt.Errorf("plan diff: want two arguments OLD NEW (compiled plan JSON files), got %d", c.NArg()))
				}
				if c.Bool("json") && c.Bool("text") {
					return withCode(exitFailure, fmt.Errorf("plan diff: --json and --text exclude each other"))
				}
				if c.Args().Get(0) == "-" && c.Args().Get(1) == "-" {
					return withCode(exitFailure, fmt.Errorf("plan diff: only one of OLD and NEW can be - (stdin)"))
				}
				if err := ineffectiveFlags(c, "plan diff",
					without("savepoint", "output", "max-parallelism", "uid-format", "uid-generation", "path-map"),
					with("text", "savepoint", "all", "wide"),
					with("json", "all", "color", "wide")); err != nil {
					return err
				}
				failOn, gate, err := parseFailOn(c.String("fail-on"))
				if err != nil {
					return withCode(exitFailure, err)
				}
				color, err := useColor(c.String("color"), c.App.Writer)
				if err != nil {
					return withCode(exitFailure, err)
				}
				oldp, err := readPlanArg(c, c.Args().Get(0))
				if err != nil {
					return err
				}
				newp, err := readPlanArg(c, c.Args().Get(1))
				if err != nil {
					return err
				}
				r := plan.Diff(oldp, newp)
				w := c.App.Writer
				if c.Bool("json") && c.String("savepoint") != "" {
					// One JSON document, so scripts can parse the output: the diff and the upgrade.
					up, sp, blocked, err := upgradeResult(c, oldp, newp)
					if err != nil {
						return err
					}
					sp.Close()
					if err := encodeJSON(w, struct {
						Diff    *plan.DiffReport `json:"diff"`
						Upgrade upgradeJSON      `json:"upgrade"`
					}{r, up}); err != nil {
						return withCode(exitFailure, err)
					}
					if blocked || (gate && r.Verdict >= failOn) {
						return withCode(exitFindings, nil)
					}
					return nil
				}
				switch {
				case c.Bool("json"):
					if err := encodeJSON(w, r); err != nil {
						return withCode(exitFailure, err)
					}
				case c.Bool("text"):
					writeUnified(w, plan.UnifiedDiff(oldp.File, newp.File, oldp.Raw, newp.Raw, 3), newPalette(color))
				default:
					tw := newTextWriter(tableOut(c))
					writeDiff(tw, r, newPalette(color), c.Bool("all"))
					w = tw
				}
				if c.String("savepoint") != "" {
					if err := runUpgrade(c, w, oldp, newp); err != nil {
						return err
					}
				}
				if gate && r.Verdict >= failOn {
					return withCode(exitFindings, nil)
				}
				return nil
			},
		}
	})
}

func writeUnified(w io.Writer, text string, p palette) {
	for _, l := range strings.SplitAfter(text, "\n") {
		if l == "" {
			continue
		}
		c := ""
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			c = p.bold
		case strings.HasPrefix(l, "@@"):
			c = p.dim
		case l[0] == '+':
			c = p.add
		case l[0] == '-':
			c = p.del
		}
		if c != "" {
			fmt.Fprint(w, c+strings.TrimSuffix(l, "\n")+p.reset+"\n")
		} else {
			fmt.Fprint(w, l)
		}
	}
}

// writeDiff prints the report for people, terraform style: the verdict line first, then one
// block per changed node with +/-/~ markers.
func writeDiff(w io.Writer, r *plan.DiffReport, p palette, all bool) {
	fmt.Fprintf(w, "%sVerdict:%s %s — %s\n", p.bold, p.reset, p.verdict(r.Verdict), r.Summary)
	if r.Reason != "" && r.Verdict != plan.Identical {
		fmt.Fprintf(w, "  why: %s\n", r.Reason)
	}
	fmt.Fprintf(w, "  old: %s (flinkVersion %s, %s)\n  new: %s (flinkVersion %s, %s)\n",
		r.Old.File, orDash(r.Old.FlinkVersion), english.Count(r.Old.Nodes, "node"), r.New.File, orDash(r.New.FlinkVersion), english.Count(r.New.Nodes, "node"))
	c := r.Counts
	fmt.Fprintf(w, "  matched %d %s (%d by id, %d by structure), %d added, %d removed\n",
		c.Matched, plural(c.Matched, "node", "nodes"), c.MatchedByID, c.MatchedByStructure, c.Added, c.Removed)
	quietRenum := 0
	for i := range r.Nodes {
		d := &r.Nodes[i]
		if d.Status == "unchanged" && !all {
			continue
		}
		// A stateless node whose only difference is its id keeps no state: count it, do
		// not list it.
		if !all && d.Status == "changed" && !d.Stateful() && len(d.Changes) == 0 && len(d.Edges) == 0 {
			quietRenum++
			continue
		}
		fmt.Fprintln(w)
		writeNode(w, d, p)
	}
	if quietRenum > 0 {
		fmt.Fprintf(w, "\n  (%d stateless %s renumbered and otherwise unchanged; --all lists them)\n", quietRenum, plural(quietRenum, "node", "nodes"))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// descWidth is how many runes of a node's description its line shows: 110, or less when the
// line must fit a narrower terminal (it is cut, not wrapped: it only names the node).
func descWidth(w io.Writer) int {
	if t, ok := w.(*textWriter); ok && t.width > 0 {
		return max(20, min(110, t.width-4))
	}
	return 110
}

func writeNode(w io.Writer, d *plan.NodeDiff, p palette) {
	mark, col := "~", p.mod
	var head string
	switch d.Status {
	case "added":
		mark, col = "+", p.add
		head = fmt.Sprintf("node %d  %s", d.New.ID, d.New.Type)
	case "removed":
		mark, col = "-", p.del
		head = fmt.Sprintf("node %d  %s", d.Old.ID, d.Old.Type)
	case "unchanged":
		mark, col = " ", ""
		head = fmt.Sprintf("node %d  %s", d.New.ID, d.New.Type)
	default:
		if d.Old.ID != d.New.ID {
			head = fmt.Sprintf("node %d -> %d  %s", d.Old.ID, d.New.ID, d.New.Type)
		} else {
			head = fmt.Sprintf("node %d  %s", d.New.ID, d.New.Type)
		}
	}
	tags := []string{stateLabel[d.State]}
	if d.Match != nil && d.Match.By == "structure" {
		tags = append(tags, fmt.Sprintf("matched by structure, confidence %.2f", d.Match.Confidence))
	}
	reset := p.reset
	if col == "" {
		reset = ""
	}
	fmt.Fprintf(w, "%s%s %s%s  [%s: %s]\n", col, mark, head, reset, p.verdict(d.Verdict), strings.Join(tags, ", "))
	desc := d.Old
	if d.New != nil {
		desc = d.New
	}
	fmt.Fprintf(w, "    %s%s%s\n", p.dim, plan.ShortText(desc.Description, descWidth(w)), p.reset)
	if d.Reason != "" && d.Verdict > plan.Identical {
		fmt.Fprintf(w, "    why: %s\n", d.Reason)
	}
	for _, fc := range d.Changes {
		line := ""
		switch fc.Kind {
		case "ttl":
			line = fmt.Sprintf("ttl %s (%q -> %q)", fc.Detail, fc.Old, fc.New)
		case "description":
			line = fmt.Sprintf("description: %s -> %s", plan.ShortText(fc.Old, 70), plan.ShortText(fc.New, 70))
		case "output-type", "input-type":
			what := fc.Detail
			if what == "" {
				what = plan.ShortText(fc.Old, 60) + " -> " + plan.ShortText(fc.New, 60)
			}
			line = fmt.Sprintf("%s %s: %s", fc.Kind, fc.Path, what)
		default:
			line = fmt.Sprintf("%s %s: %s -> %s", fc.Kind, fc.Path, valueText(fc.Old), valueText(fc.New))
			if fc.Detail != "" {
				line += " (" + fc.Detail + ")"
			}
		}
		fmt.Fprintf(w, "    %s~%s %s\n", p.mod, p.reset, line)
	}
	for _, u := range d.UIDRenames {
		if !d.Stateful() {
			break // a stateless operator loses nothing with its UID; JSON still lists it
		}
		note := ""
		if u.State {
			note = " (holds the state)"
		}
		fmt.Fprintf(w, "    %s~%s uid %s -> %s%s\n", p.mod, p.reset, u.Old, u.New, note)
	}
	for _, e := range d.Edges {
		switch e.Change {
		case "added":
			fmt.Fprintf(w, "    %s+%s edge %d -> %d (input %d, %s)\n", p.add, p.reset, e.New.Source, e.New.Target, e.New.Input, strings.ToLower(e.New.Shuffle))
		case "removed":
			fmt.Fprintf(w, "    %s-%s edge %d -> %d (input %d, %s)\n", p.del, p.reset, e.Old.Source, e.Old.Target, e.Old.Input, strings.ToLower(e.Old.Shuffle))
		default:
			fmt.Fprintf(w, "    %s~%s edge %d -> %d (input %d): %s %s -> %s %s\n", p.mod, p.reset, e.New.Source, e.New.Target, e.New.Input,
				e.Old.Shuffle, e.Old.Mode, e.New.Shuffle, e.New.Mode)
		}
	}
}

var stateLabel = map[string]string{"stateless": "stateless", "ttl": "stateful", "stateful-no-ttl": "stateful, no per-operator TTL", "source": "source state"}

func valueText(s string) string {
	if s == "" {
		return "(none)"
	}
	return plan.ShortText(s, 60)
}
