package bridge

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// nodeWants: what savepoint check predicts for the type catalogue's cases over the exec nodes
// of plan/statetypes_nodes.go (session windows, the legacy group window aggregate, event-time
// keep-last deduplication, the UpdateFast Top-N), each a Flink 2.3.0 savepoint
// (upgrades/types-savepoints) restored by Flink 2.3.0 under a changed plan; merged into
// TestTypeCatalogueAgreesWithFlink's table.
var nodeWants = map[string]string{
	"v23-session-same":                      "",
	"v23-session-aggregate-added":           "type-incompatible", // window-aggs Row<INT, INT>, the savepoint Row<INT>
	"v23-session-gap-changed":               "",                  // same types: the stored session ends where the old gap put it (wrong rows)
	"v23-group-window-same":                 "",
	"v23-group-window-aggregate-added":      "type-incompatible",
	"v23-group-window-to-session":           "state-missing", // tumbling windows' state has no session-window-mapping: Flink fails (NPE)
	"v23-dedup-rowtime-last-same":           "",
	"v23-dedup-rowtime-last-to-first":       "", // keep first, insert-only registers other states: deduplicate-state is restored unread (state-unread), wrong rows
	"v23-dedup-rowtime-last-key-retyped":    "type-incompatible",
	"v23-dedup-rowtime-last-amount-retyped": "type-incompatible", // deduplicate-state Row<..., SMALLINT, ...>, the savepoint INT
	"v23-top-n-update-same":                 "",
	"v23-top-n-update-key-retyped":          "type-incompatible",
	"v23-top-n-update-order-reversed":       "", // ASC is not monotonic: the Retract strategy's states; data-state-with-update is restored unread
	// Flink 1.20 twins of the 2.3 bases (a 1.20 savepoint of the base's SQL, restored by 2.3.0
	// under the changed SQL compiled by 2.3.0): the same predictions.
	"v120-session-same":                 "",
	"v120-session-aggregate-added":      "type-incompatible",
	"v120-group-window-same":            "",
	"v120-group-window-aggregate-added": "type-incompatible",
	"v120-top-n-update-same":            "",
	"v120-top-n-update-key-retyped":     "type-incompatible",
	"v120-dedup-rowtime-same":           "",                  // 2.3 keeps first by rowtime in other states (outputInsertOnly): the 1.20 state restored unread, wrong rows
	"v120-dedup-rowtime-first-to-last":  "",                  // the keep-first states restored unread
	"v120-top-n-retract-same":           "type-incompatible", // 2.3 feeds the rank another column (BIGINT NOT NULL) than 1.20 did: data-state's rows differ
	"v120-top-n-retract-order-reversed": "type-incompatible", // the sorted map's comparator
	"v120-over-range-same":              "",
	"v120-over-range-sum-to-max":        "type-incompatible",
	// Ranks (one job of six: Top-3, Top-1, Top-1 and Top-2 with row number, first-2 by
	// processing time, UpdateFast and retracting Top-1) and aggregates over retractions (LISTAGG
	// with a separator, JSON_OBJECTAGG, JSON_ARRAYAGG, MAX and COUNT(DISTINCT) over DECIMAL and
	// TIMESTAMP): the second set of derived states (rankMismatches below names each mismatch).
	// Row-count windows (the Table API's; CountWindow namespaces, their two counters), tumbling
	// and sliding.
	"v23-count-window-same":                         "",
	"v23-count-window-sum-retyped":                  "type-incompatible", // window-aggs Row<BIGINT, INT> -> Row<BIGINT, BIGINT>
	"v23-count-window-key-retyped":                  "type-incompatible",
	"v23-count-window-slide-same":                   "",
	"v23-count-window-slide-sum-retyped":            "type-incompatible",
	"v23-ranks-same":                                "",
	"v23-ranks-amount-retyped":                      "type-incompatible", // every rank's rows (not the first-N's counter)
	"v23-ranks-top1-to-top2":                        "",                  // Top1-Rank-State restored unread, the Top-2 starts empty: wrong rows
	"v23-retract-more-same":                         "",
	"v23-retract-more-listagg-no-separator":         "type-incompatible", // ListAggWsWithRetractAccumulator -> ListAggWithRetractAccumulator
	"v23-retract-more-distinct-decimal-scale":       "type-incompatible", // distinctAcc_0's key DecimalData(12, 2) -> (12, 3)
	"v23-retract-more-distinct-timestamp-precision": "type-incompatible", // distinctAcc_1's key TimestampData(6) -> (9)
}

// TestTypeCatalogueNamesMismatches: where Flink refused a case of the second set, savepoint
// check names every state whose type the change breaks (node id, state), with the savepoint's
// and the plan's types, and no other; Flink's refusal names only the first it meets.
func TestTypeCatalogueNamesMismatches(t *testing.T) {
	for name, want := range map[string][]string{
		// amount INT -> BIGINT: the rows of every rank over orders (Top-3, Top-1, ascending
		// Top-1, Top-2 with row number, the retracting Top-1's rows and sort keys, the dedup in
		// front of it); not the first-N's counter (node 14) nor the Top-1 by order count (21:
		// no amount in its rows).
		"v23-ranks-amount-retyped": {"10/data-state-with-append", "24/deduplicate-state", "27/data-state", "27/sorted-map",
			"3/data-state-with-append", "5/Top1-Rank-State", "7/Top1-Rank-State"},
		"v23-retract-more-listagg-no-separator":         {"7/accState"},
		"v23-count-window-sum-retyped":                  {"3/window-aggs"},
		"v23-count-window-slide-sum-retyped":            {"3/window-aggs"},
		"v23-retract-more-distinct-decimal-scale":       {"7/distinctAcc_0"},
		"v23-retract-more-distinct-timestamp-precision": {"7/distinctAcc_1"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := testdata("upgrades", "types", name)
			var fo flinkOutcome
			data, err := os.ReadFile(filepath.Join(dir, "flink.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &fo); err != nil {
				t.Fatal(err)
			}
			if fo.Flink != "refused" || !strings.Contains(fo.Message, "StateMigrationException") {
				t.Fatalf("Flink %s (%s), want a refused restore", fo.Flink, fo.Message)
			}
			sp, err := savepoint.Open(testdata(fo.Savepoint))
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			b, err := Open(loadPlan(t, filepath.Join(dir, "new.plan.json")), plan.UIDOptions{}, sp)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, n := range Check(b, CheckOptions{}).Nodes {
				for _, v := range n.Types {
					if v.Verdict == TypesIncompatible {
						got = append(got, fmt.Sprintf("%d/%s", n.ID, v.State))
						t.Logf("node %d %s: %s (savepoint %v, plan %v)", n.ID, v.State, v.Detail, v.Savepoint, v.Plan)
					}
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("incompatible states %v, want %v", got, want)
			}
		})
	}
}
