package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/oracletest"
)

// TestOracleJudgesEditedPlans edits each judge plan the oracle compiled
// (testdata/plans/judge-*.json) with `statecraft plan ttl set`, giving each state the TTL its
// spec names, and has Flink 2.3.0 execute the edited plan (`run.sh judge-plan`): the spec's
// timed input and expected output prove by behaviour that the new TTLs apply. As a control, the
// unedited plan (all TTLs 0 ms = never) must be rejected by the same spec. Runs only with
// STATECRAFT_ORACLE=1 (it starts a Flink MiniCluster per run).
func TestOracleJudgesEditedPlans(t *testing.T) {
	oracletest.Require(t, "to run against Flink (needs Java 17 and Maven)")
	t.Parallel() // judges wait on the oracle servers, not on this process
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// Specs live in testdata/plans/specs/<plan name>.json (earlier: <plan name>.spec.json).
	specs, _ := filepath.Glob(filepath.Join(root, "testdata", "plans", "specs", "judge-*.json"))
	old, _ := filepath.Glob(filepath.Join(root, "testdata", "plans", "judge-*.spec.json"))
	specs = append(specs, old...)
	if len(specs) == 0 {
		t.Skip("no judge specs in testdata/plans/specs yet")
	}
	for _, spec := range specs {
		name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(spec), ".json"), ".spec")
		t.Run(name, func(t *testing.T) {
			// Each spec's judges sleep seconds to prove expiry (7 s in most specs): run the specs
			// side by side, on as many oracle servers as are idle.
			t.Parallel()
			planFile := filepath.Join(root, "testdata", "plans", name+".json")
			raw, err := os.ReadFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			var s struct {
				TTL map[string]string `json:"ttl"`
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
			if len(s.TTL) == 0 {
				t.Fatalf("%s names no TTLs", spec)
			}
			edited := filepath.Join(t.TempDir(), name+".json")
			args := []string{"plan", "ttl", "set", planFile, "-o", edited}
			keys := make([]string, 0, len(s.TTL))
			for k := range s.TTL {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				sel := k
				if !strings.Contains(k, ":") && !strings.ContainsAny(k[:1], "0123456789") {
					sel = "state:" + k // a bare state name
				}
				args = append(args, "--set", sel+"="+s.TTL[k])
			}
			var out, errb bytes.Buffer
			if code := run(args, &out, &errb); code != exitOK {
				t.Fatalf("statecraft %s: exit %d\n%s", strings.Join(args, " "), code, errb.String())
			}
			t.Logf("statecraft %s\n%s", strings.Join(args, " "), errb.String())

			judge := func(p string) (bool, string) {
				_, eb, err := oracletest.Exec(t, "", "judge-plan", oracletest.Abs(t, p), oracletest.Abs(t, spec))
				if oracletest.ExitCode(err) == 1 {
					return false, string(eb)
				}
				if err != nil {
					t.Fatalf("judge-plan %s: %v\n%s", p, err, eb)
				}
				return true, string(eb)
			}
			if ok, log := judge(edited); !ok {
				t.Fatalf("Flink rejected the plan statecraft edited:\n%s", log)
			} else {
				t.Logf("edited plan ACCEPTED by Flink 2.3.0:\n%s", lastLines(log, 3))
			}
			if ok, log := judge(planFile); ok {
				t.Fatalf("control: the unedited plan (TTL 0 ms) was accepted too, so the spec proves nothing:\n%s", log)
			} else {
				t.Logf("control: unedited plan REJECTED as expected:\n%s", lastLines(log, 3))
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
