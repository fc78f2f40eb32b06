package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// visitCommands calls fn with the path of every visible command, groups included.
func visitCommands(fn func(path []string, c *cli.Command)) {
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			p := append(append([]string{}, path...), c.Name)
			fn(p, c)
			walk(p, c.Subcommands)
		}
	}
	walk(nil, commands())
}

// TestHelp: `statecraft help`, `help PATH...` and `help TOPIC` exit 0 and print what they name;
// the top-level help lists every command.
func TestHelp(t *testing.T) {
	code, out, errOut := runCLI("help")
	if code != 0 || errOut != "" {
		t.Fatalf("help: exit %d, stderr %q", code, errOut)
	}
	for _, c := range commands() {
		if !c.Hidden && !strings.Contains(out, "\n   "+c.Name+" ") {
			t.Errorf("help does not list %q:\n%s", c.Name, out)
		}
	}
	visitCommands(func(path []string, c *cli.Command) {
		code, out, errOut := runCLI(append([]string{"help"}, path...)...)
		want := "statecraft " + strings.Join(path, " ") + " - " + c.Usage
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("help %v: exit %d, stderr %q, stdout lacks %q:\n%s", path, code, errOut, want, out)
		}
		for _, f := range c.Flags {
			if !strings.Contains(out, "--"+f.Names()[0]) {
				t.Errorf("help %v does not show --%s", path, f.Names()[0])
			}
		}
	})
	for _, topic := range topicNames() {
		if code, out, errOut := runCLI("help", topic); code != 0 || len(out) < 10 {
			t.Errorf("help %s: exit %d, stderr %q, stdout %q", topic, code, errOut, out)
		}
	}
}

// TestUnknownCommandSuggests: a mistyped command at any level is named, with the closest
// command(s), and exits 1.
func TestUnknownCommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plna"}, `unknown command "plna" for statecraft; did you mean "plan"?`},
		{[]string{"plan", "vlaidate", "x.json"}, `unknown command "vlaidate" for statecraft plan; did you mean "validate"?`},
		{[]string{"savepoint", "insp", "x"}, `did you mean "inspect"?`},
		{[]string{"plan", "ttl", "lst"}, `did you mean "list"?`},
		{[]string{"help", "savepont"}, `unknown command or help topic "savepont" for statecraft; did you mean "savepoint"?`},
		{[]string{"help", "plan", "nope"}, `unknown command "nope" for statecraft plan (choose from diff, graph`},
		{[]string{"zzzzzz"}, `unknown command "zzzzzz" for statecraft (choose from`},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != exitFailure || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line containing %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestCloseNames(t *testing.T) {
	names := []string{"diff", "graph", "ttl", "uids", "upgrade", "validate"}
	for _, tc := range []struct {
		word string
		want string
	}{
		{"dif", "diff"}, {"u", ""}, {"up", "upgrade"}, {"tll", "ttl"}, {"valdiate", "validate"}, {"grpah", "graph"}, {"xyz", ""},
	} {
		if got := strings.Join(closest(tc.word, names), ","); got != tc.want {
			t.Errorf("closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// TestManPages: `statecraft man DIR` writes one page per visible command and per help topic;
// each names its command and every flag, and groff reads every page without a warning.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := runCLI("man", dir); code != 0 {
		t.Fatalf("man: exit %d, stderr %q", code, errOut)
	}
	want := map[string]bool{"statecraft.1": true}
	visitCommands(func(path []string, c *cli.Command) {
		name := "statecraft-" + strings.Join(path, "-") + ".1"
		want[name] = true
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%v: %v", path, err)
			return
		}
		page := strings.ReplaceAll(string(b), `\-`, "-")
		if !strings.Contains(page, c.Usage) {
			t.Errorf("%s lacks the usage %q", name, c.Usage)
		}
		for _, f := range c.Flags {
			if !strings.Contains(page, "--"+f.Names()[0]) {
				t.Errorf("%s lacks --%s", name, f.Names()[0])
			}
		}
		for _, s := range c.Subcommands {
			if !s.Hidden && !strings.Contains(page, ".B "+strings.ReplaceAll(s.Name, "-", `\-`)) && !strings.Contains(page, ".B "+s.Name) {
				t.Errorf("%s does not list subcommand %s", name, s.Name)
			}
		}
	})
	for _, topic := range topicNames() {
		want["statecraft-"+topic+".1"] = true
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !want[e.Name()] {
			t.Errorf("unexpected page %s", e.Name())
		}
		delete(want, e.Name())
	}
	for name := range want {
		t.Errorf("missing page %s", name)
	}
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Log("groff not installed: pages not rendered")
		return
	}
	// One groff for all pages: it names the page of any warning.
	args := []string{"-man", "-ww", "-z"}
	for _, e := range entries {
		args = append(args, filepath.Join(dir, e.Name()))
	}
	if out, err := exec.Command(groff, args...).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff: %v %s", err, out)
	}
}
