package rocksdb

import (
	"path/filepath"
	"testing"
)

// TestFixtureForStPartitionedIndex: the ForSt backend of Flink 2.3.0 writes its SST files with a
// partitioned (two-level) index. Every table of the ForSt checkpoint Flink wrote has one, and
// every table's entries are read through it, all data blocks checksummed, in internal-key order.
func TestFixtureForStPartitionedIndex(t *testing.T) {
	chks, _ := filepath.Glob("../../testdata/checkpoints/forst-checkpoint/chk-*")
	if len(chks) != 1 {
		t.Skipf("fixture testdata/checkpoints/forst-checkpoint: %d chk-N directories, want 1", len(chks))
	}
	tables, entries := 0, 0
	for _, fs := range nativeHandles(t, chks[0]) {
		for _, tb := range fs.tables(t) {
			tables++
			if !tb.partitioned {
				t.Errorf("%s %s: not a partitioned index (index type %x)", fs.name, tb.Name(), tb.Properties()[propIndexType])
			}
			it := tb.Iter()
			for it.Next() {
				entries++
			}
			if it.Err() != nil {
				t.Errorf("%s %s: %v", fs.name, tb.Name(), it.Err())
			}
		}
	}
	if tables == 0 || entries == 0 {
		t.Fatalf("%d tables, %d entries: the fixture should have both", tables, entries)
	}
	t.Logf("%d partitioned-index tables, %d entries", tables, entries)
}
