// Command statecraft is the operational side of Apache Flink state in one binary:
// per-operator state TTL in compiled plans, plan diffs before upgrades, and savepoint
// inspection and migration, with no JVM and no Flink cluster.
//
// Exit codes (stable; scripts may branch on them):
//
//	0  success, nothing to report
//	1  usage, I/O or format error
//	2  validation found errors, `plan diff --fail-on` matched, or a predicted restore failure
//	3  warnings only, with --strict
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"strings"

	"github.com/urfave/cli/v2"
)

// Exit codes, documented in the README.
const (
	exitOK       = 0
	exitFailure  = 1
	exitFindings = 2
	exitWarnings = 3
)

// exitError carries an exit code through urfave/cli's error return. A nil Err
// means the command already printed what it had to say.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err (which may be nil) so that main exits with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "statecraft",
		Usage:   "edit Flink plan TTLs, diff plans, inspect and migrate savepoints: no JVM needed",
		Version: buildVersion(),
		Description: "Flags may be given before or after positional arguments.\n" +
			"Exit codes: 0 ok, 1 usage/I/O/format error, 2 findings (errors, --fail-on, failed restore), 3 warnings with --strict.\n" +
			"More: 'statecraft help COMMAND...', 'statecraft help topics' (scripts, json, ...), 'statecraft completion SHELL'.",
		Writer:                 stdout,
		ErrWriter:              stderr,
		HideHelpCommand:        true,
		UseShortOptionHandling: false,
		Commands:               commands(),
		// The help command is statecraft's own (help.go), which stops urfave/cli adding --help.
		Flags: []cli.Flag{cli.HelpFlag},
		// Errors are printed once, by run; keep urfave/cli from exiting the process.
		ExitErrHandler: func(*cli.Context, error) {},
	}
	return app
}

// commands builds the command tree from what the command files registered.
func commands() []*cli.Command { return registry.tree() }

// run executes statecraft with args (without the program name) and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	app := newApp(stdout, stderr)
	if err := checkCommandPath(app.Commands, args, false); err != nil {
		fmt.Fprintf(stderr, "statecraft: %v\n", err)
		return exitFailure
	}
	norm, err := normalizeArgs(app, args)
	if err != nil {
		fmt.Fprintf(stderr, "statecraft: %v\n", err)
		return exitFailure
	}
	err = app.Run(append([]string{"statecraft"}, norm...))
	stopProgress(app)
	if err == nil {
		return exitOK
	}
	where := commandPrefix(app.Commands, norm)
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintf(stderr, "statecraft: %s\n", prefixed(where, ee.err))
		}
		return ee.code
	}
	fmt.Fprintf(stderr, "statecraft: %s\n", prefixed(where, err))
	return exitFailure
}

// commandPrefix is the command args name ("savepoint dump"), "" at the top level.
func commandPrefix(cmds []*cli.Command, args []string) string {
	var path []string
	for _, a := range args {
		c := findCommand(cmds, a)
		if c == nil {
			break
		}
		path = append(path, a)
		cmds = c.Subcommands
	}
	return strings.Join(path, " ")
}

// prefixed gives every error one style, "COMMAND: what went wrong", whichever level of the
// code wrote it (many come from packages that know nothing of commands).
func prefixed(where string, err error) string {
	msg := err.Error()
	if where == "" || strings.HasPrefix(msg, where+":") {
		return msg
	}
	return where + ": " + msg
}

func main() {
	os.Exit(profiled(func() int { return run(os.Args[1:], os.Stdout, os.Stderr) }))
}

// profiled runs f, writing a CPU profile to $STATECRAFT_CPUPROFILE when it is set, so the owners of
// a slow command can see where its time goes (go tool pprof bin/statecraft FILE).
func profiled(f func() int) int {
	path := os.Getenv("STATECRAFT_CPUPROFILE")
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "statecraft: STATECRAFT_CPUPROFILE: %v\n", err)
		return f()
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		fmt.Fprintf(os.Stderr, "statecraft: STATECRAFT_CPUPROFILE: %v\n", err)
		return f()
	}
	defer pprof.StopCPUProfile()
	return f()
}

// version and commit are stamped by `make dist` (-ldflags "-X main.version=... -X
// main.commit=..."); a plain go build or go install leaves them empty and the build info speaks.
var version, commit string

// buildVersion says which build this is, for bug reports: the module version (a tag when
// installed with go install ...@vX, or what make dist stamped), the commit it was built from and
// whether the tree had local changes, and the Go version.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	if version != "" {
		v = version
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if commit != "" {
		rev, modified = commit, ""
	}
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += " (commit " + rev
		if modified == "true" {
			v += ", modified"
		}
		v += ")"
	}
	return v + ", " + bi.GoVersion
}
