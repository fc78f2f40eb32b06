package plan

// Operator UIDs of a job executed from a compiled plan.
//
// When Flink translates a compiled plan (EXECUTE PLAN, TableEnvironment.loadPlan(..).execute()),
// every exec node creates one or more transformations, and each transformation that the node
// names through ExecNodeBase.createTransformationMeta gets a UID:
//
//	uid = replaceEach(table.exec.uid.format, <id> <type> <version> <transformation>)
//	      e.g. node 4 "stream-exec-group-aggregate_1", default format "<id>_<transformation>"
//	           -> "4_group-aggregate"
//	OperatorID = murmur3_128(seed 0) of the UID's UTF-8 bytes (statecore/uid)
//
// Options are looked up in the node's "configuration" object first and in the session (table)
// configuration second (ExecNodeConfig), so a node can carry its own uid format. Whether a UID is
// set at all is table.exec.uid.generation: PLAN_ONLY (the default; UIDs for pipelines that come
// from a compiled plan, which is always the case here), ALWAYS, DISABLED.
//
// The transformation names per exec node are the *_TRANSFORMATION constants of the Flink 2.3.0
// planner (read from flink-table-planner.jar with javap -constants, and their use sites with
// javap -c): see transformationsOf. Partition transformations (exchange, the sink's and lookup
// join's "partitioner", "custom-shuffle") get a UID too, but they are virtual in the StreamGraph:
// no operator, so nothing of them is ever in a savepoint. Chaining does not change UIDs.

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/statecraft/statecraft/statecore/uid"
	"github.com/tidwall/gjson"
)

// Option keys and values Flink 2.3.0 reads for UIDs (ExecutionConfigOptions). The default
// format, DefaultUIDFormat, is declared with the plan diff.
const (
	OptUIDFormat     = "table.exec.uid.format"
	OptUIDGeneration = "table.exec.uid.generation"

	// UIDFormat115 is the format Flink 1.15 used; set it to restore 1.15 savepoints.
	UIDFormat115 = "<id>_<type>_<version>_<transformation>"

	GenPlanOnly = "PLAN_ONLY"
	GenAlways   = "ALWAYS"
	GenDisabled = "DISABLED"
)

// UIDOptions is the session configuration that UIDs depend on. Empty fields mean Flink's
// defaults. A node's own "configuration" still wins over these, as in Flink.
type UIDOptions struct {
	Format     string // table.exec.uid.format
	Generation string // table.exec.uid.generation: PLAN_ONLY, ALWAYS or DISABLED (any case)
}

// Presence says whether a node creates a transformation.
type Presence string

const (
	// Always: the node creates this transformation whenever it is translated.
	Always Presence = "always"
	// Maybe: it depends on something the plan does not say for sure (the connector's runtime
	// provider, a config default, ...); Condition says what.
	Maybe Presence = "maybe"
)

// TransformationUID is one transformation an exec node creates, with its UID.
type TransformationUID struct {
	Transformation string   `json:"transformation"` // "group-aggregate"
	UID            string   `json:"uid,omitempty"`  // "" when Flink sets no UID
	Hash           string   `json:"uidHash,omitempty"`
	Operator       bool     `json:"operator"` // false: a partition transformation, never in a savepoint
	Presence       Presence `json:"presence"`
	Condition      string   `json:"condition,omitempty"`
	// State is true for the transformation whose operator holds the node's state (the one the
	// node's "state" entries describe, or the keyed operator of a window/interval/... node).
	State bool `json:"state,omitempty"`
}

// NodeUIDs are the transformations of one exec node.
type NodeUIDs struct {
	Node       *Node  `json:"-"`
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Format     string `json:"uidFormat"`
	FormatFrom string `json:"uidFormatFrom"` // "default", "session" or "node"
	Generation string `json:"uidGeneration"`
	// NoUID says why the node's transformations get no UID ("" when they get one).
	NoUID           string              `json:"noUid,omitempty"`
	Known           bool                `json:"known"` // false: node type unknown to statecraft
	Note            string              `json:"note,omitempty"`
	Transformations []TransformationUID `json:"transformations"`
}

// transformationNamePattern is what ExecNodeContext.generateUid accepts.
var transformationNamePattern = regexp.MustCompile(`^[a-z\-]+$`)

