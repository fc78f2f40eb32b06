package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

func migrateFixture(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "savepoints", name)
	if _, err := os.Stat(filepath.Join(dir, "_metadata")); err != nil {
		t.Skipf("fixture %s not present", name)
	}
	return dir
}

// runMigrate runs the CLI with args and fails t unless it exits with code and its stdout and
// stderr contain the given substrings; a failed run must not create dst. A successful run is
// preceded by the same command with --dry-run, whose result table must be the table
// `savepoint inspect --csv` prints of the real output.
func runMigrate(t *testing.T, args []string, dst string, code int, stdout, stderr string) {
	t.Helper()
	var dryTable, drySteps string
	if code == 0 && !slices.Contains(args, "--dry-run") {
		dcode, dout, derrs := runCLI(append(slices.Clone(args), "--dry-run")...)
		if dcode != 0 {
			t.Fatalf("dry run: exit %d\nstdout: %s\nstderr: %s", dcode, dout, derrs)
		}
		dryTable, drySteps = printedResult(t, dout), printedSteps(dout)
	}
	got, out, errs := runCLI(args...)
	okErr := strings.Contains(errs, stderr)
	if strings.HasPrefix(stderr, "statecraft: ") && strings.HasSuffix(stderr, "\n") {
		okErr = errs == stderr // the whole message
	}
	if got != code || !strings.Contains(out, stdout) || !okErr {
		t.Fatalf("exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout ~ %q, stderr ~ %q", got, code, out, errs, stdout, stderr)
	}
	if code != 0 {
		if _, err := os.Stat(dst); err == nil {
			t.Error("a failed run created DST")
		}
	}
	if dryTable != "" {
		icode, iout, ierrs := runCLI("savepoint", "inspect", dst, "--csv")
		if icode != 0 {
			t.Fatalf("inspect the output: exit %d: %s", icode, ierrs)
		}
		if inspected := inspectedResult(t, iout); dryTable != inspected || printedResult(t, out) != inspected {
			t.Fatalf("the dry run does not show what the run writes:\ndry run:\n%srun:\n%sinspect of the output:\n%s", dryTable, printedResult(t, out), inspected)
		}
		if steps := printedSteps(out); drySteps != steps {
			t.Fatalf("the dry run's steps differ from the run's:\ndry run:\n%s\nrun:\n%s", drySteps, steps)
		}
	}
}

// printedResult returns the rows of the "result:" table a migrate command printed, one line
// each, columns joined by "|" (a NULL column, "-" in the table, as an empty one).
func printedResult(t *testing.T, stdout string) string {
	t.Helper()
	_, table, ok := strings.Cut(stdout, "\nresult:")
	if !ok {
		t.Fatalf("no result table in:\n%s", stdout)
	}
	var b strings.Builder
	for _, line := range strings.Split(table, "\n")[1:] {
		if strings.TrimSpace(line) == "" {
			continue
		}
		cols := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(line), -1)
		for i, c := range cols {
			if c == "-" {
				cols[i] = ""
			}
		}
		b.WriteString(strings.Join(cols, "|") + "\n")
	}
	return b.String()
}

// printedSteps returns the step lines a migrate command printed (entries per state included).
func printedSteps(stdout string) string {
	_, steps, _ := strings.Cut(stdout, "\nstep: ")
	steps, _, _ = strings.Cut(steps, "\nresult:")
	return steps
}

// inspectedResult returns the columns of `savepoint inspect --csv` output that a migrate result
// table shows (operator-name to operator-subtask-state-count), as printedResult does.
func inspectedResult(t *testing.T, csvOut string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("inspect --csv: %v\n%s", err, csvOut)
	}
	var b strings.Builder
	for _, r := range recs[1:] {
		b.WriteString(strings.Join(r[1:7], "|") + "\n")
	}
	return b.String()
}

