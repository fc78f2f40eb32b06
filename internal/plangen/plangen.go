// Package plangen writes synthetic Flink compiled plans for benchmarks. The plans are shaped
// like the ones Flink's planner writes (same top-level layout, node fields, Jackson's pretty
// printing with " : " and "[ {", node types and state entries seen in real 2.x plans): streams
// start at a table source scan, run through calc and hash exchange nodes into stateful
// operators (group aggregate, deduplicate, rank, changelog normalize, and window aggregates that
// have no "state" array), pairs of streams meet in regular joins, and every stream ends in a
// sink. They are deterministic for a given seed.
//
// They are for measuring speed only: tests of behaviour use plans Flink compiled.
package plangen

import (
	"fmt"
	"math/rand"
	"strings"
)

// Options shape a generated plan.
type Options struct {
	Nodes int   // total number of nodes (at least 3)
	Seed  int64 // random seed; the same seed gives the same bytes
}

type node struct {
	id     int
	typ    string
	desc   string
	inputs int
	state  []string // state names, one per input
	extra  string   // type-specific fields, already indented JSON members (each ending ",\n")
}

type edge struct{ src, dst int }

type gen struct {
	r     *rand.Rand
	nodes []node
	edges []edge
}

func (g *gen) add(n node, inputs ...int) int {
	n.id = len(g.nodes) + 1
	n.inputs = len(inputs)
	g.nodes = append(g.nodes, n)
	for _, in := range inputs {
		g.edges = append(g.edges, edge{in, n.id})
	}
	return n.id
}

var ttls = []string{"0 ms", "0 ms", "1 h", "12 h", "1 d", "90 min"}

func (g *gen) source() int {
	t := fmt.Sprintf("t%d", len(g.nodes))
	return g.add(node{typ: "stream-exec-table-source-scan_2",
		desc: fmt.Sprintf("TableSourceScan(table=[[default_catalog, default_database, %s]], fields=[k, v, ts])", t),
		extra: fmt.Sprintf(`    "scanTableSource" : {
      "table" : {
        "identifier" : "`+"`default_catalog`.`default_database`.`%s`"+`",
        "resolvedTable" : {
          "schema" : {
            "columns" : [ {
              "name" : "k",
              "dataType" : "BIGINT"
            }, {
              "name" : "v",
              "dataType" : "VARCHAR(2147483647)"
            }, {
              "name" : "state",
              "dataType" : "INT"
            } ]
          },
          "options" : {
            "connector" : "datagen"
          }
        }
      }
    },
`, t)})
}

func (g *gen) calc(in int) int {
	return g.add(node{typ: "stream-exec-calc_1", desc: "Calc(select=[k, v, state], where=[(k > 0)])",
		extra: `    "projection" : [ {
      "kind" : "INPUT_REF",
      "inputIndex" : 0,
      "type" : "BIGINT"
    }, {
      "kind" : "INPUT_REF",
      "inputIndex" : 1,
      "type" : "VARCHAR(2147483647)"
    } ],
    "condition" : null,
`}, in)
}

func (g *gen) exchange(in int) int {
	return g.add(node{typ: "stream-exec-exchange_1", desc: "Exchange(distribution=[hash[k]])"}, in)
}

func (g *gen) stateful(in int) int {
	switch g.r.Intn(6) {
	case 0, 1:
		return g.add(node{typ: "stream-exec-group-aggregate_1", desc: "GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS c])",
			state: []string{"groupAggregateState"}, extra: "    \"grouping\" : [ 0 ],\n    \"generateUpdateBefore\" : true,\n    \"needRetraction\" : false,\n"}, in)
	case 2:
		return g.add(node{typ: "stream-exec-deduplicate_1", desc: "Deduplicate(keep=[LastRow], key=[k], order=[PROCTIME])",
			state: []string{"deduplicateState"}, extra: "    \"uniqueKeys\" : [ 0 ],\n    \"isRowtime\" : false,\n    \"keepLastRow\" : true,\n"}, in)
	case 3:
		return g.add(node{typ: "stream-exec-rank_1", desc: "Rank(strategy=[AppendFastStrategy], rankType=[ROW_NUMBER], rankRange=[rankStart=1, rankEnd=3], partitionBy=[k])",
			state: []string{"rankState"}, extra: "    \"rankType\" : \"ROW_NUMBER\",\n    \"partition\" : {\n      \"fields\" : [ 0 ]\n    },\n"}, in)
	case 4:
		return g.add(node{typ: "stream-exec-changelog-normalize_1", desc: "ChangelogNormalize(key=[k])",
			state: []string{"changelogNormalizeState"}, extra: "    \"uniqueKeys\" : [ 0 ],\n    \"generateUpdateBefore\" : true,\n"}, in)
	}
	return g.add(node{typ: "stream-exec-window-aggregate_1", desc: "WindowAggregate(window=[TUMBLE(time_col=[ts], size=[5 s])], select=[k, COUNT(*) AS c])",
		extra: "    \"windowing\" : {\n      \"strategy\" : \"TimeAttribute\",\n      \"window\" : {\n        \"type\" : \"TumblingWindow\",\n        \"size\" : \"PT5S\"\n      },\n      \"timeAttributeIndex\" : 2,\n      \"isRowtime\" : true\n    },\n"}, in)
}

