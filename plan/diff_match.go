package plan

import (
	"strings"

	"github.com/tidwall/gjson"
)

// matcher pairs the nodes of two plans (see the Diff documentation for the two phases).
type matcher struct {
	old, new *Plan
	n2o      map[*Node]*Node // NEW node -> OLD node
	o2n      map[*Node]*Node
	by       map[*Node]string // NEW node -> "id" | "structure"
	conf     map[*Node]float64

	oldByName   map[string][]*Node // exec node name -> OLD nodes, file order
	oldBySource map[string][]*Node // source key -> OLD source nodes
	tokens      map[*Node]map[string]int
	outType     map[*Node]string
	srcKey      map[*Node]string
}

func newMatcher(oldp, newp *Plan) *matcher {
	size := min(len(oldp.Nodes), len(newp.Nodes))
	m := &matcher{old: oldp, new: newp,
		n2o: make(map[*Node]*Node, size), o2n: make(map[*Node]*Node, size), by: make(map[*Node]string, size), conf: make(map[*Node]float64, size),
		oldByName: map[string][]*Node{}, oldBySource: map[string][]*Node{},
		tokens: map[*Node]map[string]int{}, outType: map[*Node]string{}, srcKey: map[*Node]string{},
	}
	for _, o := range oldp.Nodes {
		if oldp.byID[o.ID] != o {
			continue
		}
		m.oldByName[o.Name] = append(m.oldByName[o.Name], o)
		if len(o.Inputs) == 0 {
			k := m.sourceKey(o)
			m.oldBySource[k] = append(m.oldBySource[k], o)
		}
	}
	return m
}

// order is NEW's nodes sources first; file order when the edges form a cycle (Validate
// reports that), so that a broken plan is still compared.
func (m *matcher) order() []*Node {
	if ord, _, ok := m.new.TopoOrder(); ok {
		return ord
	}
	var out []*Node
	for _, n := range m.new.Nodes {
		if m.new.byID[n.ID] == n {
			out = append(out, n)
		}
	}
	return out
}

func (m *matcher) pair(o, n *Node, by string, conf float64) {
	m.n2o[n], m.o2n[o], m.by[n], m.conf[n] = o, n, by, conf
}

func (m *matcher) run() {
	order := m.order()
	for _, n := range order {
		if o := m.old.byID[n.ID]; o != nil && m.o2n[o] == nil && m.sameByID(o, n) {
			m.pair(o, n, "id", 1)
		}
	}
	// Two structural passes: the second sees matches made downstream in the first (a node
	// whose inputs were all added can still be placed by its neighbours' matches).
	for pass := 0; pass < 2; pass++ {
		for _, n := range order {
			if m.n2o[n] != nil {
				continue
			}
			var best *Node
			bestScore := 0.0
			for _, o := range m.candidates(n) {
				if s := m.score(o, n); s > bestScore {
					best, bestScore = o, s
				}
			}
			if best != nil && bestScore >= MinConfidence {
				m.pair(best, n, "structure", bestScore)
			}
		}
	}
}

// sameByID is phase 1's test for an OLD and a NEW node with the same id.
func (m *matcher) sameByID(o, n *Node) bool {
	if o.Name != n.Name || len(o.Inputs) != len(n.Inputs) {
		return false
	}
	if len(n.Inputs) == 0 {
		return m.sourceKey(o) == m.sourceKey(n)
	}
	for k, e := range n.Inputs {
		ns := m.new.byID[e.Source]
		if ns == nil || m.by[ns] != "id" || m.n2o[ns].ID != o.Inputs[k].Source {
			return false
		}
	}
	return true
}

// sourceKey names what a node without inputs reads: its table, or its description.
func (m *matcher) sourceKey(n *Node) string {
	if k, ok := m.srcKey[n]; ok {
		return k
	}
	k := "desc:" + n.Description
	if id := nodeMember(n, "scanTableSource").Get("table.identifier"); id.Exists() {
		k = "table:" + id.String()
	}
	m.srcKey[n] = k
	return k
}

// maxWalk bounds the walks through unmatched nodes, so a long run of added nodes costs
// nothing quadratic.
const maxWalk = 64

// candidates are the unmatched OLD nodes of n's exec node name worth scoring: for a source,
// those reading the same table; otherwise those within a few hops downstream of the OLD
// images of n's nearest matched ancestors. When that finds nothing, every unmatched OLD node
// of the name (at most maxCandidates).
func (m *matcher) candidates(n *Node) []*Node {
	var out []*Node
	seen := map[*Node]bool{}
	take := func(o *Node) {
		if !seen[o] && m.o2n[o] == nil && o.Name == n.Name {
			seen[o] = true
			out = append(out, o)
		}
	}
	if len(n.Inputs) == 0 {
		for _, o := range m.oldBySource[m.sourceKey(n)] {
			take(o)
		}
	} else {
		for _, e := range n.Inputs {
			for _, a := range m.matchedAbove(m.new.byID[e.Source]) {
				// Breadth-first down from the anchor's OLD image through unmatched nodes.
				frontier := []*Node{m.n2o[a]}
				visited := map[*Node]bool{}
				for depth := 0; depth < 4 && len(frontier) > 0 && len(visited) < maxWalk; depth++ {
					var next []*Node
					for _, f := range frontier {
						for _, d := range f.Downstream() {
							if visited[d] {
								continue
							}
							visited[d] = true
							take(d)
							if m.o2n[d] == nil {
								next = append(next, d)
							}
						}
					}
					frontier = next
				}
			}
		}
	}
	if len(out) > 0 {
		return out
	}
	for _, o := range m.oldByName[n.Name] {
		if len(out) >= maxCandidates {
			break
		}
		take(o)
	}
	return out
}

