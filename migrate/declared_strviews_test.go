package migrate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The SQL aggregate counting distinct strings (testdata/specs/sql-distinct-string.sql:
// COUNT(DISTINCT s) over a STRING, COUNT(DISTINCT u) over a VARCHAR(20), COUNT(DISTINCT c) over a
// CHAR(3) column and COUNT(*), grouped by k over an append-only source) declared by its plan. Its
// accumulator row, as dump prints it and create takes it:
//
//	[ ds, du, dc, n, {"dataView": "MapView"}, {"dataView": "MapView"}, {"dataView": "MapView"} ]
//	  the DISTINCT   COUNT(*)  the DISTINCT views of s, u and c
//	  counts
//
// and its views' entries: distinctAcc_0, _1 and _2 map each string seen (the user key, a JSON
// string) to the bits of the calls that saw it (1: the one call of each view; an append-only
// DISTINCT keeps no row counts), distinctAcc_<n>_null_state holds them for the NULL value.
const stringViewsSpec = "sql-distinct-string"

// stringViewsGroup is one group's bootstrapped views: the distinct strings of s, u and c, which
// of them saw a NULL, and the rows counted.
type stringViewsGroup struct {
	key   int64
	views [3][]string
	nulls [3]bool
	rows  int64
}

// stringViewsLines are the data lines of the groups: one entry per distinct string and NULL, and
// accState of the distinct counts and the rows.
func stringViewsLines(t *testing.T, groups []stringViewsGroup) []string {
	t.Helper()
	var lines []string
	for _, g := range groups {
		for i, vals := range g.views {
			for _, v := range vals {
				k, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"distinctAcc_%d","key":[%d],"userKey":%s,"value":1}`, i, g.key, k))
			}
			if g.nulls[i] {
				lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"distinctAcc_%d_null_state","key":[%d],"value":1}`, i, g.key))
			}
		}
		view := `{"dataView":"MapView"}`
		lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"accState","key":[%d],"value":[%d,%d,%d,%d,%s,%s,%s]}`,
			g.key, len(g.views[0]), len(g.views[1]), len(g.views[2]), g.rows, view, view, view))
	}
	return lines
}

// stringViewsEmit is a step emitting the row (k, s, u, c) into the aggregate's source; nil is NULL.
func stringViewsEmit(k int64, s, u, c any) map[string]any {
	return map[string]any{"emit": "src", "row": []any{k, s, u, c}}
}

// createSQLStringViewsSpec creates the savepoint testdata/specs/sql-distinct-string.yaml declares,
// loaded with views of strings no job produced, and returns it with the expectation that Flink,
// executing the plan restored from it, carries them on (rows k, ds, du, dc, n):
//
//	group 1  loaded: s u-1, u-2; u /home; c aaa; 2 rows
//	         +I 1 u-2 /home bbb    s and u seen, c new        -U[1, 2, 1, 1, 2]  +U[1, 2, 1, 2, 3]
//	         +I 1 u-3 /x aaa       s and u new, c seen        -U[1, 2, 1, 2, 3]  +U[1, 3, 2, 2, 4]
//	group 7  loaded: s zoë ☃ (not ASCII); u NULL only; c ccc; 1 row
//	         +I 7 zoë ☃ NULL ccc   all seen: only n counts    -U[7, 1, 0, 1, 1]  +U[7, 1, 0, 1, 2]
//	group 99 +I 99 new n nnn       a new group                +I[99, 1, 1, 1, 1]
//
// Views Flink could not find (a string's bytes, its key group or its serializer wrong) would count
// the seen strings again.
func createSQLStringViewsSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	lines := stringViewsLines(t, []stringViewsGroup{
		{key: 1, views: [3][]string{{"u-1", "u-2"}, {"/home"}, {"aaa"}}, rows: 2},
		{key: 7, views: [3][]string{{"zoë ☃"}, nil, {"ccc"}}, nulls: [3]bool{false, true, false}, rows: 1},
	})
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, stringViewsSpec)), Options{}, &Load{Data: data})
	steps := []any{stringViewsEmit(1, "u-2", "/home", "bbb"), stringViewsEmit(1, "u-3", "/x", "aaa"),
		stringViewsEmit(7, "zoë ☃", nil, "ccc"), stringViewsEmit(99, "new", "n", "nnn")}
	rows := []string{"-U[1, 2, 1, 1, 2]", "+U[1, 2, 1, 2, 3]", "-U[1, 2, 1, 2, 3]", "+U[1, 3, 2, 2, 4]",
		"-U[7, 1, 0, 1, 1]", "+U[7, 1, 0, 1, 2]", "+I[99, 1, 1, 1, 1]"}
	return dst, planExpect(t, stringViewsSpec, "statecraft-declared DISTINCT views of STRING, VARCHAR(20) and CHAR(3) values carried on", steps, rows)
}

// createSQLStringViewsLike creates a savepoint like Flink's of the aggregate
// (testdata/specs/sql-distinct-string-savepoint: group 1 saw s alice, bob, alice, NULL; u home,
// home, /a/b, NULL; c aaa, bbb, aaa, NULL; group 2 zoë ☃, x, ccc) from its dump (create --like),
// and returns it with the expectation that Flink executing the plan restored from it carries
// the views on:
//
//	+I 1 alice new ccc      s seen, u and c new          -U[1, 2, 2, 2, 4]  +U[1, 2, 3, 3, 5]
//	+I 2 zoë ☃ x ddd        s and u seen, c new          -U[2, 1, 1, 1, 1]  +U[2, 1, 1, 2, 2]
func createSQLStringViewsLike(t *testing.T) (dst, expect string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "specs", stringViewsSpec+"-savepoint")
	data := writeLines(t, dumpKeyed(t, src))
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	return dst, planExpect(t, stringViewsSpec, "statecraft-created (create --like) DISTINCT views of STRING, VARCHAR(20) and CHAR(3) values carried on",
		[]any{stringViewsEmit(1, "alice", "new", "ccc"), stringViewsEmit(2, "zoë ☃", "x", "ddd")},
		[]string{"-U[1, 2, 2, 2, 4]", "+U[1, 2, 3, 3, 5]", "-U[2, 1, 1, 1, 1]", "+U[2, 1, 1, 2, 2]"})
}

// TestLoadSpecSQLStringViews: the aggregate with views of strings declared by its plan and loaded
// with the dump of Flink's savepoint of it holds exactly the dumped entries, its accumulator rows
// and the views' entries Flink's byte for byte; created --like Flink's savepoint from the same
// dump it is Flink's state again; and stringViewsLines of what Flink's groups saw are the lines
// Flink's dump has.
func TestLoadSpecSQLStringViews(t *testing.T) {
	want := loadedLikeFlink(t, stringViewsSpec, "3_group-aggregate", 14)
	// Flink's groups as stringViewsLines: the same entries (key group and namespace aside).
	lines := stringViewsLines(t, []stringViewsGroup{
		{key: 1, views: [3][]string{{"alice", "bob"}, {"home", "/a/b"}, {"aaa", "bbb"}}, nulls: [3]bool{true, true, true}, rows: 4},
		{key: 2, views: [3][]string{{"zoë ☃"}, {"x"}, {"ccc"}}, rows: 1},
	})
	strip := func(l string) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "keyGroup")
		delete(m, "namespace")
		if m["userKey"] == nil {
			delete(m, "userKey")
		}
		b, _ := json.Marshal(m)
		return string(b)
	}
	var a, b []string
	for _, l := range lines {
		a = append(a, strip(l))
	}
	for _, l := range want {
		b = append(b, strip(l))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("stringViewsLines\n%s\nFlink's dump\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestLoadSpecSQLStringViewsRefusals: a view entry whose user key is not a string is one error
// naming the file, line and field.
func TestLoadSpecSQLStringViewsRefusals(t *testing.T) {
	lines := stringViewsLines(t, []stringViewsGroup{{key: 1, views: [3][]string{{"a"}, {"b"}, {"ccc"}}, rows: 1}})
	bad := strings.Replace(lines[0], `"userKey":"a"`, `"userKey":5`, 1)
	if bad == lines[0] {
		t.Fatal("the replacement did not apply: the test would prove nothing")
	}
	loadRefused(t, declare(t, readSpec(t, stringViewsSpec)), "data.jsonl", strings.Join(append([]string{bad}, lines[1:]...), "\n")+"\n",
		"data.jsonl:1: userKey: want a string (StringData), got 5")
}

// The aggregate counting distinct DECIMAL(10, 2) and TIMESTAMP(3) values
// (testdata/specs/sql-distinct-decimal.sql: COUNT(DISTINCT d), COUNT(DISTINCT t), COUNT(*),
// grouped by k over an append-only source), declared by its plan: accState
// [dd, dt, n, {"dataView": "MapView"}, {"dataView": "MapView"}], distinctAcc_0 keyed by decimals
// (JSON numbers, as dump prints them: 12.50), distinctAcc_1 by timestamps ("2024-03-01T10:00:00.125").
const decimalViewsSpec = "sql-distinct-decimal"

// decimalViewsGroup is one group's bootstrapped views: the distinct decimals and timestamps (as
// JSON), which views saw a NULL, and the rows counted.
type decimalViewsGroup struct {
	key   int64
	views [2][]string
	nulls [2]bool
	rows  int64
}

func decimalViewsLines(groups []decimalViewsGroup) []string {
	var lines []string
	for _, g := range groups {
		for i, vals := range g.views {
			for _, v := range vals {
				lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"distinctAcc_%d","key":[%d],"userKey":%s,"value":1}`, i, g.key, v))
			}
			if g.nulls[i] {
				lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"distinctAcc_%d_null_state","key":[%d],"value":1}`, i, g.key))
			}
		}
		view := `{"dataView":"MapView"}`
		lines = append(lines, fmt.Sprintf(`{"operator":"uid:3_group-aggregate","state":"accState","key":[%d],"value":[%d,%d,%d,%s,%s]}`,
			g.key, len(g.views[0]), len(g.views[1]), g.rows, view, view))
	}
	return lines
}

// decimalViewsEmit is a step emitting the row (k, d, t) into the aggregate's source: d a decimal
// string, t a LocalDateTime string; nil is NULL.
func decimalViewsEmit(k int64, d, ts any) map[string]any {
	return map[string]any{"emit": "src", "row": []any{k, d, ts}}
}

// createSQLDecimalViewsSpec creates the savepoint testdata/specs/sql-distinct-decimal.yaml
// declares, loaded with views no job produced, and returns it with the expectation that Flink,
// executing the plan restored from it, carries them on (rows k, dd, dt, n):
//
//	group 1  loaded: d 1.10, 2.00; t 00:00:00, 00:00:00.001 (2024-01-01); 3 rows
//	         +I 1 2.00 00:00:00.001     both seen                          -U[1, 2, 2, 3]  +U[1, 2, 2, 4]
//	         +I 1 2.0 00:00:00.002      2.0 is 2.00: seen; t new           -U[1, 2, 2, 4]  +U[1, 2, 3, 5]
//	group 7  loaded: d -0.01; t NULL only; 1 row
//	         +I 7 -0.01 NULL            seen                               -U[7, 1, 0, 1]  +U[7, 1, 0, 2]
//	         +I 7 99999999.99 1970-01-01T00:00  both new                   -U[7, 1, 0, 2]  +U[7, 2, 1, 3]
func createSQLDecimalViewsSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	lines := decimalViewsLines([]decimalViewsGroup{
		{key: 1, views: [2][]string{{"1.10", "2.00"}, {`"2024-01-01T00:00:00"`, `"2024-01-01T00:00:00.001"`}}, rows: 3},
		{key: 7, views: [2][]string{{"-0.01"}, nil}, nulls: [2]bool{false, true}, rows: 1},
	})
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, decimalViewsSpec)), Options{}, &Load{Data: data})
	steps := []any{decimalViewsEmit(1, "2.00", "2024-01-01T00:00:00.001"), decimalViewsEmit(1, "2.0", "2024-01-01T00:00:00.002"),
		decimalViewsEmit(7, "-0.01", nil), decimalViewsEmit(7, "99999999.99", "1970-01-01T00:00")}
	rows := []string{"-U[1, 2, 2, 3]", "+U[1, 2, 2, 4]", "-U[1, 2, 2, 4]", "+U[1, 2, 3, 5]",
		"-U[7, 1, 0, 1]", "+U[7, 1, 0, 2]", "-U[7, 1, 0, 2]", "+U[7, 2, 1, 3]"}
	return dst, planExpect(t, decimalViewsSpec, "statecraft-declared DISTINCT views of DECIMAL(10, 2) and TIMESTAMP(3) values carried on", steps, rows)
}

// createSQLDecimalViewsLike creates a savepoint like Flink's of the aggregate
// (testdata/specs/sql-distinct-decimal-savepoint: group 1 saw d 12.50, 3.00, 12.50, NULL and t
// 2024-03-01T10:00:00.125 twice, 1969-12-31T23:59:59.999, NULL; group 2 -99999999.99 and
// 2024-03-02T00:00) from its dump (create --like), and returns it with the expectation that Flink
// executing the plan restored from it carries the views on:
//
//	+I 1 12.5 1969-12-31T23:59:59.999   both seen           -U[1, 2, 2, 4]  +U[1, 2, 2, 5]
//	+I 2 0.00 2024-03-02T00:00          d new, t seen       -U[2, 1, 1, 1]  +U[2, 2, 1, 2]
func createSQLDecimalViewsLike(t *testing.T) (dst, expect string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "specs", decimalViewsSpec+"-savepoint")
	data := writeLines(t, dumpKeyed(t, src))
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	return dst, planExpect(t, decimalViewsSpec, "statecraft-created (create --like) DISTINCT views of DECIMAL(10, 2) and TIMESTAMP(3) values carried on",
		[]any{decimalViewsEmit(1, "12.5", "1969-12-31T23:59:59.999"), decimalViewsEmit(2, "0.00", "2024-03-02T00:00")},
		[]string{"-U[1, 2, 2, 4]", "+U[1, 2, 2, 5]", "-U[2, 1, 1, 1]", "+U[2, 2, 1, 2]"})
}

// TestLoadSpecSQLDecimalViews: the aggregate with views of decimals and timestamps declared by
// its plan, and created --like Flink's savepoint of it, each loaded with the dump of Flink's
// savepoint, hold exactly the dumped entries and Flink's accumulator rows byte for byte; and
// decimalViewsLines of what Flink's groups saw are the entries of Flink's dump.
func TestLoadSpecSQLDecimalViews(t *testing.T) {
	want := loadedLikeFlink(t, decimalViewsSpec, "3_group-aggregate", 10)
	lines := decimalViewsLines([]decimalViewsGroup{
		{key: 1, views: [2][]string{{"12.50", "3.00"}, {`"2024-03-01T10:00:00.125"`, `"1969-12-31T23:59:59.999"`}}, nulls: [2]bool{true, true}, rows: 4},
		{key: 2, views: [2][]string{{"-99999999.99"}, {`"2024-03-02T00:00:00"`}}, rows: 1},
	})
	// Compared as text (key group and namespace aside): a decimal's scale shows in its digits.
	strip := func(l string) string {
		for _, f := range []string{`"namespace":null,`, `"userKey":null,`} {
			l = strings.Replace(l, f, "", 1)
		}
		if i := strings.Index(l, `"keyGroup":`); i >= 0 {
			j := strings.Index(l[i:], ",")
			l = l[:i] + l[i+j+1:]
		}
		return l
	}
	var a, b []string
	for _, l := range lines {
		a = append(a, strip(l))
	}
	for _, l := range want {
		b = append(b, strip(l))
	}
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		t.Errorf("decimalViewsLines\n%s\nFlink's dump\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// loadedLikeFlink loads the entries of the group aggregate (uid, as 3_group-aggregate) from the
// dump of Flink's savepoint of spec into the savepoint spec declares and into one created --like
// Flink's, and checks that each holds exactly those n entries and Flink's two accumulator rows
// byte for byte. It returns the entries, sorted.
func loadedLikeFlink(t *testing.T, spec, uid string, n int) []string {
	t.Helper()
	flink := filepath.Join("..", "testdata", "specs", spec+"-savepoint")
	var want []string
	for _, l := range dumpKeyed(t, flink) {
		if strings.Contains(l, `"operator":"uid:`+uid+`"`) {
			want = append(want, l)
		}
	}
	data := writeLines(t, want)
	declared, _ := run(t, declare(t, readSpec(t, spec)), Options{}, &Load{Data: data})
	like, _ := run(t, flink, Options{}, &Load{Data: data})
	slices.Sort(want)
	for _, dst := range []string{declared, like} {
		got := dumpKeyed(t, dst)
		slices.Sort(got)
		if !slices.Equal(got, want) || len(want) != n {
			t.Fatalf("%s holds\n%s\nFlink's\n%s", dst, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		flinkRows, ourRows := accRowsOf(t, flink, uid), accRowsOf(t, dst, uid)
		if len(flinkRows) != 2 || len(ourRows) != len(flinkRows) {
			t.Fatalf("%d accumulator rows written, Flink wrote %d", len(ourRows), len(flinkRows))
		}
		for key, raw := range flinkRows {
			if !bytes.Equal(ourRows[key], raw) {
				t.Errorf("key %s: accumulator row\n%x\nFlink wrote\n%x", key, ourRows[key], raw)
			}
		}
	}
	return want
}