func (g *gen) join(l, r int) int {
	return g.add(node{typ: "stream-exec-join_1", desc: "Join(joinType=[InnerJoin], where=[(k = k0)], select=[k, v, k0, v0], leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])",
		state: []string{"leftState", "rightState"},
		extra: "    \"joinSpec\" : {\n      \"joinType\" : \"INNER\",\n      \"leftKeys\" : [ 0 ],\n      \"rightKeys\" : [ 0 ],\n      \"filterNulls\" : [ true ]\n    },\n"}, l, r)
}

func (g *gen) sink(in int) int {
	return g.add(node{typ: "stream-exec-sink_2", desc: fmt.Sprintf("Sink(table=[default_catalog.default_database.out%d], fields=[k, c])", len(g.nodes)),
		extra: "    \"dynamicTableSink\" : {\n      \"table\" : {\n        \"identifier\" : \"`default_catalog`.`default_database`.`out`\"\n      }\n    },\n    \"inputChangelogMode\" : [ \"INSERT\", \"UPDATE_AFTER\" ],\n"}, in)
}

// Generate returns a plan with exactly o.Nodes nodes.
func Generate(o Options) []byte {
	n := o.Nodes
	if n < 3 {
		n = 3
	}
	g := &gen{r: rand.New(rand.NewSource(o.Seed))}
	var streams []int
	// Each step adds at most 5 nodes; keep room for one sink per open stream.
	for len(g.nodes)+len(streams)+6 < n {
		switch x := g.r.Intn(100); {
		case len(streams) < 2 || x < 8:
			streams = append(streams, g.calc(g.source()))
		case x < 20:
			i := g.r.Intn(len(streams))
			j := (i + 1 + g.r.Intn(len(streams)-1)) % len(streams)
			l, r := g.exchange(streams[i]), g.exchange(streams[j])
			jn := g.calc(g.join(l, r))
			streams[i] = jn
			streams = append(streams[:j], streams[j+1:]...)
		case x < 30 && len(streams) > 8:
			i := g.r.Intn(len(streams))
			g.sink(streams[i])
			streams = append(streams[:i], streams[i+1:]...)
		default:
			i := g.r.Intn(len(streams))
			streams[i] = g.calc(g.stateful(g.exchange(streams[i])))
		}
	}
	// Pad with calcs, then close every stream with a sink.
	if len(streams) == 0 {
		streams = append(streams, g.calc(g.source()))
	}
	for len(g.nodes)+len(streams) < n {
		i := g.r.Intn(len(streams))
		streams[i] = g.calc(streams[i])
	}
	for _, s := range streams {
		g.sink(s)
	}
	return g.render()
}

func (g *gen) render() []byte {
	var b strings.Builder
	b.Grow(len(g.nodes) * 1200)
	b.WriteString("{\n  \"flinkVersion\" : \"2.3\",\n  \"nodes\" : [ ")
	for i, n := range g.nodes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{\n    \"id\" : %d,\n    \"type\" : \"%s\",\n", n.id, n.typ)
		b.WriteString(n.extra)
		if len(n.state) > 0 {
			b.WriteString("    \"state\" : [ ")
			for k, name := range n.state {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "{\n      \"index\" : %d,\n      \"ttl\" : \"%s\",\n      \"name\" : \"%s\"\n    }", k, ttls[g.r.Intn(len(ttls))], name)
			}
			b.WriteString(" ],\n")
		}
		if n.inputs == 0 {
			b.WriteString("    \"inputProperties\" : [ ],\n")
		} else {
			b.WriteString("    \"inputProperties\" : [ ")
			for k := 0; k < n.inputs; k++ {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString("{\n      \"requiredDistribution\" : {\n        \"type\" : \"UNKNOWN\"\n      },\n      \"damBehavior\" : \"PIPELINED\",\n      \"priority\" : 0\n    }")
			}
			b.WriteString(" ],\n")
		}
		fmt.Fprintf(&b, "    \"outputType\" : \"ROW<`k` BIGINT, `v` VARCHAR(2147483647), `state` INT>\",\n    \"description\" : \"%s\"\n  }", n.desc)
	}
	b.WriteString(" ],\n  \"edges\" : [ ")
	for i, e := range g.edges {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{\n    \"source\" : %d,\n    \"target\" : %d,\n    \"shuffle\" : {\n      \"type\" : \"FORWARD\"\n    },\n    \"shuffleMode\" : \"PIPELINED\"\n  }", e.src, e.dst)
	}
	b.WriteString(" ]\n}")
	return []byte(b.String())
}