const maxCandidates = 512

// matchedAbove returns the nearest matched NEW nodes at or above n, walking up through
// unmatched (added) nodes.
func (m *matcher) matchedAbove(n *Node) []*Node { return nearestMatched(n, m.n2o) }

// oldMatchedAbove is matchedAbove on the OLD side, returning OLD nodes that have a match.
func (m *matcher) oldMatchedAbove(o *Node) map[*Node]bool {
	out := map[*Node]bool{}
	for _, u := range nearestMatched(o, m.o2n) {
		out[u] = true
	}
	return out
}

// nearestMatched returns the nearest nodes at or above n that have a partner in matched,
// walking breadth-first up through nodes that have none (at most maxWalk nodes).
func nearestMatched(n *Node, matched map[*Node]*Node) []*Node {
	if n == nil {
		return nil
	}
	if matched[n] != nil {
		return []*Node{n}
	}
	var out []*Node
	visited := map[*Node]bool{n: true}
	queue := []*Node{n}
	for len(queue) > 0 && len(visited) < maxWalk {
		cur := queue[0]
		queue = queue[1:]
		for _, u := range cur.Upstream() {
			if visited[u] {
				continue
			}
			visited[u] = true
			if matched[u] != nil {
				out = append(out, u)
			} else {
				queue = append(queue, u)
			}
		}
	}
	return out
}

// score is the structural match score of OLD node o for NEW node n, 0..1.
func (m *matcher) score(o, n *Node) float64 {
	var inputs float64
	switch {
	case len(n.Inputs) == 0 && len(o.Inputs) == 0:
		if m.sourceKey(o) == m.sourceKey(n) {
			inputs = 1
		}
	default:
		k := min(len(n.Inputs), len(o.Inputs))
		sum := 0.0
		for i := 0; i < k; i++ {
			ns, os := m.new.byID[n.Inputs[i].Source], m.old.byID[o.Inputs[i].Source]
			if ns == nil || os == nil {
				continue
			}
			if img := m.n2o[ns]; img != nil {
				if img == os {
					sum++
				}
				continue
			}
			// NEW input comes from an added node: do both sides reach the same matched node?
			above := m.matchedAbove(ns)
			oldAbove := m.oldMatchedAbove(os)
			hit := false
			for _, a := range above {
				if oldAbove[m.n2o[a]] {
					hit = true
					break
				}
			}
			switch {
			case hit:
				sum += 0.75
			case len(above) == 0 && len(oldAbove) == 0:
				sum += 0.25
			}
		}
		inputs = sum / float64(max(len(n.Inputs), len(o.Inputs)))
	}
	desc := dice(m.descTokens(o), m.descTokens(n))
	out := 0.0
	if m.outputType(o) == m.outputType(n) {
		out = 1
	}
	return 0.5*inputs + 0.35*desc + 0.15*out
}

func (m *matcher) outputType(n *Node) string {
	if t, ok := m.outType[n]; ok {
		return t
	}
	t := compactJSON(nodeMember(n, "outputType").Raw)
	m.outType[n] = t
	return t
}

func (m *matcher) descTokens(n *Node) map[string]int {
	if t, ok := m.tokens[n]; ok {
		return t
	}
	t := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(n.Description), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '$')
	}) {
		t[w]++
	}
	m.tokens[n] = t
	return t
}

// dice is the Sørensen–Dice coefficient of two token multisets (1 when both are empty).
func dice(a, b map[string]int) float64 {
	na, nb, common := 0, 0, 0
	for w, c := range a {
		na += c
		common += min(c, b[w])
	}
	for _, c := range b {
		nb += c
	}
	if na+nb == 0 {
		return 1
	}
	return 2 * float64(common) / float64(na+nb)
}

// nodeMember returns the node's top-level member key.
func nodeMember(n *Node, key string) gjson.Result {
	return gjson.Get(n.Raw, escapeGJSON(key))
}

func nodeMemberRaw(raw, key string) string { return gjson.Get(raw, escapeGJSON(key)).Raw }

// escapeGJSON escapes a literal key for a gjson path.
func escapeGJSON(key string) string {
	if !strings.ContainsAny(key, `.*?|#@\!=<>%`) {
		return key
	}
	var b strings.Builder
	for _, r := range key {
		if strings.ContainsRune(`.*?|#@\!=<>%`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
