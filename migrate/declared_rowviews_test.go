package migrate

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/spec"
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
	data := filepath.Join(t.TempDir(), "data.jsonl")
	if err := os.WriteFile(data, []byte(strings.Join(dumpKeyed(t, src), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	emit := func(k int64, s string) map[string]any { return map[string]any{"emit": "src", "row": []any{k, s}} }
	return dst, planExpect(t, rowViewsSpec, "statecraft-created (create --like) DISTINCT view keyed by rows (LISTAGG(DISTINCT s, '-')) carried on",
		[]any{emit(1, "c"), emit(1, "b"), emit(2, "zoë ☃")},
		[]string{"-U[1, a-b, 4]", "+U[1, a-b-c, 5]", "-U[1, a-b-c, 5]", "+U[1, a-b-c, 6]", "-U[2, zoë ☃, 1]", "+U[2, zoë ☃, 2]"})
}

// TestLoadSpecSQLRowViews: the aggregate whose DISTINCT view is keyed by a row of its arguments,
// created --like Flink's savepoint of it from its dump, holds exactly the dumped entries (the
// row keys among them) and Flink's accumulator rows byte for byte; declared by its plan it is
// refused, naming the state and its row key (statecraft does not write the ExternalSerializer
// over a FieldsDataType that such a key has).
func TestLoadSpecSQLRowViews(t *testing.T) {
	flink := filepath.Join("..", "testdata", "specs", rowViewsSpec+"-savepoint")
	var want []string
	for _, l := range dumpKeyed(t, flink) {
		if strings.Contains(l, `"operator":"uid:4_group-aggregate"`) {
			want = append(want, l)
		}
	}
	if len(want) != 6 || !slices.ContainsFunc(want, func(l string) bool { return strings.Contains(l, `"userKey":[null,"-"]`) }) {
		t.Fatalf("Flink's dump of the aggregate:\n%s", strings.Join(want, "\n"))
	}
	dst, _ := createSQLRowViewsLike(t)
	got := dumpKeyed(t, dst)
	got = slices.DeleteFunc(got, func(l string) bool { return !strings.Contains(l, `"operator":"uid:4_group-aggregate"`) })
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("created --like, the savepoint holds\n%s\nFlink's\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	flinkRows, ourRows := accRowsOf(t, flink, "4_group-aggregate"), accRowsOf(t, dst, "4_group-aggregate")
	if len(flinkRows) != 2 || len(ourRows) != len(flinkRows) {
		t.Fatalf("%d accumulator rows written, Flink wrote %d", len(ourRows), len(flinkRows))
	}
	for key, raw := range flinkRows {
		if !bytes.Equal(ourRows[key], raw) {
			t.Errorf("key %s: accumulator row\n%x\nFlink wrote\n%x", key, ourRows[key], raw)
		}
	}
	f := filepath.Join(t.TempDir(), "spec.yaml")
	if err := os.WriteFile(f, []byte(readSpecText(t, rowViewsSpec, 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := spec.Read(f)
	const refusal = "node 4: state distinctAcc_0 holds Map<External<Row<VARCHAR(2147483647), CHAR(1) NOT NULL>>, External<Long>>: DISTINCT over several columns (VARCHAR(2147483647), CHAR(1) NOT NULL), whose key is a row"
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Fatalf("declared by its plan: error %v, want one containing %q", err, refusal)
	}
}

// readSpecText declares exec node of testdata/specs/<name>.json (a plan no .yaml declares).
func readSpecText(t *testing.T, name string, node int) string {
	t.Helper()
	plan, err := filepath.Abs(filepath.Join("..", "testdata", "specs", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("operators:\n  - plan: %s\n    node: %d\n", plan, node)
}