// FormatUID substitutes the placeholders of a table.exec.uid.format pattern the way Flink does
// (commons-lang3 StringUtils.replaceEach): one left-to-right pass, every occurrence replaced,
// replaced text never scanned again, case-sensitive, unknown <...> left as is.
func FormatUID(format string, id int, typeName string, version int, transformation string) string {
	repl := [4][2]string{
		{"<id>", strconv.Itoa(id)},
		{"<type>", typeName},
		{"<version>", strconv.Itoa(version)},
		{"<transformation>", transformation},
	}
	var b strings.Builder
	for i := 0; i < len(format); {
		matched := false
		if format[i] == '<' {
			for _, r := range repl {
				if strings.HasPrefix(format[i:], r[0]) {
					b.WriteString(r[1])
					i += len(r[0])
					matched = true
					break
				}
			}
		}
		if !matched {
			b.WriteByte(format[i])
			i++
		}
	}
	return b.String()
}

// NormalizeGeneration checks a table.exec.uid.generation value and returns its canonical
// spelling. Flink matches enum option values without regard to case.
func NormalizeGeneration(v string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "", GenPlanOnly:
		return GenPlanOnly, nil
	case GenAlways:
		return GenAlways, nil
	case GenDisabled:
		return GenDisabled, nil
	}
	return "", fmt.Errorf("%s %q: want PLAN_ONLY, ALWAYS or DISABLED", OptUIDGeneration, v)
}

// Configuration returns the node's "configuration" object (node-level options) as strings.
func (n *Node) Configuration() map[string]string {
	out := map[string]string{}
	gjson.Get(n.Raw, "configuration").ForEach(func(k, v gjson.Result) bool {
		out[k.Str] = v.String()
		return true
	})
	return out
}

// unsupportedForUID are the exec nodes ExecNodeMetadataUtil treats as unsupported: they never
// get a UID (they cannot be in a compiled plan either, but a hand-made plan might name them).
var unsupportedForUID = map[string]bool{
	"stream-exec-data-stream-scan":             true,
	"stream-exec-legacy-table-source-scan":     true,
	"stream-exec-legacy-sink":                  true,
	"stream-exec-group-table-aggregate":        true,
	"stream-exec-python-group-table-aggregate": true,
	"stream-exec-multiple-input":               true,
}

// UIDs computes, for every node in file order, the transformations Flink creates when it executes
// the plan and their UIDs and OperatorID hashes. It fails only on an invalid option value.
func (p *Plan) UIDs(opts UIDOptions) ([]NodeUIDs, error) {
	sessionGen, err := NormalizeGeneration(opts.Generation)
	if err != nil {
		return nil, err
	}
	out := make([]NodeUIDs, 0, len(p.Nodes))
	for _, n := range p.Nodes {
		cfg := n.Configuration()
		nu := NodeUIDs{Node: n, ID: n.ID, Type: n.Type, Format: DefaultUIDFormat, FormatFrom: "default", Generation: sessionGen}
		if opts.Format != "" {
			nu.Format, nu.FormatFrom = opts.Format, "session"
		}
		if f, ok := cfg[OptUIDFormat]; ok {
			nu.Format, nu.FormatFrom = f, "node"
		}
		if g, ok := cfg[OptUIDGeneration]; ok {
			ng, err := NormalizeGeneration(g)
			if err != nil {
				return nil, fmt.Errorf("%s: node %d configuration: %w", p.File, n.ID, err)
			}
			nu.Generation = ng
		}
		rules, known, note := transformationsOf(n, cfg)
		nu.Known, nu.Note = known, note
		// PLAN_ONLY sets UIDs for compiled plans, and a plan read from a file is compiled.
		setUID := nu.Generation != GenDisabled
		switch {
		case unsupportedForUID[n.Name]:
			setUID = false
			nu.NoUID = "Flink never sets UIDs for this exec node (ExecNodeMetadataUtil lists it as unsupported)"
		case !setUID:
			nu.NoUID = OptUIDGeneration + " is DISABLED"
		}
		for _, r := range rules {
			t := TransformationUID{Transformation: r.name, Operator: !r.partition, Presence: r.presence, Condition: r.cond, State: r.state}
			switch {
			case r.fixedUID != "":
				// A process table function's "uid" is used verbatim, whatever the options say.
				t.UID = r.fixedUID
			case r.alwaysUID || setUID:
				if !transformationNamePattern.MatchString(r.name) {
					return nil, fmt.Errorf("%s: node %d: transformation name %q does not match [a-z-]+", p.File, n.ID, r.name)
				}
				t.UID = FormatUID(nu.Format, n.ID, n.Name, n.Version, r.name)
			}
			if t.UID != "" {
				t.Hash = uid.Hash(t.UID)
			}
			nu.Transformations = append(nu.Transformations, t)
		}
		out = append(out, nu)
	}
	return out, nil
}

