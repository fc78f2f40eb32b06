package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCreateLikeFromCSVDump: what `savepoint dump --format csv` prints, `savepoint create
// --like` takes back, for every savepoint fixture Flink wrote: the created savepoint dumps (as
// JSONL) to exactly what the fixture dumps. (Its subtask and index columns, an operator state's,
// were once refused.)
func TestCreateLikeFromCSVDump(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "savepoints", "*", "_metadata"))
	if len(dirs) == 0 {
		t.Skip("no savepoint fixtures")
	}
	for _, md := range dirs {
		src := filepath.Dir(md)
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := t.TempDir()
			code, out, errs := runCLI("savepoint", "dump", src, "--format", "csv")
			if code != 0 {
				t.Fatalf("dump --format csv: exit %d: %s", code, errs)
			}
			data := filepath.Join(dir, "all.csv")
			if err := os.WriteFile(data, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(dir, "created")
			if code, _, errs := runCLI("savepoint", "create", dst, "--like", src, "--data", data); code != 0 {
				t.Fatalf("create --like --data all.csv: exit %d: %s", code, errs)
			}
			_, want, _ := runCLI("savepoint", "dump", src)
			_, got, _ := runCLI("savepoint", "dump", dst)
			w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
			slices.Sort(w)
			slices.Sort(g)
			if !slices.Equal(w, g) || len(w) < 2 {
				t.Fatalf("created from the CSV dump: %d lines, the fixture %d (or they differ)", len(g), len(w))
			}
		})
	}
}
