// Package plan reads Flink compiled plans (the JSON that COMPILE PLAN writes, Flink 1.15 to
// 2.3), classifies their exec nodes by state, edits per-operator state TTL without touching
// any other byte, and validates structure and TTL ordering.
//
// # Model
//
// A Plan holds the file's bytes, its nodes in file order and its edges in file order. Input k of
// a node is the k-th edge in "edges" whose target is that node: Flink's JsonPlanGraph rebuilds
// each node's input list in exactly that order, so entry k of a node's "state" array (the state
// that holds input k) belongs to the upstream node of Inputs[k].
//
// Every StateEntry remembers the byte span of its "ttl" string in the file, found by walking the
// JSON by position (nodes.N.state.K.ttl), never by searching for a key: lookup-join schemas have
// a column literally named "state". Edits splice new strings into those spans; all other bytes
// stay identical.
//
// # Findings: errors versus warnings
//
// Validate reports two severities.
//
// Errors are what Flink refuses when it loads or translates the plan (EXECUTE PLAN fails) or what
// makes the file unreadable as a plan: no "nodes"/"edges", duplicate node ids, edges naming
// missing nodes, cycles, a "state" entry with a missing or mistyped field, state indexes that
// are not exactly 0..k-1, k different from the node's number of inputs, and a TTL that Flink's
// parser rejects or whose milliseconds overflow. `statecraft plan validate` exits 2 on errors,
// and `plan ttl set` refuses to write such a plan without --force.
//
// Warnings are plans Flink runs but that can give wrong results or surprise: the TTL ordering
// rule (a downstream stateful operator whose state expires before the state of a stateful
// operator upstream of it: an update or retraction then reaches a key the downstream operator
// has already forgotten, and the result is silently wrong for that key) and TTLs with digits
// below one millisecond (Flink truncates to whole milliseconds, and a TTL below 1 ms becomes 0,
// "never expires"). The ordering rule is a warning, not an error, because Flink's documentation
// states it as a guideline and accepts the plan; a short downstream TTL can be a deliberate
// trade of accuracy for state size. --strict turns warnings into exit code 3.
//
// The ordering rule is checked per state entry: from the node feeding the input the entry holds,
// the check walks upstream through stateless nodes (calc, exchange, union, ...) and stops at
// every stateful node it meets. Each state of such a node with a per-operator TTL must expire no
// later than the entry, 0 ms ("never") counting as the longest. A stateful node without a
// per-operator TTL (a window operator, ...) ends the walk without a comparison.
package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/ttl"
	"github.com/tidwall/gjson"
)

// Plan is a parsed compiled plan.
type Plan struct {
	File         string // name used in messages ("-" for stdin)
	Raw          []byte // the file exactly as read
	FlinkVersion string // top-level "flinkVersion", "" when absent
	Nodes        []*Node
	Edges        []*Edge

	// Problems are structural errors found while reading (a node without an id, a state entry
	// with a missing field, ...). Validate reports them as errors; the rest of the plan is
	// still usable for listing.
	Problems []Finding

	byID     map[int]*Node
	anyState bool
}

// Node is one exec node.
type Node struct {
	ID          int
	Pos         int    // position in the "nodes" array, for paths like nodes.3.state
	Type        string // as written: "stream-exec-join_1"
	Name        string // Type without its version suffix: "stream-exec-join"
	Version     int    // the version suffix (0 when the type has none)
	Description string
	Raw         string // the node's JSON text exactly as in the file
	Offset      int    // byte offset of Raw in Plan.Raw

	// InputProperties is the number of "inputProperties" entries, or -1 when the field is
	// absent (Flink 2.2+ leaves out empty arrays).
	InputProperties int

	// HasState is true when the node carries a "state" array (Flink 1.18+ writes one for every
	// exec node whose state TTL can be set per operator). State lists its entries in file order.
	HasState bool
	State    []*StateEntry

	Inputs  []*Edge // incoming edges in file order: Inputs[k] feeds input k
	Outputs []*Edge // outgoing edges in file order

	owner *Plan
}

// StateEntry is one element of a node's "state" array.
type StateEntry struct {
	Node  *Node
	Pos   int // position in the "state" array
	Index int // the "index" field; -1 when missing or not a non-negative integer
	Name  string

	TTLText string       // the "ttl" string as Flink reads it (JSON-unescaped)
	TTL     ttl.TTL      // what Flink applies, when TTLErr is nil
	TTLDur  ttl.Duration // the exact parsed duration (may have sub-millisecond digits)
	TTLErr  error        // why Flink would reject TTLText; nil when it parses

	ttlStart, ttlEnd int // byte span of the raw "ttl" token (quotes included); -1 when absent
}