// rule is one transformation an exec node may create.
type uidRule struct {
	name      string
	partition bool // a PartitionTransformation: virtual, no operator
	presence  Presence
	cond      string
	state     bool
	fixedUID  string // process table function "uid"
	alwaysUID bool   // the UID is set whatever table.exec.uid.generation says
}

func uAlways(name string) uidRule   { return uidRule{name: name, presence: Always} }
func uStateful(name string) uidRule { return uidRule{name: name, presence: Always, state: true} }
func uPartition(name, cond string) uidRule {
	p := Always
	if cond != "" {
		p = Maybe
	}
	return uidRule{name: name, partition: true, presence: p, cond: cond}
}
func uMaybe(name, cond string) uidRule { return uidRule{name: name, presence: Maybe, cond: cond} }

// oneTransformation maps exec node names (without "_<version>") that create exactly one
// operator to its transformation name, and whether that operator keeps the node's state.
// Source: the *_TRANSFORMATION constants of the Flink 2.3.0 planner and the classes using them.
var oneTransformation = map[string]struct {
	name  string
	state bool
}{
	"stream-exec-values":                        {"values", false},
	"stream-exec-calc":                          {"calc", false},
	"stream-exec-async-calc":                    {"async-calc", false},
	"stream-exec-python-calc":                   {"python-calc", false},
	"stream-exec-python-async-calc":             {"python-async-calc", false},
	"stream-exec-correlate":                     {"correlate", false},
	"stream-exec-async-correlate":               {"async-correlate", false},
	"stream-exec-python-correlate":              {"python-correlate", false},
	"stream-exec-expand":                        {"expand", false},
	"stream-exec-watermark-assigner":            {"watermark-assigner", false},
	"stream-exec-mini-batch-assigner":           {"mini-batch-assigner", false},
	"stream-exec-drop-update-before":            {"drop-update-before", false},
	"stream-exec-window-table-function":         {"window", false},
	"stream-exec-ml-predict-table-function":     {"ml-predict-table-function", false},
	"stream-exec-vector-search-table-function":  {"vector-search-table-function", false},
	"stream-exec-local-group-aggregate":         {"local-group-aggregate", false},
	"stream-exec-local-window-aggregate":        {"local-window-aggregate", false},
	"stream-exec-changelog-normalize":           {"changelog-normalize", true},
	"stream-exec-deduplicate":                   {"deduplicate", true},
	"stream-exec-group-aggregate":               {"group-aggregate", true},
	"stream-exec-global-group-aggregate":        {"global-group-aggregate", true},
	"stream-exec-incremental-group-aggregate":   {"incremental-group-aggregate", true},
	"stream-exec-python-group-aggregate":        {"python-group-aggregate", true},
	"stream-exec-group-table-aggregate":         {"group-table-aggregate", true},
	"stream-exec-group-window-aggregate":        {"group-window-aggregate", true},
	"stream-exec-python-group-window-aggregate": {"python-group-window-aggregate", true},
	"stream-exec-window-aggregate":              {"window-aggregate", true},
	"stream-exec-global-window-aggregate":       {"global-window-aggregate", true},
	"stream-exec-window-rank":                   {"window-rank", true},
	"stream-exec-window-deduplicate":            {"window-deduplicate", true},
	"stream-exec-window-join":                   {"window-join", true},
	"stream-exec-join":                          {"join", true},
	"stream-exec-multi-join":                    {"multi-join", true},
	"stream-exec-delta-join":                    {"delta-join", false},
	"stream-exec-temporal-join":                 {"temporal-join", true},
	"stream-exec-over-aggregate":                {"over-aggregate", true},
	"stream-exec-python-over-aggregate":         {"python-over-aggregate", true},
	"stream-exec-rank":                          {"rank", true},
	"stream-exec-limit":                         {"rank", true}, // StreamExecLimit extends StreamExecRank
	"stream-exec-sort-limit":                    {"rank", true}, // StreamExecSortLimit extends StreamExecRank
	"stream-exec-sort":                          {"sort", true},
	"stream-exec-temporal-sort":                 {"temporal-sort", true},
}

