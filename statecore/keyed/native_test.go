package keyed

import (
	"path/filepath"
	"testing"

	"github.com/statecraft/statecraft/statecore/rocksdb"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// TestNativeRescaledClipped: in the savepoints Flink 2.3.0 and 1.20.0 took after restoring a
// native savepoint at a higher parallelism, and in the latest incremental checkpoint each retained
// after such a restore, the RocksDB instances still hold keys of key groups outside their new
// ranges (Flink clipped them with range tombstones, or left them to be skipped). Entries yields none of them, and does
// yield keys: the filter is real, and the entries that remain are the ones the State Processor
// API reads (cmd/statecraft TestDumpMatchesOracle and TestDumpSnapshotKindsMatchOracle).
func TestNativeRescaledClipped(t *testing.T) {
	for _, dir := range []string{"savepoints/native-rescaled", "checkpoints/native-chain-rescaled",
		"flink-1.20/savepoints/native-rescaled", "flink-1.20/checkpoints/native-chain-rescaled"} {
		t.Run(dir, func(t *testing.T) { checkClipped(t, filepath.Join("..", "..", "testdata", dir)) })
	}
}

func checkClipped(t *testing.T, dir string) {
	sp, err := savepoint.Open(dir)
	if err != nil {
		t.Skipf("fixture: %v", err)
	}
	defer sp.Close()
	tombstones, outside, inside := 0, 0, 0
	for _, op := range sp.Metadata.Operators {
		subs, closeAll, err := OpenSubtasks(sp, op)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			if s.Native == nil {
				continue
			}
			rng := s.Native.Range
			for _, cf := range s.db.Manifest.ColumnFamilies {
				tables, err := s.db.Tables(cf)
				if err != nil {
					t.Fatal(err)
				}
				for _, tb := range tables {
					ts, err := tb.RangeTombstones()
					if err != nil {
						t.Fatal(err)
					}
					tombstones += len(ts)
					// Raw table entries, before the merge and the range filter.
					it := tb.Iter()
					for it.Next() {
						if e := it.Entry(); e.Kind == rocksdb.KindPut || e.Kind == rocksdb.KindMerge {
							if !rng.Contains(int32(e.UserKey[0])) {
								outside++
							}
						}
					}
					if it.Err() != nil {
						t.Fatal(it.Err())
					}
				}
			}
			err := s.Entries(func(e *Entry) error {
				if !rng.Contains(int32(e.KeyGroup)) {
					t.Errorf("%s: entry of key group %d outside %+v", s.Name, e.KeyGroup, rng)
				}
				inside++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		closeAll()
	}
	t.Logf("%d range tombstones, %d raw entries outside their subtask's key groups, %d entries read", tombstones, outside, inside)
	if tombstones == 0 || outside == 0 || inside == 0 {
		t.Errorf("the rescaled fixture should hold range tombstones (%d), keys outside the ranges (%d) and entries (%d)", tombstones, outside, inside)
	}
}
