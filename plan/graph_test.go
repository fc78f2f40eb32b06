package plan

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/ttl"
)

// ensureDot makes Graphviz's dot available or skips: when it is missing and the test runs as
// root with STATECRAFT_INSTALL_DEPS=1 or CI=true, it installs the graphviz package with apt-get.
func ensureDot(t *testing.T) string {
	t.Helper()
	if out, err := exec.Command("dot", "-V").CombinedOutput(); err == nil {
		t.Logf("using %s", strings.TrimSpace(string(out)))
		return "dot"
	}
	if os.Getenv("STATECRAFT_INSTALL_DEPS") != "1" && os.Getenv("CI") != "true" {
		t.Skip("Graphviz dot not found: install graphviz (apt-get install -y graphviz), or run as root with STATECRAFT_INSTALL_DEPS=1 or CI=true to let the test install it")
	}
	if os.Geteuid() != 0 {
		t.Skip("Graphviz dot not found and not running as root: cannot apt-get install graphviz; install it first")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("Graphviz dot not found and no apt-get to install it")
	}
	install := func() error {
		out, err := exec.Command("apt-get", "install", "-y", "-q", "graphviz").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	}
	if err := install(); err != nil {
		t.Logf("apt-get install failed (%v); running apt-get update first", err)
		if out, err := exec.Command("apt-get", "update", "-q").CombinedOutput(); err != nil {
			t.Fatalf("apt-get update: %v: %s", err, out)
		}
		if err := install(); err != nil {
			t.Fatalf("apt-get install graphviz: %v", err)
		}
	}
	if out, err := exec.Command("dot", "-V").CombinedOutput(); err != nil {
		t.Fatalf("dot -V after installing graphviz: %v: %s", err, out)
	}
	return "dot"
}

// Every real plan's DOT output is valid Graphviz: dot renders it to SVG, and the SVG has a
// node for every plan node and an edge for every plan edge.
func TestGraphDOTRendersWithGraphviz(t *testing.T) {
	dot := ensureDot(t)
	for _, f := range diffPlanFiles(t) {
		p := loadPlan(t, f)
		src := DOT(p, p.Validate().Findings)
		cmd := exec.Command(dot, "-Tsvg")
		cmd.Stdin = bytes.NewReader(src)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		svg, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Errorf("%s: dot -Tsvg: %v: %s\n%s", f, err, stderr.String(), src)
			continue
		}
		for _, n := range p.Nodes {
			if want := "<title>" + dotID(n.ID) + "</title>"; !bytes.Contains(svg, []byte(want)) {
				t.Errorf("%s: SVG lacks node %s", f, want)
			}
		}
		for _, e := range p.Edges {
			if want := "<title>" + dotID(e.Source) + "&#45;&gt;" + dotID(e.Target) + "</title>"; !bytes.Contains(svg, []byte(want)) {
				t.Errorf("%s: SVG lacks edge %s", f, want)
			}
		}
	}
}

var (
	mermaidNodeRe  = regexp.MustCompile(`^  (n\d+|nm\d+)\["([^"]*)"\]$`)
	mermaidEdgeRe  = regexp.MustCompile(`^  (n\d+|nm\d+) -->(?:\|"([^"]*)"\|)? (n\d+|nm\d+)$`)
	mermaidClassRe = regexp.MustCompile(`^  class ((?:n\d+|nm\d+)(?:,(?:n\d+|nm\d+))*) (\w+)$`)
	mermaidDefRe   = regexp.MustCompile(`^  classDef (\w+) [a-z-]+:[^,]+(?:,[a-z-]+:[^,]+)*$`)
	mermaidLinkRe  = regexp.MustCompile(`^  linkStyle (\d+(?:,\d+)*) \S+$`)
)

// mermaidParsed is the structure of a flowchart as graph emits it: every line must match
// one of the forms above.
type mermaidParsed struct {
	nodes   []string
	labels  map[string]string
	edges   [][2]string
	classes map[string][]string
	defs    map[string]bool
	links   []int
}

