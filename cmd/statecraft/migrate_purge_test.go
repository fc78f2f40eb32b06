package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/statecraft/statecraft/migrate"
)

// TestPurgeExpiredAgreesWithImpact: on a SQL aggregate's savepoint Flink wrote with TTL, `migrate
// purge-expired` removes, per state, exactly the entries and bytes `plan ttl impact` counts as
// expired for the same TTL and time, at times when none, some and all are expired.
func TestPurgeExpiredAgreesWithImpact(t *testing.T) {
	up := filepath.Join("..", "..", "testdata", "upgrades", "agg-ttl")
	if _, err := os.Stat(filepath.Join(up, "savepoint", "_metadata")); err != nil {
		t.Skip("fixture agg-ttl not present (make fixtures)")
	}
	// The savepoint's TTL timestamps lie in 1796012993728..1796012994547 ms.
	somePurged := false
	for _, at := range []int64{1796012993728 + 9999, 1796012994000 + 10000, 1796012994547 + 10000} {
		t.Run(strconv.FormatInt(at, 10), func(t *testing.T) {
			code, out, errOut := runCLI("plan", "ttl", "impact", filepath.Join(up, "plan.json"), "--savepoint", filepath.Join(up, "savepoint"),
				"--all", "--ttl", "10 s", "--json", "--at", strconv.FormatInt(at, 10))
			if code != exitOK {
				t.Fatalf("impact: exit %d: %s", code, errOut)
			}
			var imp impactJSON
			if err := json.Unmarshal([]byte(out), &imp); err != nil {
				t.Fatal(err)
			}
			report := filepath.Join(t.TempDir(), "report.json")
			code, _, errOut = runCLI("migrate", "purge-expired", filepath.Join(up, "savepoint"), filepath.Join(t.TempDir(), "out"),
				"--ttl", "10 s", "--at", strconv.FormatInt(at, 10), "--report", report)
			if code != exitOK {
				t.Fatalf("purge-expired: exit %d: %s", code, errOut)
			}
			var rep migrate.Report
			if err := json.Unmarshal(readFile(t, report), &rep); err != nil {
				t.Fatal(err)
			}
			if len(imp.States) == 0 {
				t.Fatal("impact reports no state")
			}
			for _, st := range imp.States {
				var ch *migrate.OperatorChange
				for i, o := range rep.Steps[0].Operators {
					if o.UIDHashBefore == st.UIDHash {
						ch = &rep.Steps[0].Operators[i]
					}
				}
				if ch == nil {
					t.Fatalf("purge report has no operator %s", st.UIDHash)
				}
				removed := int64(ch.EntriesBefore[st.State] - ch.EntriesAfter[st.State])
				if removed != st.Expired || ch.BytesRemoved[st.State] != st.ExpiredBytes || int64(ch.EntriesBefore[st.State]) != st.Entries {
					t.Errorf("state %s at %d: purge removed %d of %d entries (%d bytes), impact counts %d of %d expired (%d bytes)",
						st.State, at, removed, ch.EntriesBefore[st.State], ch.BytesRemoved[st.State], st.Expired, st.Entries, st.ExpiredBytes)
				}
				somePurged = somePurged || (st.Expired > 0 && st.Expired < st.Entries)
			}
		})
	}
	if !somePurged {
		t.Error("no time purged some but not all entries: the comparison proves little")
	}
}
