package plan

// Upstream returns the nodes that feed n directly, in input order (a node feeding two inputs
// appears twice).
func (n *Node) Upstream() []*Node {
	out := make([]*Node, 0, len(n.Inputs))
	for _, e := range n.Inputs {
		if s := n.owner.byID[e.Source]; s != nil {
			out = append(out, s)
		}
	}
	return out
}

// Downstream returns the nodes n feeds directly, in edge order.
func (n *Node) Downstream() []*Node {
	out := make([]*Node, 0, len(n.Outputs))
	for _, e := range n.Outputs {
		if t := n.owner.byID[e.Target]; t != nil {
			out = append(out, t)
		}
	}
	return out
}

// Ancestors returns every node from which n can be reached, nearest first (breadth-first).
func (n *Node) Ancestors() []*Node { return walk(n, (*Node).Upstream) }

// Descendants returns every node reachable from n, nearest first (breadth-first).
func (n *Node) Descendants() []*Node { return walk(n, (*Node).Downstream) }

func walk(n *Node, next func(*Node) []*Node) []*Node {
	seen := map[*Node]bool{n: true}
	queue := []*Node{n}
	var out []*Node
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, m := range next(cur) {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
				queue = append(queue, m)
			}
		}
	}
	return out
}

// TopoOrder returns the nodes sources first. When the graph has a cycle, ok is false and
// cycle lists the node ids of one cycle, in edge order.
func (p *Plan) TopoOrder() (order []*Node, cycle []int, ok bool) {
	indeg := make(map[*Node]int, len(p.byID))
	for _, n := range p.byID {
		indeg[n] = len(n.Inputs)
	}
	var queue []*Node
	for _, n := range p.Nodes {
		if p.byID[n.ID] == n && indeg[n] == 0 {
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		order = append(order, n)
		for _, m := range n.Downstream() {
			indeg[m]--
			if indeg[m] == 0 {
				queue = append(queue, m)
			}
		}
	}
	if len(order) == len(p.byID) {
		return order, nil, true
	}
	return order, p.findCycle(indeg), false
}

// findCycle follows inputs among the nodes Kahn's algorithm could not order (indeg > 0) until
// a node repeats; the repeated stretch is a cycle.
func (p *Plan) findCycle(indeg map[*Node]int) []int {
	var start *Node
	for _, n := range p.Nodes {
		if p.byID[n.ID] == n && indeg[n] > 0 {
			start = n
			break
		}
	}
	if start == nil {
		return nil
	}
	pos := map[*Node]int{}
	var trail []*Node
	cur := start
	for {
		if i, seen := pos[cur]; seen {
			var ids []int
			for j := len(trail) - 1; j >= i; j-- { // reverse: upstream first
				ids = append(ids, trail[j].ID)
			}
			return append(ids, ids[0])
		}
		pos[cur] = len(trail)
		trail = append(trail, cur)
		var next *Node
		for _, u := range cur.Upstream() {
			if indeg[u] > 0 {
				next = u
				break
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
}

// StatefulUpstream finds, for the input that state entry s holds, the nearest stateful nodes
// upstream of it: starting at the node feeding that input, it walks up through stateless
// nodes only and stops at each stateful node it meets. For each one it returns the path of node
// ids from that node down to s's node.
func (s *StateEntry) StatefulUpstream() []UpstreamHit {
	src := s.Upstream()
	if src == nil {
		return nil
	}
	parent := map[*Node]*Node{src: s.Node}
	queue := []*Node{src}
	var hits []UpstreamHit
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur.Stateful() {
			var path []int
			for n := cur; n != nil; n = parent[n] {
				path = append(path, n.ID)
				if n == s.Node {
					break
				}
			}
			hits = append(hits, UpstreamHit{Node: cur, Path: path})
			continue
		}
		for _, u := range cur.Upstream() {
			if _, seen := parent[u]; !seen && u != s.Node {
				parent[u] = cur
				queue = append(queue, u)
			}
		}
	}
	return hits
}

// UpstreamHit is a stateful node found upstream of a state's input.
type UpstreamHit struct {
	Node *Node
	Path []int // node ids from Node down to the state's node
}
