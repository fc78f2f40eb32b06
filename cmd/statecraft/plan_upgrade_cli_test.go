package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// plan diff --json --savepoint prints one JSON document holding the diff and the upgrade, so a
// script can parse it (it used to print two documents one after the other).
func TestPlanDiffJSONWithSavepointIsOneDocument(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "upgrades", "agg-filter-added")
	oldp, newp, sp := filepath.Join(dir, "old.plan.json"), filepath.Join(dir, "new.plan.json"), filepath.Join(dir, "savepoint")
	var out, errb bytes.Buffer
	if code := run([]string{"plan", "diff", oldp, newp, "--json", "--savepoint", sp}, &out, &errb); code != exitOK {
		t.Fatalf("plan diff --json --savepoint exit %d: %s", code, errb.String())
	}
	var doc struct {
		Diff struct {
			Verdict string `json:"verdict"`
		} `json:"diff"`
		Upgrade struct {
			Script  string `json:"script"`
			Renames []any  `json:"renames"`
		} `json:"upgrade"`
	}
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("output is not JSON: %v", err)
	}
	if dec.More() {
		t.Fatal("plan diff --json --savepoint printed more than one JSON document")
	}
	if doc.Diff.Verdict != "uid-remap" || len(doc.Upgrade.Renames) == 0 || !strings.Contains(doc.Upgrade.Script, "rename-uid") {
		t.Fatalf("verdict %q, %d renames, script %q", doc.Diff.Verdict, len(doc.Upgrade.Renames), doc.Upgrade.Script)
	}
}
