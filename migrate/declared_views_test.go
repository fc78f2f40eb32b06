package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// The SQL aggregate with state-backed data views (testdata/specs/sql-distinct-aggregate.sql:
// COUNT(DISTINCT v), SUM(v), MIN(v) over an upsert source's retractions, grouped by k) declared
// by its plan. Its accumulator row, as dump prints it and create takes it:
//
//	[ d,  sum, sumCount, [min, mapSize, {"dataView": "MapView"}], count(*), {"dataView": "MapView"} ]
//	  COUNT   SUM(v) with     MIN(v)'s MinWithRetractAccumulator         COUNT(*)   the DISTINCT
//	  DISTINCT retraction     (its values' counts in agg2$map)           inserted   view
//
// and its views' entries: distinctAcc_0 and agg2$map map each v (the user key) to its row count.
const viewsSpec = "sql-distinct-aggregate"

// viewsGroup is one group's bootstrapped views: each value's row count.
type viewsGroup struct {
	key    int64
	counts map[int32]int64
}

// viewsLines are the data lines of the groups: accState derived from the counts (the distinct
// count, the sum, the rows, the minimum) and one distinctAcc_0 and agg2$map entry per value.
func viewsLines(groups []viewsGroup) []string {
	var lines []string
	for _, g := range groups {
		var sum int32
		var rows int64
		minV := int32(1 << 30)
		for v, n := range g.counts {
			sum += v * int32(n)
			rows += n
			minV = min(minV, v)
			for _, st := range []string{"distinctAcc_0", "agg2$map"} {
				lines = append(lines, fmt.Sprintf(`{"operator":"uid:6_group-aggregate","state":%q,"key":[%d],"userKey":%d,"value":%d}`, st, g.key, v, n))
			}
		}
		view := `{"dataView":"MapView"}`
		lines = append(lines, fmt.Sprintf(`{"operator":"uid:6_group-aggregate","state":"accState","key":[%d],"value":[%d,%d,%d,[%d,%d,%s],%d,%s]}`,
			g.key, len(g.counts), sum, rows, minV, len(g.counts), view, rows, view))
	}
	return lines
}

// createSQLViewsSpec creates the savepoint testdata/specs/sql-distinct-aggregate.yaml declares,
// loaded with views no job produced, and returns it with the expectation that Flink, executing
// the plan restored from it, carries them on: group 1 has seen 5 once and 8 twice, group 7 40
// once. One upsert id per group, so each group's rows pass one ChangelogNormalize subtask in
// order:
//
//	group 1  +I id 100 v 8   8 seen already: the distinct count stays 2      -U[1, 2, 21, 5]  +U[1, 2, 29, 5]
//	         +I id 100 v 2   retracts 8, then 2 is new: 3 distinct, min 2    -U[1, 2, 29, 5]  +U[1, 2, 21, 5]
//	                                                                         -U[1, 2, 21, 5]  +U[1, 3, 23, 2]
//	         -D id 100       retracts 2: the minimum falls back to 5, which  -U[1, 3, 23, 2]  +U[1, 2, 21, 5]
//	                         only the loaded agg2$map holds
//	group 7  +I id 200 v 40  40 seen: its count is 2                         -U[7, 1, 40, 40] +U[7, 1, 80, 40]
//	         -D id 200       the loaded row of 40 keeps it distinct and the  -U[7, 1, 80, 40] +U[7, 1, 40, 40]
//	                         minimum (empty views would say 0 and null)
//	group 99 +I id 300 v 1   a new group                                     +I[99, 1, 1, 1]
func createSQLViewsSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	lines := viewsLines([]viewsGroup{{1, map[int32]int64{5: 1, 8: 2}}, {7, map[int32]int64{40: 1}}})
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, viewsSpec)), Options{}, &Load{Data: data})
	steps := []any{viewsEmit("+I", 100, 1, 8), viewsEmit("+I", 100, 1, 2), viewsEmit("-D", 100, 1, 2),
		viewsEmit("+I", 200, 7, 40), viewsEmit("-D", 200, 7, 40), viewsEmit("+I", 300, 99, 1)}
	rows := []string{"-U[1, 2, 21, 5]", "+U[1, 2, 29, 5]", "-U[1, 2, 29, 5]", "+U[1, 2, 21, 5]", "-U[1, 2, 21, 5]", "+U[1, 3, 23, 2]",
		"-U[1, 3, 23, 2]", "+U[1, 2, 21, 5]", "-U[7, 1, 40, 40]", "+U[7, 1, 80, 40]", "-U[7, 1, 80, 40]", "+U[7, 1, 40, 40]", "+I[99, 1, 1, 1]"}
	return dst, viewsExpect(t, "statecraft-declared DISTINCT and MIN-over-retraction views carried on", steps, rows)
}

