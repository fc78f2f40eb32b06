package plan

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/statecore/uid"
	"github.com/tidwall/sjson"
)

func TestFormatUID(t *testing.T) {
	tests := []struct {
		format string
		want   string
	}{
		{DefaultUIDFormat, "5_group-aggregate"},
		{UIDFormat115, "5_stream-exec-group-aggregate_1_group-aggregate"},
		{"my_custom_<transformation>_<id>", "my_custom_group-aggregate_5"},
		{"<id><id>-<version>", "55-1"},
		{"<ID>_<transformation>", "<ID>_group-aggregate"}, // placeholders are case-sensitive
		{"<<id>>", "<5>"},                                     // the outer brackets stay
		{"<unknown>_<id>", "<unknown>_5"},                     // unknown text stays literal
		{"<transformation", "<transformation"},                // unterminated: literal
		{"fixed", "fixed"},                                    // no placeholder: every node the same UID
		{"ü<type>", "üstream-exec-group-aggregate"},           // non-ASCII bytes copied as they are
		{"<id>_<transformation>_<id>", "5_group-aggregate_5"}, // every occurrence
		{"<version><type>", "1stream-exec-group-aggregate"},   // no separator needed
		{"", ""}, // empty format gives an empty UID
	}
	for _, tt := range tests {
		if got := FormatUID(tt.format, 5, "stream-exec-group-aggregate", 1, "group-aggregate"); got != tt.want {
			t.Errorf("FormatUID(%q) = %q, want %q", tt.format, got, tt.want)
		}
	}
}

func TestNormalizeGeneration(t *testing.T) {
	for in, want := range map[string]string{"": GenPlanOnly, "plan_only": GenPlanOnly, "Always": GenAlways, " DISABLED ": GenDisabled} {
		got, err := NormalizeGeneration(in)
		if err != nil || got != want {
			t.Errorf("NormalizeGeneration(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := NormalizeGeneration("SOMETIMES"); err == nil || !strings.Contains(err.Error(), "PLAN_ONLY, ALWAYS or DISABLED") {
		t.Errorf("NormalizeGeneration(SOMETIMES) error = %v", err)
	}
}

// uidsOf returns "transformation=uid" per node id, operators only, for compact comparisons.
func uidsOf(t *testing.T, p *Plan, opts UIDOptions) map[int][]string {
	t.Helper()
	nodes, err := p.UIDs(opts)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]string{}
	for _, n := range nodes {
		for _, tr := range n.Transformations {
			s := tr.Transformation + "=" + tr.UID
			if !tr.Operator {
				s += " (partition)"
			}
			if tr.Presence == Maybe {
				s += " (maybe)"
			}
			if tr.State {
				s += " (state)"
			}
			out[n.ID] = append(out[n.ID], s)
		}
	}
	return out
}

// The oracle's plans (Flink 2.3.0): the transformations every node creates, from the planner's
// constants and the plan's own fields (NOT NULL sink columns, requireUpsertMaterialize, ...).
func TestUIDsOraclePlans(t *testing.T) {
	tests := []struct {
		plan string
		want map[int][]string
	}{
		{"group-aggregate", map[int][]string{
			1: {"source=1_source"},
			2: {"calc=2_calc"},
			3: {"exchange=3_exchange (partition)"},
			4: {"group-aggregate=4_group-aggregate (state)"},
			5: {"constraint-validator=5_constraint-validator (maybe)", "sink=5_sink"},
		}},
		{"sink-upsert-materialize", map[int][]string{
			7: {"join=7_join (state)"},
			9: {"constraint-validator=9_constraint-validator", "partitioner=9_partitioner (partition)",
				"upsert-materialize=9_upsert-materialize (state)", "sink=9_sink"},
		}},
		{"interval-join", map[int][]string{
			2: {"watermark-assigner=2_watermark-assigner"},
			8: {"interval-join=8_interval-join (state)"},
		}},
		{"window-aggregate", map[int][]string{
			4: {"local-window-aggregate=4_local-window-aggregate"},
			6: {"global-window-aggregate=6_global-window-aggregate (state)"},
		}},
		{"lookup-join", map[int][]string{2: {"lookup-join=2_lookup-join"}}},
		{"top-n", map[int][]string{3: {"rank=3_rank (state)"}}},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			p := tParseFile(t, filepath.Join(repoRoot(), "testdata", "plans", tt.plan+".json"))
			got := uidsOf(t, p, UIDOptions{})
			for id, want := range tt.want {
				if strings.Join(got[id], ", ") != strings.Join(want, ", ") {
					t.Errorf("node %d: got %q, want %q", id, got[id], want)
				}
			}
		})
	}
}

