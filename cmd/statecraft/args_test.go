package main

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// testApp is a small command tree with the flag kinds real commands use.
func testApp(got *[]string, gotDry *bool) *cli.App {
	return &cli.App{Commands: []*cli.Command{{
		Name: "plan",
		Subcommands: []*cli.Command{{
			Name: "ttl",
			Subcommands: []*cli.Command{{
				Name: "set",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "dry-run"},
					&cli.StringFlag{Name: "ttl"},
					&cli.StringSliceFlag{Name: "node"},
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}},
				},
				Action: func(c *cli.Context) error {
					*got = c.Args().Slice()
					*gotDry = c.Bool("dry-run")
					return nil
				},
			}},
		}},
	}}}
}

func TestNormalizeArgsFlagsAnywhere(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		wantPos []string
		wantDry bool
	}{
		{"flags first", []string{"plan", "ttl", "set", "--dry-run", "--ttl", "1 d", "p.json"}, []string{"p.json"}, true},
		{"flags last", []string{"plan", "ttl", "set", "p.json", "--dry-run", "--ttl", "1 d"}, []string{"p.json"}, true},
		{"flags between", []string{"plan", "ttl", "set", "--ttl=1 d", "p.json", "--dry-run"}, []string{"p.json"}, true},
		{"single dash", []string{"plan", "ttl", "set", "p.json", "-dry-run", "-o", "out.json"}, []string{"p.json"}, true},
		{"stdin dash", []string{"plan", "ttl", "set", "-", "--ttl", "1h"}, []string{"-"}, false},
		{"double dash ends flags", []string{"plan", "ttl", "set", "--ttl", "1h", "--", "--dry-run"}, []string{"--dry-run"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var pos []string
			var dry bool
			app := testApp(&pos, &dry)
			norm, err := normalizeArgs(app, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if err := app.Run(append([]string{"statecraft"}, norm...)); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pos, tc.wantPos) || dry != tc.wantDry {
				t.Fatalf("positional %q dry-run %v; want %q %v (normalized %q)", pos, dry, tc.wantPos, tc.wantDry, norm)
			}
		})
	}
}

func TestNormalizeArgsRefusesUnknownFlag(t *testing.T) {
	var pos []string
	var dry bool
	_, err := normalizeArgs(testApp(&pos, &dry), []string{"plan", "ttl", "set", "p.json", "--dry-rn"})
	if err == nil || !strings.Contains(err.Error(), "--dry-rn") {
		t.Fatalf("err = %v; want an unknown-flag error naming --dry-rn", err)
	}
}

func TestNormalizeArgsMissingValue(t *testing.T) {
	var pos []string
	var dry bool
	_, err := normalizeArgs(testApp(&pos, &dry), []string{"plan", "ttl", "set", "p.json", "--ttl"})
	if err == nil || !strings.Contains(err.Error(), "needs a value") {
		t.Fatalf("err = %v; want a missing-value error", err)
	}
}

func TestRunUnknownCommandExitsOne(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"no-such-command"}, &out, &errb); code != exitFailure {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitFailure, errb.String())
	}
	if !strings.Contains(errb.String(), "no-such-command") {
		t.Fatalf("stderr %q does not name the unknown command", errb.String())
	}
}

// TestVersion: --version (and -v) print the build, exit 0, and are not taken by subcommands,
// whose -v would be ambiguous.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}} {
		code, out, errOut := runCLI(args...)
		if code != 0 || !strings.HasPrefix(out, "statecraft version ") || !strings.Contains(out, "go1.") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	if code, _, errOut := runCLI("migrate", "uid", "--version"); code != 1 || !strings.Contains(errOut, `unknown flag "--version"`) {
		t.Errorf("migrate uid --version: exit %d, stderr %q", code, errOut)
	}
}
