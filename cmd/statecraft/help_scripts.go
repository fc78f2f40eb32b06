package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/statecraft/statecraft/migrate"
)

// `statecraft help scripts`: the migration script format, from the migrate package itself (its
// example is parsed by a test there, the field lists are the parser's own).
func init() {
	registerTopic(helpTopic{name: "scripts", usage: "the YAML migration script format of 'migrate run'", write: writeScriptsHelp})
}

func writeScriptsHelp(w io.Writer) error {
	fmt.Fprint(w, `MIGRATION SCRIPTS (statecraft migrate run SCRIPT SRC DST)

A script is a YAML document with a list of steps, applied in order. Each step is a mapping with
exactly one key, the step's kind, whose value holds its fields. Operators are selected as
uid:NAME or hash:HEX everywhere. Unknown step kinds and unknown or missing fields are errors
that name the line; every step is validated against SRC before anything is written.

STEPS AND FIELDS (* = required)
`)
	tw := newTable(w)
	for _, kind := range migrate.StepKinds() {
		fields, required := migrate.StepFields(kind)
		var fs []string
		for _, f := range fields {
			if required[f] {
				f += "*"
			}
			fs = append(fs, f)
		}
		fmt.Fprintf(tw, "  %s\t%s\n", kind, strings.Join(fs, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprint(w, "\nEXAMPLE (every kind and field)\n\n")
	for _, l := range strings.SplitAfter(migrate.ScriptExample, "\n") {
		if l != "" {
			fmt.Fprint(w, "  "+l)
		}
	}
	_, err := fmt.Fprint(w, "\nThe single-step commands (migrate uid, rescale, retype, rename-state, drop-state,\ndrop-operator) take the same fields as flags; --dry-run and --report work for scripts too.\n")
	return err
}