// transformationsOf lists the transformations node n creates, in the order Flink creates them
// (upstream first). known is false for exec node types statecraft has no rules for.
func transformationsOf(n *Node, cfg map[string]string) (rules []uidRule, known bool, note string) {
	if t, ok := oneTransformation[n.Name]; ok {
		return []uidRule{{name: t.name, presence: Always, state: t.state}}, true, ""
	}
	raw := gjson.Parse(n.Raw)
	switch n.Name {
	case "stream-exec-exchange":
		return []uidRule{uPartition("exchange", "")}, true, ""
	case "stream-exec-union":
		return nil, true, "a union creates no operator of its own"
	case "stream-exec-table-source-scan":
		rules := []uidRule{uAlways("source")}
		if raw.Get("scanTableSource.table.resolvedTable.options").Get(`scan\.parallelism`).Exists() {
			rules = append(rules, uPartition("partitioner", "only when the source's own parallelism differs from its consumers' and its changelog must stay ordered by key"))
		}
		return rules, true, "a connector may add operators of its own; those it names through its ProviderContext get UIDs from the same format"
	case "stream-exec-sink":
		return sinkRules(n, raw, cfg), true, "Sink V2 connectors expand the sink transformation into writer/committer operators whose UIDs Flink derives from the sink's UID"
	case "stream-exec-lookup-join":
		return lookupJoinRules(raw), true, ""
	case "stream-exec-interval-join":
		lo := raw.Get("intervalJoinSpec.windowBounds.leftLowerBound")
		hi := raw.Get("intervalJoinSpec.windowBounds.leftUpperBound")
		if lo.Exists() && hi.Exists() && hi.Int() < lo.Int() {
			// A negative window never joins anything: Flink only filters and pads each side.
			return []uidRule{uAlways("filter-left"), uAlways("filter-right"), uAlways("pad-left"), uAlways("pad-right")}, true,
				"the join window is empty (upper bound below lower bound): Flink creates no join operator"
		}
		return []uidRule{uStateful("interval-join")}, true, ""
	case "stream-exec-match":
		return []uidRule{
			uMaybe("timestamp-inserter", "only when the pattern is ordered by an event-time attribute"),
			uStateful("match"),
		}, true, ""
	case "stream-exec-process-table-function":
		r := uidRule{name: "process", presence: Always, state: true, alwaysUID: true}
		if u := raw.Get("uid"); u.Exists() && u.Type == gjson.String {
			r.fixedUID = u.Str
			return []uidRule{r}, true, "the node's \"uid\" field is the UID, verbatim"
		}
		return []uidRule{r}, true, "a process table function always gets a UID, whatever table.exec.uid.generation says"
	}
	return nil, false, "statecraft does not know which transformations this exec node creates"
}

// sinkRules follows CommonExecSink.createSinkTransformation (2.3.0): constraint validator,
// partitioner, [watermark timestamp assigner,] upsert materializer, row-kind setter, timestamp
// inserter, sink.
func sinkRules(n *Node, raw gjson.Result, cfg map[string]string) []uidRule {
	var rules []uidRule
	schema := raw.Get("dynamicTableSink.table.resolvedTable.schema")
	notNull, lengthTyped := false, false
	schema.Get("columns").ForEach(func(_, c gjson.Result) bool {
		if k := c.Get("kind").String(); k != "" && !strings.EqualFold(k, "PHYSICAL") {
			return true
		}
		dt := c.Get("dataType")
		if dt.Type == gjson.String {
			t := strings.TrimSpace(dt.Str)
			if strings.HasSuffix(t, " NOT NULL") {
				notNull = true
			}
			u := strings.ToUpper(t)
			for _, pre := range []string{"CHAR(", "VARCHAR(", "BINARY(", "VARBINARY("} {
				if strings.HasPrefix(u, pre) && !strings.HasPrefix(u, pre+"2147483647)") {
					lengthTyped = true
				}
			}
		} else if dt.Get("nullable").Exists() && !dt.Get("nullable").Bool() {
			notNull = true
		}
		return true
	})
	switch {
	case notNull:
		// table.exec.sink.not-null-enforcer is ERROR or DROP: both check NOT NULL columns.
		rules = append(rules, uAlways("constraint-validator"))
	case lengthTyped && !strings.EqualFold(cfgOr(cfg, "table.exec.sink.type-length-enforcer", "IGNORE"), "IGNORE"):
		rules = append(rules, uAlways("constraint-validator"))
	default:
		rules = append(rules, uMaybe("constraint-validator",
			"only when the sink has constraints to enforce; it has no NOT NULL column (nested constraints and type lengths depend on table.exec.sink.*-enforcer)"))
	}
	hasPK := len(schema.Get("primaryKey.columns").Array()) > 0
	insertOnly := true
	for _, m := range raw.Get("inputChangelogMode").Array() {
		if m.String() != "INSERT" {
			insertOnly = false
		}
	}
	materialize := raw.Get("requireUpsertMaterialize").Bool() && !insertOnly
	if hasPK {
		if materialize {
			rules = append(rules, uPartition("partitioner", ""))
		} else {
			rules = append(rules, uPartition("partitioner", "only when table.exec.sink.keyed-shuffle asks for it (sink parallelism differs from its input's)"))
		}
	}
	if materialize {
		b := raw.Get("conflictStrategy.behavior").String()
		if b == "ERROR" || b == "NOTHING" {
			rules = append(rules, uAlways("watermark-timestamp-assigner"))
		}
		rules = append(rules, uStateful("upsert-materialize"))
	}
	for _, a := range raw.Get("dynamicTableSink.abilities").Array() {
		if a.Get("rowLevelDeleteMode").String() == "DELETED_ROWS" || a.Get("rowLevelUpdateMode").String() == "UPDATED_ROWS" {
			rules = append(rules, uAlways("row-kind-setter"))
			break
		}
	}
	if strings.EqualFold(cfgOr(cfg, "table.exec.sink.rowtime-inserter", "ENABLED"), "ENABLED") && rowtimeInput(n) {
		rules = append(rules, uMaybe("timestamp-inserter", "only for connectors with a DataStream or Sink V2 provider (a SinkFunction sink inserts timestamps itself)"))
	}
	rules = append(rules, uAlways("sink"))
	return rules
}

