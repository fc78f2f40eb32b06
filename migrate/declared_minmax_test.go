package migrate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The aggregate taking MIN and MAX over retractions of strings, decimals and timestamps
// (testdata/specs/sql-retract-minmax.sql: MIN(s) over a STRING, MAX(c) over a VARCHAR(20), MIN(d)
// over a DECIMAL(10, 2), MAX(t) over a TIMESTAMP(3) column and COUNT(*), grouped by k over an
// upsert source's retractions) declared by its plan. Its accumulator row, as dump prints it and
// create takes it:
//
//	[ [ms, mapSize, {"dataView": "MapView"}], [mc, ...], [md, ...], [mt, ...], n ]
//	  MIN(s)'s MinWithRetractAccumulator, MAX(c)'s, MIN(d)'s, MAX(t)'s       COUNT(*)
//
// (mapSize: the entries of the call's view) and its views' entries: agg0$map .. agg3$map map each
// value seen (the user key: a JSON string, a decimal as a JSON number, a timestamp as a string)
// to its row count.
const minMaxSpec = "sql-retract-minmax"

// minMaxGroup is one group's bootstrapped views: per call, each value (as JSON) and its row
// count, the extreme (as JSON), and the rows counted.
type minMaxGroup struct {
	key      int64
	views    [4]map[string]int64
	extremes [4]string
	rows     int64
}

// minMaxLines are the data lines of the groups: one agg<i>$map entry per value, and accState.
func minMaxLines(groups []minMaxGroup) []string {
	var lines []string
	for _, g := range groups {
		var accs []string
		for i, vals := range g.views {
			for v, n := range vals {
				lines = append(lines, fmt.Sprintf(`{"operator":"uid:6_group-aggregate","state":"agg%d$map","key":[%d],"userKey":%s,"value":%d}`, i, g.key, v, n))
			}
			accs = append(accs, fmt.Sprintf(`[%s,%d,{"dataView":"MapView"}]`, g.extremes[i], len(vals)))
		}
		lines = append(lines, fmt.Sprintf(`{"operator":"uid:6_group-aggregate","state":"accState","key":[%d],"value":[%s,%d]}`,
			g.key, strings.Join(accs, ","), g.rows))
	}
	return lines
}

// minMaxEmit is a step emitting the row (id, k, s, c, d, t) of kind into the aggregate's upsert
// source: d a decimal string, t a LocalDateTime string.
func minMaxEmit(kind string, id, k int64, s, c, d, ts string) map[string]any {
	return map[string]any{"emit": "src", "kind": kind, "row": []any{id, k, s, c, d, ts}}
}