// Edge is one element of "edges".
type Edge struct {
	Pos         int // position in the "edges" array
	Source      int
	Target      int
	Input       int    // which input of Target this edge feeds (0-based)
	Shuffle     string // "shuffle"."type": FORWARD, HASH, ...
	ShuffleMode string
	Raw         string
}

// Path locates the entry for messages: nodes[id=7].state.1, the node named by its id as every
// other message names it (its position in the array means nothing to a reader of the plan).
func (s *StateEntry) Path() string {
	return fmt.Sprintf("%s.state.%d", s.Node.Path(), s.Pos)
}

// Path locates the node for messages: nodes[id=7].
func (n *Node) Path() string { return nodePath(n.ID) }

func nodePath(id int) string { return fmt.Sprintf("nodes[id=%d]", id) }

// Label names the entry for people: "5:leftState" (or "5:#1" when it has no name).
func (s *StateEntry) Label() string {
	if s.Name == "" {
		return fmt.Sprintf("%d:#%d", s.Node.ID, s.Pos)
	}
	return fmt.Sprintf("%d:%s", s.Node.ID, s.Name)
}

// Upstream returns the node that feeds the input this state holds, or nil when the plan has
// no such edge.
func (s *StateEntry) Upstream() *Node {
	if s.Node == nil || s.Index < 0 || s.Index >= len(s.Node.Inputs) {
		return nil
	}
	return s.Node.plan().byID[s.Node.Inputs[s.Index].Source]
}

// HasTTLSpan reports whether the entry has a "ttl" string that can be edited in place.
func (s *StateEntry) HasTTLSpan() bool { return s.ttlStart >= 0 && s.ttlEnd > s.ttlStart }

func (n *Node) plan() *Plan { return n.owner }

// Node returns the node with the given id, or nil.
func (p *Plan) Node(id int) *Node { return p.byID[id] }

// Owner is the plan the node belongs to.
func (n *Node) Owner() *Plan { return n.owner }

// States returns every state entry of the plan, in file order.
func (p *Plan) States() []*StateEntry {
	var out []*StateEntry
	for _, n := range p.Nodes {
		out = append(out, n.State...)
	}
	return out
}

// HasAnyState reports whether any node carries a "state" array. Plans written by Flink 1.15 to
// 1.17 never do: per-operator TTL needs a plan compiled by Flink 1.18 or later.
func (p *Plan) HasAnyState() bool { return p.anyState }

// ParseError is a file that is not a compiled plan at all.
type ParseError struct {
	File string
	Line int // 1-based, 0 when not known
	Col  int
	Path string // JSON path, when the problem is a field
	Msg  string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// maxJSONDepth is the deepest nesting of objects and arrays Flink 2.3.0 reads: its shaded
// Jackson's StreamReadConstraints.DEFAULT_MAX_DEPTH. gjson validates recursively, so a deeper
// document must be refused before it reaches gjson (10 million "[" overflow the stack).
const maxJSONDepth = 1000

// deeperThan returns the offset of the first '{' or '[' (outside strings) that opens a level
// deeper than max, or -1.
func deeperThan(data []byte, max int) int {
	depth, inStr := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inStr:
			if c == '\\' {
				i++
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return i
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return -1
}

// Parse reads a compiled plan. It fails only when data is not JSON or not a compiled plan
// (no "nodes" array); everything else it can read around is recorded in Plan.Problems.
func Parse(file string, data []byte) (*Plan, error) {
	if off := deeperThan(data, maxJSONDepth); off >= 0 {
		line, col := lineCol(data, off)
		return nil, &ParseError{File: file, Line: line, Col: col, Msg: fmt.Sprintf("not a compiled plan: JSON nested deeper than %d levels (Flink's JSON reader refuses it too)", maxJSONDepth)}
	}
	if !gjson.ValidBytes(data) {
		// gjson says where nothing; encoding/json knows the offset of the first bad byte.
		var v any
		err := json.Unmarshal(data, &v)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineCol(data, max(0, int(se.Offset)-1)) // Offset counts the bad byte
			return nil, &ParseError{File: file, Line: line, Col: col, Msg: "not JSON: " + se.Error()}
		}
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return nil, &ParseError{File: file, Msg: "not JSON: " + err.Error()}
	}
	root := gjson.Parse(string(data))
	if !root.IsObject() {
		return nil, &ParseError{File: file, Msg: "not a Flink compiled plan: the top level is not a JSON object"}
	}
	p := &Plan{File: file, Raw: data, byID: map[int]*Node{}}
	var nodes, edges gjson.Result
	var haveNodes, haveEdges bool
	root.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "flinkVersion":
			if !haveNodes && p.FlinkVersion == "" {
				p.FlinkVersion = v.String()
			}
		case "nodes":
			if !haveNodes {
				nodes, haveNodes = v, true
			}
		case "edges":
			if !haveEdges {
				edges, haveEdges = v, true
			}
		}
		return true
	})
	if !haveNodes || !nodes.IsArray() {
		return nil, &ParseError{File: file, Path: "nodes", Msg: `not a Flink compiled plan: no "nodes" array at the top level`}
	}
	nodePos := 0
	nodes.ForEach(func(_, v gjson.Result) bool {
		p.readNode(nodePos, v)
		nodePos++
		return true
	})
	for _, n := range p.Nodes {
		p.anyState = p.anyState || n.HasState
	}
	if !haveEdges {
		p.problem(Error, "no-edges", "edges", `no "edges" array at the top level (Flink writes one, empty for a single node)`)
	} else if !edges.IsArray() {
		p.problem(Error, "no-edges", "edges", `"edges" is not an array`)
	} else {
		pos := 0
		edges.ForEach(func(_, v gjson.Result) bool {
			p.readEdge(pos, v)
			pos++
			return true
		})
	}
	return p, nil
}