func TestMigrateCLI(t *testing.T) {
	src := migrateFixture(t, "keyed-hashmap")
	script := filepath.Join("..", "..", "testdata", "migrations", "keyed-hashmap.yaml")
	evolve := migrateFixture(t, "evolve-hashmap")
	evolveScript := filepath.Join("..", "..", "testdata", "migrations", "evolve-hashmap.yaml")
	cases := []struct {
		name   string
		args   []string // DST is appended where "DST" appears
		code   int
		stdout string // substring
		stderr string // substring
		check  func(t *testing.T, dst string)
	}{
		{"uid --rename", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=uid:v2"}, 0, `uid "v2"`, "", func(t *testing.T, dst string) {
			sp, err := savepoint.Open(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			if sp.Metadata.Operators[0].UID != "v2" {
				t.Errorf("uid %q", sp.Metadata.Operators[0].UID)
			}
		}},
		{"uid --operator/--to pairs, flags first", []string{"migrate", "uid", "--operator", "uid:int-keyed", "--to", "uid:v3", src, "DST"}, 0, `-> ab192ca825af479a01be489e113f2bd4`, "", nil},
		{"uid pairs unbalanced", []string{"migrate", "uid", src, "DST", "--operator", "uid:int-keyed"}, 1, "", "in pairs", nil},
		{"uid target exists", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=uid:source"}, 1, "", "already has an operator", nil},
		{"uid bare new name, as scripts take it", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=v2"}, 0, `uid "v2"`, "", nil},
		{"uid hash as new name", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=hash:6d821971c3bfd7ae2c972e89d7414f7c"}, 1, "",
			"statecraft: migrate uid: --rename \"uid:int-keyed=hash:6d821971c3bfd7ae2c972e89d7414f7c\": new UID \"hash:6d821971c3bfd7ae2c972e89d7414f7c\": an operator id cannot be chosen, only a UID (uid:NEW or NEW)\n", nil},
		{"uid to itself", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=int-keyed"}, 1, "",
			"operator uid:int-keyed already has the UID \"int-keyed\"; nothing to rename\n", nil},
		{"rename-state to itself", []string{"migrate", "rename-state", src, "DST", "--operator", "uid:int-keyed", "--state", "seen", "--to", "seen"}, 1, "",
			"state \"seen\": the new name is the old one; nothing to rename\n", nil},
		{"uid empty new name", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=uid:"}, 1, "", "want uid:NEW or NEW", nil},
		{"uid nothing", []string{"migrate", "uid", src, "DST"}, 1, "", "at least one", nil},
		{"rescale", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "256", "--parallelism", "3"}, 0, "entries per subtask [24 30 36]", "", nil},
		{"rescale bad parallelism", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "8", "--parallelism", "9"}, 1, "", "want 1..8", nil},
		{"rescale --parallelism 0", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "256", "--parallelism", "0"}, 1, "",
			"statecraft: migrate rescale: --parallelism 0: want 1..256 (the max parallelism)\n", nil},
		{"rescale dry run", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "256", "--dry-run"}, 0, "dry run: nothing written", "", func(t *testing.T, dst string) {
			if _, err := os.Stat(dst); err == nil {
				t.Error("dry run created DST")
			}
		}},
		{"run script with report", []string{"migrate", "run", script, src, "DST", "--report", "REPORT"}, 0, "retype", "", func(t *testing.T, dst string) {
			b, err := os.ReadFile(filepath.Join(filepath.Dir(dst), "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Steps []struct {
					Step string `json:"step"`
				} `json:"steps"`
				Verify []json.RawMessage `json:"verify"`
			}
			if err := json.Unmarshal(b, &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Steps) != 4 || len(rep.Verify) == 0 {
				t.Errorf("report: %d steps, %d verify rows", len(rep.Steps), len(rep.Verify))
			}
		}},
		{"report directory missing", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "256", "--report", "/nonexistent-statecraft/r.json"}, 1, "",
			"--report: /nonexistent-statecraft/r.json: directory /nonexistent-statecraft does not exist", nil},
		{"report is a directory", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=uid:v2", "--report", "."}, 1, "", "--report: . is a directory", nil},
		{"report inside DST", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=uid:v2", "--report", "DST/r.json"}, 1, "", "--report: ", nil},
		{"run the evolve script", []string{"migrate", "run", evolveScript, evolve, "DST"}, 0, "wrote", "", nil},
		{"rescale down, fewer subtasks", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "64", "--parallelism", "1"}, 0, "entries per subtask [90]", "", nil},
		{"DST under a file", []string{"migrate", "rescale", src, "EMPTY/out", "--max-parallelism", "256"}, 1, "", "empty.yaml/out: a parent of it is a file, not a directory\n", nil},
		{"run script, not verified", []string{"migrate", "run", script, src, "DST", "--no-verify"}, 0, "not verified: --no-verify", "", nil},
		{"run missing script", []string{"migrate", "run", "nope.yaml", src, "DST"}, 1, "", "nope.yaml", nil},
		{"retype", []string{"migrate", "retype", src, "DST", "--operator", "uid:int-keyed", "--state", "seen", "--to", "Long"}, 0, "Integer -> Long", "", nil},
		{"retype to the type it has", []string{"migrate", "retype", src, "DST", "--operator", "uid:int-keyed", "--state", "count", "--to", "Long"}, 1, "",
			"state \"count\": its values are already Long; nothing to convert\n", nil},
		{"retype refused", []string{"migrate", "retype", src, "DST", "--operator", "uid:int-keyed", "--state", "names", "--to", "Long"}, 1, "", "does not parse", nil},
		{"rename-state", []string{"migrate", "rename-state", src, "DST", "--operator", "uid:int-keyed", "--state", "seen", "--to", "seen2"}, 0, "seen", "", nil},
		{"drop-state", []string{"migrate", "drop-state", src, "DST", "--operator", "uid:int-keyed", "--state", "seen"}, 0, "12 -> 0", "", nil},
		{"drop-operator", []string{"migrate", "drop-operator", src, "DST", "--operator", "uid:int-keyed"}, 0,
			"(0 state files written, 0 linked, 0 copied; nothing to verify: the output holds no state)\nstep: drop-operator uid:int-keyed\n" +
				"  uid:int-keyed: uid hash 6d821971c3bfd7ae2c972e89d7414f7c, parallelism 2, max parallelism 128 (dropped)\n", "", nil},
		{"verified, with counts", []string{"migrate", "rename-state", src, "DST", "--operator", "uid:int-keyed", "--state", "seen", "--to", "seen2"}, 0,
			"linked, 0 copied; verified: ", "", nil},
		{"not verified", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "256", "--no-verify"}, 0, "; not verified: --no-verify)\n", "", nil},
		{"rescale to the same max parallelism changes nothing", []string{"migrate", "rescale", src, "DST", "--max-parallelism", "128"}, 0,
			"(0 state files written, 2 linked, 0 copied; verified: ", "", func(t *testing.T, dst string) {
				_, out, _ := runCLI("migrate", "rescale", migrateFixture(t, "keyed-hashmap"), dst+"2", "--max-parallelism", "128", "--dry-run")
				if !strings.Contains(out, "(unchanged: max parallelism already 128 and parallelism 2; state files kept as they are)") {
					t.Errorf("the dry run does not say the rescale changes nothing:\n%s", out)
				}
			}},
		{"empty script", []string{"migrate", "run", "EMPTY", src, "DST"}, 1, "", ": the script is empty: want a mapping with a steps list\n", nil},
		{"link mode", []string{"migrate", "uid", src, "DST", "--rename", "uid:int-keyed=uid:v2", "--link", "symbolic"}, 1, "", "hard or copy", nil},
		{"missing source", []string{"migrate", "uid", "no-such-dir", "DST", "--rename", "uid:a=uid:b"}, 1, "", "no-such-dir", nil},
		{"wrong arity", []string{"migrate", "rescale", src, "--max-parallelism", "256"}, 1, "", "want SRC DST", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			dst := filepath.Join(dir, "out")
			if err := os.WriteFile(filepath.Join(dir, "empty.yaml"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			args := make([]string, len(c.args))
			for i, a := range c.args {
				args[i] = strings.NewReplacer("DST", dst, "REPORT", filepath.Join(dir, "report.json"), "EMPTY", filepath.Join(dir, "empty.yaml")).Replace(a)
			}
			runMigrate(t, args, dst, c.code, c.stdout, c.stderr)
			if c.check != nil {
				c.check(t, dst)
			}
		})
	}
}
