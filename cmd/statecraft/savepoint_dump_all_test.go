package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestDumpAllOperators: `savepoint dump SP` without --operator prints, for every fixture, exactly
// the lines of the per-operator dumps (which TestDumpMatchesOracle holds to Flink's reading),
// each with its operator's selector in front, in _metadata's operator order.
func TestDumpAllOperators(t *testing.T) {
	for _, exp := range fixtureExpectations(t) {
		dir := strings.TrimSuffix(exp, ".expect.json")
		t.Run(filepath.Base(dir), func(t *testing.T) {
			code, all, errOut := runCLI("savepoint", "dump", dir)
			if code != exitOK {
				t.Fatalf("dump: exit %d: %s", code, errOut)
			}
			sp, err := savepoint.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			var want []string
			for _, op := range sp.Metadata.Operators {
				label := opLabel(op)
				code, out, errOut := runCLI("savepoint", "dump", dir, "--operator", label)
				if code != exitOK {
					t.Fatalf("dump --operator %s: exit %d: %s", label, code, errOut)
				}
				q, _ := json.Marshal(label)
				for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
					if l != "" {
						want = append(want, `{"operator":`+string(q)+","+l[1:])
					}
				}
			}
			got := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
			if len(want) == 0 {
				want = []string{""}
			}
			if !slices.Equal(got, want) {
				t.Errorf("all-operator dump (%d lines) differs from the per-operator dumps (%d lines)", len(got), len(want))
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Errorf("first difference at line %d:\ngot  %s\nwant %s", i+1, got[i], want[i])
						break
					}
				}
			}
		})
	}
}

// TestDumpAllOperatorsCLI: --state across operators, the operator column of csv and table, and
// a state name no operator has.
func TestDumpAllOperatorsCLI(t *testing.T) {
	fixtureExpectations(t)
	dir := filepath.Join("..", "..", "testdata", "savepoints", "operator-state")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		contains []string
		absent   []string
	}{
		{"state of one operator", []string{dir, "--state", "seen"}, exitOK, []string{`{"operator":"uid:broadcast-proc","state":"seen"`}, []string{`"state":"rules"`}},
		{"csv operator column", []string{dir, "--format", "csv"}, exitOK, []string{"operator,state,subtask", "uid:broadcast-proc,rules,0,"}, nil},
		{"table operator column", []string{dir, "--format", "table"}, exitOK, []string{"operator", "uid:broadcast-proc"}, nil},
		{"unknown state", []string{dir, "--state", "nope"}, exitFailure, []string{`--state "nope": no operator has a state of that name`, "rules", "seen"}, nil},
		{"wide with jsonl", []string{dir, "--wide"}, exitFailure, []string{"--wide is for --format table"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"savepoint", "dump"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			for _, c := range tc.contains {
				if !strings.Contains(out+errOut, c) {
					t.Errorf("output lacks %q:\n%.2000s", c, out+errOut)
				}
			}
			for _, c := range tc.absent {
				if strings.Contains(out, c) {
					t.Errorf("output has %q:\n%.2000s", c, out)
				}
			}
		})
	}
}