// rowtimeInput reports whether the sink's input row has exactly one event-time attribute.
func rowtimeInput(n *Node) bool {
	if len(n.Inputs) == 0 || n.owner == nil {
		return false
	}
	up := n.owner.byID[n.Inputs[0].Source]
	if up == nil {
		return false
	}
	return strings.Count(gjson.Get(up.Raw, "outputType").Raw, "*ROWTIME*") == 1
}

// lookupJoinRules follows StreamExecLookupJoin (2.3.0): a keyed materializing join when the
// plan asks for upsert materialization, else the plain (sync or async) lookup join operator.
func lookupJoinRules(raw gjson.Result) []uidRule {
	var rules []uidRule
	if raw.Get("preferCustomShuffle").Bool() {
		rules = append(rules, uPartition("custom-shuffle", "only when the lookup source supports the custom shuffle the plan prefers"))
	}
	if raw.Get("requireUpsertMaterialize").Bool() {
		return append(rules, uPartition("partitioner", ""), uStateful("lookup-join-materialize"))
	}
	// FunctionCallUtil.AsyncOptions is written as "asyncOptions" with an "is-key-ordered" flag.
	if raw.Get("asyncOptions").Get(`is-key-ordered`).Bool() {
		return append(rules, uAlways("lookup-join-key-ordered"))
	}
	return append(rules, uAlways("lookup-join"))
}

func cfgOr(cfg map[string]string, k, def string) string {
	if v, ok := cfg[k]; ok {
		return v
	}
	return def
}

// UIDIndex maps OperatorID hashes to the transformations that produce them.
type UIDIndex map[string][]UIDRef

// UIDRef is one transformation of one node.
type UIDRef struct {
	Node *NodeUIDs
	T    *TransformationUID
}

// Index returns every operator transformation with a UID by hash, for matching a savepoint's
// operators against a plan. Two transformations with the same hash would make Flink fail with
// "Hash collision on user-specified ID"; Collisions lists them.
func Index(nodes []NodeUIDs) UIDIndex {
	idx := UIDIndex{}
	for i := range nodes {
		for j := range nodes[i].Transformations {
			t := &nodes[i].Transformations[j]
			if t.Hash == "" || !t.Operator {
				continue
			}
			idx[t.Hash] = append(idx[t.Hash], UIDRef{&nodes[i], t})
		}
	}
	return idx
}

// Collisions lists the UIDs that more than one operator transformation would get (a custom
// format without <id>, for instance), sorted. Flink refuses such a job.
func (idx UIDIndex) Collisions() []string {
	var out []string
	for _, refs := range idx {
		if len(refs) > 1 {
			out = append(out, refs[0].T.UID)
		}
	}
	sort.Strings(out)
	return out
}
