package plan

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/ttl"
	"github.com/tidwall/gjson"
	"github.com/tidwall/sjson"
)

// diffPlanFiles lists the oracle's plans and, when present, the shared corpus of Flink's own
// restore-test plans.
func diffPlanFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	oracle, _ := filepath.Glob(filepath.Join(repoRoot(), "testdata", "plans", "*.json"))
	for _, f := range oracle {
		if !strings.HasSuffix(f, ".spec.json") && !strings.HasSuffix(f, ".expect.json") {
			files = append(files, f)
		}
	}
	corpus := corpusDir()
	if _, err := os.Stat(corpus); err == nil {
		more, _ := filepath.Glob(filepath.Join(corpus, "restore-tests", "*", "*.json"))
		files = append(files, more...)
	} else {
		t.Logf("shared corpus %s not present: only the oracle's plans are used", corpus)
	}
	if len(files) == 0 {
		t.Skip("no compiled plans: neither testdata/plans/*.json nor the shared corpus exist")
	}
	sort.Strings(files)
	return files
}

func corpusDir() string { return filepath.Join(repoRoot(), "..", "shared", "corpus", "flink-plans") }

func loadPlan(t testing.TB, path string) *Plan {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(path, data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p
}

func oraclePlan(t testing.TB, name string) *Plan {
	t.Helper()
	path := filepath.Join(repoRoot(), "testdata", "plans", name+".json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("oracle plan %s not present (make fixtures)", path)
	}
	return loadPlan(t, path)
}

func reparse(t testing.TB, name string, data []byte) *Plan {
	t.Helper()
	p, err := Parse(name, data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return p
}

// nodeByNewID finds the diff entry of a NEW node.
func nodeByNewID(r *DiffReport, id int) *NodeDiff {
	for i := range r.Nodes {
		if r.Nodes[i].New != nil && r.Nodes[i].New.ID == id {
			return &r.Nodes[i]
		}
	}
	return nil
}

func kinds(d *NodeDiff) []string {
	var out []string
	for _, c := range d.Changes {
		out = append(out, c.Kind+":"+c.Path)
	}
	return out
}

// Every real plan diffed with itself: identical, every node matched by id, nothing listed.
func TestDiffSelfIdentical(t *testing.T) {
	for _, f := range diffPlanFiles(t) {
		p := loadPlan(t, f)
		q := reparse(t, f, append([]byte(nil), p.Raw...))
		r := Diff(p, q)
		if r.Verdict != Identical {
			t.Errorf("%s vs itself: verdict %s (%s)", f, r.Verdict, r.Reason)
		}
		if r.Counts.MatchedByID != len(p.Nodes) || r.Counts.Added+r.Counts.Removed+r.Counts.Changed != 0 {
			t.Errorf("%s vs itself: counts %+v for %d nodes", f, r.Counts, len(p.Nodes))
		}
		for _, d := range r.Nodes {
			if d.Status != "unchanged" || len(d.Changes) != 0 || len(d.Edges) != 0 {
				t.Errorf("%s vs itself: node %+v listed as %s", f, d.New, d.Status)
			}
		}
	}
}

// The NEW plan is the oracle's plan with one TTL edited by the plan package's own editor.
func TestDiffTTLOnly(t *testing.T) {
	for _, name := range []string{"group-aggregate", "join-inner", "dedup-then-aggregate", "top-n"} {
		t.Run(name, func(t *testing.T) {
			p := oraclePlan(t, name)
			states := p.States()
			if len(states) == 0 {
				t.Fatalf("%s has no state entries", name)
			}
			s := states[len(states)-1]
			out, _, err := p.Apply([]Change{{Entry: s, TTL: ttl.TTL(36 * 3600000)}})
			if err != nil {
				t.Fatal(err)
			}
			r := Diff(p, reparse(t, "edited.json", out))
			if r.Verdict != TTLOnly {
				t.Fatalf("verdict %s (%s), want ttl-only", r.Verdict, r.Reason)
			}
			if r.Counts.TTLChanges != 1 || r.Counts.Changed != 1 {
				t.Errorf("counts %+v, want 1 TTL change on 1 node", r.Counts)
			}
			d := nodeByNewID(r, s.Node.ID)
			if d == nil || len(d.Changes) != 1 {
				t.Fatalf("node %d: %+v", s.Node.ID, d)
			}
			c := d.Changes[0]
			if c.Kind != "ttl" || *c.OldMillis != s.TTL.Millis() || *c.NewMillis != 36*3600000 || c.New != "36 h" {
				t.Errorf("change %+v (old %d new %d)", c, *c.OldMillis, *c.NewMillis)
			}
			if want := fmt.Sprintf("%s: %s -> 1d12h", s.Name, s.TTL); c.Detail != want {
				t.Errorf("detail %q, want %q", c.Detail, want)
			}
			if !strings.Contains(r.Summary, "TTL changed on 1 state") {
				t.Errorf("summary %q", r.Summary)
			}
		})
	}
}

// TTLs compare by value: "86400000 ms" and "1 d" are the same TTL; "1 d" and "25 h" are not.
func TestDiffTTLByValue(t *testing.T) {
	p := oraclePlan(t, "group-aggregate")
	s := p.States()[0]
	oneDay, _, err := p.Apply([]Change{{Entry: s, TTL: ttl.TTL(86400000)}})
	if err != nil {
		t.Fatal(err)
	}
	a := reparse(t, "a.json", oneDay)
	if a.States()[0].TTLText != "1 d" {
		t.Fatalf("editor wrote %q", a.States()[0].TTLText)
	}
	path := fmt.Sprintf("nodes.%d.state.0.ttl", s.Node.Pos)
	for _, tc := range []struct {
		text string
		want Verdict
	}{
		{"86400000 ms", Identical}, {"24 h", Identical}, {"1440 min", Identical}, {"PT24H", Identical},
		{"25 h", TTLOnly}, {"0 ms", TTLOnly},
	} {
		b, err := sjson.SetBytes(append([]byte(nil), oneDay...), path, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		r := Diff(a, reparse(t, "b.json", b))
		if r.Verdict != tc.want {
			t.Errorf("1 d vs %q: verdict %s (%s), want %s", tc.text, r.Verdict, r.Reason, tc.want)
		}
	}
}

// The query gains a WHERE filter: only the stateless calc changes, the aggregate keeps its
// state (compatible).
func TestDiffAddedFilter(t *testing.T) {
	r := Diff(oraclePlan(t, "group-aggregate"), oraclePlan(t, "group-aggregate-filtered"))
	if r.Verdict != Compatible {
		t.Fatalf("verdict %s (%s), want compatible", r.Verdict, r.Reason)
	}
	if r.Counts.MatchedByID != 5 || r.Counts.Changed != 1 {
		t.Errorf("counts %+v, want 5 matched by id and 1 changed", r.Counts)
	}
	for _, d := range r.Nodes {
		switch d.New.Type {
		case "stream-exec-calc_1":
			if got := kinds(&d); strings.Join(got, ",") != "field:condition,description:description" {
				t.Errorf("calc changes %v", got)
			}
		default:
			if d.Status != "unchanged" {
				t.Errorf("node %d %s: %s %v", d.New.ID, d.New.Type, d.Status, kinds(&d))
			}
		}
	}
}

// The join key changes (o.order_id instead of o.user_id): the recompiled plan gains a calc,
// every later id shifts by one, and the join's key changes: incompatible, with every OLD node
// matched to its counterpart.
func TestDiffJoinKeyChanged(t *testing.T) {
	oldp, newp := oraclePlan(t, "join-inner"), oraclePlan(t, "join-inner-other-key")
	r := Diff(oldp, newp)
	if r.Verdict != Incompatible {
		t.Fatalf("verdict %s (%s), want incompatible", r.Verdict, r.Reason)
	}
	if r.Counts.Removed != 0 || r.Counts.Added != 1 || r.Counts.Matched != len(oldp.Nodes) {
		t.Errorf("counts %+v: want all %d OLD nodes matched and 1 added", r.Counts, len(oldp.Nodes))
	}
	// Pairs by the description's table or operator: the counterpart of each OLD node.
	var join *NodeDiff
	for i := range r.Nodes {
		d := &r.Nodes[i]
		switch d.Status {
		case "added":
			if d.New.Type != "stream-exec-calc_1" || d.New.Description != "Calc(select=[order_id, amount])" {
				t.Errorf("added %+v, want the new projection calc", d.New)
			}
		case "removed":
			t.Errorf("OLD node %d (%s) not matched", d.Old.ID, d.Old.Type)
		default:
			if d.Old.Type != d.New.Type {
				t.Errorf("matched %s with %s", d.Old.Type, d.New.Type)
			}
			if d.New.Type == "stream-exec-join_1" {
				join = d
			}
		}
	}
	if join == nil {
		t.Fatal("join not matched")
	}
	if join.Verdict != Incompatible || !join.UIDChanged || join.Old.ID != 6 || join.New.ID != 7 {
		t.Errorf("join: %+v", join)
	}
	var keyChange *FieldChange
	for i, c := range join.Changes {
		if c.Path == "joinSpec.leftKeys" {
			keyChange = &join.Changes[i]
		}
	}
	if keyChange == nil || keyChange.Kind != "keys" || keyChange.Old != "[1]" || keyChange.New != "[0]" {
		t.Errorf("join key change %+v among %v", keyChange, kinds(join))
	}
	if !strings.Contains(join.Reason, "joinSpec.leftKeys") {
		t.Errorf("join reason %q", join.Reason)
	}
}

// renumber rewrites every node id of a plan through f, in nodes and edges alike, leaving
// every other byte as it was: the id tokens are found by position and spliced.
func renumber(t testing.TB, p *Plan, f func(int) int) []byte {
	t.Helper()
	type span struct{ start, end, id int }
	var spans []span
	add := func(v gjson.Result) {
		if v.Type != gjson.Number || v.Index <= 0 || string(p.Raw[v.Index:v.Index+len(v.Raw)]) != v.Raw {
			t.Fatalf("id token %q not found at its offset", v.Raw)
		}
		spans = append(spans, span{v.Index, v.Index + len(v.Raw), f(int(v.Int()))})
	}
	root := gjson.ParseBytes(p.Raw)
	root.Get("nodes").ForEach(func(_, n gjson.Result) bool { add(n.Get("id")); return true })
	root.Get("edges").ForEach(func(_, e gjson.Result) bool { add(e.Get("source")); add(e.Get("target")); return true })
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := make([]byte, 0, len(p.Raw)+len(spans)*4)
	at := 0
	for _, s := range spans {
		out = append(out, p.Raw[at:s.start]...)
		out = strconv.AppendInt(out, int64(s.id), 10)
		at = s.end
	}
	return append(out, p.Raw[at:]...)
}

// A plan whose ids are all renumbered, consistently in nodes and edges, is the same pipeline
// under other UIDs: uid-remap, every node matched to the node it was. Two renumberings: a
// shift (no id in common) and a reversal (the same ids on nodes of other types).
func TestDiffRenumbered(t *testing.T) {
	for _, f := range diffPlanFiles(t) {
		p := loadPlan(t, f)
		if len(p.Problems) > 0 {
			continue
		}
		maxID := 0
		for _, n := range p.Nodes {
			maxID = max(maxID, n.ID)
		}
		for _, rn := range []struct {
			name string
			f    func(int) int
		}{
			{"shift", func(id int) int { return id + 1000 }},
			{"reverse", func(id int) int { return maxID + 1 - id }},
		} {
			q := reparse(t, f+" "+rn.name, renumber(t, p, rn.f))
			r := Diff(p, q)
			name := filepath.Base(f) + " " + rn.name
			// uid-remap exactly when some node holding state gets another operator UID:
			// compare the UIDs Flink derives for node n in p and node f(n) in q. (A source
			// that keeps its id, or a process table function with its own "uid", keeps it.)
			want := Compatible
			pu, err1 := p.UIDs(UIDOptions{})
			qu, err2 := q.UIDs(UIDOptions{})
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: UIDs: %v %v", name, err1, err2)
			}
			byID := map[int][]TransformationUID{}
			for _, u := range qu {
				byID[u.ID] = u.Transformations
			}
			for _, u := range pu {
				if stateKind(u.Node) == stateStateless {
					continue
				}
				if fmt.Sprint(u.Transformations) != fmt.Sprint(byID[rn.f(u.ID)]) {
					want = UIDRemap
				}
			}
			if r.Verdict != want {
				t.Errorf("%s: verdict %s (%s), want %s", name, r.Verdict, r.Reason, want)
			}
			if r.Counts.Matched != len(p.Nodes) || r.Counts.Added+r.Counts.Removed != 0 {
				t.Errorf("%s: counts %+v for %d nodes", name, r.Counts, len(p.Nodes))
			}
			for _, d := range r.Nodes {
				if d.Old == nil || d.New == nil {
					t.Errorf("%s: unmatched %+v %+v", name, d.Old, d.New)
					continue
				}
				if rn.f(d.Old.ID) != d.New.ID && !equivalentNodes(p, d.Old.ID, q, d.New.ID) {
					t.Errorf("%s: OLD %d (%s) matched NEW %d, want %d", name, d.Old.ID, d.Old.Type, d.New.ID, rn.f(d.Old.ID))
				}
				if len(d.Changes) != 0 || len(d.Edges) != 0 {
					t.Errorf("%s: node %d: changes %v edges %v", name, d.Old.ID, kinds(&d), d.Edges)
				}
			}
		}
	}
}

// equivalentNodes reports whether two nodes are interchangeable (same bytes but the id, and
// inputs from equivalent nodes): a self-join reads one table twice through identical
// branches, and either pairing is right.
func equivalentNodes(p *Plan, a int, q *Plan, b int) bool {
	x, y := p.Node(a), q.Node(b)
	if x == nil || y == nil || len(compareNodes(x, y)) != 0 || len(x.Inputs) != len(y.Inputs) {
		return false
	}
	for k := range x.Inputs {
		if !equivalentNodes(p, x.Inputs[k].Source, q, y.Inputs[k].Source) {
			return false
		}
	}
	return true
}

// corpusPairs reads MANIFEST.tsv and returns the tests that exist for two Flink versions:
// the same test name under restore-tests/<type>_<n>/.
func corpusPairs(t *testing.T) [][2]string {
	f, err := os.Open(filepath.Join(corpusDir(), "MANIFEST.tsv"))
	if err != nil {
		t.Skipf("shared corpus not present (%v)", err)
	}
	defer f.Close()
	type row struct{ path, version string }
	byName := map[string][]row{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 4 || cols[0] == "path" {
			continue
		}
		byName[filepath.Base(cols[0])] = append(byName[filepath.Base(cols[0])], row{cols[0], cols[3]})
	}
	var pairs [][2]string
	for _, rows := range byName {
		sort.Slice(rows, func(i, j int) bool { return rows[i].version < rows[j].version })
		for i := 1; i < len(rows); i++ {
			if rows[i].version != rows[0].version {
				pairs = append(pairs, [2]string{rows[0].path, rows[i].path})
			}
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return pairs
}

// The same test query compiled by two Flink versions (Flink's own restore-test plans).
// Expectations per pair, from reading both files: what must be reported and the verdict.
func TestDiffAcrossFlinkVersions(t *testing.T) {
	pairs := corpusPairs(t)
	if len(pairs) < 4 {
		t.Fatalf("corpus has %d cross-version pairs, want the 4 known ones", len(pairs))
	}
	want := map[string]struct {
		verdict Verdict
		must    []string // "type change-kind path" or "removed type"
	}{
		// 2.0 -> 2.3: the planner drops the exchange + changelog normalize before the upsert sink.
		"sink-upsert.json": {Incompatible, []string{"removed stream-exec-changelog-normalize_1", "removed stream-exec-exchange_1",
			"stream-exec-sink_2 version type", "stream-exec-table-source-scan_2 version type"}},
		// 1.19 -> 2.4: temporal join _1 -> _2, watermark assigners pushed into the scans.
		"temporal-join-table-join.json": {Incompatible, []string{"stream-exec-temporal-join_2 version type",
			"removed stream-exec-watermark-assigner_1", "stream-exec-table-source-scan_2 field scanTableSource.abilities"}},
		"over-aggregate-lag.json": {Incompatible, []string{"stream-exec-over-aggregate_2 version type",
			"stream-exec-over-aggregate_2 field unboundedOverVersion"}},
		"over-aggregate-non-time-range-unbounded-sum-retract-mode-source-sink-primary-key.json": {Incompatible, []string{
			"stream-exec-over-aggregate_2 version type", "stream-exec-over-aggregate_2 field overSpec.groups.0.aggCalls.1.internalName"}},
	}
	for _, pr := range pairs {
		name := filepath.Base(pr[0])
		t.Run(name, func(t *testing.T) {
			oldp, newp := loadPlan(t, filepath.Join(corpusDir(), pr[0])), loadPlan(t, filepath.Join(corpusDir(), pr[1]))
			r := Diff(oldp, newp)
			if r.FlinkVersion == nil || r.FlinkVersion.Old != oldp.FlinkVersion || r.FlinkVersion.New != newp.FlinkVersion {
				t.Errorf("flinkVersion change %+v", r.FlinkVersion)
			}
			if !strings.Contains(r.Summary, "flinkVersion "+oldp.FlinkVersion+" -> "+newp.FlinkVersion) {
				t.Errorf("summary %q does not name the version change", r.Summary)
			}
			got := map[string]bool{}
			for _, d := range r.Nodes {
				if d.Status == "removed" {
					got["removed "+d.Old.Type] = true
				}
				for _, c := range d.Changes {
					got[d.New.Type+" "+c.Kind+" "+c.Path] = true
				}
			}
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for new pair %s: verdict %s (%s)", name, r.Verdict, r.Reason)
			}
			if r.Verdict != w.verdict {
				t.Errorf("verdict %s (%s), want %s", r.Verdict, r.Reason, w.verdict)
			}
			for _, m := range w.must {
				if !got[m] {
					t.Errorf("missing %q in %v", m, keysOf(got))
				}
			}
			// Every NEW node is matched or added; removed nodes are only those named.
			if r.Counts.Matched+r.Counts.Added != len(newp.Nodes) || r.Counts.Matched+r.Counts.Removed != len(oldp.Nodes) {
				t.Errorf("counts %+v for %d -> %d nodes", r.Counts, len(oldp.Nodes), len(newp.Nodes))
			}
		})
	}
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Every pair of oracle plans compiled from related queries diffs without trouble, and the
// JSON round-trips through the documented schema.
func TestDiffOraclePairsJSON(t *testing.T) {
	pairs := [][2]string{
		{"group-aggregate", "group-aggregate-filtered"},
		{"join-inner", "join-inner-other-key"},
		{"dedup-keep-first", "dedup-keep-last"},
		{"join-inner", "join-left"},
		{"group-aggregate", "dedup-then-aggregate"},
	}
	for _, pr := range pairs {
		r := Diff(oraclePlan(t, pr[0]), oraclePlan(t, pr[1]))
		data, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back DiffReport
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatalf("%v: %v", pr, err)
		}
		if back.Verdict != r.Verdict || len(back.Nodes) != len(r.Nodes) || back.Schema != 1 {
			t.Errorf("%v: JSON round trip lost data", pr)
		}
		var generic map[string]any
		json.Unmarshal(data, &generic)
		for _, k := range []string{"schema", "old", "new", "verdict", "reason", "summary", "counts", "nodes"} {
			if _, ok := generic[k]; !ok {
				t.Errorf("%v: JSON lacks %q", pr, k)
			}
		}
		t.Logf("%s -> %s: %s: %s (%s)", pr[0], pr[1], r.Verdict, r.Summary, r.Reason)
	}
}

func TestParseVerdict(t *testing.T) {
	for i, n := range verdictNames {
		v, err := ParseVerdict(strings.ToUpper(n))
		if err != nil || v != Verdict(i) || v.String() != n {
			t.Errorf("%s: %v %v", n, v, err)
		}
	}
	if _, err := ParseVerdict("safe"); err == nil {
		t.Error("ParseVerdict(safe) succeeded")
	}
	if !(Identical < TTLOnly && TTLOnly < Compatible && Compatible < UIDRemap && UIDRemap < Incompatible) {
		t.Error("verdict order")
	}
}

func TestUIDPattern(t *testing.T) {
	for _, tc := range []struct{ config, want string }{
		{``, "5_<transformation>"},
		{`"configuration":{"table.exec.uid.format":"<id>_<type>_<version>_<transformation>"},`, "5_stream-exec-group-aggregate_1_<transformation>"},
		{`"configuration":{"table.exec.uid.format":"my_custom_<transformation>_<id>"},`, "my_custom_<transformation>_5"},
		{`"configuration":{"table.exec.uid.format":"fixed-<ID>-<type"},`, "fixed-<ID>-<type"},
	} {
		raw := `{"nodes":[{"id":5,"type":"stream-exec-group-aggregate_1",` + tc.config + `"description":"x"}],"edges":[]}`
		p := reparse(t, "u.json", []byte(raw))
		if got := uidPattern(p.Nodes[0]); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.config, got, tc.want)
		}
	}
}

// A per-node uid format without <id> keeps the UID through a renumbering: no uid-remap.
func TestDiffRenumberedWithFixedUIDFormat(t *testing.T) {
	p := oraclePlan(t, "group-aggregate")
	agg := p.Nodes[3]
	if agg.Name != "stream-exec-group-aggregate" {
		t.Fatalf("node 4 is %s", agg.Type)
	}
	withFmt, err := sjson.SetBytes(append([]byte(nil), p.Raw...), "nodes.3.configuration.table\\.exec\\.uid\\.format", "agg-<transformation>")
	if err != nil {
		t.Fatal(err)
	}
	a := reparse(t, "a.json", withFmt)
	// Renumber only stateless nodes and the aggregate: sources keep their ids.
	b := reparse(t, "b.json", renumber(t, a, func(id int) int {
		if id == 1 {
			return 1
		}
		return id + 10
	}))
	r := Diff(a, b)
	if r.Verdict != Compatible {
		t.Errorf("verdict %s (%s), want compatible: the aggregate's UID does not use <id>", r.Verdict, r.Reason)
	}
	d := nodeByNewID(r, 14)
	if d == nil || d.Old == nil || d.UIDChanged || d.Old.UID != "agg-<transformation>" {
		t.Errorf("aggregate: %+v", d)
	}
}

func TestParseRowType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []column
		ok   bool
	}{
		{"ROW<`order_id` BIGINT, `user_id` BIGINT, `amount` INT>", []column{{"order_id", "BIGINT"}, {"user_id", "BIGINT"}, {"amount", "INT"}}, true},
		{"ROW<`a` INT NOT NULL, `m` MAP<INT, ROW<`x` INT, `y` DECIMAL(10, 2)>>, `c` VARCHAR(2147483647)> NOT NULL",
			[]column{{"a", "INT NOT NULL"}, {"m", "MAP<INT, ROW<`x` INT, `y` DECIMAL(10, 2)>>"}, {"c", "VARCHAR(2147483647)"}}, true},
		{"ROW<`we``ird, name` INT 'a, comment'>", []column{{"we`ird, name", "INT 'a, comment'"}}, true},
		{"BIGINT", nil, false},
		{"ROW<`a` INT", nil, false},
		{"ROW<`a INT>", nil, false},
	} {
		got, ok := parseRowType(tc.in)
		if ok != tc.ok || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: %v %v, want %v %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestColumnsDetail(t *testing.T) {
	a := []column{{"a", "INT"}, {"b", "BIGINT"}, {"c", "STRING"}}
	for _, tc := range []struct {
		b    []column
		want string
	}{
		{[]column{{"a", "INT"}, {"b", "BIGINT"}}, "column c removed"},
		{[]column{{"a", "INT"}, {"b", "BIGINT"}, {"c", "STRING"}, {"d", "INT"}}, "column d INT added"},
		{[]column{{"a", "BIGINT"}, {"b", "BIGINT"}, {"c", "STRING"}}, "column a retyped INT -> BIGINT"},
		{[]column{{"b", "BIGINT"}, {"a", "INT"}, {"c", "STRING"}}, "columns reordered (a, b, c) -> (b, a, c)"},
	} {
		if got := columnsDetail(a, tc.b); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.b, got, tc.want)
		}
	}
}

