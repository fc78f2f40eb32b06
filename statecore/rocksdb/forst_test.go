package rocksdb

import "testing"

// TestFixtureForStPartitionedIndex: the ForSt backend of Flink 2.3.0 writes its SST files with a
// partitioned (two-level) index. Every table of the ForSt checkpoint Flink wrote has one, and
// every table's entries are read through it, all data blocks checksummed, in internal-key order.
func TestFixtureForStPartitionedIndex(t *testing.T) {
	chk := onlyCheckpoint(t, "forst-checkpoint")
	tables, entries := 0, 0
	for _, fs := range nativeHandles(t, chk) {
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
