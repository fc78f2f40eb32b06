package plan

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/sjson"
)

// tBasePlans returns a real plan Flink compiled with a chain of two TTL-carrying operators
// (deduplicate, then group aggregate) and the path of a plan with a two-input join. The
// corruption tests below start from these bytes and break one thing each.
func tBasePlans(t *testing.T) (chain, join []byte) {
	t.Helper()
	read := func(cands ...string) []byte {
		for _, c := range cands {
			if b, err := os.ReadFile(c); err == nil {
				return b
			}
		}
		t.Skipf("none of %v present", cands)
		return nil
	}
	td := filepath.Join(repoRoot(), "testdata", "plans")
	corpus := filepath.Join(repoRoot(), "..", "shared", "corpus", "flink-plans", "restore-tests")
	chain = read(filepath.Join(td, "dedup-then-aggregate.json"), filepath.Join(td, "judge-agg-chain.json"))
	join = read(filepath.Join(td, "join-inner.json"), filepath.Join(corpus, "stream-exec-join_1", "join-inner-join-with-pk.json"))
	return chain, join
}

// ttlNodes returns the TTL-carrying nodes of p in file order.
func ttlNodes(p *Plan) []*Node {
	var out []*Node
	for _, n := range p.Nodes {
		if n.HasState {
			out = append(out, n)
		}
	}
	return out
}

