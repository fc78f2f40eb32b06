package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// helpTopic is a page of `statecraft help TOPIC` that is not a command: the reference a user
// holding only the binary needs (go doc is not at hand for them).
type helpTopic struct {
	name  string
	usage string
	write func(w io.Writer) error
}

// helpTopics are registered by the files that own them (help_scripts.go, help_json.go, ...).
var helpTopics []helpTopic

func registerTopic(t helpTopic) { helpTopics = append(helpTopics, t) }

func findTopic(name string) *helpTopic {
	for i := range helpTopics {
		if helpTopics[i].name == name {
			return &helpTopics[i]
		}
	}
	return nil
}

func topicNames() []string {
	var n []string
	for _, t := range helpTopics {
		n = append(n, t.name)
	}
	sort.Strings(n)
	return n
}

func init() {
	register(nil, func() *cli.Command {
		return &cli.Command{
			Name:      "help",
			Usage:     "show help for a command (statecraft help plan ttl set) or a topic (statecraft help scripts)",
			ArgsUsage: "[COMMAND... | TOPIC]",
			Description: "Without arguments: the list of commands. With a command path: that command's help, as\n" +
				"--help prints it. Topics: run 'statecraft help topics'.",
			Action: runHelp,
		}
	})
	registerTopic(helpTopic{name: "topics", usage: "the help topics", write: func(w io.Writer) error {
		tw := newTable(w)
		for _, n := range topicNames() {
			fmt.Fprintf(tw, "%s\t%s\n", n, findTopic(n).usage)
		}
		return tw.Flush()
	}})
}

// runHelp prints the help of the command path given, or a topic. Command help is whatever
// `PATH --help` prints, so the two can never disagree.
func runHelp(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) == 1 {
		if t := findTopic(args[0]); t != nil {
			if err := t.write(c.App.Writer); err != nil {
				return withCode(exitFailure, fmt.Errorf("help %s: %w", args[0], err))
			}
			return nil
		}
	}
	if len(args) > 0 {
		if err := checkCommandPath(commands(), args, true); err != nil {
			return withCode(exitFailure, err)
		}
	}
	app := newApp(c.App.Writer, c.App.ErrWriter)
	if err := app.Run(append(append([]string{"statecraft"}, args...), "--help")); err != nil {
		return withCode(exitFailure, err)
	}
	return nil
}

// checkCommandPath refuses a word that names no command where a command is expected, with the
// closest names as a suggestion: urfave/cli would say "No help topic for 'X'" and exit 1. Words
// after a leaf command are its arguments; a flag at the top level is left to urfave/cli. With
// forHelp, the path may end in a topic instead.
func checkCommandPath(cmds []*cli.Command, args []string, forHelp bool) error {
	var path []string
	for i, a := range args {
		if strings.HasPrefix(a, "-") || len(cmds) == 0 {
			return nil
		}
		if a == "help" || a == "h" {
			if i > 0 {
				return nil // urfave/cli's help subcommand of a group
			}
		}
		c := findCommand(cmds, a)
		if c == nil {
			if forHelp && i == 0 && findTopic(a) != nil {
				return nil
			}
			return unknownCommand(path, a, cmds, forHelp && i == 0)
		}
		path = append(path, a)
		cmds = c.Subcommands
	}
	return nil
}

func unknownCommand(path []string, word string, cmds []*cli.Command, topicsToo bool) error {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Name)
		}
	}
	if topicsToo {
		names = append(names, topicNames()...)
	}
	where := "statecraft"
	if len(path) > 0 {
		where += " " + strings.Join(path, " ")
	}
	what := "command"
	if topicsToo {
		what = "command or help topic"
	}
	msg := fmt.Sprintf("unknown %s %q for %s", what, word, where)
	if s := closest(word, names); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %s?", quoteJoin(s, " or "))
	}
	return fmt.Errorf("%s (choose from %s)", msg, strings.Join(names, ", "))
}

func quoteJoin(s []string, sep string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return strings.Join(q, sep)
}

// closest returns the names nearest to word: those it is a prefix of, or else those within an
// edit distance of a third of its length (at least 1), best first.
func closest(word string, names []string) []string {
	var pre []string
	for _, n := range names {
		if len(word) >= 2 && strings.HasPrefix(n, word) {
			pre = append(pre, n)
		}
	}
	if len(pre) > 0 {
		return pre
	}
	limit := max(1, len(word)/3)
	best := limit + 1
	var out []string
	for _, n := range names {
		d := editDistance(word, n)
		switch {
		case d < best:
			best, out = d, []string{n}
		case d == best:
			out = append(out, n)
		}
	}
	return out
}

// editDistance is the Damerau-Levenshtein distance (optimal string alignment), so that a
// swapped pair of letters ("palp") counts as one typo.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
