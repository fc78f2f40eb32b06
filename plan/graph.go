package plan

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/statecraft/statecraft/ttl"
)

// # Plan graph
//
// DOT and Mermaid render a plan's DAG for people: one box per exec node with its id, type and
// a short description; stateful nodes list their state entries with TTLs (filled blue), nodes
// that keep state without a per-operator TTL are dashed grey and say so, and every TTL-ordering
// warning from Validate (code "ttl-order") is drawn in red: the two nodes it names and the
// edges of its route. Output depends only on the plan: nodes and edges in file order, findings
// in Validate's order, so the same plan always gives the same bytes.

// maxLabelDesc bounds the description shown in a node; the full text is in the plan.
const maxLabelDesc = 60

// graphNode is what both renderers draw for one node.
type graphNode struct {
	n       *Node
	class   Class
	lines   []string // label lines, unescaped
	ttlRisk bool     // named by a ttl-order finding
}

type graphEdge struct {
	e       *Edge
	label   string
	ttlRisk bool
	why     string // the finding's message, for a tooltip
}

type graphModel struct {
	nodes []graphNode
	edges []graphEdge
}

// buildGraph collects labels, classes and ttl-order markings.
func buildGraph(p *Plan, findings []Finding) graphModel {
	var g graphModel
	risky := map[int][]string{} // node id -> warning lines for its label
	type hop struct{ src, dst int }
	riskyHop := map[hop]string{}
	for _, f := range findings {
		if f.Code != "ttl-order" || f.Upstream == nil || f.Downstream == nil {
			continue
		}
		u, d := f.Upstream, f.Downstream
		risky[d.Node] = append(risky[d.Node], fmt.Sprintf("! %s (%s) expires before %d:%s (%s)", d.Name, ttlWord(d.Millis), u.Node, u.Name, ttlWord(u.Millis)))
		risky[u.Node] = append(risky[u.Node], fmt.Sprintf("! %s (%s) outlives %d:%s (%s)", u.Name, ttlWord(u.Millis), d.Node, d.Name, ttlWord(d.Millis)))
		for i := 0; i+1 < len(f.Route); i++ {
			h := hop{f.Route[i], f.Route[i+1]}
			if _, seen := riskyHop[h]; !seen {
				riskyHop[h] = f.Message
			}
		}
	}
	for _, n := range p.Nodes {
		if p.byID[n.ID] != n {
			continue // duplicate id: Validate reports it; draw the first only
		}
		class, _ := n.Classify()
		lines := []string{fmt.Sprintf("%d: %s", n.ID, n.Type), ShortText(labelDesc(n.Description), maxLabelDesc)}
		switch class {
		case TTLConfigurable:
			for _, s := range n.State {
				name := s.Name
				if name == "" {
					name = fmt.Sprintf("#%d", s.Pos)
				}
				if s.TTLErr != nil {
					lines = append(lines, fmt.Sprintf("state %s: ttl %q INVALID", name, s.TTLText))
				} else {
					lines = append(lines, fmt.Sprintf("state %s: ttl %s", name, s.TTL))
				}
			}
		case StatefulNoTTL:
			lines = append(lines, "stateful, no per-operator TTL")
		}
		lines = append(lines, risky[n.ID]...)
		g.nodes = append(g.nodes, graphNode{n: n, class: class, lines: lines, ttlRisk: len(risky[n.ID]) > 0})
	}
	for _, e := range p.Edges {
		var parts []string
		if t := p.byID[e.Target]; t != nil && len(t.Inputs) > 1 {
			parts = append(parts, fmt.Sprintf("in %d", e.Input))
		}
		if e.Shuffle != "" && e.Shuffle != "FORWARD" {
			parts = append(parts, strings.ToLower(e.Shuffle))
		}
		why, bad := riskyHop[hop{e.Source, e.Target}]
		g.edges = append(g.edges, graphEdge{e: e, label: strings.Join(parts, ", "), ttlRisk: bad, why: why})
	}
	return g
}

// ttlWord is a TTL in milliseconds for a label: "never" or "1d12h".
func ttlWord(ms int64) string { return ttl.TTL(ms).String() }

// labelDesc drops the default catalog and database from table names: they fill a short
// label without telling anything.
func labelDesc(s string) string {
	s = strings.ReplaceAll(s, "default_catalog, default_database, ", "")
	return strings.ReplaceAll(s, "default_catalog.default_database.", "")
}

