package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
)

// ttlCompactionShortTTL is the TTL of the short-lived states of the oracle's ttl-compaction job
// (TtlCompaction.SHORT_TTL), in ms.
const ttlCompactionShortTTL = 3000

// TestTTLCompactionFixtures: the ttl-compaction fixtures (Flink 2.3.0, RocksDB, TTL states cleaned
// up by the compaction filter; a native savepoint and an incremental checkpoint directory of one
// job) are what their names promise, as statecraft reads them: the filter removed the first
// phase's session and tags entries (their keys' total, a 1-day TTL state, is still there), and
// every short-TTL entry left had expired before the snapshot (its TTL timestamp plus the TTL is
// no later than the marker's, written after the sleep and before both snapshots). Equality with
// the State Processor API's reading is TestDumpMatchesOracle's (the savepoint) and
// TestDumpSnapshotKindsMatchOracle's (the checkpoint), the restore of their conversion
// TestOracleConvert's.
func TestTTLCompactionFixtures(t *testing.T) {
	for _, fx := range []string{"savepoints/native-ttl-compaction", "checkpoints/ttl-compaction"} {
		t.Run(fx, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", filepath.FromSlash(fx))
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("fixture: %v", err)
			}
			sp, err := savepoint.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			op, err := findOperator(sp.Metadata, "uid:ttl-compaction")
			if err != nil {
				t.Fatal(err)
			}
			type entry struct {
				key int
				ttl []int64
			}
			byState := map[string][]entry{}
			err = dumpOperator(sp, op, "", func(r dumpRecord) error {
				if r.Keyed == nil {
					return fmt.Errorf("unexpected record %+v", r)
				}
				var k int
				if _, err := fmt.Sscan(fmt.Sprint(r.Keyed.Key), &k); err != nil {
					return fmt.Errorf("key %v: %v", r.Keyed.Key, err)
				}
				var ts []int64
				switch v := r.Keyed.TTL.(type) {
				case int64:
					ts = []int64{v}
				case []int64:
					ts = v
				default:
					return fmt.Errorf("%s key %d: TTL timestamp %T %v", r.Keyed.State, k, r.Keyed.TTL, r.Keyed.TTL)
				}
				byState[r.Keyed.State] = append(byState[r.Keyed.State], entry{k, ts})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			has := func(state string, key int) bool {
				for _, e := range byState[state] {
					if e.key == key {
						return true
					}
				}
				return false
			}
			var marker int64
			for _, e := range byState["total"] {
				if e.key == 999 {
					marker = e.ttl[0]
				}
			}
			if marker == 0 {
				t.Fatalf("no total for the marker key 999: %v", byState["total"])
			}
			for k := 0; k < 4; k++ {
				if !has("total", k) {
					t.Errorf("total of key %d is gone: the 1-day TTL state must stay", k)
				}
				if has("session", k) || has("tags", k) {
					t.Errorf("key %d (first phase) still has session or tags: the compaction filter did not remove them", k)
				}
			}
			short := 0
			for _, s := range []string{"session", "tags", "events"} {
				for _, e := range byState[s] {
					for _, ts := range e.ttl {
						short++
						if ts+ttlCompactionShortTTL > marker {
							t.Errorf("%s key %d: written at %d, not expired (TTL %d ms) before the marker's %d", s, e.key, ts, ttlCompactionShortTTL, marker)
						}
					}
				}
			}
			if short == 0 {
				t.Fatal("no short-TTL entry left: the fixture holds no expired entry")
			}
			t.Logf("%d session, %d tags, %d events entries (%d short-TTL values, all expired at the snapshot), %d totals",
				len(byState["session"]), len(byState["tags"]), len(byState["events"]), short, len(byState["total"]))
		})
	}
}