func (p *Plan) problem(sev Severity, code, path, format string, args ...any) {
	p.Problems = append(p.Problems, Finding{Severity: sev, Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

// intValue returns v as an int when it is a JSON integer that fits.
func intValue(v gjson.Result) (int, bool) {
	if v.Type != gjson.Number {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Raw, 10, 32)
	if err != nil {
		return 0, false
	}
	return int(n), true
}

func (p *Plan) readNode(pos int, v gjson.Result) {
	path := "nodes." + strconv.Itoa(pos)
	if !v.IsObject() {
		p.problem(Error, "bad-node", path, "node is not a JSON object")
		return
	}
	n := &Node{Pos: pos, Raw: v.Raw, Offset: v.Index, InputProperties: -1, owner: p}
	var idv, statev gjson.Result
	var haveID, haveType bool
	v.ForEach(func(k, f gjson.Result) bool {
		switch k.Str {
		case "id":
			if !haveID {
				idv, haveID = f, true
			}
		case "type":
			if !haveType {
				haveType = true
				n.Type = f.String()
				if f.Type != gjson.String {
					p.problem(Error, "bad-node", path+".type", "node type is not a string")
				}
			}
		case "description":
			n.Description = f.String()
		case "inputProperties":
			if f.IsArray() && n.InputProperties < 0 {
				c := 0
				f.ForEach(func(_, _ gjson.Result) bool { c++; return true })
				n.InputProperties = c
			}
		case "state":
			if !n.HasState {
				statev = f
				n.HasState = true
			}
		}
		return true
	})
	if !haveID {
		p.problem(Error, "bad-node", path+".id", `node has no "id"`)
		return
	}
	id, ok := intValue(idv)
	if !ok {
		p.problem(Error, "bad-node", path+".id", "node id %s is not an integer", idv.Raw)
		return
	}
	n.ID = id
	if !haveType {
		p.problem(Error, "bad-node", nodePath(id)+".type", `node %d has no "type"`, id)
	}
	n.Name, n.Version = splitType(n.Type)
	if n.HasState {
		p.readState(n, nodePath(id), statev)
	}
	if prev, dup := p.byID[id]; dup {
		p.problem(Error, "duplicate-node-id", path+".id", "node id %d is used twice (nodes.%d and nodes.%d); Flink refuses the plan", id, prev.Pos, pos)
	} else {
		p.byID[id] = n
	}
	p.Nodes = append(p.Nodes, n)
}

// splitType splits "stream-exec-join_1" into "stream-exec-join" and 1.
func splitType(t string) (string, int) {
	i := strings.LastIndexByte(t, '_')
	if i < 0 {
		return t, 0
	}
	v, err := strconv.Atoi(t[i+1:])
	if err != nil {
		return t, 0
	}
	return t[:i], v
}

func (p *Plan) readState(n *Node, nodePath string, v gjson.Result) {
	path := nodePath + ".state"
	if !v.IsArray() {
		p.problem(Error, "bad-state", path, `node %d: "state" is not an array`, n.ID)
		n.HasState = false
		return
	}
	pos := 0
	v.ForEach(func(_, e gjson.Result) bool {
		ep := path + "." + strconv.Itoa(pos)
		s := &StateEntry{Node: n, Pos: pos, Index: -1, ttlStart: -1, ttlEnd: -1}
		pos++
		n.State = append(n.State, s)
		if !e.IsObject() {
			p.problem(Error, "bad-state", ep, "node %d: state entry is not a JSON object", n.ID)
			s.TTLErr = errors.New("state entry is not an object")
			return true
		}
		var haveIndex, haveTTL, haveName bool
		e.ForEach(func(k, f gjson.Result) bool {
			switch k.Str {
			case "index":
				if haveIndex {
					return true
				}
				haveIndex = true
				if i, ok := intValue(f); ok && i >= 0 {
					s.Index = i
				} else {
					p.problem(Error, "bad-state", ep+".index", "node %d: state index %s is not a non-negative integer", n.ID, f.Raw)
				}
			case "ttl":
				if haveTTL {
					return true
				}
				haveTTL = true
				if f.Type != gjson.String {
					p.problem(Error, "bad-state", ep+".ttl", `node %d: state ttl %s is not a string (Flink writes e.g. "0 ms")`, n.ID, f.Raw)
					s.TTLErr = errors.New("ttl is not a JSON string")
					return true
				}
				s.TTLText = f.Str
				s.ttlStart, s.ttlEnd = f.Index, f.Index+len(f.Raw)
				s.TTL, s.TTLDur, s.TTLErr = ttl.ParseFlinkTTL(f.Str)
			case "name":
				if haveName {
					return true
				}
				haveName = true
				if f.Type != gjson.String {
					p.problem(Error, "bad-state", ep+".name", "node %d: state name %s is not a string", n.ID, f.Raw)
				} else {
					s.Name = f.Str
				}
			}
			return true
		})
		if !haveIndex {
			p.problem(Error, "bad-state", ep+".index", `node %d: state entry has no "index"`, n.ID)
		}
		if !haveTTL {
			p.problem(Error, "bad-state", ep+".ttl", `node %d: state entry has no "ttl"`, n.ID)
			s.TTLErr = errors.New(`no "ttl" field`)
		}
		if !haveName {
			p.problem(Error, "bad-state", ep+".name", `node %d: state entry has no "name"`, n.ID)
		}
		return true
	})
}

func (p *Plan) readEdge(pos int, v gjson.Result) {
	path := "edges." + strconv.Itoa(pos)
	if !v.IsObject() {
		p.problem(Error, "bad-edge", path, "edge is not a JSON object")
		return
	}
	e := &Edge{Pos: pos, Raw: v.Raw}
	var src, dst gjson.Result
	var haveSrc, haveDst bool
	v.ForEach(func(k, f gjson.Result) bool {
		switch k.Str {
		case "source":
			if !haveSrc {
				src, haveSrc = f, true
			}
		case "target":
			if !haveDst {
				dst, haveDst = f, true
			}
		case "shuffle":
			e.Shuffle = f.Get("type").String()
		case "shuffleMode":
			e.ShuffleMode = f.String()
		}
		return true
	})
	var ok bool
	if e.Source, ok = intValue(src); !haveSrc || !ok {
		p.problem(Error, "bad-edge", path+".source", "edge has no integer \"source\"")
		return
	}
	if e.Target, ok = intValue(dst); !haveDst || !ok {
		p.problem(Error, "bad-edge", path+".target", "edge has no integer \"target\"")
		return
	}
	s, t := p.byID[e.Source], p.byID[e.Target]
	if s == nil {
		p.problem(Error, "dangling-edge", path+".source", "edge %d -> %d: source node %d does not exist", e.Source, e.Target, e.Source)
	}
	if t == nil {
		p.problem(Error, "dangling-edge", path+".target", "edge %d -> %d: target node %d does not exist", e.Source, e.Target, e.Target)
	}
	if s == nil || t == nil {
		return
	}
	e.Input = len(t.Inputs)
	t.Inputs = append(t.Inputs, e)
	s.Outputs = append(s.Outputs, e)
	p.Edges = append(p.Edges, e)
}
