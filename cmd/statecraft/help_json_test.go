package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestJSONSchemasMatchOutput runs every command that prints JSON on real fixtures and checks
// each document against the shape `statecraft help json` documents for it: no key that is not
// documented, no required key missing, no value of another kind. Each documented output must be
// exercised here.
func TestJSONSchemasMatchOutput(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	sp := filepath.Join(td, "savepoints")
	up := filepath.Join(td, "upgrades")
	for _, p := range []string{filepath.Join(up, "agg-filter-added", "savepoint", "_metadata"), filepath.Join(sp, "sql-group-aggregate", "_metadata")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("oracle fixture %s not present (make fixtures)", p)
		}
	}
	report := filepath.Join(t.TempDir(), "report.json")
	// savepoint create --like takes the dump of all operators of the savepoint it is like.
	data := filepath.Join(t.TempDir(), "data.jsonl")
	if code, out, errOut := runCLI("savepoint", "dump", filepath.Join(sp, "keyed-hashmap")); code != exitOK {
		t.Fatalf("dump: %s", errOut)
	} else if err := os.WriteFile(data, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		doc   string
		args  []string
		jsonl bool
	}{
		{"plan ttl list --json", []string{"plan", "ttl", "list", "--json", filepath.Join(td, "plans", "join-inner.json")}, false},
		{"plan validate --json", []string{"plan", "validate", "--json", filepath.Join(td, "plans", "join-inner.json")}, false},
		{"plan diff --json", []string{"plan", "diff", "--json", filepath.Join(td, "plans", "join-inner.json"), filepath.Join(td, "plans", "join-inner-other-key.json")}, false},
		{"plan diff --json --savepoint SP", []string{"plan", "diff", "--json", filepath.Join(up, "agg-filter-added", "old.plan.json"), filepath.Join(up, "agg-filter-added", "new.plan.json"), "--savepoint", filepath.Join(up, "agg-filter-added", "savepoint")}, false},
		{"plan upgrade --json", []string{"plan", "upgrade", "--json", filepath.Join(up, "agg-filter-added", "old.plan.json"), filepath.Join(up, "agg-filter-added", "new.plan.json"), "--savepoint", filepath.Join(up, "agg-filter-added", "savepoint")}, false},
		{"plan uids --json", []string{"plan", "uids", "--json", filepath.Join(td, "plans", "join-inner.json")}, false},
		{"plan ttl impact --json", []string{"plan", "ttl", "impact", filepath.Join(up, "agg-ttl", "plan.json"), "--savepoint", filepath.Join(up, "agg-ttl", "savepoint"), "--all", "--ttl", "10 s", "--json", "--at", "0"}, false},
		{"savepoint inspect --json", []string{"savepoint", "inspect", "--json", "--subtasks", filepath.Join(sp, "keyed-hashmap")}, false},
		{"savepoint check --json", []string{"savepoint", "check", "--json", filepath.Join(sp, "sql-group-aggregate"), "--plan", filepath.Join(sp, "sql-group-aggregate.plan.json")}, false},
		{"savepoint offsets --json", []string{"savepoint", "offsets", "--json", kafkaFixture}, false},
		{"savepoint stats --json", []string{"savepoint", "stats", "--json", filepath.Join(sp, "keyed-hashmap")}, false},
		{"savepoint diff --json", []string{"savepoint", "diff", "--json", filepath.Join(sp, "keyed-hashmap"), filepath.Join(sp, "keyed-hashmap")}, false},
		{"savepoint dump --format jsonl (keyed state)", []string{"savepoint", "dump", filepath.Join(sp, "keyed-ttl-collections"), "--operator", "uid:ttl-collections"}, true},
		{"savepoint dump --format jsonl (timers)", []string{"savepoint", "dump", filepath.Join(sp, "window-hashmap"), "--operator", "uid:window-agg"}, true},
		{"savepoint dump --format jsonl (operator state)", []string{"savepoint", "dump", filepath.Join(sp, "operator-state"), "--operator", "uid:buffer-map"}, true},
		{"savepoint dump --format jsonl (operator state)", []string{"savepoint", "dump", filepath.Join(sp, "operator-state"), "--operator", "uid:broadcast-proc"}, true},
		// Without --operator: every operator, each line naming it.
		{"savepoint dump --format jsonl (keyed state)", []string{"savepoint", "dump", filepath.Join(sp, "operator-state")}, true},
		{"savepoint dump --format jsonl (timers)", []string{"savepoint", "dump", filepath.Join(sp, "window-hashmap")}, true},
		{"savepoint dump --format jsonl (operator state)", []string{"savepoint", "dump", filepath.Join(sp, "operator-state")}, true},
		{"savepoint ... --report FILE", []string{"savepoint", "create", filepath.Join(t.TempDir(), "created"), "--like", filepath.Join(sp, "keyed-hashmap"), "--data", data, "--report", report}, false},
		{"checkpoint list --json", []string{"checkpoint", "list", "--json", filepath.Join(td, "checkpoints", "native-chain")}, false},
		{"checkpoint gc --json", []string{"checkpoint", "gc", "--json", filepath.Join(td, "checkpoints", "native-chain")}, false}, // a dry run
		{"migrate ... --report FILE", []string{"migrate", "rescale", filepath.Join(sp, "keyed-hashmap"), filepath.Join(t.TempDir(), "out"), "--max-parallelism", "256", "--report", report}, false},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		var d *jsonDoc
		for i := range jsonDocs {
			if jsonDocs[i].command == tc.doc {
				d = &jsonDocs[i]
			}
		}
		if d == nil {
			t.Fatalf("%s: not documented in jsonDocs", tc.doc)
		}
		tested[tc.doc] = true
		code, out, errOut := runCLI(tc.args...)
		if code != exitOK && code != exitFindings {
			t.Errorf("%s: exit %d: %s", tc.doc, code, errOut)
			continue
		}
		if strings.HasSuffix(tc.doc, "--report FILE") {
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			out = string(b)
		}
		var docs []string
		if tc.jsonl {
			sc := bufio.NewScanner(strings.NewReader(out))
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				docs = append(docs, sc.Text())
			}
		} else {
			docs = []string{out}
		}
		shape := shapeOf(d.typ, nil)
		matched := 0
		for i, doc := range docs {
			var v any
			if err := json.Unmarshal([]byte(doc), &v); err != nil {
				t.Fatalf("%s: document %d: %v", tc.doc, i, err)
			}
			errs := shape.check(v, "$")
			if tc.jsonl {
				// Each line is one of the three dump shapes: only the lines of this case's kind count.
				if m, _ := v.(map[string]any); (m["timestamp"] != nil) != strings.Contains(tc.doc, "timers") || (m["mode"] != nil) != strings.Contains(tc.doc, "operator state") {
					continue
				}
			}
			matched++
			for _, e := range errs {
				t.Errorf("%s: document %d: %s", tc.doc, i, e)
			}
		}
		if matched == 0 {
			t.Errorf("%s: no document of this kind in the output:\n%.500s", tc.doc, out)
		}
	}
	for _, d := range jsonDocs {
		if !tested[d.command] {
			t.Errorf("%s is documented but not checked against real output", d.command)
		}
	}
}

