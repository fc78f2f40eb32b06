package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Tests compare tables with fixed expectations: a COLUMNS exported by the shell running them
// must not reflow them. The tests that want a width set it themselves.
func init() { os.Unsetenv("COLUMNS") }

// wideCommands are the commands whose tables or report lines are wider than 80 columns on the
// fixtures, with the prefixes of lines exempt from fitting (none today: prose is wrapped).
func wideCommands(t *testing.T) []struct {
	args  []string
	prose []string
} {
	td := filepath.Join("..", "..", "testdata")
	sp := filepath.Join(td, "savepoints")
	up := filepath.Join(td, "upgrades", "agg-ttl")
	fa := filepath.Join(td, "upgrades", "agg-filter-added")
	return []struct {
		args  []string
		prose []string
	}{
		{[]string{"savepoint", "inspect", "--subtasks", filepath.Join(sp, "keyed-hashmap")}, nil},
		{[]string{"savepoint", "inspect", filepath.Join(sp, "operator-state")}, nil},
		{[]string{"plan", "uids", filepath.Join(td, "plans", "join-inner.json")}, nil},
		{[]string{"savepoint", "offsets", kafkaFixture}, nil},
		{[]string{"plan", "ttl", "list", filepath.Join(td, "plans", "join-inner.json")}, nil},
		{[]string{"savepoint", "check", filepath.Join(sp, "sql-group-aggregate"), "--plan", filepath.Join(sp, "sql-group-aggregate.plan.json")}, nil},
		{[]string{"savepoint", "dump", filepath.Join(sp, "keyed-hashmap"), "--operator", "uid:int-keyed", "--format", "table"}, nil},
		{[]string{"plan", "ttl", "impact", filepath.Join(up, "plan.json"), "--savepoint", filepath.Join(up, "savepoint"), "--all", "--ttl", "10s", "--at", "0"}, nil},
		{[]string{"migrate", "rescale", filepath.Join(sp, "keyed-hashmap"), filepath.Join(t.TempDir(), "out"), "--max-parallelism", "256", "--dry-run"}, nil},
		// Reports of free text: lines are wrapped, never cut. The upgrade's script is YAML to
		// run as it is, so it goes to a file here (printed, it is never wrapped).
		{[]string{"plan", "diff", filepath.Join(fa, "old.plan.json"), filepath.Join(fa, "new.plan.json")}, nil},
		{[]string{"plan", "upgrade", filepath.Join(fa, "old.plan.json"), filepath.Join(fa, "new.plan.json"), "--savepoint", filepath.Join(fa, "savepoint"), "-o", filepath.Join(t.TempDir(), "up.yaml")}, nil},
		{[]string{"savepoint", "check", filepath.Join(fa, "savepoint"), "--plan", filepath.Join(fa, "new.plan.json")}, nil},
	}
}

// TestTablesFitColumns: with COLUMNS=80 every table row of every wide command fits 80 columns;
// --wide, and output without COLUMNS (a pipe), are the full table, the same both ways.
func TestTablesFitColumns(t *testing.T) {
	for _, tc := range wideCommands(t) {
		name := strings.Join(tc.args[:2], " ")
		code, full, errOut := runCLI(tc.args...)
		if code != exitOK && code != exitFindings { // savepoint check: "would NOT restore" is a finding
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		if maxLine(full, nil) <= 80 {
			t.Errorf("%s: the fixture's table is not wider than 80 columns: the case tests nothing", name)
		}
		t.Setenv("COLUMNS", "80")
		_, narrow, _ := runCLI(tc.args...)
		_, wide, _ := runCLI(append(tc.args, "--wide")...)
		os.Unsetenv("COLUMNS")
		if n := maxLine(narrow, tc.prose); n > 80 {
			t.Errorf("%s at COLUMNS=80: a line of %d columns:\n%s", name, n, narrow)
		}
		if wide != full {
			t.Errorf("%s --wide at COLUMNS=80 differs from the full output:\n%s\nwant\n%s", name, wide, full)
		}
	}
}

// maxLine is the width of the widest line that starts with none of the prose prefixes.
func maxLine(s string, prose []string) int {
	n := 0
next:
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prose {
			if strings.HasPrefix(l, p) {
				continue next
			}
		}
		n = max(n, utf8.RuneCountInString(l))
	}
	return n
}

// TestMachineOutputNeverCut: --json, --csv and jsonl are the same at COLUMNS=20 as without it,
// and --wide with them is refused (it could not take effect).
func TestMachineOutputNeverCut(t *testing.T) {
	sp := filepath.Join("..", "..", "testdata", "savepoints", "keyed-hashmap")
	for _, args := range [][]string{
		{"savepoint", "inspect", "--json", sp},
		{"savepoint", "inspect", "--csv", sp},
		{"savepoint", "dump", sp, "--operator", "uid:int-keyed"},
		{"savepoint", "dump", sp, "--operator", "uid:int-keyed", "--format", "csv"},
		{"plan", "uids", "--json", filepath.Join("..", "..", "testdata", "plans", "join-inner.json")},
	} {
		_, want, _ := runCLI(args...)
		t.Setenv("COLUMNS", "20")
		_, got, _ := runCLI(args...)
		os.Unsetenv("COLUMNS")
		if got != want || len(want) == 0 {
			t.Errorf("%v: output changed with COLUMNS=20", args)
		}
	}
	for _, args := range [][]string{
		{"savepoint", "inspect", "--json", "--wide", sp},
		{"savepoint", "dump", sp, "--operator", "uid:int-keyed", "--wide"},
	} {
		if code, _, errOut := runCLI(args...); code != exitFailure || !strings.Contains(errOut, "never cut") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
}
