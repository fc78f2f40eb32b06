package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
)

// fixtureOps are the operators of testdata/savepoints/keyed-hashmap, as `savepoint inspect`
// (and Flink's savepoint_metadata) lists them.
var fixtureOps = []string{"uid:int-keyed", "uid:source"}

func TestCompleteCandidates(t *testing.T) {
	sp := filepath.Join(crashtest.RepoRoot(), "testdata", "savepoints", "keyed-hashmap")
	for _, tc := range []struct {
		words []string
		want  string // candidates joined by spaces
	}{
		{[]string{""}, "checkpoint completion help man migrate plan savepoint"},
		{[]string{"pl"}, "plan"},
		{[]string{"plan", "ttl", ""}, "impact list set"},
		{[]string{"nope", ""}, ""},
		{[]string{"savepoint", "dump", "--"}, "--checkpoint --compression --format --help --operator --output --path-map --quiet --state --wide"},
		{[]string{"savepoint", "dump", sp, "--operator", ""}, strings.Join(fixtureOps, " ")},
		{[]string{"savepoint", "dump", "--operator", "uid:i"}, ""}, // no savepoint typed yet: nothing to offer
		{[]string{"savepoint", "dump", sp, "--operator=uid:i"}, "--operator=uid:int-keyed"},
		{[]string{"migrate", "rescale", sp, "/tmp/x", "--operator", "uid:s"}, "uid:source"},
		{[]string{"migrate", "uid", sp, "/tmp/x", "--rename", ""}, "uid:int-keyed=uid: uid:source=uid:"},
		{[]string{"migrate", "rescale", sp, "/tmp/x", "--max-parallelism", ""}, ""},
		{[]string{"savepoint", "inspect", "te"}, filesMarker},
		{[]string{"help", "s"}, "savepoint scripts"},
		{[]string{"completion", ""}, "bash fish zsh"},
	} {
		var got []string
		for _, c := range complete(commands(), tc.words) {
			got = append(got, c.word)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("complete %q = %q, want %q", tc.words, got, tc.want)
		}
	}
}

// installCompletion puts bin on PATH as "statecraft" and writes the completion script for
// shell, returning the script's path and the environment to run the shell in.
func installCompletion(t *testing.T, bin, shell string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(dir, "statecraft")); err != nil {
		t.Fatal(err)
	}
	code, script, errOut := runCLI("completion", shell)
	if code != 0 {
		t.Fatalf("completion %s: exit %d, %s", shell, code, errOut)
	}
	p := filepath.Join(dir, "statecraft."+shell)
	if err := os.WriteFile(p, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestCompletionShells runs the scripts in the shells themselves with the real binary (built
// once for both): bash as it calls the function at <TAB>, fish through complete -C.
func TestCompletionShells(t *testing.T) {
	bin := crashtest.Build(t)
	t.Run("bash", func(t *testing.T) { completionBash(t, bin) })
	t.Run("fish", func(t *testing.T) { completionFish(t, bin) })
}

// TestCompletionScriptsParse: each script is valid for its shell (shells that are not installed
// are skipped by name).
func TestCompletionScriptsParse(t *testing.T) {
	for _, shell := range []string{"bash", "zsh", "fish"} {
		sh, err := exec.LookPath(shell)
		if err != nil {
			t.Logf("%s not installed: its script is not parsed", shell)
			continue
		}
		_, script, _ := runCLI("completion", shell)
		cmd := exec.Command(sh, "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", shell, err, out)
		}
	}
	if code, _, errOut := runCLI("completion", "tcsh"); code != 1 || !strings.Contains(errOut, `unknown shell "tcsh" (want bash, zsh or fish)`) {
		t.Errorf("completion tcsh: exit %d, %q", code, errOut)
	}
}

// completionBash runs the bash script as bash would at <TAB>, including the word splits bash
// makes at ':' and '=', and checks the operator UIDs offered are the fixture's.
func completionBash(t *testing.T, bin string) {
	script, env := installCompletion(t, bin, "bash")
	sp := filepath.Join(crashtest.RepoRoot(), "testdata", "savepoints", "keyed-hashmap")
	prog := `source "$1"
t() { COMP_LINE="$1"; COMP_POINT=${#1}; read -r -a COMP_WORDS <<< "$2"; COMP_CWORD=$3
  [[ $1 =~ [[:space:]]$ ]] && COMP_WORDS+=("")
  _statecraft; printf '%s|' "${COMPREPLY[@]}"; echo; }
t "statecraft savepoint dump $2 --operator " "statecraft savepoint dump $2 --operator" 5
t "statecraft savepoint dump $2 --operator uid:" "statecraft savepoint dump $2 --operator uid :" 6
t "statecraft migrate rescale $2 out --operator uid:in" "statecraft migrate rescale $2 out --operator uid : in" 8
t "statecraft sa" "statecraft sa" 1
`
	cmd := exec.Command("bash", "-c", prog, "bash", script, sp)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	want := "uid:int-keyed|uid:source|\n:int-keyed|:source|\nint-keyed|\nsavepoint|\n"
	if string(out) != want {
		t.Errorf("bash completion:\n%s\nwant\n%s", out, want)
	}
}

// completionFish asks fish itself (complete -C) what it offers.
func completionFish(t *testing.T, bin string) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skip("fish not installed")
	}
	script, env := installCompletion(t, bin, "fish")
	sp := filepath.Join(crashtest.RepoRoot(), "testdata", "savepoints", "keyed-hashmap")
	cmd := exec.Command("fish", "--no-config", "-c", `source $argv[1]; complete -C"statecraft savepoint dump $argv[2] --operator "; complete -C"statecraft plan t"`, script, sp)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	want := "uid:int-keyed\tint-keyed\nuid:source\tSource: fixed-source\nttl\tlist and set per-operator state TTL in a compiled plan\n"
	if string(out) != want {
		t.Errorf("fish completion:\n%q\nwant\n%q", out, want)
	}
}
