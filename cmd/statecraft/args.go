package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// normalizeArgs lets users put flags anywhere. urfave/cli v2 stops parsing flags at the first
// positional argument and silently treats the rest as arguments, so
// `statecraft plan ttl set plan.json --dry-run` would write the file. normalizeArgs finds the
// command the arguments name, then moves every flag of that command (with its value) ahead of
// the positional arguments. A token after "--" is always positional. A flag-looking token that
// the command does not define is refused here, loudly, instead of being taken as a file name.
func normalizeArgs(app *cli.App, args []string) ([]string, error) {
	var path []string // command names, in order
	cmds := app.Commands
	var leaf *cli.Command
	i := 0
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") {
			break
		}
		c := findCommand(cmds, a)
		if c == nil {
			break
		}
		path = append(path, a)
		leaf = c
		cmds = c.Subcommands
		i++
	}
	if leaf == nil || len(leaf.Subcommands) > 0 {
		// The top level, or a group such as `plan` with no action of its own: urfave/cli's help
		// handling applies, but an unknown flag would get its "flag provided but not defined"
		// and the whole help on stdout. Refuse it here in one line, as a leaf command does.
		if i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "-" && args[i] != "--" {
			name, _, _ := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
			known := name == "help" || name == "h" || (leaf == nil && (name == "version" || name == "v"))
			if !known {
				where := strings.TrimSpace("statecraft " + strings.Join(path, " "))
				return nil, fmt.Errorf("%sunknown flag %q (see '%s --help')", prefix(path), args[i], where)
			}
		}
		return args, nil
	}
	if leaf.SkipFlagParsing {
		return args, nil // a command that reads its words as they are (__complete)
	}
	flags := map[string]bool{}    // name -> takes a value
	single := map[string]string{} // name -> the flag's main name, for flags that take one value
	numeric := map[string]bool{}  // names of integer flags
	for _, f := range leaf.Flags {
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			for _, n := range f.Names() {
				numeric[n] = true
			}
		}
		takesValue := true
		if _, ok := f.(*cli.BoolFlag); ok {
			takesValue = false
		}
		for _, n := range f.Names() {
			flags[n] = takesValue
			if takesValue && !repeatable(f) {
				single[n] = f.Names()[0]
			}
		}
	}
	flags["help"], flags["h"] = false, false
	given := map[string]string{} // main name -> the value given first
	seen := map[string]bool{}    // every name given

	var flagArgs, positional []string
	rest := args[i:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			positional = append(positional, rest[j+1:]...)
			break
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			positional = append(positional, a)
			continue
		}
		name := strings.TrimLeft(a, "-")
		value, hasValue := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, value, hasValue = name[:k], name[k+1:], true
		}
		takesValue, known := flags[name]
		if !known {
			return nil, fmt.Errorf("%s: unknown flag %q (see 'statecraft %s --help')",
				strings.Join(path, " "), a, strings.Join(path, " "))
		}
		seen[name] = true
		if main, ok := single[name]; ok {
			v := value
			if !hasValue && j+1 < len(rest) {
				v = rest[j+1]
			}
			// The last of two values would win silently; a user who repeats a flag such as
			// --operator most likely meant something this command cannot do.
			if first, dup := given[main]; dup {
				return nil, fmt.Errorf("%s: flag --%s given twice (%q, then %q); it takes one value",
					strings.Join(path, " "), main, first, v)
			}
			given[main] = v
		}
		if takesValue && (hasValue || j+1 < len(rest)) && numeric[name] {
			v := value
			if !hasValue {
				v = rest[j+1]
			}
			// urfave/cli would answer "Incorrect Usage" and the whole help on stdout.
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return nil, fmt.Errorf("%s: --%s %q: want a whole number", strings.Join(path, " "), name, v)
			}
		}
		if !takesValue && hasValue {
			if _, err := strconv.ParseBool(value); err != nil {
				return nil, fmt.Errorf("%s: --%s=%s: want true or false (or the flag alone)", strings.Join(path, " "), name, value)
			}
		}
		switch {
		case hasValue:
			flagArgs = append(flagArgs, "--"+name+"="+value)
		case takesValue:
			if j+1 >= len(rest) {
				return nil, fmt.Errorf("%s: flag %s needs a value", strings.Join(path, " "), a)
			}
			flagArgs = append(flagArgs, "--"+name, rest[j+1])
			j++
		default:
			flagArgs = append(flagArgs, "--"+name)
		}
	}
	if !seen["help"] && !seen["h"] {
		// urfave/cli's own message ("Required flag "operator" not set") does not say which
		// command, nor what the flag wants.
		for _, f := range leaf.Flags {
			rf, ok := f.(cli.RequiredFlag)
			if !ok || !rf.IsRequired() || slices.ContainsFunc(f.Names(), func(n string) bool { return seen[n] }) {
				continue
			}
			hint := ""
			if d, ok := f.(cli.DocGenerationFlag); ok && d.GetUsage() != "" {
				hint = ": " + strings.ReplaceAll(d.GetUsage(), "`", "")
			}
			return nil, fmt.Errorf("%s: flag --%s is required%s", strings.Join(path, " "), f.Names()[0], hint)
		}
	}
	out := append([]string{}, path...)
	out = append(out, flagArgs...)
	if len(positional) > 0 {
		out = append(out, "--")
		out = append(out, positional...)
	}
	return out, nil
}

// prefix starts a message about the command at path: "plan ttl: ", or "" at the top level.
func prefix(path []string) string {
	if len(path) == 0 {
		return ""
	}
	return strings.Join(path, " ") + ": "
}

// repeatable reports whether a flag collects every value it is given.
func repeatable(f cli.Flag) bool {
	switch f.(type) {
	case *cli.StringSliceFlag, *cli.IntSliceFlag, *cli.Int64SliceFlag, *cli.Float64SliceFlag, *cli.UintSliceFlag, *cli.Uint64SliceFlag:
		return true
	case *cli.GenericFlag:
		_, list := f.(*cli.GenericFlag).Value.(*listFlag)
		return list
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.Name == name {
			return c
		}
		for _, a := range c.Aliases {
			if a == name {
				return c
			}
		}
	}
	return nil
}