// createSQLMinMaxViewsSpec creates the savepoint testdata/specs/sql-retract-minmax.yaml declares,
// loaded with views no job produced, and returns it with the expectation that Flink, executing
// the plan restored from it, carries them on (rows k, ms, mc, md, mt, n). Group 1 is loaded with
// 3 rows: s m twice and "ö ☃" (not ASCII) once, c b twice and q once, d 2.00 twice and 1.10
// once, t 2024-01-01T00:00 twice and 00:00:00.001 once; its extremes m, q, 1.10, 00:00:00.001.
// One upsert id (100) for the group, so its rows pass one ChangelogNormalize subtask in order:
//
//	+I 100 a z 0.50 2025-01-01T00:00       new extremes              -U[1, m, q, 1.10, 2024-01-01T00:00:00.001, 3]
//	                                                                 +U[1, a, z, 0.50, 2025-01-01T00:00, 4]
//	+I 100 m q 1.10 2024-01-01T00:00:00.001  retracts the row above: the extremes fall back to the
//	                                       loaded ones, which only the loaded views hold, then
//	                                       counts the loaded extremes once more
//	                                                                 -U[1, a, z, 0.50, 2025-01-01T00:00, 4]
//	                                                                 +U[1, m, q, 1.10, 2024-01-01T00:00:00.001, 3]
//	                                                                 -U[1, m, q, 1.10, 2024-01-01T00:00:00.001, 3]
//	                                                                 +U[1, m, q, 1.10, 2024-01-01T00:00:00.001, 4]
//	-D 100                                 retracts them again: the loaded counts keep them (lost
//	                                       counts would fall back to ö ☃, b, 2.00, 00:00)
//	                                                                 -U[1, m, q, 1.10, 2024-01-01T00:00:00.001, 4]
//	                                                                 +U[1, m, q, 1.10, 2024-01-01T00:00:00.001, 3]
//	+I 300 (group 99) n n 0.00 1970-01-01T00:00   a new group         +I[99, n, n, 0.00, 1970-01-01T00:00, 1]
func createSQLMinMaxViewsSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	lines := minMaxLines([]minMaxGroup{{
		key: 1,
		views: [4]map[string]int64{{`"m"`: 2, `"ö ☃"`: 1}, {`"b"`: 2, `"q"`: 1}, {"2.00": 2, "1.10": 1},
			{`"2024-01-01T00:00:00"`: 2, `"2024-01-01T00:00:00.001"`: 1}},
		extremes: [4]string{`"m"`, `"q"`, "1.10", `"2024-01-01T00:00:00.001"`},
		rows:     3,
	}})
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, minMaxSpec)), Options{}, &Load{Data: data})
	const loaded = "1, m, q, 1.10, 2024-01-01T00:00:00.001"
	steps := []any{minMaxEmit("+I", 100, 1, "a", "z", "0.50", "2025-01-01T00:00:00"),
		minMaxEmit("+I", 100, 1, "m", "q", "1.10", "2024-01-01T00:00:00.001"),
		minMaxEmit("-D", 100, 1, "m", "q", "1.10", "2024-01-01T00:00:00.001"),
		minMaxEmit("+I", 300, 99, "n", "n", "0.00", "1970-01-01T00:00:00")}
	rows := []string{"-U[" + loaded + ", 3]", "+U[1, a, z, 0.50, 2025-01-01T00:00, 4]",
		"-U[1, a, z, 0.50, 2025-01-01T00:00, 4]", "+U[" + loaded + ", 3]", "-U[" + loaded + ", 3]", "+U[" + loaded + ", 4]",
		"-U[" + loaded + ", 4]", "+U[" + loaded + ", 3]",
		"+I[99, n, n, 0.00, 1970-01-01T00:00, 1]"}
	return dst, planExpect(t, minMaxSpec, "statecraft-declared MIN/MAX-over-retraction views of STRING, VARCHAR(20), DECIMAL(10, 2) and TIMESTAMP(3) values carried on", steps, rows)
}

// createSQLMinMaxViewsLike creates a savepoint like Flink's of the aggregate
// (testdata/specs/sql-retract-minmax-savepoint: group 1 holds ids 1 pear b 12.50
// 2024-03-01T10:00:00.125, 2 apple zz 3.00 2024-03-01T10:00:00.125, 3 kiwi a 7.00
// 2023-01-01T00:00 and 4 all NULL; group 2 id 6 plum y 0.01 2024-03-02T00:00:00.001) from its
// dump (create --like: ChangelogNormalize's rows too), and returns it with the expectation that
// Flink executing the plan restored from it retracts the restored rows from the restored views:
//
//	-D 2   kiwi, b, 7.00 the next extremes; t's 10:00:00.125 counted twice stays
//	       -U[1, apple, zz, 3.00, 2024-03-01T10:00:00.125, 4]  +U[1, kiwi, b, 7.00, 2024-03-01T10:00:00.125, 3]
//	-D 1   c falls to a, t to 2023-01-01T00:00
//	       -U[1, kiwi, b, 7.00, 2024-03-01T10:00:00.125, 3]    +U[1, kiwi, a, 7.00, 2023-01-01T00:00, 2]
//	+I 7 (group 2) a z -5.00 2024-03-02T00:00
//	       -U[2, plum, y, 0.01, 2024-03-02T00:00:00.001, 1]    +U[2, a, z, -5.00, 2024-03-02T00:00:00.001, 2]
func createSQLMinMaxViewsLike(t *testing.T) (dst, expect string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "specs", minMaxSpec+"-savepoint")
	data := writeLines(t, dumpKeyed(t, src))
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	return dst, planExpect(t, minMaxSpec, "statecraft-created (create --like) MIN/MAX-over-retraction views of STRING, VARCHAR(20), DECIMAL(10, 2) and TIMESTAMP(3) values carried on",
		[]any{minMaxEmit("-D", 2, 1, "apple", "zz", "3.00", "2024-03-01T10:00:00.125"),
			minMaxEmit("-D", 1, 1, "pear", "b", "12.50", "2024-03-01T10:00:00.125"),
			minMaxEmit("+I", 7, 2, "a", "z", "-5.00", "2024-03-02T00:00:00")},
		[]string{"-U[1, apple, zz, 3.00, 2024-03-01T10:00:00.125, 4]", "+U[1, kiwi, b, 7.00, 2024-03-01T10:00:00.125, 3]",
			"-U[1, kiwi, b, 7.00, 2024-03-01T10:00:00.125, 3]", "+U[1, kiwi, a, 7.00, 2023-01-01T00:00, 2]",
			"-U[2, plum, y, 0.01, 2024-03-02T00:00:00.001, 1]", "+U[2, a, z, -5.00, 2024-03-02T00:00:00.001, 2]"})
}