// ShortText cuts s to at most n runes, ending in "..." when it was longer.
func ShortText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// DOT renders the plan as a Graphviz digraph. findings are Validate's (nil for none).
func DOT(p *Plan, findings []Finding) []byte {
	g := buildGraph(p, findings)
	var b bytes.Buffer
	fmt.Fprintf(&b, "// %s: Flink compiled plan", p.File)
	if p.FlinkVersion != "" {
		fmt.Fprintf(&b, " (flinkVersion %s)", p.FlinkVersion)
	}
	b.WriteString("\n// blue: state with a per-operator TTL; grey dashed: state without one; red: TTL-ordering warning\n")
	b.WriteString("digraph plan {\n  rankdir=TB;\n  node [shape=box, style=\"rounded\", fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, n := range g.nodes {
		attrs := []string{"label=" + dotQuote(strings.Join(n.lines, "\n"))}
		switch n.class {
		case TTLConfigurable:
			attrs = append(attrs, `style="rounded,filled,bold"`, `fillcolor="#dbeafe"`)
		case StatefulNoTTL:
			attrs = append(attrs, `style="rounded,filled,dashed"`, `fillcolor="#eeeeee"`)
		}
		if n.ttlRisk {
			attrs = append(attrs, `color="#dc2626"`, `fontcolor="#dc2626"`, `penwidth=2.5`)
		}
		fmt.Fprintf(&b, "  %s [%s];\n", dotID(n.n.ID), strings.Join(attrs, ", "))
	}
	for _, e := range g.edges {
		var attrs []string
		if e.label != "" {
			attrs = append(attrs, "label="+dotQuote(e.label))
		}
		if e.ttlRisk {
			attrs = append(attrs, `color="#dc2626"`, `fontcolor="#dc2626"`, `penwidth=2.5`, "tooltip="+dotQuote(e.why))
		}
		fmt.Fprintf(&b, "  %s -> %s", dotID(e.e.Source), dotID(e.e.Target))
		if len(attrs) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(attrs, ", "))
		}
		b.WriteString(";\n")
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// dotID names node id in DOT: n5, or nm5 for a negative id (ids are Java ints).
func dotID(id int) string {
	if id < 0 {
		return fmt.Sprintf("nm%d", -id)
	}
	return fmt.Sprintf("n%d", id)
}

// dotQuote writes s as a DOT quoted string: backslash and double quote escaped, newlines as
// \n (centred line breaks), other control characters dropped.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Mermaid renders the plan as a Mermaid flowchart. findings are Validate's (nil for none).
func Mermaid(p *Plan, findings []Finding) []byte {
	g := buildGraph(p, findings)
	var b bytes.Buffer
	fmt.Fprintf(&b, "%%%% %s: Flink compiled plan", mermaidComment(p.File))
	if p.FlinkVersion != "" {
		fmt.Fprintf(&b, " (flinkVersion %s)", mermaidComment(p.FlinkVersion))
	}
	b.WriteString("\nflowchart TD\n")
	var stateful, nottl, ttlorder []string
	for _, n := range g.nodes {
		parts := make([]string, len(n.lines))
		for i, l := range n.lines {
			parts[i] = mermaidText(l)
		}
		id := dotID(n.n.ID)
		fmt.Fprintf(&b, "  %s[\"%s\"]\n", id, strings.Join(parts, "<br/>"))
		switch n.class {
		case TTLConfigurable:
			stateful = append(stateful, id)
		case StatefulNoTTL:
			nottl = append(nottl, id)
		}
		if n.ttlRisk {
			ttlorder = append(ttlorder, id)
		}
	}
	var red []int
	for i, e := range g.edges {
		if e.label != "" {
			fmt.Fprintf(&b, "  %s -->|\"%s\"| %s\n", dotID(e.e.Source), mermaidText(e.label), dotID(e.e.Target))
		} else {
			fmt.Fprintf(&b, "  %s --> %s\n", dotID(e.e.Source), dotID(e.e.Target))
		}
		if e.ttlRisk {
			red = append(red, i)
		}
	}
	b.WriteString("  classDef stateful fill:#dbeafe,stroke:#1e3a8a,stroke-width:2px\n")
	b.WriteString("  classDef nottl fill:#eeeeee,stroke:#555555,stroke-dasharray:5 5\n")
	b.WriteString("  classDef ttlorder stroke:#dc2626,stroke-width:3px,color:#dc2626\n")
	for _, c := range []struct {
		name string
		ids  []string
	}{{"stateful", stateful}, {"nottl", nottl}, {"ttlorder", ttlorder}} {
		if len(c.ids) > 0 {
			fmt.Fprintf(&b, "  class %s %s\n", strings.Join(c.ids, ","), c.name)
		}
	}
	if len(red) > 0 {
		idx := make([]string, len(red))
		for i, r := range red {
			idx[i] = fmt.Sprint(r)
		}
		fmt.Fprintf(&b, "  linkStyle %s stroke:#dc2626,stroke-width:3px\n", strings.Join(idx, ","))
	}
	return b.Bytes()
}

// mermaidText escapes label text for a quoted Mermaid label: characters Mermaid or the
// browser would read as syntax or HTML become entity codes (#quot; #lt; ...).
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '#':
			b.WriteString("#35;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '|':
			b.WriteString("#124;")
		case '`':
			b.WriteString("#96;")
		case '\n', '\r', '\t':
			b.WriteByte(' ')
		default:
			if r >= 0x20 && r != 0x7f {
				b.WriteRune(r)
			}
		}
	}
	return b.String()
}

// mermaidComment keeps a %% comment on one line.
func mermaidComment(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
}
