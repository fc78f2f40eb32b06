package bridge

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/ttl"
)

func TestExpired(t *testing.T) {
	const h = ttl.TTL(3_600_000)
	cases := []struct {
		ts, now int64
		t       ttl.TTL
		want    bool
	}{
		{1000, 1000 + 3_600_000 - 1, h, false},
		{1000, 1000 + 3_600_000, h, true}, // Flink: expiration <= now
		{1000, 1000 + 3_600_001, h, true},
		{1000, math.MaxInt64, ttl.Never, false},
		{math.MaxInt64 - 10, math.MaxInt64 - 1, h, false}, // ts + ttl saturates at Long.MAX_VALUE
		{math.MaxInt64 - 10, math.MaxInt64, h, true},
		{0, 1, ttl.TTL(1), true},
	}
	for _, c := range cases {
		if got := Expired(c.ts, c.t, c.now); got != c.want {
			t.Errorf("Expired(%d, %v, %d) = %v, want %v", c.ts, c.t, c.now, got, c.want)
		}
	}
}

type ttlEntry struct {
	ts   int64
	size int64
}

// ttlFixture opens testdata/upgrades/agg-ttl: a group aggregate Flink 2.3.0 ran with
// table.exec.state.ttl = 1 h, so each key's accumulator carries its last-write timestamp.
func ttlFixture(t *testing.T) (*plan.Plan, *savepoint.Savepoint, *Bridge, struct{ StartedMillis, StoppedMillis, TTLMillis, Keys int64 }) {
	t.Helper()
	dir := testdata("upgrades", "agg-ttl")
	if _, err := os.Stat(filepath.Join(dir, "savepoint", "_metadata")); err != nil {
		t.Skipf("oracle fixture %s not present (make fixtures)", dir)
	}
	var run struct{ StartedMillis, StoppedMillis, TTLMillis, Keys int64 }
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	p := loadPlan(t, filepath.Join(dir, "plan.json"))
	sp, err := savepoint.Open(filepath.Join(dir, "savepoint"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	b, err := Open(p, plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	return p, sp, b, run
}

// accStateStamps reads the aggregate's accState through the keyed reader's decoded records (not
// the raw first 8 bytes Impact uses): each entry's TTL timestamp and stored size.
func accStateStamps(t *testing.T, sp *savepoint.Savepoint) []ttlEntry {
	t.Helper()
	var out []ttlEntry
	for _, op := range sp.Metadata.Operators {
		if !strings.HasSuffix(op.UID, "_group-aggregate") {
			continue
		}
		subs, closeAll, err := keyed.OpenSubtasks(sp, op)
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll()
		for _, s := range subs {
			err := s.Entries(func(e *keyed.Entry) error {
				if s.Decoder.States[e.StateID].Meta.Name != "accState" {
					return nil
				}
				rec, err := s.Decoder.Decode(e)
				if err != nil {
					return err
				}
				ts, ok := rec.TTL.(int64)
				if !ok {
					t.Fatalf("accState entry without an int64 TTL timestamp: %#v", rec.TTL)
				}
				out = append(out, ttlEntry{ts, int64(len(e.Key) + len(e.Value))})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ts < out[j].ts })
	return out
}

func TestImpactCountsAtTimestampBoundaries(t *testing.T) {
	p, sp, b, run := ttlFixture(t)
	stamps := accStateStamps(t, sp)
	if int64(len(stamps)) != run.Keys {
		t.Fatalf("%d accState entries, the job wrote %d keys", len(stamps), run.Keys)
	}
	// Flink stamped each value when the aggregate wrote it: inside the job's wall-clock window.
	for _, s := range stamps {
		if s.ts < run.StartedMillis || s.ts > run.StoppedMillis {
			t.Fatalf("TTL timestamp %d outside the run [%d, %d]", s.ts, run.StartedMillis, run.StoppedMillis)
		}
	}
	if stamps[0].ts == stamps[len(stamps)-1].ts {
		t.Fatal("all timestamps equal: the boundaries below would not tell entries apart")
	}
	sel, err := plan.ParseSelector("all")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := p.Select(sel)
	if err != nil || len(entries) != 1 {
		t.Fatalf("plan state entries %v, %v: want the aggregate's one", entries, err)
	}
	want := func(tt ttl.TTL, now int64) (n, bytes, total int64) {
		for _, s := range stamps {
			total += s.size
			if s.ts+tt.Millis() <= now {
				n++
				bytes += s.size
			}
		}
		return
	}
	for _, tt := range []ttl.TTL{ttl.TTL(run.TTLMillis), 90_000, 1} {
		for _, pick := range []int{0, len(stamps) / 2, len(stamps) - 1} {
			edge := stamps[pick].ts + tt.Millis()
			for _, now := range []int64{edge - 1, edge} {
				rows, err := Impact(b, sp, []plan.Change{{Entry: entries[0], TTL: tt}}, now)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != 1 {
					t.Fatalf("%d impact rows, want 1 (accState)", len(rows))
				}
				r := rows[0]
				n, nb, total := want(tt, now)
				if !r.Known || r.State != "accState" || r.Entries != int64(len(stamps)) || r.Bytes != total ||
					r.Expired != n || r.ExpiredBytes != nb || r.Oldest != stamps[0].ts || r.Newest != stamps[len(stamps)-1].ts {
					t.Errorf("ttl %v at %d: got %+v; want %d of %d expired (%d of %d bytes)", tt, now, r, n, len(stamps), nb, total)
				}
			}
			// Crossing the edge expires the picked entry: the count must change there.
			before, _, _ := want(tt, edge-1)
			after, _, _ := want(tt, edge)
			if after <= before {
				t.Fatalf("boundary %d does not expire entry %d", edge, pick)
			}
		}
	}
	// The never TTL expires nothing, even far in the future.
	rows, err := Impact(b, sp, []plan.Change{{Entry: entries[0], TTL: ttl.Never}}, math.MaxInt64)
	if err != nil || rows[0].Expired != 0 || !rows[0].Known {
		t.Errorf("never TTL: %+v, %v", rows, err)
	}
}

// A savepoint of the aggregate run without TTL has no timestamps: the impact is unknown.
func TestImpactUnknownWithoutTTL(t *testing.T) {
	oldp, _, sp, _ := upgradeFixture(t)
	b, err := Open(oldp, plan.UIDOptions{}, sp)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := oldp.Select(plan.Selector{All: true, StateIdx: -1})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Impact(b, sp, []plan.Change{{Entry: entries[0], TTL: 60_000}}, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Known || rows[0].Expired != 0 || rows[0].Entries != 20 || !strings.Contains(rows[0].Note, "without TTL") {
		t.Errorf("no-TTL state: %+v; want unknown with its 20 entries counted", rows)
	}
}
