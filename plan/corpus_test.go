package plan

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/ttl"
	"github.com/tidwall/gjson"
)

// repoRoot is the repository root, found from this file's location.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// realPlans returns every compiled plan Flink wrote that the tests can see: the oracle's
// testdata/plans/*.json and the shared corpus of Flink's own restore-test plans (when present).
func realPlans(t testing.TB) []string {
	t.Helper()
	var files []string
	oracle, _ := filepath.Glob(filepath.Join(repoRoot(), "testdata", "plans", "*.json"))
	for _, f := range oracle {
		if !strings.HasSuffix(f, ".spec.json") && !strings.HasSuffix(f, ".expect.json") {
			files = append(files, f)
		}
	}
	corpus := filepath.Join(repoRoot(), "..", "shared", "corpus", "flink-plans")
	if _, err := os.Stat(corpus); err == nil {
		filepath.WalkDir(corpus, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
	} else {
		t.Logf("shared corpus %s not present: only oracle plans are used", corpus)
	}
	if len(files) == 0 {
		t.Skip("no compiled plans: neither testdata/plans/*.json nor ../shared/corpus/flink-plans exist")
	}
	sort.Strings(files)
	return files
}

func tParseFile(t testing.TB, path string) *Plan {
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

// TestRealPlansParseAndValidate: every plan Flink wrote parses, and has no structural errors
// (Flink loaded these plans in its own restore tests, so an error would be our bug).
func TestRealPlansParseAndValidate(t *testing.T) {
	for _, f := range realPlans(t) {
		p := tParseFile(t, f)
		r := p.Validate()
		for _, fd := range r.Findings {
			if fd.Severity == Error {
				t.Errorf("%s: unexpected error finding: %s: %s", f, fd.Path, fd.Message)
			}
		}
		// Cross-check the model against an independent reading of the same file.
		root := gjson.ParseBytes(p.Raw)
		if got, want := len(p.Nodes), int(root.Get("nodes.#").Int()); got != want {
			t.Errorf("%s: %d nodes, file has %d", f, got, want)
		}
		if got, want := len(p.Edges), int(root.Get("edges.#").Int()); got != want {
			t.Errorf("%s: %d edges, file has %d", f, got, want)
		}
		for _, n := range p.Nodes {
			st := root.Get("nodes." + tItoa(n.Pos) + ".state")
			if n.HasState != st.Exists() || len(n.State) != int(st.Get("#").Int()) {
				t.Errorf("%s: node %d: state %v/%d, file has %v/%d", f, n.ID, n.HasState, len(n.State), st.Exists(), st.Get("#").Int())
			}
			for _, s := range n.State {
				if s.TTLErr != nil {
					t.Errorf("%s: %s: %v", f, s.Path(), s.TTLErr)
				}
				if raw := string(p.Raw[s.ttlStart:s.ttlEnd]); raw != st.Get(tItoa(s.Pos)+".ttl").Raw {
					t.Errorf("%s: %s: ttl span holds %q", f, s.Path(), raw)
				}
			}
		}
	}
}

func tItoa(i int) string { return strconv.Itoa(i) }

// TestSetEveryTTLPreservesOtherBytes sets every TTL of every real plan to a new value and
// checks that the result differs from the original only inside the "ttl" strings, and that
// an independent JSON reader sees the new values at nodes.N.state.K.ttl.
func TestSetEveryTTLPreservesOtherBytes(t *testing.T) {
	edited := 0
	for _, f := range realPlans(t) {
		p := tParseFile(t, f)
		states := p.States()
		if len(states) == 0 {
			continue
		}
		var changes []Change
		for i, s := range states {
			changes = append(changes, Change{Entry: s, TTL: ttl.TTL(3600000 + int64(i)*1000)})
		}
		out, edits, err := p.Apply(changes)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Walk both files: outside the edited spans they must be identical.
		at, outAt := 0, 0
		sort.Slice(edits, func(i, j int) bool { return edits[i].Entry.ttlStart < edits[j].Entry.ttlStart })
		for _, e := range edits {
			if !e.Changed {
				t.Fatalf("%s: %s: a new TTL was not applied", f, e.Entry.Path())
			}
			seg := p.Raw[at:e.Entry.ttlStart]
			if !bytes.Equal(out[outAt:outAt+len(seg)], seg) {
				t.Fatalf("%s: bytes before %s differ", f, e.Entry.Path())
			}
			outAt += len(seg)
			want := `"` + e.New + `"`
			if string(out[outAt:outAt+len(want)]) != want {
				t.Fatalf("%s: %s: got %q, want %q", f, e.Entry.Path(), out[outAt:outAt+len(want)], want)
			}
			outAt += len(want)
			at = e.Entry.ttlEnd
		}
		if !bytes.Equal(out[outAt:], p.Raw[at:]) {
			t.Fatalf("%s: bytes after the last edit differ", f)
		}
		// An independent reader sees the new values by path, and the edited plan re-parses.
		for i, s := range states {
			got := gjson.GetBytes(out, "nodes."+tItoa(s.Node.Pos)+".state."+tItoa(s.Pos)+".ttl").String()
			if want := ttl.TTL(3600000 + int64(i)*1000).Text(); got != want {
				t.Fatalf("%s: %s.ttl = %q after the edit, want %q", f, s.Path(), got, want)
			}
		}
		q, err := Parse(f, out)
		if err != nil {
			t.Fatalf("%s: edited plan does not parse: %v", f, err)
		}
		if len(q.States()) != len(states) {
			t.Fatalf("%s: edited plan has %d states, want %d", f, len(q.States()), len(states))
		}
		edited++
	}
	if edited == 0 {
		t.Skip("no plan with state entries available")
	}
	t.Logf("edited every TTL of %d plans", edited)
}

// TestEditedEqualsReparse: the model Edited builds is the one parsing the edited bytes gives.
func TestEditedEqualsReparse(t *testing.T) {
	for _, f := range realPlans(t) {
		p := tParseFile(t, f)
		var changes []Change
		for i, s := range p.States() {
			if i%2 == 0 { // leave some entries alone so offsets shift around unchanged ones
				changes = append(changes, Change{Entry: s, TTL: ttl.TTL(int64(i+1) * 86400000 * 1001)})
			}
		}
		out, edits, err := p.Apply(changes)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Edited(out, edits)
		want, err := Parse(f, out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Nodes) != len(want.Nodes) || len(got.Edges) != len(want.Edges) {
			t.Fatalf("%s: shape differs", f)
		}
		for i, n := range want.Nodes {
			g := got.Nodes[i]
			if g.ID != n.ID || g.Offset != n.Offset || g.Raw != n.Raw || len(g.Inputs) != len(n.Inputs) || len(g.Outputs) != len(n.Outputs) || len(g.State) != len(n.State) {
				t.Fatalf("%s: node %d differs", f, n.ID)
			}
			for k, s := range n.State {
				h := g.State[k]
				if h.TTLText != s.TTLText || h.TTL != s.TTL || h.ttlStart != s.ttlStart || h.ttlEnd != s.ttlEnd || h.Index != s.Index || h.Name != s.Name {
					t.Fatalf("%s: %s differs: %+v vs %+v", f, s.Path(), h, s)
				}
			}
			for k, e := range n.Inputs {
				if *g.Inputs[k] != *e {
					t.Fatalf("%s: node %d input %d differs", f, n.ID, k)
				}
			}
		}
	}
}

// TestClassifyRealPlans: in every real plan, a node is TTL-configurable exactly when Flink gave
// it a "state" array, and the node types below (all seen in the plans) get the stated class.
func TestClassifyRealPlans(t *testing.T) {
	want := map[string]Class{
		"stream-exec-calc":                   Stateless,
		"stream-exec-exchange":               Stateless,
		"stream-exec-table-source-scan":      Stateless,
		"stream-exec-watermark-assigner":     Stateless,
		"stream-exec-union":                  Stateless,
		"stream-exec-local-group-aggregate":  Stateless,
		"stream-exec-window-table-function":  Stateless,
		"stream-exec-window-aggregate":       StatefulNoTTL,
		"stream-exec-window-join":            StatefulNoTTL,
		"stream-exec-window-rank":            StatefulNoTTL,
		"stream-exec-window-deduplicate":     StatefulNoTTL,
		"stream-exec-group-window-aggregate": StatefulNoTTL,
		"stream-exec-interval-join":          StatefulNoTTL,
		"stream-exec-temporal-join":          StatefulNoTTL,
		"stream-exec-over-aggregate":         StatefulNoTTL,
		"stream-exec-match":                  StatefulNoTTL,
		"stream-exec-temporal-sort":          StatefulNoTTL,
		"stream-exec-process-table-function": StatefulNoTTL,
		"stream-exec-group-aggregate":        TTLConfigurable,
		"stream-exec-join":                   TTLConfigurable,
		"stream-exec-deduplicate":            TTLConfigurable,
		"stream-exec-rank":                   TTLConfigurable,
	}
	seen := map[string]bool{}
	for _, f := range realPlans(t) {
		p := tParseFile(t, f)
		for _, n := range p.Nodes {
			c, why := n.Classify()
			if (c == TTLConfigurable) != n.HasState {
				t.Errorf("%s: node %d (%s): class %v but HasState %v", f, n.ID, n.Type, c, n.HasState)
			}
			if c == StatefulNoTTL && why == "" {
				t.Errorf("%s: node %d (%s): no reason given", f, n.ID, n.Type)
			}
			if w, ok := want[n.Name]; ok {
				seen[n.Name] = true
				if c != w {
					t.Errorf("%s: node %d (%s): class %v, want %v", f, n.ID, n.Type, c, w)
				}
			}
		}
	}
	if len(seen) < 5 {
		t.Fatalf("only %d of the listed node types occur in the available plans", len(seen))
	}
}