// TestLoadSpecSQLMinMaxViews: the aggregate with MIN/MAX-over-retraction views of strings,
// decimals and timestamps declared by its plan, and created --like Flink's savepoint of it, each
// loaded with the dump of Flink's savepoint, hold exactly the dumped entries and Flink's
// accumulator rows byte for byte; and minMaxLines of what Flink's groups hold are the entries of
// Flink's dump.
func TestLoadSpecSQLMinMaxViews(t *testing.T) {
	want := loadedLikeFlink(t, minMaxSpec, "6_group-aggregate", 17)
	lines := minMaxLines([]minMaxGroup{
		{key: 1, views: [4]map[string]int64{{`"pear"`: 1, `"apple"`: 1, `"kiwi"`: 1}, {`"b"`: 1, `"zz"`: 1, `"a"`: 1},
			{"12.50": 1, "3.00": 1, "7.00": 1}, {`"2024-03-01T10:00:00.125"`: 2, `"2023-01-01T00:00:00"`: 1}},
			extremes: [4]string{`"apple"`, `"zz"`, "3.00", `"2024-03-01T10:00:00.125"`}, rows: 4},
		{key: 2, views: [4]map[string]int64{{`"plum"`: 1}, {`"y"`: 1}, {"0.01": 1}, {`"2024-03-02T00:00:00.001"`: 1}},
			extremes: [4]string{`"plum"`, `"y"`, "0.01", `"2024-03-02T00:00:00.001"`}, rows: 1},
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
		t.Errorf("minMaxLines\n%s\nFlink's dump\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// TestLoadSpecSQLMinMaxViewsRefusals: a view entry whose user key is not of its column's type is
// one error naming the file, line and field.
func TestLoadSpecSQLMinMaxViewsRefusals(t *testing.T) {
	lines := minMaxLines([]minMaxGroup{{key: 1, views: [4]map[string]int64{{`"a"`: 1}, {`"b"`: 1}, {"1.00": 1}, {`"2024-01-01T00:00:00"`: 1}},
		extremes: [4]string{`"a"`, `"b"`, "1.00", `"2024-01-01T00:00:00"`}, rows: 1}})
	for _, tc := range []struct{ from, to, want string }{
		{`"userKey":"a"`, `"userKey":5`, "data.jsonl:1: userKey: want a string (StringData), got 5"},
		{`"userKey":1.00`, `"userKey":"x"`, `data.jsonl:3: userKey: want a number (DECIMAL(10, 2)), got "x"`},
	} {
		bad := slices.Clone(lines)
		i := slices.IndexFunc(bad, func(l string) bool { return strings.Contains(l, tc.from) })
		if i < 0 {
			t.Fatalf("no line holds %s: the test would prove nothing", tc.from)
		}
		bad[i] = strings.Replace(bad[i], tc.from, tc.to, 1)
		loadRefused(t, declare(t, readSpec(t, minMaxSpec)), "data.jsonl", strings.Join(bad, "\n")+"\n", tc.want)
	}
}

// MAX over retractions of a CHAR(3) column (testdata/specs/sql-retract-minmax-char.sql: MAX(c),
// COUNT(*) grouped by k over an upsert source): accState [[mc, mapSize, {"dataView": "MapView"}], n],
// agg0$map each value's row count.
const minMaxCharSpec = "sql-retract-minmax-char"

// minMaxCharEmit is a step emitting the row (id, k, c) of kind into the aggregate's upsert source.
func minMaxCharEmit(kind string, id, k int64, c string) map[string]any {
	return map[string]any{"emit": "src", "kind": kind, "row": []any{id, k, c}}
}

// createSQLMinMaxCharViewsSpec creates the savepoint sql-retract-minmax-char.yaml declares,
// loaded with a view no job produced (group 1: mmm twice, bcd once; 3 rows), and returns it with
// the expectation that Flink executing the plan restored from it carries it on (rows k, mc, n):
//
//	+I 100 zzz   a new maximum                              -U[1, mmm, 3]  +U[1, zzz, 4]
//	-D 100       retracted: back to the loaded mmm          -U[1, zzz, 4]  +U[1, mmm, 3]
func createSQLMinMaxCharViewsSpec(t *testing.T) (dst, expect string) {
	t.Helper()
	lines := []string{
		`{"operator":"uid:6_group-aggregate","state":"agg0$map","key":[1],"userKey":"mmm","value":2}`,
		`{"operator":"uid:6_group-aggregate","state":"agg0$map","key":[1],"userKey":"bcd","value":1}`,
		`{"operator":"uid:6_group-aggregate","state":"accState","key":[1],"value":[["mmm",2,{"dataView":"MapView"}],3]}`,
	}
	data := writeLines(t, lines)
	dst, _ = run(t, declare(t, readSpec(t, minMaxCharSpec)), Options{}, &Load{Data: data})
	return dst, planExpect(t, minMaxCharSpec, "statecraft-declared MAX-over-retraction view of CHAR(3) values carried on",
		[]any{minMaxCharEmit("+I", 100, 1, "zzz"), minMaxCharEmit("-D", 100, 1, "zzz")},
		[]string{"-U[1, mmm, 3]", "+U[1, zzz, 4]", "-U[1, zzz, 4]", "+U[1, mmm, 3]"})
}

// createSQLMinMaxCharViewsLike creates a savepoint like Flink's of the aggregate (group 1: ids 1
// abc and 2 xyz) from its dump, and returns it with the expectation that Flink retracting the
// restored id 2 falls back to the restored abc: -U[1, xyz, 2] +U[1, abc, 1].
func createSQLMinMaxCharViewsLike(t *testing.T) (dst, expect string) {
	t.Helper()
	src := filepath.Join("..", "testdata", "specs", minMaxCharSpec+"-savepoint")
	data := writeLines(t, dumpKeyed(t, src))
	dst, _ = run(t, src, Options{}, &Load{Data: data})
	return dst, planExpect(t, minMaxCharSpec, "statecraft-created (create --like) MAX-over-retraction view of CHAR(3) values carried on",
		[]any{minMaxCharEmit("-D", 2, 1, "xyz")}, []string{"-U[1, xyz, 2]", "+U[1, abc, 1]"})
}

// TestLoadSpecSQLMinMaxCharViews: the MAX-over-retraction aggregate of a CHAR(3) column declared
// by its plan, and created --like Flink's savepoint of it, each loaded with the dump of Flink's
// savepoint, hold exactly the dumped entries and Flink's accumulator rows byte for byte.
func TestLoadSpecSQLMinMaxCharViews(t *testing.T) {
	loadedLikeFlink(t, minMaxCharSpec, "6_group-aggregate", 5)
}
