package rocksdb

import "testing"

// TestFixtureDeletes: the incremental checkpoint Flink wrote after clearing states, removing map
// keys and deleting timers (the oracle's native-deletes) holds Delete records in newer tables
// over Puts and Merges of older ones, and no SingleDelete (Flink never writes one). The merge
// yields no key whose newest record is a Delete, and every key whose newest record is a Put or
// Merge. The State Processor API's reading of the same checkpoint is compared entry for entry
// by cmd/statecraft's TestDumpSnapshotKindsMatchOracle. SingleDeletes are tested on databases
// RocksDB's own Java API wrote (TestFixtureSingleDelete).
func TestFixtureDeletes(t *testing.T) {
	chk := onlyCheckpoint(t, "native-deletes")
	counts := map[Kind]int{}
	shadowed, deleted, live := 0, 0, 0
	eachColumnFamily(t, nativeHandles(t, chk), func(fs handleFS, cf ColumnFamily, tables []*Table) {
		type rec struct {
			seq  uint64
			kind Kind
		}
		newest := map[string]rec{}   // the newest record of each user key, over every table
		hasData := map[string]bool{} // user keys with a Put or Merge anywhere
		for _, tb := range tables {
			it := tb.Iter()
			for it.Next() {
				e := it.Entry()
				counts[e.Kind]++
				k := string(e.UserKey)
				if r, ok := newest[k]; !ok || e.Seq > r.seq {
					newest[k] = rec{e.Seq, e.Kind}
				}
				if e.Kind == KindPut || e.Kind == KindMerge {
					hasData[k] = true
				}
			}
			if it.Err() != nil {
				t.Fatal(it.Err())
			}
		}
		got := mergedKeys(t, tables)
		for k, r := range newest {
			switch {
			case r.kind == KindDelete && got[k]:
				t.Errorf("%s %s: key %x, deleted by its newest record, was merged in", fs.name, cf.Name, k)
			case r.kind == KindDelete:
				deleted++
				if hasData[k] {
					shadowed++
				}
			case !got[k]:
				t.Errorf("%s %s: key %x (newest record %s) is missing from the merge", fs.name, cf.Name, k, r.kind)
			default:
				live++
			}
		}
	})
	t.Logf("record kinds %v; %d keys deleted (%d over a Put or Merge of an older table), %d live", counts, deleted, shadowed, live)
	if counts[KindDelete] == 0 || shadowed == 0 || live == 0 {
		t.Errorf("kinds %v, %d deletes over older data, %d live keys: the fixture should have all", counts, shadowed, live)
	}
	if counts[KindSingleDelete] != 0 {
		t.Errorf("%d SingleDelete records: Flink's RocksDB backend has no call that writes one", counts[KindSingleDelete])
	}
}