// Every node type in every real plan (oracle and Flink's own restore-test plans) is known, every
// stateful node names exactly one transformation that holds its state, and every UID hash is
// the murmur3 hash of the UID.
func TestUIDsRealPlansCovered(t *testing.T) {
	for _, f := range realPlans(t) {
		p := tParseFile(t, f)
		nodes, err := p.UIDs(UIDOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, n := range nodes {
			if !n.Known {
				t.Errorf("%s: node %d %s: unknown exec node type", f, n.ID, n.Type)
				continue
			}
			holders := 0
			for _, tr := range n.Transformations {
				if tr.State {
					holders++
				}
				if tr.UID == "" || tr.Hash != uid.Hash(tr.UID) {
					t.Errorf("%s: node %d %s: UID %q hash %q", f, n.ID, tr.Transformation, tr.UID, tr.Hash)
				}
			}
			if n.Node.Stateful() && holders != 1 {
				t.Errorf("%s: node %d %s is stateful but %d transformations hold its state", f, n.ID, n.Type, holders)
			}
			if n.Node.HasState && holders != 1 {
				t.Errorf("%s: node %d %s has a \"state\" array but %d transformations hold state", f, n.ID, n.Type, holders)
			}
		}
		if c := Index(nodes).Collisions(); len(c) > 0 {
			t.Errorf("%s: default UIDs collide: %v", f, c)
		}
	}
}

// Options: the session values apply to every node, a node's "configuration" wins over them
// (ExecNodeConfig), DISABLED leaves UIDs unset, an unknown generation is an error.
func TestUIDsOptions(t *testing.T) {
	path := filepath.Join(repoRoot(), "testdata", "plans", "group-aggregate.json")
	base := tParseFile(t, path)

	got := uidsOf(t, base, UIDOptions{Format: UIDFormat115})
	if got[4][0] != "group-aggregate=4_stream-exec-group-aggregate_1_group-aggregate (state)" {
		t.Errorf("1.15 format: node 4 = %q", got[4])
	}
	if got[1][0] != "source=1_stream-exec-table-source-scan_2_source" {
		t.Errorf("1.15 format: node 1 = %q", got[1])
	}

	// Per-node format in the sink's configuration (as in Flink's testPerNodeCustomUid).
	raw, err := sjson.SetBytes(base.Raw, `nodes.4.configuration.table\.exec\.uid\.format`, "my_custom_<transformation>_<id>")
	if err != nil {
		t.Fatal(err)
	}
	custom := reparse(t, "custom.json", raw)
	got = uidsOf(t, custom, UIDOptions{Format: UIDFormat115})
	if strings.Join(got[5], ", ") != "constraint-validator=my_custom_constraint-validator_5 (maybe), sink=my_custom_sink_5" {
		t.Errorf("node-level format: sink = %q", got[5])
	}
	if got[4][0] != "group-aggregate=4_stream-exec-group-aggregate_1_group-aggregate (state)" {
		t.Errorf("node-level format leaked to node 4: %q", got[4])
	}
	nodes, _ := custom.UIDs(UIDOptions{})
	if nodes[4].FormatFrom != "node" || nodes[3].FormatFrom != "default" {
		t.Errorf("FormatFrom = %q, %q", nodes[4].FormatFrom, nodes[3].FormatFrom)
	}

	nodes, err = base.UIDs(UIDOptions{Generation: "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		for _, tr := range n.Transformations {
			if tr.UID != "" || tr.Hash != "" {
				t.Errorf("DISABLED: node %d %s has UID %q", n.ID, tr.Transformation, tr.UID)
			}
		}
		if n.NoUID == "" {
			t.Errorf("DISABLED: node %d does not say why it has no UID", n.ID)
		}
	}

	// A node-level DISABLED only affects that node; ALWAYS in the node wins over a DISABLED session.
	raw, _ = sjson.SetBytes(base.Raw, `nodes.3.configuration.table\.exec\.uid\.generation`, "DISABLED")
	got = uidsOf(t, reparse(t, "off.json", raw), UIDOptions{})
	if got[4][0] != "group-aggregate= (state)" || got[5][1] != "sink=5_sink" {
		t.Errorf("node-level DISABLED: %q / %q", got[4], got[5])
	}
	raw, _ = sjson.SetBytes(base.Raw, `nodes.3.configuration.table\.exec\.uid\.generation`, "ALWAYS")
	got = uidsOf(t, reparse(t, "on.json", raw), UIDOptions{Generation: "DISABLED"})
	if got[4][0] != "group-aggregate=4_group-aggregate (state)" || got[5][1] != "sink=" {
		t.Errorf("node-level ALWAYS under session DISABLED: %q / %q", got[4], got[5])
	}

	if _, err := base.UIDs(UIDOptions{Generation: "NEVER"}); err == nil {
		t.Error("generation NEVER accepted")
	}
	raw, _ = sjson.SetBytes(base.Raw, `nodes.3.configuration.table\.exec\.uid\.generation`, "NEVER")
	if _, err := reparse(t, "bad.json", raw).UIDs(UIDOptions{}); err == nil || !strings.Contains(err.Error(), "node 4") {
		t.Errorf("node-level NEVER: err = %v", err)
	}

	// A format without <id> gives several nodes the same UID: Flink refuses the job.
	nodes, _ = base.UIDs(UIDOptions{Format: "<transformation>"})
	if c := Index(nodes).Collisions(); len(c) != 0 {
		t.Errorf("distinct transformations collide: %v", c)
	}
	nodes, _ = base.UIDs(UIDOptions{Format: "x"})
	if c := Index(nodes).Collisions(); len(c) != 1 || c[0] != "x" {
		t.Errorf("format \"x\": collisions %v, want [x]", c)
	}
}

// Process table functions: a "uid" field is the UID verbatim, and they get a UID even when
// generation is DISABLED (StreamExecProcessTableFunction calls createTransformationUid itself).
func TestUIDsProcessTableFunction(t *testing.T) {
	plan := []byte(`{"flinkVersion":"2.3","nodes":[
	{"id":7,"type":"stream-exec-process-table-function_1","uid":"my-ptf"},
	{"id":8,"type":"stream-exec-process-table-function_1"}],"edges":[]}`)
	p, err := Parse("ptf.json", plan)
	if err != nil {
		t.Fatal(err)
	}
	got := uidsOf(t, p, UIDOptions{Generation: GenDisabled})
	if got[7][0] != "process=my-ptf (state)" || got[8][0] != "process=8_process (state)" {
		t.Errorf("PTF UIDs: %q %q", got[7], got[8])
	}
}

// Unknown node types are reported, not guessed; a negative interval-join window has no join.
func TestUIDsSpecialNodes(t *testing.T) {
	plan := []byte(`{"nodes":[
	{"id":1,"type":"stream-exec-something-new_1"},
	{"id":2,"type":"stream-exec-interval-join_1","intervalJoinSpec":{"windowBounds":{"leftLowerBound":10,"leftUpperBound":-5}}},
	{"id":3,"type":"stream-exec-union_1"},
	{"id":4,"type":"stream-exec-legacy-sink_1"},
	{"id":5,"type":"stream-exec-lookup-join_1","requireUpsertMaterialize":true},
	{"id":6,"type":"stream-exec-lookup-join_1","asyncOptions":{"capacity ":100,"timeout":180000,"is-key-ordered":true,"output-mode":"ORDERED"}},
	{"id":7,"type":"stream-exec-lookup-join_1","asyncOptions":{"capacity ":100,"timeout":180000,"is-key-ordered":false,"output-mode":"ORDERED"}}],"edges":[]}`)
	p, err := Parse("special.json", plan)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := p.UIDs(UIDOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if nodes[0].Known || len(nodes[0].Transformations) != 0 || nodes[0].Note == "" {
		t.Errorf("unknown node: %+v", nodes[0])
	}
	got := uidsOf(t, p, UIDOptions{})
	if strings.Join(got[2], ",") != "filter-left=2_filter-left,filter-right=2_filter-right,pad-left=2_pad-left,pad-right=2_pad-right" {
		t.Errorf("negative window interval join: %q", got[2])
	}
	if len(got[3]) != 0 || !nodes[2].Known {
		t.Errorf("union: %q", got[3])
	}
	if nodes[3].NoUID == "" {
		t.Errorf("legacy sink should get no UID: %+v", nodes[3])
	}
	if strings.Join(got[5], ",") != "partitioner=5_partitioner (partition),lookup-join-materialize=5_lookup-join-materialize (state)" {
		t.Errorf("materializing lookup join: %q", got[5])
	}
	if strings.Join(got[6], ",") != "lookup-join-key-ordered=6_lookup-join-key-ordered" || strings.Join(got[7], ",") != "lookup-join=7_lookup-join" {
		t.Errorf("async lookup joins: %q %q", got[6], got[7])
	}
}
