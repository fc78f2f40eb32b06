package main

import (
	"sort"

	"github.com/urfave/cli/v2"
)

// registry collects commands from the files that define them, so that each command lives in its
// own file: a file calls register([]string{"plan", "ttl"}, makeListCommand) in an init function.
var registry = &commandRegistry{}

// groupUsage describes the command groups (the inner nodes of the tree).
var groupUsage = map[string]string{
	"plan":       "read, edit, validate, diff and draw Flink compiled plans (COMPILE PLAN output)",
	"plan ttl":   "list and set per-operator state TTL in a compiled plan",
	"savepoint":  "look inside Flink savepoints and checkpoints",
	"migrate":    "write a migrated copy of a savepoint (UIDs, max parallelism, state types)",
	"checkpoint": "look after a job's checkpoint directory (chk-N/, shared/, taskowned/)",
}

type registration struct {
	path []string
	make func() *cli.Command
}

type commandRegistry struct{ entries []registration }

func register(path []string, make func() *cli.Command) {
	registry.entries = append(registry.entries, registration{path: path, make: make})
}

// tree builds fresh command values (urfave/cli keeps parse state in them) every time it is called.
func (r *commandRegistry) tree() []*cli.Command {
	root := &cli.Command{}
	for _, e := range r.entries {
		parent := root
		for i, name := range e.path {
			child := findCommand(parent.Subcommands, name)
			if child == nil {
				key := ""
				for _, n := range e.path[:i+1] {
					if key != "" {
						key += " "
					}
					key += n
				}
				child = &cli.Command{Name: name, Usage: groupUsage[key]}
				parent.Subcommands = append(parent.Subcommands, child)
			}
			parent = child
		}
		parent.Subcommands = append(parent.Subcommands, e.make())
	}
	sortTree(root.Subcommands)
	return root.Subcommands
}

func sortTree(cmds []*cli.Command) {
	sort.SliceStable(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	for _, c := range cmds {
		sortTree(c.Subcommands)
	}
}
