package main

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgressQuiet: on a terminal (stderr taken for one by the test hook) every long-running
// command shows progress on stderr; --quiet, or stderr not being a terminal, shows none; stdout
// is the same either way. savepoint dump shows none when stdout is the terminal too.
func TestProgressQuiet(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	sp := filepath.Join(td, "savepoints", "keyed-hashmap")
	up := filepath.Join(td, "upgrades", "agg-ttl")
	cases := []struct {
		args []string
		want string // in the progress
	}{
		{[]string{"migrate", "rescale", sp, "", "--max-parallelism", "256"}, "rescale uid:int-keyed"},
		{[]string{"migrate", "uid", sp, "", "--rename", "uid:int-keyed=uid:x"}, "step 1/1"},
		{[]string{"migrate", "run", filepath.Join(td, "migrations", "keyed-hashmap.yaml"), sp, ""}, "verifying the output"},
		{[]string{"savepoint", "dump", sp, "--operator", "uid:int-keyed"}, "savepoint dump uid:int-keyed: 1 records"},
		{[]string{"savepoint", "stats", sp}, "reading operator 1/2, uid:int-keyed"},
		{[]string{"plan", "ttl", "impact", filepath.Join(up, "plan.json"), "--savepoint", filepath.Join(up, "savepoint"), "--all", "--ttl", "10s", "--at", "0"}, "reading the TTL timestamps"},
	}
	defer func(f func(io.Writer) bool) { isTerminalWriter = f }(isTerminalWriter)
	for _, tc := range cases {
		name := strings.Join(tc.args[:2], " ")
		var outs [3]string
		for i, mode := range []string{"terminal", "quiet", "pipe"} {
			args := append([]string{}, tc.args...)
			dst := ""
			for j, a := range args {
				if a == "" { // a fresh DST for each migration
					dst = filepath.Join(t.TempDir(), "out")
					args[j] = dst
				}
			}
			if mode == "quiet" {
				args = append(args, "--quiet")
			}
			var out, errb bytes.Buffer
			isTerminalWriter = func(w io.Writer) bool { return mode != "pipe" && w == &errb }
			if code := run(args, &out, &errb); code != exitOK {
				t.Fatalf("%s (%s): exit %d: %s", name, mode, code, errb.String())
			}
			outs[i] = out.String()
			if dst != "" {
				outs[i] = strings.ReplaceAll(outs[i], filepath.Dir(dst), "DIR")
			}
			progress := strings.Contains(errb.String(), "\r")
			if mode == "terminal" && (!progress || !strings.Contains(errb.String(), tc.want)) {
				t.Errorf("%s on a terminal: stderr %q lacks progress %q", name, errb.String(), tc.want)
			}
			if mode != "terminal" && progress {
				t.Errorf("%s (%s): progress shown: %q", name, mode, errb.String())
			}
		}
		if outs[0] != outs[1] || outs[0] != outs[2] {
			t.Errorf("%s: stdout differs with progress on and off:\n%s\n---\n%s\n---\n%s", name, outs[0], outs[1], outs[2])
		}
	}
	// dump with stdout on the terminal too: the records are the progress.
	var out, errb bytes.Buffer
	isTerminalWriter = func(io.Writer) bool { return true }
	run([]string{"savepoint", "dump", sp, "--operator", "uid:int-keyed"}, &out, &errb)
	if strings.Contains(errb.String(), "\r") {
		t.Errorf("dump to a terminal shows progress: %q", errb.String())
	}
}