func tSet(t *testing.T, data []byte, path string, v any) []byte {
	t.Helper()
	out, err := sjson.SetBytes(data, path, v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tSetRaw(t *testing.T, data []byte, path, raw string) []byte {
	t.Helper()
	out, err := sjson.SetRawBytes(data, path, []byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tDel(t *testing.T, data []byte, path string) []byte {
	t.Helper()
	out, err := sjson.DeleteBytes(data, path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tCodes(r *Report) string {
	var parts []string
	for _, f := range r.Findings {
		parts = append(parts, fmt.Sprintf("%s %s %s", f.Severity, f.Code, f.Path))
	}
	return strings.Join(parts, "; ")
}

func TestValidateFindsCorruption(t *testing.T) {
	chain, join := tBasePlans(t)
	cp := tParseBytes(t, chain)
	jp := tParseBytes(t, join)
	if r := cp.Validate(); r.Count(Error)+r.Count(Warning) != 0 {
		t.Fatalf("the unedited chain plan should be clean: %s", tCodes(r))
	}
	agg := ttlNodes(cp)[1]
	jn := ttlNodes(jp)[0]
	aggPath := fmt.Sprintf("nodes.%d", agg.Pos) // to edit the JSON
	jnPath := fmt.Sprintf("nodes.%d", jn.Pos)
	// Findings name a node by its id, not by its position in the array.
	aggWant := fmt.Sprintf("nodes[id=%d]", agg.ID)
	jnWant := fmt.Sprintf("nodes[id=%d]", jn.ID)

	cases := []struct {
		name     string
		data     []byte
		severity Severity
		code     string
		path     string
	}{
		{"duplicate node id", tSet(t, chain, "nodes.1.id", cp.Nodes[0].ID), Error, "duplicate-node-id", "nodes.1.id"},
		{"edge to a missing node", tSet(t, chain, "edges.0.target", 99999), Error, "dangling-edge", "edges.0.target"},
		{"edge from a missing node", tSet(t, chain, "edges.0.source", 99999), Error, "dangling-edge", "edges.0.source"},
		{"cycle", tSetRaw(t, chain, "edges.-1", fmt.Sprintf(`{"source":%d,"target":%d}`, agg.ID, cp.Nodes[1].ID)), Error, "cycle", "edges"},
		{"no edges", tDel(t, chain, "edges"), Error, "no-edges", "edges"},
		{"empty edges", tSetRaw(t, chain, "edges", "[]"), Error, "no-edges", "edges"},
		{"node without id", tDel(t, chain, "nodes.0.id"), Error, "bad-node", "nodes.0.id"},
		{"state without name", tDel(t, chain, aggPath+".state.0.name"), Error, "bad-state", aggWant + ".state.0.name"},
		{"state without ttl", tDel(t, chain, aggPath+".state.0.ttl"), Error, "bad-state", aggWant + ".state.0.ttl"},
		{"state without index", tDel(t, chain, aggPath+".state.0.index"), Error, "bad-state", aggWant + ".state.0.index"},
		{"ttl as a number", tSet(t, chain, aggPath+".state.0.ttl", 5), Error, "bad-state", aggWant + ".state.0.ttl"},
		{"negative index", tSet(t, chain, aggPath+".state.0.index", -1), Error, "bad-state", aggWant + ".state.0.index"},
		{"index out of range", tSet(t, chain, aggPath+".state.0.index", 1), Error, "state-index", aggWant + ".state.0.index"},
		{"duplicate index", tSet(t, join, jnPath+".state.1.index", 0), Error, "state-index", jnWant + ".state.1.index"},
		{"one state for two inputs", tDel(t, join, jnPath+".state.1"), Error, "state-count", jnWant + ".state"},
		{"two states for one input", tSetRaw(t, chain, aggPath+".state.-1", `{"index":1,"ttl":"0 ms","name":"x"}`), Error, "state-count", aggWant + ".state"},
		{"unknown unit", tSet(t, chain, aggPath+".state.0.ttl", "1 fortnight"), Error, "ttl-syntax", aggWant + ".state.0.ttl"},
		{"negative ttl", tSet(t, chain, aggPath+".state.0.ttl", "-1 ms"), Error, "ttl-syntax", aggWant + ".state.0.ttl"},
		{"empty ttl", tSet(t, chain, aggPath+".state.0.ttl", ""), Error, "ttl-syntax", aggWant + ".state.0.ttl"},
		{"ttl overflowing milliseconds", tSet(t, chain, aggPath+".state.0.ttl", "9223372036854775807 s"), Error, "ttl-syntax", aggWant + ".state.0.ttl"},
		{"inputProperties without edge", tSetRaw(t, chain, "nodes.0.inputProperties", `[{}]`), Error, "input-count", fmt.Sprintf("nodes[id=%d].inputProperties", cp.Nodes[0].ID)},
		{"sub-millisecond ttl", tSet(t, chain, aggPath+".state.0.ttl", "1500 µs"), Warning, "ttl-sub-millisecond", aggWant + ".state.0.ttl"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("broken.json", tc.data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			r := p.Validate()
			for _, f := range r.Findings {
				if f.Severity == tc.severity && f.Code == tc.code && f.Path == tc.path {
					if f.Message == "" {
						t.Fatalf("finding %s has no message", f.Code)
					}
					// Counts of one are singular (this message once said "1 state entries").
					if tc.name == "one state for two inputs" && !strings.Contains(f.Message, "has 1 state entry for 2 inputs;") {
						t.Fatalf("message %q", f.Message)
					}
					return
				}
			}
			t.Fatalf("want %s %s at %s; got: %s", tc.severity, tc.code, tc.path, tCodes(r))
		})
	}
}

func tParseBytes(t *testing.T, data []byte) *Plan {
	t.Helper()
	p, err := Parse("plan.json", data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestValidateOmittedInputProperties: Flink 2.2+ leaves out empty inputProperties; the state
// count is then checked against the edges, so a node without the field is still valid.
func TestValidateOmittedInputProperties(t *testing.T) {
	chain, _ := tBasePlans(t)
	p := tParseBytes(t, chain)
	agg := ttlNodes(p)[1]
	q := tParseBytes(t, tDel(t, chain, fmt.Sprintf("nodes.%d.inputProperties", agg.Pos)))
	if r := q.Validate(); r.Count(Error) != 0 {
		t.Fatalf("errors: %s", tCodes(r))
	}
}

// TestValidateTTLOrder checks the ordering rule on the dedup -> aggregate chain Flink compiled.
func TestValidateTTLOrder(t *testing.T) {
	chain, _ := tBasePlans(t)
	p := tParseBytes(t, chain)
	sf := ttlNodes(p)
	up, down := sf[0], sf[1]
	upTTL := fmt.Sprintf("nodes.%d.state.0.ttl", up.Pos)
	downTTL := fmt.Sprintf("nodes.%d.state.0.ttl", down.Pos)
	cases := []struct {
		up, down string
		warn     bool
		fix      string
	}{
		{"1 d", "1 h", true, fmt.Sprintf("--set %d:%s=1d", down.ID, down.State[0].Name)},
		{"0 ms", "1 h", true, fmt.Sprintf("--set %d:%s=never", down.ID, down.State[0].Name)},
		{"1 h", "1 h", false, ""},
		{"1 h", "1 d", false, ""},
		{"1 h", "0 ms", false, ""},
		{"0 ms", "0 ms", false, ""},
		{"60 min", "3600000", false, ""}, // same value, different text
		{"3600001 ms", "1 h", true, fmt.Sprintf("--set %d:%s=1h1ms", down.ID, down.State[0].Name)},
	}
	for _, tc := range cases {
		data := tSet(t, tSet(t, chain, upTTL, tc.up), downTTL, tc.down)
		r := tParseBytes(t, data).Validate()
		var got *Finding
		for i, f := range r.Findings {
			if f.Code == "ttl-order" {
				got = &r.Findings[i]
			}
		}
		if (got != nil) != tc.warn {
			t.Errorf("up %q down %q: ttl-order warning %v, want %v (%s)", tc.up, tc.down, got != nil, tc.warn, tCodes(r))
			continue
		}
		if got == nil {
			continue
		}
		if got.Severity != Warning || got.Upstream.Node != up.ID || got.Downstream.Node != down.ID {
			t.Errorf("finding %+v names the wrong nodes", got)
		}
		if got.Route[0] != up.ID || got.Route[len(got.Route)-1] != down.ID {
			t.Errorf("route %v does not run from %d to %d", got.Route, up.ID, down.ID)
		}
		if !strings.Contains(got.Fix, tc.fix) {
			t.Errorf("fix %q does not contain %q", got.Fix, tc.fix)
		}
		if !strings.Contains(got.Message, fmt.Sprint(up.ID)) || !strings.Contains(got.Message, fmt.Sprint(down.ID)) {
			t.Errorf("message %q does not name both nodes", got.Message)
		}
		// The suggested fix, applied, clears the finding.
		fixed := tSet(t, data, downTTL, got.Upstream.TTL)
		if r := tParseBytes(t, fixed).Validate(); hasCode(r.Findings, "ttl-order") {
			t.Errorf("raising the downstream TTL to %q leaves %s", got.Upstream.TTL, tCodes(r))
		}
	}
}

func TestParseRejectsNonPlans(t *testing.T) {
	chain, _ := tBasePlans(t)
	cut := chain[:len(chain)/2]
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", cut, "not JSON"},
		{"garbage", []byte("{\n  \"nodes\" : [ }\n"), "broken.json:2:"},
		{"array", []byte(`[1, 2]`), "not a Flink compiled plan"},
		{"no nodes", []byte(`{"flinkVersion": "2.3"}`), `no "nodes" array`},
		{"nodes not an array", []byte(`{"nodes": {}}`), `no "nodes" array`},
		{"empty", []byte(``), "not JSON"},
	}
	for _, tc := range cases {
		_, err := Parse("broken.json", tc.data)
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "broken.json") {
			t.Errorf("%s: err = %v; want a ParseError naming the file and containing %q", tc.name, err, tc.want)
		}
	}
	// The line and column point at the first bad byte.
	_, err := Parse("broken.json", []byte("{\n  \"nodes\" : [ }\n"))
	if pe := (*ParseError)(nil); errors.As(err, &pe) && (pe.Line != 2 || pe.Col != 15) {
		t.Errorf("position %d:%d, want 2:15", pe.Line, pe.Col)
	}
}

// TestPreFlip292Plan: a plan as Flink 1.15-1.17 wrote it has no "state" arrays. It is read,
// its stateful nodes are classified as having no per-operator TTL, and selecting states
// explains that a 1.18+ plan is needed. (Made from a real plan by removing what 1.18 added.)
func TestPreFlip292Plan(t *testing.T) {
	chain, _ := tBasePlans(t)
	p := tParseBytes(t, chain)
	old := tSet(t, chain, "flinkVersion", "1.16")
	for _, n := range ttlNodes(p) {
		old = tDel(t, old, fmt.Sprintf("nodes.%d.state", n.Pos))
	}
	q := tParseBytes(t, old)
	if q.HasAnyState() || len(q.States()) != 0 {
		t.Fatal("state entries found in a plan without state arrays")
	}
	if r := q.Validate(); r.Count(Error) != 0 {
		t.Fatalf("an old plan is valid: %s", tCodes(r))
	}
	for _, n := range ttlNodes(p) {
		c, why := q.Node(n.ID).Classify()
		if c != StatefulNoTTL || !strings.Contains(why, "1.18") {
			t.Errorf("node %d: %v %q; want stateful-no-ttl naming Flink 1.18", n.ID, c, why)
		}
	}
	_, err := q.Select(Selector{Text: "all", All: true, StateIdx: -1})
	if err == nil || !strings.Contains(err.Error(), "1.18") {
		t.Fatalf("Select(all) = %v; want an error saying a Flink 1.18+ plan is needed", err)
	}
}

// TestEscapedTTLText: a "ttl" string with JSON escapes is read as Flink's Jackson reads it
// (unescaped), and an edit replaces the whole token, escapes included, and nothing else.
func TestEscapedTTLText(t *testing.T) {
	chain, _ := tBasePlans(t)
	p := tParseBytes(t, chain)
	agg := ttlNodes(p)[1]
	path := fmt.Sprintf("nodes.%d.state.0.ttl", agg.Pos)
	data := tSetRaw(t, chain, path, `"1\u0020d"`)
	q := tParseBytes(t, data)
	s := q.Node(agg.ID).State[0]
	if s.TTLErr != nil || s.TTLText != "1 d" || s.TTL.Millis() != 86400000 {
		t.Fatalf("escaped ttl read as %q %v %v", s.TTLText, s.TTL, s.TTLErr)
	}
	out, _, err := q.Apply([]Change{{Entry: s, TTL: 3600000}})
	if err != nil {
		t.Fatal(err)
	}
	if want := tSetRaw(t, chain, path, `"1 h"`); !bytes.Equal(out, want) {
		t.Fatalf("edit of an escaped ttl:\n%s", out)
	}
}
