package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/safeio"
)

// Man pages are generated from the command definitions, one page per command as git does
// (statecraft-plan-ttl-set.1), so they say exactly what --help says.

func init() {
	register(nil, func() *cli.Command {
		return &cli.Command{
			Name:      "man",
			Usage:     "write man pages for every command into DIR (statecraft.1, statecraft-plan-ttl-set.1, ...)",
			ArgsUsage: "DIR",
			Description: "DIR must exist. Read a page with 'man -l DIR/statecraft.1', or install the pages with\n" +
				"'cp DIR/*.1 /usr/local/share/man/man1/'. The help topics are pages too (statecraft-scripts.1, ...).",
			Action: func(c *cli.Context) error {
				if c.NArg() != 1 {
					return withCode(exitFailure, fmt.Errorf("man: want one DIR, got %d arguments", c.NArg()))
				}
				dir := c.Args().First()
				if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
					return withCode(exitFailure, fmt.Errorf("man: %s: want an existing directory", dir))
				}
				pages, err := manPages()
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("man: %w", err))
				}
				for _, p := range pages {
					if err := safeio.WriteFile(filepath.Join(dir, p.name), p.text, 0o644); err != nil {
						return withCode(exitFailure, fmt.Errorf("man: %w", err))
					}
				}
				fmt.Fprintf(c.App.Writer, "wrote %d man pages to %s\n", len(pages), dir)
				return nil
			},
		}
	})
}

type manPage struct {
	name string
	text []byte
}

// manPages renders the page of the program, of every visible command and of every help topic.
func manPages() ([]manPage, error) {
	app := newApp(nil, nil)
	var pages []manPage
	top := &cli.Command{Name: "statecraft", Usage: app.Usage, Description: app.Description, Subcommands: app.Commands}
	var walk func(path []string, c *cli.Command)
	walk = func(path []string, c *cli.Command) {
		pages = append(pages, manPage{strings.Join(path, "-") + ".1", commandPage(path, c)})
		for _, s := range c.Subcommands {
			if !s.Hidden {
				walk(append(append([]string{}, path...), s.Name), s)
			}
		}
	}
	walk([]string{"statecraft"}, top)
	for _, t := range helpTopics {
		var b bytes.Buffer
		if err := t.write(&b); err != nil {
			return nil, fmt.Errorf("topic %s: %w", t.name, err)
		}
		pages = append(pages, manPage{"statecraft-" + t.name + ".1", topicPage(t, b.String())})
	}
	return pages, nil
}

func commandPage(path []string, c *cli.Command) []byte {
	var b bytes.Buffer
	title := strings.Join(path, "-")
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"statecraft\" \"statecraft manual\"\n", strings.ToUpper(title))
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffText(title), roffText(c.Usage))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n.B %s\n", roffText(strings.Join(path, " ")))
	switch {
	case len(c.Subcommands) > 0:
		b.WriteString("COMMAND [OPTIONS] [ARGS]\n")
	case c.ArgsUsage != "":
		fmt.Fprintf(&b, "[OPTIONS] %s\n", roffText(c.ArgsUsage))
	default:
		b.WriteString("[OPTIONS]\n")
	}
	if c.Description != "" {
		fmt.Fprintf(&b, ".SH DESCRIPTION\n%s", roffBlock(c.Description))
	}
	if len(c.Subcommands) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range c.Subcommands {
			if s.Hidden {
				continue
			}
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\n", roffText(s.Name), roffText(s.Usage))
		}
	}
	if len(c.Flags) > 0 {
		b.WriteString(".SH OPTIONS\n")
		for _, f := range c.Flags {
			var names []string
			for _, n := range f.Names() {
				dash := "\\-\\-"
				if len(n) == 1 {
					dash = "\\-"
				}
				names = append(names, "\\fB"+dash+roffText(n)+"\\fR")
			}
			arg := ""
			if takesValue(f) {
				arg = " \\fIvalue\\fR"
			}
			fmt.Fprintf(&b, ".TP\n%s%s\n%s\n", strings.Join(names, ", "), arg, roffText(flagUsage(f)))
		}
	}
	b.WriteString(".SH SEE ALSO\n")
	if len(path) > 1 {
		fmt.Fprintf(&b, ".BR %s (1)\n", roffText(strings.Join(path[:len(path)-1], "-")))
	} else {
		b.WriteString("statecraft help topics; the README of github.com/statecraft/statecraft\n")
	}
	return b.Bytes()
}

func topicPage(t helpTopic, text string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, ".TH STATECRAFT-%s 1 \"\" \"statecraft\" \"statecraft manual\"\n", strings.ToUpper(t.name))
	fmt.Fprintf(&b, ".SH NAME\nstatecraft-%s \\- %s\n", roffText(t.name), roffText(t.usage))
	fmt.Fprintf(&b, ".SH DESCRIPTION\n.nf\n%s.fi\n.SH SEE ALSO\n.BR statecraft (1)\n", roffLines(text))
	return b.Bytes()
}

// roffText escapes text for one roff line: backslashes and a leading dot or quote, which roff
// would take for a request.
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}

// roffLines escapes every line of preformatted text.
func roffLines(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		b.WriteString(roffText(l))
		b.WriteByte('\n')
	}
	return b.String()
}

// roffBlock keeps the line breaks of a command description (its lines are laid out by hand).
func roffBlock(s string) string { return ".nf\n" + roffLines(s) + ".fi\n" }
