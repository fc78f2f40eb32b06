package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// A flag that cannot take effect is an error, never ignored: a user who wrote it expected
// something the command will not do. A flagRule names such flags for one command line.
type flagRule func(c *cli.Context) (flag, reason string)

// without: the flags work only together with flag base.
func without(base string, flags ...string) flagRule {
	return func(c *cli.Context) (string, string) {
		if c.IsSet(base) {
			return "", ""
		}
		for _, f := range flags {
			if c.IsSet(f) {
				return f, "works only with --" + base
			}
		}
		return "", ""
	}
}

// with: the flags have no effect once flag mode is given.
func with(mode string, flags ...string) flagRule {
	return func(c *cli.Context) (string, string) {
		if !c.IsSet(mode) {
			return "", ""
		}
		for _, f := range flags {
			if c.IsSet(f) {
				return f, "has no effect with --" + mode
			}
		}
		return "", ""
	}
}

// ineffectiveFlags returns the usage error of the first rule a command line breaks.
func ineffectiveFlags(c *cli.Context, cmd string, rules ...flagRule) error {
	for _, r := range rules {
		if f, why := r(c); f != "" {
			return withCode(exitFailure, fmt.Errorf("%s: --%s %s (see 'statecraft %s --help')", cmd, f, why, strings.TrimSpace(cmd)))
		}
	}
	return nil
}