// TestJSONDocumentedForEveryCommand: a command with --json (or --report) must have its output
// in jsonDocs, so that a new command cannot ship without its shape in `statecraft help json`.
func TestJSONDocumentedForEveryCommand(t *testing.T) {
	visitCommands(func(path []string, c *cli.Command) {
		for _, flag := range []string{"json", "report"} {
			if findFlag(c, flag) == nil {
				continue
			}
			want := strings.Join(path, " ") + " --" + flag
			if flag == "report" {
				want = path[0] + " ... --report"
			}
			found := false
			for _, d := range jsonDocs {
				found = found || strings.HasPrefix(d.command, want)
			}
			if !found {
				t.Errorf("%s: not documented in jsonDocs (statecraft help json)", want)
			}
		}
	})
}

// TestJSONShapeCheck: the checker itself finds an unknown key, a missing key and a wrong kind.
func TestJSONShapeCheck(t *testing.T) {
	shape := shapeOf(reflectTypeOfValidate(), nil)
	var v any
	json.Unmarshal([]byte(`{"file":"a","flinkVersion":"2.3","nodes":"x","states":1,"errors":0,"findings":null,"extra":1}`), &v)
	got := strings.Join(shape.check(v, "$"), "; ")
	for _, want := range []string{"$.nodes: string, want number", "$.warnings: missing", "$.extra: not in the documented shape"} {
		if !strings.Contains(got, want) {
			t.Errorf("check = %q, lacks %q", got, want)
		}
	}
}

func reflectTypeOfValidate() reflect.Type { return reflect.TypeFor[validateOutput]() }