func TestCategory(t *testing.T) {
	for path, want := range map[string]string{
		"grouping":          "keys",
		"joinSpec.leftKeys": "keys",
		"inputProperties.0.requiredDistribution.keys": "keys",
		"inputUpsertKey":          "keys",
		"partition.fields":        "keys",
		"inputChangelogMode":      "changelog",
		"generateUpdateBefore":    "changelog",
		"needRetraction":          "changelog",
		"aggCallNeedRetractions":  "changelog",
		"condition":               "field",
		"projection.1.inputIndex": "field",
	} {
		if got := category(path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
}

// The UID rule behind uid-remap, checked against a savepoint Flink 2.3.0 wrote for a job run
// from its compiled plan: every operator UID in the savepoint's metadata is the node's UID
// pattern with <transformation> filled in, for the node whose id the UID starts with.
func TestUIDPatternMatchesFlinkSavepoint(t *testing.T) {
	dir := filepath.Join(repoRoot(), "testdata", "savepoints")
	planFile := filepath.Join(dir, "sql-group-aggregate.plan.json")
	expect, err := os.ReadFile(filepath.Join(dir, "sql-group-aggregate.expect.json"))
	if err != nil {
		t.Skipf("oracle savepoint fixture not present: %v", err)
	}
	p := loadPlan(t, planFile)
	var e struct {
		Metadata []struct {
			OperatorUID string `json:"operatorUid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(expect, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.Metadata) == 0 {
		t.Fatal("no metadata rows")
	}
	for _, m := range e.Metadata {
		idText, transformation, ok := strings.Cut(m.OperatorUID, "_")
		id, err := strconv.Atoi(idText)
		if !ok || err != nil {
			t.Errorf("UID %q does not start with a node id", m.OperatorUID)
			continue
		}
		n := p.Node(id)
		if n == nil {
			t.Errorf("UID %q: no node %d in the plan", m.OperatorUID, id)
			continue
		}
		if got := strings.Replace(uidPattern(n), "<transformation>", transformation, 1); got != m.OperatorUID {
			t.Errorf("node %d (%s): pattern gives %q, Flink wrote %q", id, n.Type, got, m.OperatorUID)
		}
	}
}

// checkInvariants holds for every diff: each node of either plan appears exactly once, the
// counts add up, and the overall verdict is the worst node verdict (or compatible for a bare
// flinkVersion change).
func checkInvariants(t *testing.T, name string, oldp, newp *Plan, r *DiffReport) {
	t.Helper()
	seenOld, seenNew := map[int]int{}, map[int]int{}
	worst := Identical
	for _, d := range r.Nodes {
		if d.Old != nil {
			seenOld[d.Old.ID]++
		}
		if d.New != nil {
			seenNew[d.New.ID]++
		}
		switch {
		case d.Status == "added" && (d.Old != nil || d.New == nil || d.Match != nil),
			d.Status == "removed" && (d.New != nil || d.Old == nil || d.Match != nil),
			(d.Status == "changed" || d.Status == "unchanged") && (d.Old == nil || d.New == nil || d.Match == nil):
			t.Errorf("%s: inconsistent node entry %+v", name, d)
		}
		if d.Status == "unchanged" && (d.Verdict != Identical || len(d.Changes)+len(d.Edges) != 0) {
			t.Errorf("%s: unchanged node %d with verdict %s", name, d.New.ID, d.Verdict)
		}
		if d.Match != nil && (d.Match.Confidence < MinConfidence || d.Match.Confidence > 1) {
			t.Errorf("%s: confidence %v", name, d.Match.Confidence)
		}
		worst = max(worst, d.Verdict)
	}
	for _, n := range oldp.Nodes {
		if seenOld[n.ID] != 1 {
			t.Errorf("%s: OLD node %d listed %d times", name, n.ID, seenOld[n.ID])
		}
	}
	for _, n := range newp.Nodes {
		if seenNew[n.ID] != 1 {
			t.Errorf("%s: NEW node %d listed %d times", name, n.ID, seenNew[n.ID])
		}
	}
	c := r.Counts
	if c.Matched+c.Added != len(newp.Nodes) || c.Matched+c.Removed != len(oldp.Nodes) || c.MatchedByID+c.MatchedByStructure != c.Matched {
		t.Errorf("%s: counts %+v for %d -> %d nodes", name, c, len(oldp.Nodes), len(newp.Nodes))
	}
	if r.FlinkVersion != nil && worst < Compatible {
		worst = Compatible
	}
	if r.Verdict != worst {
		t.Errorf("%s: verdict %s, worst node verdict %s", name, r.Verdict, worst)
	}
	if r.Verdict != Identical && r.Reason == "" {
		t.Errorf("%s: verdict %s without a reason", name, r.Verdict)
	}
}

// Every ordered pair of oracle plans, and every pair of corpus plans of the same exec node
// type directory: the diff holds its invariants whatever the two queries are.
func TestDiffAllPairsInvariants(t *testing.T) {
	files := diffPlanFiles(t)
	plans := map[string]*Plan{}
	for _, f := range files {
		plans[f] = loadPlan(t, f)
	}
	n := 0
	for _, a := range files {
		for _, b := range files {
			if filepath.Dir(a) != filepath.Dir(b) {
				continue
			}
			r := Diff(plans[a], plans[b])
			checkInvariants(t, filepath.Base(a)+" -> "+filepath.Base(b), plans[a], plans[b], r)
			n++
		}
	}
	t.Logf("%d pairs", n)
}

// FuzzDiff: no input pair makes Diff, the renderers or the unified diff panic, and the
// invariants hold for anything Parse accepts.
func FuzzDiff(f *testing.F) {
	for _, name := range []string{"group-aggregate", "group-aggregate-filtered", "join-inner", "join-inner-other-key"} {
		if data, err := os.ReadFile(filepath.Join(repoRoot(), "testdata", "plans", name+".json")); err == nil {
			f.Add(data, data)
		}
	}
	f.Add([]byte(`{"nodes":[{"id":1,"type":"a_1"},{"id":1,"type":"b"}],"edges":[{"source":1,"target":1},{"source":1,"target":9}]}`),
		[]byte(`{"nodes":[{"id":2,"type":"a_2","state":[{"index":0,"ttl":"1 d","name":"s"}]}],"edges":[{"source":2,"target":2}]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		oldp, err1 := Parse("a", a)
		newp, err2 := Parse("b", b)
		if err1 != nil || err2 != nil {
			return
		}
		r := Diff(oldp, newp)
		if !hasCode(oldp.Problems, "duplicate-node-id") && !hasCode(newp.Problems, "duplicate-node-id") {
			checkInvariants(t, "fuzz", oldp, newp, r)
		}
		DOT(newp, newp.Validate().Findings)
		Mermaid(oldp, oldp.Validate().Findings)
		UnifiedDiff("a", "b", a, b, 3)
	})
}

// One edit at a time to a real plan (the oracle's group-aggregate: source 1, calc 2,
// exchange 3, aggregate 4, sink 5): each member a user can change lands in the right kind,
// on the right node, with the verdict the node's state dictates.
func TestDiffChangeKinds(t *testing.T) {
	base := oraclePlan(t, "group-aggregate")
	for _, tc := range []struct {
		name    string
		path    string // sjson path in the plan
		raw     string // new raw JSON value; "" deletes the member
		node    int
		kind    string
		verdict Verdict
	}{
		{"agg config", `nodes.3.configuration.table\.exec\.mini-batch\.size`, `"1000"`, 4, "config", Incompatible},
		{"agg new option", `nodes.3.configuration.table\.exec\.state\.ttl`, `"1 h"`, 4, "config", Incompatible},
		{"sink config", `nodes.4.configuration.table\.exec\.sink\.not-null-enforcer`, `"DROP"`, 5, "config", Compatible},
		{"agg changelog", "nodes.3.generateUpdateBefore", "true", 4, "changelog", Incompatible},
		{"sink changelog", "nodes.4.inputChangelogMode", `["INSERT","UPDATE_BEFORE","UPDATE_AFTER","DELETE"]`, 5, "changelog", Compatible},
		{"agg grouping", "nodes.3.grouping", "[0, 1]", 4, "keys", Incompatible},
		{"sink upsert key", "nodes.4.inputUpsertKey", "[1]", 5, "keys", Compatible},
		{"hash keys", "nodes.2.inputProperties.0.requiredDistribution.keys", "[1]", 3, "keys", Compatible},
		{"agg call", "nodes.3.aggCalls.1.distinct", "true", 4, "field", Incompatible},
		{"agg version", "nodes.3.type", `"stream-exec-group-aggregate_2"`, 4, "version", Incompatible},
		{"calc version", "nodes.1.type", `"stream-exec-calc_2"`, 2, "version", Compatible},
		{"agg output type", "nodes.3.outputType", "\"ROW<`user_id` BIGINT, `cnt` BIGINT NOT NULL, `total` BIGINT>\"", 4, "output-type", Incompatible},
		{"agg state name", "nodes.3.state.0.name", `"otherState"`, 4, "state", Incompatible},
		{"agg uid format", `nodes.3.configuration.table\.exec\.uid\.format`, `"agg_<transformation>"`, 4, "uid-format", UIDRemap},
		{"sink uid format", `nodes.4.configuration.table\.exec\.uid\.format`, `"<id>_<transformation>"`, 5, "uid-format", Identical},
		{"calc description", "nodes.1.description", `"Calc(select=[user_id, amount]) "`, 2, "description", Compatible},
		{"edge shuffle", "edges.1.shuffle.type", `"HASH"`, 3, "", Compatible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out []byte
			var err error
			if tc.raw == "" {
				out, err = sjson.DeleteBytes(base.Raw, tc.path)
			} else {
				out, err = sjson.SetRawBytes(append([]byte(nil), base.Raw...), tc.path, []byte(tc.raw))
			}
			if err != nil {
				t.Fatal(err)
			}
			r := Diff(base, reparse(t, "edited.json", out))
			d := nodeByNewID(r, tc.node)
			if d == nil || d.Old == nil || d.Old.ID != tc.node {
				t.Fatalf("node %d not matched to itself: %+v", tc.node, d)
			}
			if tc.kind != "" {
				found := false
				for _, c := range d.Changes {
					found = found || c.Kind == tc.kind
				}
				if !found {
					t.Errorf("no %s change on node %d: %v", tc.kind, tc.node, kinds(d))
				}
			} else if len(d.Edges) != 1 || d.Edges[0].Change != "changed" || d.Edges[0].New.Shuffle != "HASH" {
				t.Errorf("edge change on node %d: %+v", tc.node, d.Edges)
			}
			if d.Verdict != tc.verdict || r.Verdict != tc.verdict {
				t.Errorf("node verdict %s, overall %s (%s), want %s", d.Verdict, r.Verdict, r.Reason, tc.verdict)
			}
			for _, other := range r.Nodes {
				if other.New.ID != tc.node && other.Status != "unchanged" && tc.kind != "output-type" {
					t.Errorf("node %d also listed: %v %v", other.New.ID, kinds(&other), other.Edges)
				}
			}
		})
	}
}

// Switching a TTL between never (0 ms: Flink builds the descriptor without TTL) and a finite
// value changes how values are stored; Flink restores across the switch only since 2.2.
// Finite to finite is a TTL-only change on any version.
func TestDiffTTLSwitchNeedsFlink22(t *testing.T) {
	base := oraclePlan(t, "group-aggregate")
	s := base.States()[0]
	if !s.TTL.IsNever() {
		t.Fatalf("oracle plan's TTL is %s, want never", s.TTL)
	}
	withTTL := func(p *Plan, v ttl.TTL) []byte {
		out, _, err := p.Apply([]Change{{Entry: p.States()[0], TTL: v}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	atVersion := func(data []byte, v string) *Plan {
		out, err := sjson.SetBytes(append([]byte(nil), data...), "flinkVersion", v)
		if err != nil {
			t.Fatal(err)
		}
		return reparse(t, "v"+v+".json", out)
	}
	hour := withTTL(base, ttl.TTL(3600000))
	day := withTTL(base, ttl.TTL(86400000))
	for _, tc := range []struct {
		name     string
		old, new []byte
		version  string
		want     Verdict
		reason   string
	}{
		{"never->1h on 2.3", base.Raw, hour, "2.3", TTLOnly, "restores on Flink 2.2+"},
		{"1h->never on 2.2", hour, base.Raw, "2.2", TTLOnly, "restores on Flink 2.2+"},
		{"never->1h on 2.1", base.Raw, hour, "2.1", Incompatible, "Flink 2.1 cannot restore"},
		{"1h->never on 1.19", hour, base.Raw, "1.19", Incompatible, "Flink 1.19 cannot restore"},
		{"1h->1d on 1.19", hour, day, "1.19", TTLOnly, "only TTL changed (groupAggregateState: 1h -> 1d)"},
	} {
		r := Diff(atVersion(tc.old, tc.version), atVersion(tc.new, tc.version))
		if r.Verdict != tc.want || !strings.Contains(r.Reason, tc.reason) {
			t.Errorf("%s: %s (%s), want %s and %q", tc.name, r.Verdict, r.Reason, tc.want, tc.reason)
		}
	}
	for _, tc := range []struct {
		v      string
		before bool
		known  bool
	}{{"2.3", false, true}, {"2.2", false, true}, {"2.1", true, true}, {"1.19", true, true}, {"10.0", false, true}, {"", false, false}, {"x.y", false, false}, {"2.2.1", false, true}} {
		if b, k := VersionBefore(tc.v, 2, 2); b != tc.before || k != tc.known {
			t.Errorf("VersionBefore(%q, 2, 2) = %v, %v", tc.v, b, k)
		}
	}
}

// The report's rename map for a renumbered plan: every operator of a node holding state, with
// the UIDs and OperatorID hashes Flink derives, the stateful operator marked.
func TestDiffUIDRenames(t *testing.T) {
	p := oraclePlan(t, "group-aggregate")
	q := reparse(t, "shifted.json", renumber(t, p, func(id int) int { return id + 1000 }))
	r := Diff(p, q)
	got := map[string]UIDRename{}
	for _, u := range r.UIDRenames {
		got[u.Old] = u
	}
	for _, w := range []struct {
		old, new string
		node     int
		state    bool
	}{
		{"4_group-aggregate", "1004_group-aggregate", 1004, true},
		{"1_source", "1001_source", 1001, false},
	} {
		u, ok := got[w.old]
		if !ok {
			t.Errorf("no rename of %s in %+v", w.old, r.UIDRenames)
			continue
		}
		if u.New != w.new || u.Node != w.node || u.State != w.state || u.OldHash != uidHashOf(t, p, w.old) || u.NewHash != uidHashOf(t, q, w.new) {
			t.Errorf("rename %+v, want %s -> %s on node %d state=%v", u, w.old, w.new, w.node, w.state)
		}
	}
	for _, u := range r.UIDRenames {
		if strings.Contains(u.Old, "exchange") || strings.Contains(u.Old, "calc") || strings.HasSuffix(u.Old, "_sink") {
			t.Errorf("rename of a stateless node's operator listed: %+v", u)
		}
	}
	if d := nodeByNewID(r, 1004); d == nil || !strings.Contains(d.Reason, "UID 4_group-aggregate becomes 1004_group-aggregate") {
		t.Errorf("aggregate reason: %+v", d)
	}
	// No renames when nothing is renumbered.
	if r := Diff(p, p); len(r.UIDRenames) != 0 {
		t.Errorf("self diff renames %+v", r.UIDRenames)
	}
}

func uidHashOf(t *testing.T, p *Plan, want string) string {
	us, err := p.UIDs(UIDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range us {
		for _, tr := range u.Transformations {
			if tr.UID == want {
				return tr.Hash
			}
		}
	}
	t.Fatalf("no transformation with UID %s", want)
	return ""
}

// A plan from before Flink 1.18 has no "state" arrays; against a newer plan of the same
// query that is a TTL matter (the TTL moves into the plan), not a changed state layout.
func TestDiffStateArrayOnOneSide(t *testing.T) {
	p := oraclePlan(t, "group-aggregate")
	agg := p.Nodes[3]
	if !agg.HasState {
		t.Fatal("node 4 has no state array")
	}
	old, err := sjson.DeleteBytes(append([]byte(nil), p.Raw...), "nodes.3.state")
	if err == nil {
		old, err = sjson.SetBytes(old, "flinkVersion", "1.17")
	}
	if err != nil {
		t.Fatal(err)
	}
	o := reparse(t, "old-1.17.json", old)
	for _, tc := range []struct {
		a, b *Plan
		side string
	}{{o, p, "only in NEW"}, {p, o, "only in OLD"}} {
		r := Diff(tc.a, tc.b)
		d := nodeByNewID(r, 4)
		if d == nil || len(d.Changes) != 1 || d.Changes[0].Kind != "ttl" || !strings.Contains(d.Changes[0].Detail, tc.side) {
			t.Fatalf("%s: aggregate changes %v", tc.side, kinds(d))
		}
		if d.Verdict != TTLOnly {
			t.Errorf("%s: aggregate verdict %s (%s), want ttl-only", tc.side, d.Verdict, d.Reason)
		}
	}
}

// TestDiffTTLReasonNamesEveryState (issue 18, messages): when both states of Flink's join change
// TTL, one lengthened and one switched on, the reason names both, not only the first.
func TestDiffTTLReasonNamesEveryState(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "testdata", "plans", "join-inner.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := reparse(t, "join-inner.json", data)
	if len(base.States()) != 2 {
		t.Fatalf("join-inner has %d state entries, want 2", len(base.States()))
	}
	hour, two := ttl.TTL(3600000), ttl.TTL(7200000)
	oldData, _, err := base.Apply([]Change{{Entry: base.States()[0], TTL: hour}})
	if err != nil {
		t.Fatal(err)
	}
	old := reparse(t, "old.json", oldData)
	newData, _, err := old.Apply([]Change{{Entry: old.States()[0], TTL: two}, {Entry: old.States()[1], TTL: hour}})
	if err != nil {
		t.Fatal(err)
	}
	r := Diff(old, reparse(t, "new.json", newData))
	for _, want := range []string{"leftState: 1h -> 2h", "rightState: never -> 1h"} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason %q does not name %q", r.Reason, want)
		}
	}
}
