package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUsageErrors: what a user who gets a command wrong (or asks for something that is not
// there) is told: one line on stderr naming the command, the flag or argument and what was
// expected, and the exit code. stdout is checked where the command has something to print.
func TestUsageErrors(t *testing.T) {
	sp := filepath.Join("..", "..", "testdata", "savepoints", "keyed-hashmap")
	// PLAN is a copy of a real plan in the test's directory, DST a new directory there: a case
	// that wrongly succeeds must not write into testdata.
	plan := "PLAN"
	up := filepath.Join("..", "..", "testdata", "upgrades", "agg-ttl")
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact, when want is set
		stderr string // the whole of stderr when it starts with "statecraft: " and ends in "\n", else a substring
	}{
		// Single-valued flags given twice: the last would win silently.
		{"dump --operator twice", []string{"savepoint", "dump", sp, "--operator", "uid:source", "--operator=uid:int-keyed"}, 1, "",
			"statecraft: savepoint dump: flag --operator given twice (\"uid:source\", then \"uid:int-keyed\"); it takes one value\n"},
		{"ttl set --ttl twice", []string{"plan", "ttl", "set", plan, "--all", "--ttl", "1h", "--ttl", "2h"}, 1, "",
			"statecraft: plan ttl set: flag --ttl given twice (\"1h\", then \"2h\"); it takes one value\n"},
		{"-o and --output", []string{"plan", "ttl", "set", plan, "--all", "--ttl", "1h", "-o", "DST-a.json", "--output", "DST-b.json"}, 1, "",
			"out-a.json\", then \""},
		{"retype --state twice", []string{"migrate", "retype", sp, "DST", "--operator", "uid:int-keyed", "--state", "seen", "--state", "count", "--to", "Long"}, 1, "",
			"flag --state given twice"},
		// Repeatable flags stay repeatable.
		{"rescale --operator twice is fine", []string{"migrate", "rescale", sp, "DST", "--max-parallelism", "256", "--operator", "uid:int-keyed", "--operator", "uid:int-keyed", "--dry-run"}, 0, "", ""},

		// Flags that cannot take effect.
		{"diff -o without --savepoint", []string{"plan", "diff", plan, plan, "-o", "DST.yaml"}, 1, "",
			"statecraft: plan diff: --output works only with --savepoint (see 'statecraft plan diff --help')\n"},
		{"diff --max-parallelism without --savepoint", []string{"plan", "diff", plan, plan, "--max-parallelism", "256"}, 1, "",
			"statecraft: plan diff: --max-parallelism works only with --savepoint (see 'statecraft plan diff --help')\n"},
		{"diff --uid-format without --savepoint", []string{"plan", "diff", plan, plan, "--uid-format", "<id>"}, 1, "", "--uid-format works only with --savepoint"},
		{"diff --text --all", []string{"plan", "diff", plan, plan, "--text", "--all"}, 1, "", "--all has no effect with --text"},
		{"diff --text --savepoint, before printing", []string{"plan", "diff", plan, plan, "--text", "--savepoint", sp}, 1, "",
			"statecraft: plan diff: --savepoint has no effect with --text (see 'statecraft plan diff --help')\n"},
		{"diff --json --color", []string{"plan", "diff", plan, plan, "--json", "--color", "always"}, 1, "", "--color has no effect with --json"},
		{"diff --text --color is fine", []string{"plan", "diff", plan, plan, "--text", "--color", "never"}, 0, "", ""},

		// One error style at every level: "statecraft: COMMAND: message", one line on stderr.
		{"unknown top-level flag", []string{"--bogus"}, 1, "", "statecraft: unknown flag \"--bogus\" (see 'statecraft --help')\n"},
		{"unknown group flag", []string{"plan", "--bogus=1"}, 1, "", "statecraft: plan: unknown flag \"--bogus=1\" (see 'statecraft plan --help')\n"},
		{"required flag names the command", []string{"savepoint", "create", "DST", "--like", sp}, 1, "",
			"statecraft: savepoint create: flag --data is required: JSONL (or .csv) FILE of entries (savepoint dump without --operator)\n"},
		{"required flag, help still works", []string{"savepoint", "create", "--help"}, 0, "", ""},
		{"create needs --like or --spec", []string{"savepoint", "create", "DST", "--data", "x.jsonl"}, 1, "",
			"statecraft: savepoint create: want --like SRC or --spec SPEC.yaml (where the operators and types come from)\n"},
		{"create takes one of --like, --spec", []string{"savepoint", "create", "DST", "--data", "x.jsonl", "--like", sp, "--spec", "s.yaml"}, 1, "",
			"--like and --spec both give the operators; give one"},
		{"patch needs data or a predicate", []string{"migrate", "patch", sp, "DST"}, 1, "", "give data, delete-where, or both"},
		{"patch --operator without --delete-where", []string{"migrate", "patch", sp, "DST", "--data", "x.jsonl", "--operator", "uid:a"}, 1, "",
			"without delete-where they would change nothing"},
		{"an error from a package gets the command", []string{"savepoint", "inspect", "DST"}, 1, "", "statecraft: savepoint inspect: open savepoint: "},
		{"one argument", []string{"savepoint", "dump", sp, sp, "--operator", "uid:source"}, 1, "",
			"statecraft: savepoint dump: want exactly one PATH, got 2 arguments\n"},
		{"zero arguments", []string{"savepoint", "inspect"}, 1, "",
			"statecraft: savepoint inspect: want exactly one PATH (a savepoint directory or its _metadata file), got 0 arguments\n"},
		{"one argument, singular", []string{"migrate", "uid", sp, "--rename", "uid:a=b"}, 1, "",
			"statecraft: migrate uid: want SRC DST (the savepoint and a new output directory), got 1 argument\n"},
		{"an aggregating state", []string{"migrate", "retype", sp, "DST", "--operator", "uid:int-keyed", "--state", "minmax", "--to", "Long"}, 1, "",
			"state \"minmax\" is an aggregating state; retype supports value, list and map states\n"},
		{"no-change dry run prints no empty diff", []string{"plan", "ttl", "set", plan, "--node", "6:leftState", "--ttl", "0", "--dry-run"}, 0, "",
			"plan.json: no TTL would change; nothing would be written\n"},

		// Bad flag values: one line, not "Incorrect Usage" and the whole help on stdout.
		{"number flag not a number", []string{"migrate", "rescale", sp, "DST", "--max-parallelism", "abc"}, 1, "",
			"statecraft: migrate rescale: --max-parallelism \"abc\": want a whole number\n"},
		{"number flag with =", []string{"migrate", "rescale", sp, "DST", "--max-parallelism=1e3"}, 1, "",
			"statecraft: migrate rescale: --max-parallelism \"1e3\": want a whole number\n"},
		{"boolean flag with a value", []string{"migrate", "rescale", sp, "DST", "--max-parallelism", "256", "--dry-run=maybe"}, 1, "",
			"statecraft: migrate rescale: --dry-run=maybe: want true or false (or the flag alone)\n"},
		{"boolean flag =true", []string{"migrate", "rescale", sp, "DST", "--max-parallelism", "256", "--dry-run=true"}, 0, "", ""},
		{"graph -o a directory", []string{"plan", "graph", plan, "-o", "."}, 1, "", "statecraft: plan graph: write .: not a regular file\n"},

		// A bare UID or operator id where a selector is wanted: say which selector was meant.
		{"dump bare uid", []string{"savepoint", "dump", sp, "--operator", "int-keyed"}, 1, "",
			"statecraft: savepoint dump: --operator: operator \"int-keyed\": want uid:NAME or hash:HEX (uid:int-keyed for the operator with that UID)\n"},
		{"migrate bare id", []string{"migrate", "drop-operator", sp, "DST", "--operator", "6d821971c3bfd7ae2c972e89d7414f7c"}, 1, "",
			"(hash:6d821971c3bfd7ae2c972e89d7414f7c for the operator with that id, uid:6d821971c3bfd7ae2c972e89d7414f7c for one with that UID)\n"},
		{"dump upper-case hash", []string{"savepoint", "dump", sp, "--operator", "hash:6D821971C3BFD7AE2C972E89D7414F7C", "--state", "count"}, 0, "", ""},

		// "-" as an output file: stdout where a command prints anyway, refused where it would
		// create a file named "-".
		{"graph -o - prints", []string{"plan", "graph", plan, "-o", "-"}, 0, "", ""},
		{"upgrade -o - is refused", []string{"plan", "upgrade", up + "/plan.json", up + "/plan.json", "--savepoint", up + "/savepoint", "-o", "-"}, 1, "",
			"statecraft: plan upgrade: -o -: the script is printed when -o is not given; -o names a file\n"},

		// 0 stands for "not given" in number flags: giving it is a mistake, not the default.
		{"check --max-parallelism 0", []string{"savepoint", "check", sp, "--plan", plan, "--max-parallelism", "0"}, 1, "",
			"statecraft: savepoint check: --max-parallelism 0: want 1..32768\n"},

		// savepoint dump of an operator without state, or without the state asked for.
		{"dump of an operator without state", []string{"savepoint", "dump", sp, "--operator", "uid:source", "--format", "table"}, 0, "",
			"statecraft: savepoint dump: operator uid:source has no state\n"},
		{"dump --state nosuch lists the states", []string{"savepoint", "dump", sp, "--operator", "uid:int-keyed", "--state", "nosuch"}, 1, "",
			"statecraft: savepoint dump: --state \"nosuch\": operator uid:int-keyed has no state of that name (it has names, count, minmax, sum, seen, ratio, " +
				"_timer_state/processing_user-timers, _timer_state/event_user-timers)\n"},
		{"dump --state of an operator without state", []string{"savepoint", "dump", sp, "--operator", "uid:source", "--state", "x"}, 1, "",
			"statecraft: savepoint dump: --state \"x\": operator uid:source has no state\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			planCopy := filepath.Join(dir, "plan.json")
			if err := os.WriteFile(planCopy, readFile(t, filepath.Join("..", "..", "testdata", "plans", "join-inner.json")), 0o644); err != nil {
				t.Fatal(err)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.NewReplacer("DST", filepath.Join(dir, "out"), "PLAN", planCopy).Replace(a)
			}
			code, out, errs := runCLI(args...)
			okErr := strings.Contains(errs, c.stderr)
			if strings.HasPrefix(c.stderr, "statecraft: ") && strings.HasSuffix(c.stderr, "\n") {
				okErr = errs == c.stderr // the whole message
			}
			if c.code == 1 && out != "" {
				t.Errorf("a refused command printed on stdout: %q", out)
			}
			if c.name == "no-change dry run prints no empty diff" && out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if c.name == "graph -o - prints" && !strings.Contains(out, "digraph") {
				t.Errorf("stdout %q, want the graph", out)
			}
			if _, err := os.Stat("-"); err == nil {
				os.Remove("-")
				t.Errorf("a file named - was written")
			}
			if code != c.code || !okErr || (c.stdout != "" && out != c.stdout) {
				t.Fatalf("exit %d (want %d)\nstdout: %q\nstderr: %q\nwant stderr %q", code, c.code, out, errs, c.stderr)
			}
		})
	}
}
