package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/migrate"
)

// snapshotKinds are the retained checkpoint directories the oracle's snapshot-kinds command made
// (testdata/checkpoints/KIND, with KIND.expect.json: the State Processor API's reading).
var snapshotKinds = []string{"hashmap-full", "rocksdb-full", "file-merged"}

// TestDumpSnapshotKindsMatchOracle: `savepoint dump` of each kind of checkpoint (a hashmap full
// checkpoint in the heap's own layout, RocksDB with incremental checkpoints off, incremental
// RocksDB with file merging) equals the State Processor API's reading of the
// same checkpoint, entry for entry; and so does the dump of its `migrate convert` output.
func TestDumpSnapshotKindsMatchOracle(t *testing.T) {
	for _, kind := range snapshotKinds {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", "checkpoints", kind)
			if _, err := os.Stat(dir); err != nil {
				t.Skipf("fixture: %v", err)
			}
			exp := readDumpExpectation(t, dir+".expect.json")
			for _, p := range compareDump(t, dir, exp) {
				t.Error(p)
			}
			out := filepath.Join(t.TempDir(), "out")
			rep, err := migrate.Run(dir, out, []migrate.Step{&migrate.Convert{}}, migrate.Options{})
			if err != nil {
				t.Logf("convert: %v", err)
				return
			}
			t.Logf("converted: %s", rep.Steps[0].Operators[0].Note)
			for _, p := range compareDump(t, out, exp) {
				t.Error("converted: " + p)
			}
		})
	}
}

// TestForStCheckpoint: the ForSt backend's checkpoint (Flink 2.3.0, incremental) holds RocksDB
// files, but its SST files carry a partitioned (two-level) index, which the RocksDB reader
// refuses by name. Flink's State Processor API cannot read ForSt state at all (the oracle notes
// why), so there is no expectation of its own.
func TestForStCheckpoint(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "checkpoints", "forst-checkpoint")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("fixture: %v", err)
	}
	// The same job and records as rocksdb-full: the same state.
	exp := readDumpExpectation(t, filepath.Join("..", "..", "testdata", "checkpoints", "rocksdb-full.expect.json"))
	problems := compareDump(t, dir, exp)
	if len(problems) != 1 || !strings.Contains(problems[0], "partitioned index (index type 2, two-level) is not supported") {
		t.Fatalf("want the one refusal naming the partitioned index, got %q", problems)
	}
}
