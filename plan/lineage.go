package plan

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/tidwall/gjson"
)

// Key lineage: where a stateful node's key columns come from, traced back through the plan to
// source columns. A key keeps its type when a projection in front of the node starts feeding it
// another column of the same type (GROUP BY user_id -> order_id AS user_id), so the node itself
// and its row types are unchanged, and Flink restores the state silently: the old per-key values
// are read under other keys (testdata/upgrades/types/v120-statement-set-key-meaning-changed:
// Flink 2.3.0 emitted a user's count under an order id). Comparing the lineage of OLD's and
// NEW's key columns catches that.
//
//	source orders(order_id, user_id, amount)
//	  calc  projection [#1 -> user_id, #2]      NEW: [#0 AS user_id, #2]
//	  group-aggregate grouping [0]
//	key lineage: orders.user_id                 NEW: orders.order_id   -> incompatible
//
// A column is named by what it is, never by node ids (they shift with any edit upstream):
// source columns by table and column name, computed columns by their expression over the
// lineage of its inputs, columns of nodes this walk does not model by node type and position.

// maxLineageDepth bounds the walk; real plans are far shallower.
const maxLineageDepth = 64

var inputIndexRef = regexp.MustCompile(`"inputIndex"\s*:\s*(\d+)`)

// columnLineage names where column col of node n comes from.
func columnLineage(n *Node, col int, depth int) string {
	if n == nil || depth > maxLineageDepth {
		return "?"
	}
	in := func(k, c int) string {
		for _, e := range n.Inputs {
			if e.Input == k {
				return columnLineage(n.owner.Node(e.Source), c, depth+1)
			}
		}
		return "?"
	}
	switch n.Name {
	case "stream-exec-table-source-scan":
		table := gjson.Get(n.Raw, "scanTableSource.table.identifier").Str
		cols, ok := outputColumns(n)
		if !ok || col >= len(cols) {
			return fmt.Sprintf("%s.#%d", table, col)
		}
		return table + "." + cols[col].Name
	case "stream-exec-calc":
		proj := gjson.Get(n.Raw, "projection").Array()
		if col >= len(proj) {
			return "?"
		}
		p := proj[col]
		if p.Get("kind").Str == "INPUT_REF" {
			return in(0, int(p.Get("inputIndex").Int()))
		}
		// An expression: its text with each input reference replaced by that input's lineage.
		return inputIndexRef.ReplaceAllStringFunc(compactJSON(p.Raw), func(m string) string {
			i := inputIndexRef.FindStringSubmatch(m)[1]
			var k int
			fmt.Sscan(i, &k)
			return fmt.Sprintf("%q:%q", "input", in(0, k))
		})
	case "stream-exec-exchange", "stream-exec-watermark-assigner", "stream-exec-mini-batch-assigner",
		"stream-exec-drop-update-before", "stream-exec-changelog-normalize", "stream-exec-deduplicate",
		"stream-exec-rank", "stream-exec-sort-limit":
		// Rows pass through (a rank's optional row number is a column after the input's).
		return in(0, col)
	case "stream-exec-join", "stream-exec-interval-join":
		left, ok := inputArity(n, 0)
		if !ok {
			return "?"
		}
		if col < left {
			return in(0, col)
		}
		return in(1, col-left)
	case "stream-exec-group-aggregate", "stream-exec-global-group-aggregate":
		g := gjson.Get(n.Raw, "grouping").Array()
		if col < len(g) {
			return in(0, int(g[col].Int()))
		}
	}
	return fmt.Sprintf("%s column %d", n.Name, col)
}

// outputColumns are the node's own output columns.
func outputColumns(n *Node) ([]column, bool) {
	t := gjson.Get(n.Raw, "outputType")
	if t.IsObject() {
		var cols []column
		for _, f := range t.Get("fields").Array() {
			cols = append(cols, column{Name: f.Get("name").Str})
		}
		return cols, len(cols) > 0
	}
	return parseRowType(t.Str)
}

// inputArity is the number of columns on input k.
func inputArity(n *Node, k int) (int, bool) {
	cols, why := n.inputColumns(k)
	return len(cols), why == ""
}

// keyLineage is the lineage of each of the node's key columns, nil when the node has no key
// fields statecraft knows. A join's keys are its left and its right keys.
func keyLineage(n *Node) []string {
	path, ok := keyFieldPaths[n.Name]
	if !ok {
		return nil
	}
	var out []string
	add := func(k int, p string) {
		for _, f := range gjson.Get(n.Raw, p).Array() {
			for _, e := range n.Inputs {
				if e.Input == k {
					out = append(out, columnLineage(n.owner.Node(e.Source), int(f.Int()), 0))
				}
			}
		}
	}
	add(0, path)
	if strings.HasSuffix(path, "leftKeys") {
		add(1, strings.TrimSuffix(path, "leftKeys")+"rightKeys")
	}
	return out
}

// keyMeaningChanged says how a matched stateful node's key columns come from other columns in
// NEW than in OLD, "" when they do not (or the key lists differ in length: the row types say
// that already).
func keyMeaningChanged(o, n *Node) string {
	a, b := keyLineage(o), keyLineage(n)
	if len(a) != len(b) {
		return ""
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("key column %d comes from %s in NEW, from %s in OLD (same type, other meaning: Flink restores such state without an error and reads each key's old values under another key)", i, ShortText(b[i], 80), ShortText(a[i], 80))
		}
	}
	return ""
}