func parseMermaid(t *testing.T, name string, src []byte) mermaidParsed {
	t.Helper()
	m := mermaidParsed{labels: map[string]string{}, classes: map[string][]string{}, defs: map[string]bool{}}
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "%% ") || lines[1] != "flowchart TD" {
		t.Fatalf("%s: header %q", name, lines[:min(2, len(lines))])
	}
	for _, l := range lines[2:] {
		switch {
		case mermaidNodeRe.MatchString(l):
			s := mermaidNodeRe.FindStringSubmatch(l)
			if _, dup := m.labels[s[1]]; dup {
				t.Errorf("%s: node %s declared twice", name, s[1])
			}
			m.nodes = append(m.nodes, s[1])
			m.labels[s[1]] = s[2]
			if strings.ContainsAny(strings.ReplaceAll(s[2], "<br/>", ""), "<>\"`|") {
				t.Errorf("%s: unescaped label %q", name, s[2])
			}
		case mermaidEdgeRe.MatchString(l):
			s := mermaidEdgeRe.FindStringSubmatch(l)
			m.edges = append(m.edges, [2]string{s[1], s[3]})
		case mermaidClassRe.MatchString(l):
			s := mermaidClassRe.FindStringSubmatch(l)
			m.classes[s[2]] = append(m.classes[s[2]], strings.Split(s[1], ",")...)
		case mermaidDefRe.MatchString(l):
			m.defs[mermaidDefRe.FindStringSubmatch(l)[1]] = true
		case mermaidLinkRe.MatchString(l):
			for _, x := range strings.Split(mermaidLinkRe.FindStringSubmatch(l)[1], ",") {
				i, _ := strconv.Atoi(x)
				m.links = append(m.links, i)
			}
		default:
			t.Errorf("%s: line not in the emitted grammar: %q", name, l)
		}
	}
	return m
}

// Every real plan's Mermaid output: each node once with a valid id, each edge in file order,
// classes only on declared nodes and defined class names, link styles on existing edges.
func TestGraphMermaidStructure(t *testing.T) {
	for _, f := range diffPlanFiles(t) {
		p := loadPlan(t, f)
		m := parseMermaid(t, f, Mermaid(p, p.Validate().Findings))
		if len(m.nodes) != len(p.Nodes) {
			t.Errorf("%s: %d nodes drawn, plan has %d", f, len(m.nodes), len(p.Nodes))
		}
		for i, n := range p.Nodes {
			if i < len(m.nodes) && m.nodes[i] != dotID(n.ID) {
				t.Errorf("%s: node %d drawn as %s, want %s", f, i, m.nodes[i], dotID(n.ID))
			}
			if !strings.HasPrefix(m.labels[dotID(n.ID)], fmt.Sprintf("%d: %s<br/>", n.ID, n.Type)) {
				t.Errorf("%s: label of %d: %q", f, n.ID, m.labels[dotID(n.ID)])
			}
		}
		if len(m.edges) != len(p.Edges) {
			t.Errorf("%s: %d edges drawn, plan has %d", f, len(m.edges), len(p.Edges))
		}
		for i, e := range p.Edges {
			if i < len(m.edges) && m.edges[i] != [2]string{dotID(e.Source), dotID(e.Target)} {
				t.Errorf("%s: edge %d drawn as %v", f, i, m.edges[i])
			}
		}
		for cls, ids := range m.classes {
			if !m.defs[cls] {
				t.Errorf("%s: class %s used but not defined", f, cls)
			}
			for _, id := range ids {
				if _, ok := m.labels[id]; !ok {
					t.Errorf("%s: class %s on undeclared node %s", f, cls, id)
				}
			}
		}
		for _, l := range m.links {
			if l >= len(m.edges) {
				t.Errorf("%s: linkStyle %d beyond %d edges", f, l, len(m.edges))
			}
		}
		// Classes follow the plan's classification.
		want := map[string][]string{}
		for _, n := range p.Nodes {
			switch c, _ := n.Classify(); c {
			case TTLConfigurable:
				want["stateful"] = append(want["stateful"], dotID(n.ID))
			case StatefulNoTTL:
				want["nottl"] = append(want["nottl"], dotID(n.ID))
			}
		}
		for _, c := range []string{"stateful", "nottl"} {
			if strings.Join(m.classes[c], ",") != strings.Join(want[c], ",") {
				t.Errorf("%s: class %s on %v, want %v", f, c, m.classes[c], want[c])
			}
		}
	}
}

