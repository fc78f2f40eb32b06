package migrate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The aggregate with a DISTINCT over several columns (testdata/specs/sql-distinct-columns.sql:
// LISTAGG(DISTINCT s, '-') and COUNT(*), grouped by k over an append-only source; Flink 2.3.0
// does not plan COUNT(DISTINCT a, b)). Its accumulator row, as dump prints it:
//
//	[ "-", "a-b", 4, {"dataView": "MapView"} ]
//	  LISTAGG's delimiter and value, COUNT(*), the DISTINCT view
//
// and its view distinctAcc_0 maps each distinct row of the arguments (s, '-'), a JSON array as
// dump prints a RowData (["a","-"], [null,"-"] for a NULL s), to the bits of the calls that saw it.
const rowViewsSpec = "sql-distinct-columns"

// createSQLRowViewsSpec creates the savepoint testdata/specs/sql-distinct-columns.yaml declares,
// loaded with a view of rows no job produced, and returns it with the expectation that Flink,
// executing the plan restored from it, carries it on (rows k, l, n):
//
//	group 1  loaded: (x, '-'), (y, '-'), (NULL, '-'); l x-y; 3 rows
//	         +I 1 y    (y, '-') seen: not appended again   -U[1, x-y, 3]  +U[1, x-y, 4]
//	         +I 1 z    a new row: appended                 -U[1, x-y, 4]  +U[1, x-y-z, 5]
//	group 7  loaded: (é ☃, '-'); 1 row
//	         +I 7 é ☃  seen                                -U[7, é ☃, 1]  +U[7, é ☃, 2]
//	group 99 +I 99 n   a new group                         +I[99, n, 1]
//
// A row key Flink could not find (its bytes, its key group or its serializer wrong) would be
// appended again.
func createSQLRowViewsSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	view := `{"dataView":"MapView"}`
	lines := []string{
		`{"operator":"uid:4_group-aggregate","state":"distinctAcc_0","key":[1],"userKey":["x","-"],"value":1}`,
		`{"operator":"uid:4_group-aggregate","state":"distinctAcc_0","key":[1],"userKey":["y","-"],"value":1}`,
		`{"operator":"uid:4_group-aggregate","state":"distinctAcc_0","key":[1],"userKey":[null,"-"],"value":1}`,
		`{"operator":"uid:4_group-aggregate","state":"accState","key":[1],"value":["-","x-y",3,` + view + `]}`,
		`{"operator":"uid:4_group-aggregate","state":"distinctAcc_0","key":[7],"userKey":["é ☃","-"],"value":1}`,
		`{"operator":"uid:4_group-aggregate","state":"accState","key":[7],"value":["-","é ☃",1,` + view + `]}`,
	}
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, rowViewsSpec)), Options{}, &Load{Data: data})
	emit := func(k int64, s string) map[string]any { return map[string]any{"emit": "src", "row": []any{k, s}} }
	return dst, planExpect(t, rowViewsSpec, "statecraft-declared DISTINCT view keyed by rows (LISTAGG(DISTINCT s, '-')) carried on",
		[]any{emit(1, "y"), emit(1, "z"), emit(7, "é ☃"), emit(99, "n")},
		[]string{"-U[1, x-y, 3]", "+U[1, x-y, 4]", "-U[1, x-y, 4]", "+U[1, x-y-z, 5]", "-U[7, é ☃, 1]", "+U[7, é ☃, 2]", "+I[99, n, 1]"})
}

// createSQLRowViewsLike creates a savepoint like Flink's of the aggregate
// (testdata/specs/sql-distinct-columns-savepoint: group 1 saw a, b, a, NULL; group 2 "zoë ☃")
// from its dump (create --like), and returns it with the expectation that Flink executing the
// plan restored from it carries the view keyed by rows on (rows k, l, n):
//
//	+I 1 c        a new row (c, '-'): appended        -U[1, a-b, 4]  +U[1, a-b-c, 5]
//	+I 1 b        (b, '-') seen: not appended again   -U[1, a-b-c, 5]  +U[1, a-b-c, 6]
//	+I 2 zoë ☃    seen                                -U[2, zoë ☃, 1]  +U[2, zoë ☃, 2]
func createSQLRowViewsLike(t *testing.T) (dst, expect string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "specs", rowViewsSpec+"-savepoint")
	data := writeLines(t, dumpKeyed(t, src))
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	emit := func(k int64, s string) map[string]any { return map[string]any{"emit": "src", "row": []any{k, s}} }
	return dst, planExpect(t, rowViewsSpec, "statecraft-created (create --like) DISTINCT view keyed by rows (LISTAGG(DISTINCT s, '-')) carried on",
		[]any{emit(1, "c"), emit(1, "b"), emit(2, "zoë ☃")},
		[]string{"-U[1, a-b, 4]", "+U[1, a-b-c, 5]", "-U[1, a-b-c, 5]", "+U[1, a-b-c, 6]", "-U[2, zoë ☃, 1]", "+U[2, zoë ☃, 2]"})
}

// TestLoadSpecSQLRowViews: the aggregate whose DISTINCT view is keyed by a row of its arguments,
// declared by its plan and created --like Flink's savepoint of it, each loaded with the dump of
// Flink's savepoint, holds exactly the dumped entries (the row keys, a NULL field among them) and
// Flink's accumulator rows byte for byte.
func TestLoadSpecSQLRowViews(t *testing.T) {
	want := loadedLikeFlink(t, rowViewsSpec, "4_group-aggregate", 6)
	if !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, `"userKey":[null,"-"]`) }) {
		t.Fatalf("Flink's dump of the aggregate has no row key with a NULL field:\n%s", strings.Join(want, "\n"))
	}
}
