package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/internal/crashtest"
)

// A savepoint whose _metadata is fine but one of whose state files is cut short: inspect still
// prints the savepoint_metadata rows (they come from _metadata) but exits 1 naming the operator
// and the file, so a script cannot take the damage for a clean inspect. Each file is cut in turn:
// inspect reads one subtask's header per operator, and damage in another subtask's file must not
// go unnoticed either.
func TestInspectExitsOneOnUnreadableStateFile(t *testing.T) {
	src := filepath.Join("..", "..", "testdata", "savepoints", "keyed-hashmap")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	cut := 0
	for _, e := range ents {
		if e.Name() == "_metadata" {
			continue
		}
		cut++
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sp")
			crashtest.CopyTree(t, src, dir)
			if err := os.Truncate(filepath.Join(dir, e.Name()), 3); err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			if code := run([]string{"savepoint", "inspect", dir}, &out, &errb); code != exitFailure {
				t.Fatalf("exit %d, want %d; stderr %q", code, exitFailure, errb.String())
			}
			if !strings.Contains(out.String(), "int-keyed") {
				t.Errorf("the savepoint_metadata rows are missing from the output:\n%s", out.String())
			}
			msg := errb.String()
			if !strings.Contains(msg, "uid int-keyed") || !strings.Contains(msg, e.Name()) {
				t.Errorf("stderr does not name the operator and the damaged file: %q", msg)
			}
		})
	}
	if cut < 2 {
		t.Fatalf("fixture keyed-hashmap has %d state files beside _metadata, want one per subtask (2)", cut)
	}
}