// ttlOrderPlan is the oracle's dedup-then-aggregate plan with the downstream aggregate's TTL
// lowered below the deduplication's by the plan editor: Validate then reports ttl-order.
func ttlOrderPlan(t *testing.T) (*Plan, *Node, *Node) {
	t.Helper()
	p := oraclePlan(t, "dedup-then-aggregate")
	var up, down *Node
	for _, n := range p.Nodes {
		if n.HasState {
			if up == nil {
				up = n
			} else {
				down = n
			}
		}
	}
	if up == nil || down == nil {
		t.Fatalf("dedup-then-aggregate: want two stateful nodes")
	}
	out, _, err := p.Apply([]Change{{Entry: up.State[0], TTL: ttl.TTL(2 * 3600000)}, {Entry: down.State[0], TTL: ttl.TTL(3600000)}})
	if err != nil {
		t.Fatal(err)
	}
	q := reparse(t, "ttl-order.json", out)
	return q, q.Node(up.ID), q.Node(down.ID)
}

// TTL-ordering warnings are red: both nodes and exactly the edges of the route between them.
func TestGraphTTLOrderInRed(t *testing.T) {
	p, up, down := ttlOrderPlan(t)
	findings := p.Validate().Findings
	var route []int
	for _, f := range findings {
		if f.Code == "ttl-order" {
			route = f.Route
		}
	}
	if len(route) < 2 || route[0] != up.ID || route[len(route)-1] != down.ID {
		t.Fatalf("validate found no ttl-order route from %d to %d: %+v", up.ID, down.ID, findings)
	}
	onRoute := map[[2]int]bool{}
	for i := 0; i+1 < len(route); i++ {
		onRoute[[2]int{route[i], route[i+1]}] = true
	}
	dot := string(DOT(p, findings))
	for _, n := range p.Nodes {
		line := lineWith(dot, "  "+dotID(n.ID)+" [")
		red := strings.Contains(line, `color="#dc2626"`)
		if want := n == up || n == down; red != want {
			t.Errorf("DOT node %d red=%v, want %v: %s", n.ID, red, want, line)
		}
	}
	if !strings.Contains(lineWith(dot, "  "+dotID(down.ID)+" ["), "! "+down.State[0].Name+" (1h) expires before "+fmt.Sprint(up.ID)) {
		t.Errorf("downstream label does not say what expires first: %s", lineWith(dot, "  "+dotID(down.ID)+" ["))
	}
	for _, e := range p.Edges {
		line := lineWith(dot, "  "+dotID(e.Source)+" -> "+dotID(e.Target))
		if red := strings.Contains(line, `color="#dc2626"`); red != onRoute[[2]int{e.Source, e.Target}] {
			t.Errorf("DOT edge %d -> %d red=%v: %s", e.Source, e.Target, red, line)
		}
	}
	m := parseMermaid(t, "ttl-order", Mermaid(p, findings))
	if got, want := strings.Join(m.classes["ttlorder"], ","), dotID(up.ID)+","+dotID(down.ID); got != want {
		t.Errorf("mermaid ttlorder class on %s, want %s", got, want)
	}
	var redEdges [][2]string
	for _, i := range m.links {
		redEdges = append(redEdges, m.edges[i])
	}
	if len(redEdges) != len(onRoute) {
		t.Errorf("mermaid red edges %v, route %v", redEdges, route)
	}
	for _, e := range redEdges {
		found := false
		for k := range onRoute {
			if e == [2]string{dotID(k[0]), dotID(k[1])} {
				found = true
			}
		}
		if !found {
			t.Errorf("mermaid edge %v red but not on route %v", e, route)
		}
	}
	// Without findings nothing is red.
	if d := string(DOT(p, nil)); strings.Contains(d, "#dc2626\"") && strings.Contains(d, "penwidth") {
		t.Errorf("DOT without findings has red elements")
	}
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// Window operators keep state without a per-operator TTL: dashed grey and said in the label.
func TestGraphMarksStatefulWithoutTTL(t *testing.T) {
	p := oraclePlan(t, "window-aggregate")
	dot := string(DOT(p, nil))
	found := 0
	for _, n := range p.Nodes {
		line := lineWith(dot, "  "+dotID(n.ID)+" [")
		c, _ := n.Classify()
		marked := strings.Contains(line, `stateful, no per-operator TTL`) && strings.Contains(line, "dashed")
		if marked != (c == StatefulNoTTL) {
			t.Errorf("node %d (%s, %s): %s", n.ID, n.Type, c, line)
		}
		if marked {
			found++
		}
	}
	if found == 0 {
		t.Error("window-aggregate has no node without per-operator TTL")
	}
	for _, s := range oraclePlan(t, "group-aggregate").States() {
		line := lineWith(string(DOT(s.Node.owner, nil)), "  "+dotID(s.Node.ID)+" [")
		if !strings.Contains(line, `state `+s.Name+`: ttl never`) || !strings.Contains(line, "filled,bold") {
			t.Errorf("stateful node: %s", line)
		}
	}
}

// The same plan gives the same bytes, whichever way it was read.
func TestGraphDeterministic(t *testing.T) {
	for _, f := range diffPlanFiles(t) {
		p := loadPlan(t, f)
		q := reparse(t, f, append([]byte(nil), p.Raw...))
		if !bytes.Equal(DOT(p, p.Validate().Findings), DOT(q, q.Validate().Findings)) ||
			!bytes.Equal(Mermaid(p, p.Validate().Findings), Mermaid(q, q.Validate().Findings)) {
			t.Errorf("%s: two renderings differ", f)
		}
	}
}

func TestGraphEscaping(t *testing.T) {
	for _, tc := range []struct{ in, dot, mermaid string }{
		{`Calc(where=[(a > "x\y")])`, `"Calc(where=[(a > \"x\\y\")])"`, `Calc(where=[(a #gt; #quot;x\y#quot;)])`},
		{"a|b`c#d&e<f\nline", `"a|b` + "`" + `c#d&e<f\nline"`, `a#124;b#96;c#35;d#amp;e#lt;f line`},
		{"ctl\x01\x7f", `"ctl"`, `ctl`},
	} {
		if got := dotQuote(tc.in); got != tc.dot {
			t.Errorf("dotQuote(%q) = %s, want %s", tc.in, got, tc.dot)
		}
		if got := mermaidText(tc.in); got != tc.mermaid {
			t.Errorf("mermaidText(%q) = %s, want %s", tc.in, got, tc.mermaid)
		}
	}
	// A node whose description is hostile still renders: parse it back in both formats.
	raw := `{"flinkVersion":"2.3","nodes":[{"id":-1,"type":"stream-exec-values_1","description":"Values(tuples=[[{ _UTF-16LE'\"}|<x>#1;' }]])"},` +
		`{"id":2,"type":"stream-exec-sink_2","description":"Sink(table=[a\\b])"}],"edges":[{"source":-1,"target":2,"shuffle":{"type":"FORWARD"},"shuffleMode":"PIPELINED"}]}`
	p := reparse(t, "hostile.json", []byte(raw))
	m := parseMermaid(t, "hostile", Mermaid(p, nil))
	if len(m.nodes) != 2 || m.nodes[0] != "nm1" || len(m.edges) != 1 {
		t.Errorf("hostile plan: %+v", m)
	}
	if _, err := exec.LookPath("dot"); err == nil {
		cmd := exec.Command("dot", "-Tsvg")
		cmd.Stdin = bytes.NewReader(DOT(p, nil))
		if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("<title>nm1</title>")) {
			t.Errorf("dot on hostile plan: %v: %s", err, out)
		}
	}
}
