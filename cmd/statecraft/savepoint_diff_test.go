package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/migrate"
)

// migrated writes src migrated by the YAML steps into a new directory, with statecraft's own
// migrate package (verified as every migration is), and returns it.
func migrated(t *testing.T, src, steps string) string {
	t.Helper()
	s, err := migrate.ParseScript(strings.NewReader("steps:\n"+steps), "test script")
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "out")
	if _, err := migrate.Run(src, dst, s, migrate.Options{}); err != nil {
		t.Fatal(err)
	}
	return dst
}

// diffOut runs `savepoint diff --json A B` and decodes it.
func diffOut(t *testing.T, a, b string, extra ...string) (int, diffJSON) {
	t.Helper()
	code, out, errOut := runCLI(append(append([]string{"savepoint", "diff", "--json", "--limit", "2"}, extra...), a, b)...)
	if code == 1 {
		t.Fatalf("diff %s %s: exit 1: %s", a, b, errOut)
	}
	var d diffJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("diff --json: %v\n%s", err, out)
	}
	return code, d
}

// changes spells every difference the diff reports, one string each, so that a case can list
// exactly what it promises and nothing else: "OP match", "OP FIELD: A -> B", and per state
// "OP state S: -X +Y ~Z".
func changes(d diffJSON) []string {
	var out []string
	for _, o := range d.Operators {
		if o.Match != "id" {
			out = append(out, o.Operator+" "+o.Match)
		}
		for _, c := range o.Metadata {
			out = append(out, fmt.Sprintf("%s %s: %s -> %s", o.Operator, c.Field, c.A, c.B))
		}
		for _, s := range o.States {
			if s.Differs() {
				out = append(out, fmt.Sprintf("%s state %s: -%d +%d ~%d", o.Operator, s.Name, s.OnlyA, s.OnlyB, s.Changed))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestDiffReportsExactlyTheMigration: between a fixture and each migrated copy of it, diff
// reports the change the migration promises and nothing else; a savepoint against itself is equal.
func TestDiffReportsExactlyTheMigration(t *testing.T) {
	src := migrateFixture(t, "keyed-hashmap")
	const op = "uid:int-keyed"
	for _, c := range []struct {
		name  string
		steps string
		want  []string
	}{
		{"uid", `  - rename-uid: {from: "uid:int-keyed", to: counter-v2}`, []string{
			op + " name",
			op + " operator id: 6d821971c3bfd7ae2c972e89d7414f7c -> " + uidHash("counter-v2"),
			op + " uid: int-keyed -> counter-v2",
		}},
		{"rescale", `  - rescale: {max-parallelism: 256, parallelism: 3}`, []string{
			op + " max parallelism: 128 -> 256",
			op + " parallelism: 2 -> 3",
			"uid:source max parallelism: 128 -> 256",
		}},
		{"retype", `  - retype: {operator: "uid:int-keyed", state: seen, to: Long}`, []string{
			op + " state seen VALUE_SERIALIZER: MapSerializer<StringSerializer, IntSerializer> -> MapSerializer<StringSerializer, LongSerializer>",
		}},
		{"drop-state", `  - drop-state: {operator: "uid:int-keyed", state: ratio}`, []string{
			op + " state ratio: value -> (absent)",
			op + " state ratio: -12 +0 ~0",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dst := migrated(t, src, c.steps)
			code, d := diffOut(t, src, dst)
			slices.Sort(c.want)
			if got := changes(d); !slices.Equal(got, c.want) {
				t.Errorf("diff reports\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
			if code != 2 || d.Equal {
				t.Errorf("exit %d, equal %v; want 2 and false", code, d.Equal)
			}
		})
	}
	t.Run("itself", func(t *testing.T) {
		code, d := diffOut(t, src, src)
		if got := changes(d); code != 0 || !d.Equal || len(got) != 0 {
			t.Errorf("exit %d, equal %v, changes %v; want 0, true, none", code, d.Equal, got)
		}
	})
}

func uidHash(uid string) string {
	h, _ := migrate.ParseSelector("uid:" + uid)
	return h.ID.String()
}

// TestDiffShowsChangedValues: a retype that adds a field with a default changes every value of
// that state, and diff shows the first ones decoded, old and new; the other states of the
// operator are equal, and --state limits the comparison to one state.
func TestDiffShowsChangedValues(t *testing.T) {
	src := migrateFixture(t, "evolve-hashmap")
	dst := migrated(t, src, `  - retype: {operator: "uid:evolve", state: profile, add-field: {name: f2, type: Long, default: 7}}`)
	code, d := diffOut(t, src, dst)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	var profile string
	for _, o := range d.Operators {
		for _, s := range o.States {
			if s.Name != "profile" {
				if s.Differs() {
					t.Errorf("state %s differs: %+v", s.Name, s)
				}
				continue
			}
			profile = fmt.Sprintf("-%d +%d ~%d of %d/%d", s.OnlyA, s.OnlyB, s.Changed, s.EntriesA, s.EntriesB)
			if s.Changed == 0 || s.Changed != s.EntriesA || len(s.ChgSam) != 2 {
				t.Errorf("profile: %s, %d samples", profile, len(s.ChgSam))
			}
			for _, e := range s.ChgSam {
				var old, nw []any
				json.Unmarshal(e.Old, &old)
				json.Unmarshal(e.New, &nw)
				if len(old) != 2 || len(nw) != 3 || fmt.Sprint(nw[2]) != "7" || fmt.Sprint(old) != fmt.Sprint(nw[:2]) {
					t.Errorf("profile key %s: %s -> %s, want the old row with 7 appended", e.Key, e.Old, e.New)
				}
			}
		}
	}
	if profile == "" {
		t.Fatal("no state profile in the diff")
	}
	// Text output says the same.
	code, out, _ := runCLI("savepoint", "diff", "--state", "profile", "--limit", "1", src, dst)
	if code != 2 || !strings.Contains(out, "state profile (value):") || !strings.Contains(out, "~ key=") || strings.Contains(out, "state events") {
		t.Errorf("text diff --state profile: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{src}, "want two savepoints"},
		{[]string{"--state", "nope", src, dst}, `--state "nope"`},
		{[]string{"--limit", "-1", src, dst}, "--limit -1"},
		{[]string{src, filepath.Join(t.TempDir(), "none")}, "B: "},
	} {
		code, _, errOut := runCLI(append([]string{"savepoint", "diff"}, c.args...)...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, errOut, c.want)
		}
	}
}