// createSQLViewsLike creates a savepoint like Flink's of the data-view aggregate
// (testdata/specs/sql-distinct-aggregate-savepoint: group 1 saw ids 1, 2, 3 with v 10, 20, 20;
// group 2 id 4 with 7) from its dump (create --like: the views' entries, accState's RAW and
// STRUCTURED fields, ChangelogNormalize's rows), and returns it with the expectation that Flink
// executing the plan restored from it carries all of them on:
//
//	+I id 3 v 5   ChangelogNormalize retracts id 3's restored 20, then 5 is new     -U[1, 2, 50, 10] +U[1, 2, 30, 10]
//	                                                                              -U[1, 2, 30, 10] +U[1, 3, 35, 5]
//	-D id 3       retracts 5: the minimum falls back to the restored 10            -U[1, 3, 35, 5]  +U[1, 2, 30, 10]
//	+I id 6 v 3   group 2: a new distinct value and minimum                        -U[2, 1, 7, 7]   +U[2, 2, 10, 3]
func createSQLViewsLike(t *testing.T) (dst, expect string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "specs", viewsSpec+"-savepoint")
	data := writeLines(t, dumpKeyed(t, src))
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	return dst, viewsExpect(t, "statecraft-created (create --like) DISTINCT and MIN-over-retraction views carried on",
		[]any{viewsEmit("+I", 3, 1, 5), viewsEmit("-D", 3, 1, 5), viewsEmit("+I", 6, 2, 3)},
		[]string{"-U[1, 2, 50, 10]", "+U[1, 2, 30, 10]", "-U[1, 2, 30, 10]", "+U[1, 3, 35, 5]", "-U[1, 3, 35, 5]", "+U[1, 2, 30, 10]",
			"-U[2, 1, 7, 7]", "+U[2, 2, 10, 3]"})
}

// viewsEmit is a step emitting the row (id, k, v) of kind into the aggregate's upsert source.
func viewsEmit(kind string, id, k, v int64) map[string]any {
	return map[string]any{"emit": "src", "kind": kind, "row": []int64{id, k, v}}
}

// viewsExpect is a judge-savepoints expectation: Flink executes the data-view aggregate's plan
// restored from the savepoint it is paired with, fed steps, and its sink receives rows.
func viewsExpect(t *testing.T, description string, steps []any, rows []string) string {
	t.Helper()
	return planExpect(t, viewsSpec, description, steps, rows)
}

// planExpect is a judge-savepoints expectation: Flink executes the plan
// testdata/specs/<spec>.json restored from the savepoint it is paired with, fed steps, and its
// sink agg_out receives rows.
func planExpect(t *testing.T, spec, description string, steps []any, rows []string) string {
	t.Helper()
	dir := t.TempDir()
	specFile := filepath.Join(dir, "spec.json")
	writeJSON(t, specFile, map[string]any{
		"description":  description,
		"settleMillis": 200,
		"after":        map[string]any{"steps": steps, "expect": map[string]any{"agg_out": rows}},
	})
	plan, err := filepath.Abs(filepath.Join("..", "testdata", "specs", spec+".json"))
	if err != nil {
		t.Fatal(err)
	}
	expect := filepath.Join(dir, "expect.json")
	writeJSON(t, expect, map[string]any{"plan": plan, "spec": specFile})
	return expect
}

