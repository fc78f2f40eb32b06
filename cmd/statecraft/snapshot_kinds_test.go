package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/statecraft/statecraft/migrate"
)

// snapshotKinds are the retained checkpoint directories the oracle's snapshot-kinds command made
// with Flink 2.3.0 (testdata/checkpoints/KIND, with KIND.expect.json: the State Processor API's
// reading) and with Flink 1.20.0 (testdata/flink-1.20/checkpoints/KIND, read by 1.20's State
// Processor API), native-deletes (Delete records over older tables' data: states cleared,
// map keys removed, timers deleted) and native-chain-rescaled (incremental checkpoints after a
// rescaled restore: range tombstones over keys of other key groups) and gc-leftovers (read at its
// latest complete checkpoint beside the incomplete one Flink was halted in),
// named-window-incremental (String keys and a user-defined window namespace, both variable-length:
// a length after the key and after the namespace; the window shown as opaque bytes) and
// ttl-compaction (TTL states whose expired entries RocksDB's compaction filter removed in part,
// the rest expired at the snapshot: TestTTLCompactionFixtures).
var snapshotKinds = []string{
	"checkpoints/hashmap-full", "checkpoints/rocksdb-full", "checkpoints/file-merged", "checkpoints/native-deletes",
	"checkpoints/native-chain-rescaled", "checkpoints/gc-leftovers", "checkpoints/named-window-incremental",
	"checkpoints/ttl-compaction",
	"flink-1.20/checkpoints/hashmap-full", "flink-1.20/checkpoints/rocksdb-full", "flink-1.20/checkpoints/file-merged",
	"flink-1.20/checkpoints/native-chain", "flink-1.20/checkpoints/native-chain-rescaled",
}

// TestDumpSnapshotKindsMatchOracle: `savepoint dump` of each kind of checkpoint (a hashmap full
// checkpoint in the heap's own layout, RocksDB with incremental checkpoints off, incremental
// RocksDB with file merging), from Flink 2.3.0 and 1.20.0, equals the State Processor API's
// reading of the same checkpoint, entry for entry; and so does the dump of its `migrate convert`
// output.
func TestDumpSnapshotKindsMatchOracle(t *testing.T) {
	for _, kind := range snapshotKinds {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", filepath.FromSlash(kind))
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
				t.Fatalf("convert: %v", err)
			}
			t.Logf("converted: %s", rep.Steps[0].Operators[0].Note)
			for _, p := range compareDump(t, out, exp) {
				t.Error("converted: " + p)
			}
		})
	}
}

// TestForStCheckpoint: the ForSt backend's checkpoint (Flink 2.3.0, incremental) holds RocksDB
// files (FRocksDB 8.x tables, whose SSTs carry a partitioned index) in the same layout as the
// RocksDB backend's, so it dumps and converts like a native RocksDB checkpoint. Flink 2.3.0's State
// Processor API cannot read ForSt state (the oracle notes why), so the expectation is its reading
// of rocksdb-full: the same job with the same records, hence the same state.
func TestForStCheckpoint(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "checkpoints", "forst-checkpoint")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("fixture: %v", err)
	}
	exp := readDumpExpectation(t, filepath.Join("..", "..", "testdata", "checkpoints", "rocksdb-full.expect.json"))
	for _, p := range compareDump(t, dir, exp) {
		t.Error(p)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := migrate.Run(dir, out, []migrate.Step{&migrate.Convert{}}, migrate.Options{}); err != nil {
		t.Fatalf("convert: %v", err)
	}
	for _, p := range compareDump(t, out, exp) {
		t.Error("converted: " + p)
	}
}
