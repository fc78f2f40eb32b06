package bridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
)

// flinkOutcome is one case's flink.json of the type catalogue (oracle type-catalogue, generated
// once by make fixtures into testdata/upgrades/types/<case>/).
type flinkOutcome struct {
	Case    string `json:"case"`
	Flink   string `json:"flink"` // restored, restored-wrong, refused
	Message string `json:"message"`
	// OldPlan and Savepoint (under testdata/) are set for the 1.20 -> 2.3 cases; the others
	// restore upgrades/agg-filter-added.
	OldPlan   string `json:"oldPlan"`
	Savepoint string `json:"savepoint"`
}

// TestTypeCatalogueAgreesWithFlink: for every query change of the catalogue, Flink 2.3.0 restored
// the savepoint of OLD (upgrades/agg-filter-added) under NEW and the outcome is recorded.
// savepoint check, plan upgrade (its check after the renames) and plan diff must agree with it:
//   - Flink refused: check and upgrade never say "restores" with the types checked, and where
//     statecraft derives the types (want below) they name the type error; plan diff says
//     incompatible;
//   - Flink restored with the right rows: check and upgrade say it restores, plan diff does not
//     say incompatible;
//   - Flink restored with wrong rows: plan diff says incompatible (check cannot know without OLD).
func TestTypeCatalogueAgreesWithFlink(t *testing.T) {
	oldp, _, sp, dir := upgradeFixture(t)
	cat := filepath.Join(filepath.Dir(dir), "types")
	entries, err := os.ReadDir(cat)
	if err != nil {
		t.Fatalf("type catalogue %s: %v (make fixtures)", cat, err)
	}
	// What statecraft predicts per case: the finding code that makes the restore fail
	// (type-incompatible first), "" when it restores with every type checked, "not-checked" when
	// it cannot derive a state's type.
	want := map[string]string{
		"same":                "",
		"alias-changed":       "",
		"ttl-switched-on":     "type-migrates", // Flink 2.2+ migrates values into TTL ones
		"key-column-added":    "type-incompatible",
		"key-retyped":         "dropped", // a Calc in front shifts the ids: the state maps to no operator
		"key-not-null":        "dropped",
		"aggregate-added":     "type-incompatible", // COUNT, SUM, MAX accumulators: 3 fields, the savepoint has 2
		"aggregate-removed":   "dropped",
		"count-distinct":      "type-incompatible", // the DISTINCT view's RAW field: 3 fields, the savepoint 2
		"sum-retyped":         "dropped",
		"sum-to-max":          "",
		"key-meaning-changed": "dropped",
		// Flink 1.20 savepoints restored by 2.3.0 under a changed 2.3 plan.
		"v120-join-key-column-added":             "type-incompatible",
		"v120-top-n-key-retyped":                 "type-incompatible",
		"v120-window-alias-changed":              "",
		"v120-window-aggregate-added":            "type-incompatible", // window-aggs: Row<INT, INT>, the savepoint Row<INT>
		"v120-join-alias-changed":                "",
		"v120-join-key-retyped":                  "type-incompatible",
		"v120-join-filter-added":                 "dropped",           // a Calc in front shifts the ids (plan diff: uid-remap)
		"v120-join-projection-changed":           "",                  // same types, another column: Flink restores, wrong rows
		"v120-join-left-to-inner":                "type-incompatible", // left-records Map value Tuple2<Integer, Integer> -> Integer
		"v120-join-ttl-hint-changed":             "",
		"v120-join-ttl-hint-removed":             "type-migrates",
		"v120-interval-join-bound-changed":       "", // its buffers' rowtime column compares as TIMESTAMP(3)
		"v120-interval-join-key-added":           "dropped",
		"v120-group-key-column-added":            "dropped",
		"v120-group-count-distinct":              "dropped",
		"v120-group-sum-to-max":                  "",
		"v120-group-two-phase":                   "dropped", // local + global aggregate: other operators
		"v120-group-incremental":                 "dropped",
		"v120-group-ttl-switched-on":             "type-migrates",
		"v120-group-ttl-switched-off":            "type-migrates",
		"v120-group-ttl-changed":                 "",
		"v120-sink-materialize":                  "", // the sink's materializer starts empty: +I where a continued job sent +U
		"v120-dedup-first-to-last":               "type-incompatible",
		"v120-dedup-key-changed":                 "",                  // same types, another key column: wrong rows (plan diff: incompatible)
		"v120-dedup-aggregate-sum-to-max":        "type-incompatible", // SUM with retraction (sum, count) -> MAX
		"v120-top-n-order-reversed":              "",
		"v120-top-n-partition-changed":           "",
		"v120-over-key-retyped":                  "type-incompatible",
		"v120-over-sum-to-max":                   "type-incompatible", // MAX over retractions: 2 accumulator fields, the savepoint 3
		"v120-changelog-filter-rewritten":        "",                  // Flink 2.x moves the filter into the operator
		"v120-changelog-key-retyped":             "type-incompatible",
		"v120-window-size-changed":               "",
		"v120-window-sum-to-max":                 "",
		"v120-dedup-aggregate-sum-to-avg":        "type-incompatible", // Row<BIGINT, INT, BIGINT> -> AVG's Row<BIGINT, BIGINT, BIGINT>
		"v120-group-avg-added":                   "type-incompatible",
		"v120-statement-set-key-meaning-changed": "",
		"v120-statement-set-insert-dropped":      "dropped",
		// Flink 2.3.0 savepoints (upgrades/types-savepoints) restored by 2.3.0 under a changed plan.
		"v23-join-key-retyped":             "type-incompatible",
		"v23-join-alias-changed":           "",
		"v23-join-key-column-added":        "type-incompatible",
		"v23-join-left-to-inner":           "type-incompatible",
		"v23-interval-join-bound-changed":  "", // the rowtime column compares as TIMESTAMP(3)
		"v23-dedup-first-to-last":          "type-incompatible",
		"v23-dedup-key-changed":            "", // same types, another key column: wrong rows (plan diff: incompatible)
		"v23-top-n-key-retyped":            "type-incompatible",
		"v23-top-n-order-reversed":         "",
		"v23-window-alias-changed":         "",
		"v23-window-aggregate-added":       "type-incompatible",
		"v23-window-sum-to-distinct":       "type-incompatible", // window-aggs gains the view's RAW field
		"v23-window-distinct-same":         "",
		"v23-window-distinct-removed":      "type-incompatible",
		"v23-window-tumble-to-session":     "dropped",           // another operator (session windows do not slice)
		"v23-window-tumble-to-hop":         "type-incompatible", // a hopping window adds a COUNT(*)
		"v23-window-tumble-to-cumulate":    "",                  // same slice namespace and accumulators: wrong rows
		"v23-over-sum-to-max":              "type-incompatible", // MAX over retractions: 2 fields, the savepoint 3
		"v23-over-alias-changed":           "",
		"v23-over-range-same":              "",
		"v23-over-range-sum-to-max":        "type-incompatible",
		"v23-distinct-same":                "",
		"v23-distinct-alias-changed":       "",
		"v23-distinct-removed":             "dropped",
		"v23-distinct-added":               "type-incompatible",
		"v23-distinct-column-retyped":      "dropped",
		"v23-two-phase-alias-changed":      "",
		"v23-two-phase-sum-to-max":         "",
		"v23-retract-alias-changed":        "",
		"v23-retract-sum-to-max":           "type-incompatible", // SUM with retraction (sum, count) -> MAX
		"v23-retract-count-added":          "type-incompatible",
		"v23-dedup-rowtime-same":           "",
		"v23-dedup-rowtime-first-to-last":  "", // keep last registers deduplicate-state: the keep-first states are restored unread
		"v23-dedup-rowtime-key-retyped":    "type-incompatible",
		"v23-top-n-retract-same":           "",
		"v23-top-n-retract-order-reversed": "type-incompatible", // the sorted map's comparator (DESC -> ASC)
		// Built-in aggregate functions (plan/aggfuncs.go): one aggregate computing many at once.
		"v23-builtins-same":              "",
		"v23-builtins-alias-changed":     "",
		"v23-builtins-avg-int-to-bigint": "",                  // AVG's (BIGINT sum, BIGINT count) either way
		"v23-builtins-avg-int-to-double": "type-incompatible", // sum BIGINT -> DOUBLE
		"v23-builtins-avg-decimal-scale": "type-incompatible", // sum DECIMAL(38, 2) -> DECIMAL(38, 3): only the Calc in front changed
		"v23-builtins-sum-added":         "type-incompatible",
		"v23-builtins-max-retyped":       "type-incompatible",
		"v23-builtins-first-retyped":     "type-incompatible", // ROW<`firstValue` INT, ...> -> BIGINT
		"v23-builtins-first-to-last":     "type-incompatible", // the accumulator row's field names: firstValue -> lastValue
		"v23-collect-same":               "",
		"v23-collect-retyped":            "type-incompatible", // agg1$map's key External<Integer> -> External<Long>
		// In an over aggregate (every call retracts) and a tumbling window aggregate.
		"v23-over-builtins-same":            "",
		"v23-over-builtins-max-retyped":     "type-incompatible", // accState and agg3$map's key
		"v23-window-builtins-same":          "",
		"v23-window-builtins-avg-to-double": "type-incompatible",
		// The same over retractions: structured accumulators with map and list views.
		"v23-retract-builtins-same":          "",
		"v23-retract-builtins-max-retyped":   "type-incompatible", // the structured max INT -> BIGINT, agg4$map's key
		"v23-retract-builtins-min-to-max":    "type-incompatible", // MinWithRetractAccumulator -> MaxWithRetractAccumulator
		"v23-retract-builtins-first-retyped": "type-incompatible",
		"v23-retract-builtins-avg-to-sum":    "type-incompatible",
		// Split distinct aggregates (partial and final aggregate: other operators) and a
		// two-phase aggregate over retractions.
		"v23-split-same":                    "",
		"v23-split-off":                     "dropped",
		"v23-split-on":                      "dropped",
		"v23-split-sum-to-max":              "dropped", // MAX is not split: the operators change
		"v23-retract-two-phase-same":        "",
		"v23-retract-two-phase-sum-to-max":  "type-incompatible",
		"v23-retract-two-phase-count-added": "type-incompatible",
		// Without a COUNT(*), the global half inserts its own after the calls' accumulators.
		"v23-retract-two-phase-no-count-same":      "",
		"v23-retract-two-phase-no-count-max-added": "type-incompatible",
		// A split DISTINCT under mini-batch: the incremental aggregate keeps only the DISTINCT
		// views under its (key, bucket) key.
		"v23-incremental-same":             "",
		"v23-incremental-alias-changed":    "",
		"v23-incremental-distinct-retyped": "type-incompatible", // distinctAcc_0: External<Long> -> External<Integer>
		"v23-incremental-split-off":        "dropped",
	}
	for name, w := range nodeWants {
		want[name] = w
	}
	seen := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		seen++
		name := e.Name()
		t.Run(name, func(t *testing.T) {
			var fo flinkOutcome
			data, err := os.ReadFile(filepath.Join(cat, name, "flink.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(data, &fo); err != nil {
				t.Fatal(err)
			}
			oldp, sp := oldp, sp
			if fo.Savepoint != "" {
				oldp = loadPlan(t, testdata(fo.OldPlan))
				sp, err = savepoint.Open(testdata(fo.Savepoint))
				if err != nil {
					t.Fatal(err)
				}
				defer sp.Close()
			}
			newp := loadPlan(t, filepath.Join(cat, name, "new.plan.json"))
			b, err := Open(newp, plan.UIDOptions{}, sp)
			if err != nil {
				t.Fatal(err)
			}
			chk := Check(b, CheckOptions{})
			up, err := Upgrade(oldp, newp, plan.UIDOptions{}, sp, CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			diff := plan.Diff(oldp, newp).Verdict
			t.Logf("Flink: %s (%s)", fo.Flink, fo.Message)
			t.Logf("verdicts %s: Flink %s; savepoint check %q (restores=%v, not checked %d: %s); plan upgrade %q; plan diff %s",
				name, fo.Flink, prediction(chk), chk.Restores, chk.TypesNotChecked, codes(chk), prediction(up.After), diff)
			w, ok := want[name]
			if !ok {
				t.Fatalf("case %s has no prediction in this test", name)
			}
			// plan upgrade checks the savepoint as it is (Before) like savepoint check, and after
			// its renames (After): those exist only where plan diff says uid-remap, and Flink's
			// verdict is on the unrenamed restore, so After is held to check's answer elsewhere.
			switch got := prediction(chk); {
			case got != w:
				t.Errorf("savepoint check predicts %q, want %q: %v", got, w, chk.Findings)
			case prediction(up.Before) != w:
				t.Errorf("plan upgrade's check before renames predicts %q, savepoint check %q", prediction(up.Before), w)
			case diff != plan.UIDRemap && prediction(up.After) != w:
				t.Errorf("plan upgrade's check predicts %q, savepoint check %q", prediction(up.After), w)
			case diff == plan.UIDRemap && (len(up.Renames) == 0 || w != "dropped"):
				t.Errorf("plan diff says uid-remap, plan upgrade renames %d operators, savepoint check predicts %q", len(up.Renames), w)
			}
			// One model: a type error savepoint check finds is a change plan diff calls
			// incompatible, and where plan diff sees nothing that reaches state (compatible,
			// TTL only) savepoint check finds no error.
			if prediction(chk) == "type-incompatible" && diff != plan.Incompatible {
				t.Errorf("savepoint check finds a type error, plan diff says %s", diff)
			}
			if (diff == plan.Compatible || diff == plan.TTLOnly) && !chk.Restores {
				t.Errorf("plan diff says %s, savepoint check says it does not restore: %v", diff, chk.Findings)
			}
			// savepoint check --old-plan: the meaning check on top.
			withOld := Check(b, CheckOptions{})
			CheckMeaning(withOld, plan.Diff(oldp, newp))
			checked := chk.Restores && chk.TypesNotChecked == 0
			switch fo.Flink {
			case "refused":
				if checked || (diff != plan.UIDRemap && up.After.Restores && up.After.TypesNotChecked == 0) {
					t.Errorf("Flink refused (%s), statecraft says it restores with the types checked", fo.Message)
				}
				flinkSays := map[string]string{"type-incompatible": "StateMigrationException", "dropped": "Cannot map checkpoint/savepoint state"}[w]
				if flinkSays != "" && !strings.Contains(fo.Message, flinkSays) {
					t.Errorf("statecraft predicts %s, Flink refused for another reason: %s", w, fo.Message)
				}
				// uid-remap: the state is intact under other UIDs, so as it is Flink cannot map it
				// (check: dropped) and plan upgrade's renames are the way out.
				if diff != plan.Incompatible && !(diff == plan.UIDRemap && strings.Contains(fo.Message, "Cannot map checkpoint/savepoint state")) {
					t.Errorf("plan diff says %s for a change Flink refuses", diff)
				}
			case "restored":
				if !chk.Restores || !up.After.Restores {
					t.Errorf("Flink restored with the right rows, check restores=%v, upgrade restores=%v: %v", chk.Restores, up.After.Restores, chk.Findings)
				}
				if diff == plan.Incompatible {
					t.Errorf("plan diff says incompatible for a change Flink restores correctly")
				}
				if !withOld.Restores {
					t.Errorf("savepoint check --old-plan says it does not restore: %v", withOld.Findings)
				}
			case "restored-wrong":
				if !chk.Restores {
					t.Errorf("Flink accepted the state, check says it does not restore: %v", chk.Findings)
				}
				if diff != plan.Incompatible {
					t.Errorf("Flink restored with wrong rows (%s), plan diff says %s", fo.Message, diff)
				}
				// Either a restored node reads its state with another meaning (--old-plan says
				// so), or a stateful node starts empty where a continued job had state (savepoint
				// check warns on its own).
				meaning := !withOld.Restores && strings.Contains(codes(withOld), "state-meaning")
				if !meaning && !strings.Contains(codes(withOld), "starts-empty") && !strings.Contains(codes(withOld), "state-unread") {
					t.Errorf("Flink restored with wrong rows, savepoint check --old-plan says restores=%v: %v", withOld.Restores, withOld.Findings)
				}
			default:
				t.Fatalf("flink.json: unknown outcome %q", fo.Flink)
			}
		})
	}
	if seen < len(want) {
		t.Errorf("catalogue has %d cases, this test predicts %d", seen, len(want))
	}
}

// prediction is the first error Flink meets: state it cannot map to an operator fails the
// job before any operator restores (StateAssignmentOperation), then a serializer a restoring
// operator cannot resolve.
func prediction(r *Report) string {
	first := ""
	for _, code := range []string{"dropped", "type-incompatible"} {
		for _, f := range r.Findings {
			if f.Code == code && f.Severity == SevError {
				return f.Code
			}
		}
	}
	for _, f := range r.Findings {
		if f.Severity == SevError && first == "" {
			first = f.Code
		}
	}
	if first != "" {
		return first
	}
	if r.TypesNotChecked > 0 {
		return TypesNotChecked
	}
	for _, f := range r.Findings {
		if f.Code == "type-migrates" {
			return f.Code
		}
	}
	return ""
}

func codes(r *Report) string {
	var c []string
	for _, f := range r.Findings {
		c = append(c, f.Code)
	}
	sort.Strings(c)
	return strings.Join(c, ",")
}
