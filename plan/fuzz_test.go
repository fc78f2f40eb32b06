package plan

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/ttl"
)

// FuzzPlanTTLEdit parses mutated compiled plans (seeded with every plan Flink wrote: the
// oracle's testdata/plans and, when present, the shared corpus of Flink's own restore-test
// plans) and sets the TTL of the state entries a mask picks. Parse must not panic; when it
// accepts the input and an entry has a "ttl" string, the edited bytes must be valid JSON that
// parses to the same plan apart from the edited TTLs, and Edited (the model plan ttl set
// validates without parsing again) must agree with that second parse.
func FuzzPlanTTLEdit(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(repoRoot(), "testdata", "plans", "*.json"))
	corpus := filepath.Join(repoRoot(), "..", "shared", "corpus", "flink-plans")
	if _, err := os.Stat(corpus); err == nil {
		filepath.WalkDir(corpus, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".json") {
				files = append(files, path)
			}
			return nil
		})
	} else {
		f.Logf("shared corpus %s not present: seeding with the oracle's plans only", corpus)
	}
	for i, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint32(3600000*(i%50)), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, ms uint32, mask uint8) {
		p, err := Parse("fuzz.json", data)
		if err != nil {
			return
		}
		var changes []Change
		for i, s := range p.States() {
			if s.HasTTLSpan() && (mask == 0 || mask&(1<<(i%8)) != 0) {
				changes = append(changes, Change{Entry: s, TTL: ttl.TTL(ms)})
			}
		}
		if len(changes) == 0 {
			return
		}
		out, edits, err := p.Apply(changes)
		if err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if !json.Valid(out) {
			t.Fatalf("edited plan is not valid JSON:\n%s", out)
		}
		q, err := Parse("fuzz.json", out)
		if err != nil {
			t.Fatalf("edited plan does not parse: %v", err)
		}
		newText := map[string]string{} // entry path -> text it must have now
		for _, e := range edits {
			newText[e.Entry.Path()] = e.New
		}
		comparePlans(t, "reparse", p, q, newText, ttl.TTL(ms))
		comparePlans(t, "Edited", p, p.Edited(out, edits), newText, ttl.TTL(ms))
	})
}

// comparePlans checks that q is p with only the TTL texts in newText changed.
func comparePlans(t *testing.T, what string, p, q *Plan, newText map[string]string, want ttl.TTL) {
	t.Helper()
	if len(p.Nodes) != len(q.Nodes) || len(p.Edges) != len(q.Edges) || len(p.Problems) != len(q.Problems) {
		t.Fatalf("%s: %d nodes, %d edges, %d problems; want %d, %d, %d", what,
			len(q.Nodes), len(q.Edges), len(q.Problems), len(p.Nodes), len(p.Edges), len(p.Problems))
	}
	if p.FlinkVersion != q.FlinkVersion {
		t.Fatalf("%s: flinkVersion %q, want %q", what, q.FlinkVersion, p.FlinkVersion)
	}
	for i, n := range p.Nodes {
		m := q.Nodes[i]
		if n.ID != m.ID || n.Type != m.Type || n.Description != m.Description || n.HasState != m.HasState ||
			len(n.State) != len(m.State) || n.InputProperties != m.InputProperties {
			t.Fatalf("%s: node %d changed: %+v -> %+v", what, i, n, m)
		}
		for j, s := range n.State {
			r := m.State[j]
			if s.Name != r.Name || s.Index != r.Index || s.HasTTLSpan() != r.HasTTLSpan() {
				t.Fatalf("%s: %s changed: name %q index %d -> name %q index %d", what, s.Path(), s.Name, s.Index, r.Name, r.Index)
			}
			wantText, edited := newText[s.Path()]
			if !edited {
				wantText = s.TTLText
			}
			if r.TTLText != wantText {
				t.Fatalf("%s: %s ttl %q, want %q", what, s.Path(), r.TTLText, wantText)
			}
			if edited && (r.TTLErr != nil || r.TTL != want) {
				t.Fatalf("%s: %s edited to %q reads as %d (%v), want %d", what, s.Path(), r.TTLText, r.TTL, r.TTLErr, want)
			}
		}
	}
	for i, e := range p.Edges {
		g := q.Edges[i]
		if e.Source != g.Source || e.Target != g.Target || e.Input != g.Input || e.Shuffle != g.Shuffle || e.Raw != g.Raw {
			t.Fatalf("%s: edge %d changed: %+v -> %+v", what, i, e, g)
		}
	}
}