// TestLoadSpecSQLViews: the aggregate with views declared by its plan and loaded with the dump of
// Flink's savepoint of it (testdata/specs/sql-distinct-aggregate-savepoint) holds exactly the
// dumped entries (the views' map entries, RAW view fields and MIN's nested accumulator among
// them), its accumulator rows Flink's byte for byte; and viewsLines of the counts Flink's groups
// saw are the accumulator rows Flink wrote.
func TestLoadSpecSQLViews(t *testing.T) {
	flink := filepath.Join("..", "testdata", "specs", viewsSpec+"-savepoint")
	var want []string
	for _, l := range dumpKeyed(t, flink) {
		if strings.Contains(l, `"operator":"uid:6_group-aggregate"`) {
			want = append(want, l)
		}
	}
	data := writeLines(t, want)
	dst, _ := run(t, declare(t, readSpec(t, viewsSpec)), Options{}, &Load{Data: data})
	got := dumpKeyed(t, dst)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) || len(want) < 8 {
		t.Fatalf("the declared savepoint holds\n%s\nFlink's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The accumulator rows are Flink's byte for byte: the view fields' variable part (one zero
	// byte) and MIN's nested row included.
	flinkRows, ourRows := accRows(t, flink), accRows(t, dst)
	if len(flinkRows) != 2 || len(ourRows) != len(flinkRows) {
		t.Fatalf("%d accumulator rows declared, Flink wrote %d", len(ourRows), len(flinkRows))
	}
	for key, raw := range flinkRows {
		if !bytes.Equal(ourRows[key], raw) {
			t.Errorf("key %s: accumulator row\n%x\nFlink wrote\n%x", key, ourRows[key], raw)
		}
	}
	// Flink's group 1 saw 10 once and 20 twice, group 2 7 once: the same counts as data lines
	// give Flink's accumulator rows.
	for _, l := range viewsLines([]viewsGroup{{1, map[int32]int64{10: 1, 20: 2}}, {2, map[int32]int64{7: 1}}}) {
		if !strings.Contains(l, `"accState"`) {
			continue
		}
		value := l[strings.Index(l, `"value":`):]
		if !slices.ContainsFunc(want, func(w string) bool { return strings.Contains(w, value) }) {
			t.Errorf("viewsLines' %s is not a row Flink wrote", value)
		}
	}
}

// TestLoadSpecSQLViewsRefusals: a view field or a view entry that is not what the declared
// aggregate keeps is one error naming the file, line and field.
func TestLoadSpecSQLViewsRefusals(t *testing.T) {
	lines := viewsLines([]viewsGroup{{1, map[int32]int64{5: 1}}})
	empty := declare(t, readSpec(t, viewsSpec))
	acc, distinct := lines[2], lines[0]
	for _, tc := range []struct {
		name, line, want string
	}{
		{"list view for a map view", strings.Replace(acc, `1,{"dataView":"MapView"}]}`, `1,{"dataView":"ListView"}]}`, 1),
			`data.jsonl:3: value[5]: want {"dataView": "MapView"} (the field of a state-backed MapView, whose entries are in states of their own), got {"dataView":"ListView"}`},
		{"view as a number", strings.Replace(acc, `[5,1,{"dataView":"MapView"}]`, `[5,1,7]`, 1), `data.jsonl:3: value[3][2]: want {"dataView": "MapView"}`},
		{"view entry of another type", strings.Replace(distinct, `"userKey":5`, `"userKey":"5"`, 1), `data.jsonl:1: userKey: want an integer, got "5"`},
		{"INT view key out of range", strings.Replace(distinct, `"userKey":5`, `"userKey":3000000000`, 1), `data.jsonl:1: userKey: 3000000000 is not an integer in [-2147483648, 2147483647]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.line == acc || tc.line == distinct {
				t.Fatal("the replacement did not apply: the test would prove nothing")
			}
			bad := slices.Clone(lines)
			for i, l := range bad {
				if l == acc && strings.Contains(tc.line, `"accState"`) || l == distinct && strings.Contains(tc.line, `"distinctAcc_0"`) {
					bad[i] = tc.line
				}
			}
			loadRefused(t, empty, "data.jsonl", strings.Join(bad, "\n")+"\n", tc.want)
		})
	}
}

// accRows are the BinaryRowData bytes of the data-view aggregate's accState rows in savepoint dir,
// by key.
func accRows(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	return accRowsOf(t, dir, "6_group-aggregate")
}

// accRowsOf are the BinaryRowData bytes of the accState rows of operator uid in savepoint dir, by
// key.
func accRowsOf(t *testing.T, dir, uid string) map[string][]byte {
	t.Helper()
	sp := open(t, dir)
	out := map[string][]byte{}
	for _, op := range sp.Metadata.Operators {
		if op.UID != uid {
			continue
		}
		subs, closeAll, err := keyed.OpenSubtasks(sp, op)
		if err != nil {
			t.Fatal(err)
		}
		defer closeAll()
		for _, sub := range subs {
			err := sub.Records(func(state string) bool { return state == "accState" }, func(r keyed.Record) error {
				row, ok := r.Value.(serializer.BinaryRow)
				if !ok {
					return fmt.Errorf("accState value %T, want a BinaryRow", r.Value)
				}
				k, err := json.Marshal(r.Key)
				out[string(k)] = row.Raw
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}
