package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/statecraft/statecraft/ttl"
)

// ttlFixtureAt is a time at which some of keyed-ttl-collections' entries are expired under a
// one-day TTL and some are not: its TTL timestamps are ...430, ...445 and ...481 ms, written by
// Flink; at ...445 + 1 d, the first two are expired (lastAccess + ttl <= at), the last is not.
const (
	ttlFixtureAt  = 1796012620445 + 86400000
	ttlFixtureTTL = ttl.TTL(86400000)
)

// purgedLines applies Flink's expiry rule to dumped lines, independently of the step: a line of
// a TTL state whose timestamp is expired goes; a list keeps its live elements, and goes when none
// is left. It returns the lines left and, per state, the lines removed.
func purgedLines(t *testing.T, lines []string, at int64, ttlMs int64) ([]string, map[string]int) {
	t.Helper()
	removed := map[string]int{}
	var out []string
	for _, l := range lines {
		d := json.NewDecoder(bytes.NewReader([]byte(l)))
		d.UseNumber()
		var m map[string]any
		if err := d.Decode(&m); err != nil {
			t.Fatal(err)
		}
		expired := func(v any) bool {
			ts, _ := v.(json.Number).Int64()
			return ts+ttlMs <= at
		}
		switch ts := m["ttlTimestamp"].(type) {
		case nil:
		case []any:
			var vals, stamps []any
			for i, x := range m["value"].([]any) {
				if !expired(ts[i]) {
					vals, stamps = append(vals, x), append(stamps, ts[i])
				}
			}
			if len(vals) == 0 {
				removed[m["state"].(string)]++
				continue
			}
			if len(vals) < len(ts) {
				// Re-print the line as dump prints it: same field order, fewer elements.
				l = fmt.Sprintf(`{"operator":%q,"state":%q,"keyGroup":%s,"key":%s,"namespace":null,"userKey":null,"value":%s,"ttlTimestamp":%s}`,
					m["operator"], m["state"], m["keyGroup"], mustJSON(t, m["key"]), mustJSON(t, vals), mustJSON(t, stamps))
			}
		default:
			if expired(ts) {
				removed[m["state"].(string)]++
				continue
			}
		}
		out = append(out, l)
	}
	return out, removed
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestPurgeExpired: the output holds exactly the source's entries minus what Flink's rule
// expires (list elements included), at the boundary and one millisecond before it, and the
// report's counts are those removed.
func TestPurgeExpired(t *testing.T) {
	src := fixture(t, "keyed-ttl-collections")
	lines := dumpKeyed(t, src)
	for _, at := range []int64{ttlFixtureAt - 1, ttlFixtureAt, ttlFixtureAt + 36} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			want, removed := purgedLines(t, lines, at, ttlFixtureTTL.Millis())
			dst, rep := run(t, src, Options{}, &PurgeExpired{TTL: ttlFixtureTTL, At: at})
			got := dumpKeyed(t, dst)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("purge at %d: output\n%s\nwant\n%s", at, join(got), join(want))
			}
			ch := rep.Steps[0].Operators[0]
			for st, n := range removed {
				if ch.EntriesBefore[st]-ch.EntriesAfter[st] != n || (n > 0) != (ch.BytesRemoved[st] > 0) {
					t.Errorf("state %s: report %d -> %d (%d bytes removed), want %d removed", st, ch.EntriesBefore[st], ch.EntriesAfter[st], ch.BytesRemoved[st], n)
				}
			}
			if at == ttlFixtureAt && (removed["attrs"] == 0 || removed["recent"] == 0 || len(want) == len(lines)) {
				t.Fatalf("the fixture's timestamps no longer straddle %d: the test proves nothing (%v)", at, removed)
			}
		})
	}
}

func join(l []string) string {
	var b bytes.Buffer
	for _, s := range l {
		b.WriteString(s + "\n")
	}
	return b.String()
}

// TestPurgeExpiredRefusals: a state not stored with TTL, and a TTL of 0.
func TestPurgeExpiredRefusals(t *testing.T) {
	src := fixture(t, "keyed-ttl-collections")
	for _, tc := range []struct {
		step *PurgeExpired
		want string
	}{
		{&PurgeExpired{TTL: ttlFixtureTTL, At: ttlFixtureAt, States: []string{"plain"}}, `--state "plain": no selected operator has a state of that name stored with TTL`},
		{&PurgeExpired{TTL: 0, At: ttlFixtureAt}, "nothing would expire"},
	} {
		_, err := Run(src, t.TempDir()+"/out", []Step{tc.step}, Options{})
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(tc.want)) {
			t.Errorf("error %v, want %q", err, tc.want)
		}
	}
}
