package migrate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// ParseScript reads a migration script: a YAML document with a list of steps, applied in order.
// Each step is a mapping with exactly one key, the step's kind, whose value holds its fields.
// Operators are selected as uid:NAME or hash:HEX everywhere. ScriptExample shows every step kind
// and field (`statecraft help scripts` prints it; a test parses it).
//
// Unknown step kinds and unknown or missing fields are errors that name the line. Run validates
// every step against the source savepoint before anything is written.
func ParseScript(r io.Reader, name string) ([]Step, error) {
	b, err := io.ReadAll(io.LimitReader(r, 1<<20+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(b) > 1<<20 {
		return nil, fmt.Errorf("%s: a migration script larger than 1 MiB is refused", name)
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) { // the YAML decoder's word for a file with no document
			return nil, fmt.Errorf("%s: the script is empty: want a mapping with a steps list", name)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping with a steps list", name)
	}
	root := doc.Content[0]
	var stepsNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch k := root.Content[i].Value; k {
		case "steps":
			stepsNode = root.Content[i+1]
		default:
			return nil, fmt.Errorf("%s:%d: unknown key %q (want steps)", name, root.Content[i].Line, k)
		}
	}
	if stepsNode == nil || stepsNode.Kind != yaml.SequenceNode || len(stepsNode.Content) == 0 {
		return nil, fmt.Errorf("%s: want a non-empty steps list", name)
	}
	var steps []Step
	for _, n := range stepsNode.Content {
		st, err := parseStep(n)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n.Line, err)
		}
		steps = append(steps, st)
	}
	return steps, nil
}

// stepFields are the fields each step kind takes (required ones marked with *).
var stepFields = map[string][]string{
	"rename-uid":    {"from", "to", "renames"},
	"rescale":       {"*max-parallelism", "parallelism", "operators"},
	"retype":        {"*operator", "*state", "to", "key-to", "field", "drop-field", "add-field", "class"},
	"rename-state":  {"*operator", "*from", "*to"},
	"drop-state":    {"*operator", "*state"},
	"drop-operator": {"*operator"},
	"patch":         {"data", "delete-where", "operators"},
	"offsets":       {"*operator", "set", "shift", "rename-topic", "drop-topic", "from-file", "to-timestamp", "bootstrap-servers", "kafka-config"},
}

type stepSpec struct {
	From           string                      `yaml:"from"`
	To             string                      `yaml:"to"`
	RenameList     []struct{ From, To string } `yaml:"renames"`
	MaxParallelism int32                       `yaml:"max-parallelism"`
	Parallelism    int32                       `yaml:"parallelism"`
	Operators      []string                    `yaml:"operators"`
	Operator       string                      `yaml:"operator"`
	State          string                      `yaml:"state"`
	KeyTo          string                      `yaml:"key-to"`
	Field          string                      `yaml:"field"`
	DropField      yaml.Node                   `yaml:"drop-field"`
	AddField       yaml.Node                   `yaml:"add-field"`
	Class          string                      `yaml:"class"`
	Set            yaml.Node                   `yaml:"set"`
	Shift          yaml.Node                   `yaml:"shift"`
	RenameTopic    yaml.Node                   `yaml:"rename-topic"`
	DropTopic      yaml.Node                   `yaml:"drop-topic"`
	FromFile       string                      `yaml:"from-file"`
	ToTimestamp    string                      `yaml:"to-timestamp"`
	Bootstrap      string                      `yaml:"bootstrap-servers"`
	KafkaConfig    string                      `yaml:"kafka-config"`
	Data           string                      `yaml:"data"`
	DeleteWhere    yaml.Node                   `yaml:"delete-where"`
}

func parseStep(n *yaml.Node) (Step, error) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return nil, fmt.Errorf("a step is a mapping with one key, its kind (one of %s)", kinds())
	}
	kind, body := n.Content[0].Value, n.Content[1]
	fields, ok := stepFields[kind]
	if !ok {
		return nil, fmt.Errorf("unknown step %q (want one of %s)", kind, kinds())
	}
	if body.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping of fields", kind)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(body.Content); i += 2 {
		k := body.Content[i].Value
		known := false
		for _, f := range fields {
			known = known || strings.TrimPrefix(f, "*") == k
		}
		if !known {
			return nil, fmt.Errorf("line %d: %s: unknown field %q (it takes %s)", body.Content[i].Line, kind, k, strings.ReplaceAll(strings.Join(fields, ", "), "*", ""))
		}
		seen[k] = true
	}
	for _, f := range fields {
		if strings.HasPrefix(f, "*") && !seen[f[1:]] {
			return nil, fmt.Errorf("%s: field %q is required", kind, f[1:])
		}
	}
	var sp stepSpec
	if err := body.Decode(&sp); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	sel := func(s string) (Selector, error) { return ParseSelector(s) }
	switch kind {
	case "rename-uid":
		pairs := sp.RenameList
		if sp.From != "" || sp.To != "" {
			pairs = append(pairs, struct{ From, To string }{sp.From, sp.To})
		}
		if len(pairs) == 0 {
			return nil, fmt.Errorf("rename-uid: give from/to or a renames list")
		}
		st := &RenameUIDs{}
		for _, p := range pairs {
			s, err := sel(p.From)
			if err != nil {
				return nil, fmt.Errorf("rename-uid: %w", err)
			}
			if p.To == "" {
				return nil, fmt.Errorf("rename-uid %s: the new UID (to) is empty", p.From)
			}
			st.Renames = append(st.Renames, Rename{From: s, To: strings.TrimPrefix(p.To, "uid:")})
		}
		return st, nil
	case "rescale":
		st := &Rescale{MaxParallelism: sp.MaxParallelism, Parallelism: sp.Parallelism}
		for _, o := range sp.Operators {
			s, err := sel(o)
			if err != nil {
				return nil, fmt.Errorf("rescale: %w", err)
			}
			st.Operators = append(st.Operators, s)
		}
		return st, nil
	case "patch":
		return patchStep(&sp)
	}
	op, err := sel(sp.Operator)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	switch kind {
	case "retype":
		drops, err := dropFields(&sp.DropField)
		if err != nil {
			return nil, err
		}
		adds, err := addFields(&sp.AddField)
		if err != nil {
			return nil, err
		}
		return &Retype{Operator: op, State: sp.State, To: sp.To, KeyTo: sp.KeyTo, Field: sp.Field,
			DropFields: drops, AddFields: adds, Class: sp.Class}, nil
	case "rename-state":
		return &RenameState{Operator: op, From: sp.From, To: sp.To}, nil
	case "drop-state":
		return &DropState{Operator: op, State: sp.State}, nil
	case "offsets":
		return offsetsStep(op, &sp)
	default:
		return &DropOperator{Operator: op}, nil
	}
}

func kinds() string { return strings.Join(StepKinds(), ", ") }

// oneOrList returns the items of a value that is one node of kind one or a list of them (none
// when the key is absent); ok is false for any other node.
func oneOrList(n *yaml.Node, one yaml.Kind) (items []*yaml.Node, ok bool) {
	switch n.Kind {
	case 0:
		return nil, true
	case one:
		return []*yaml.Node{n}, true
	case yaml.SequenceNode:
		return n.Content, true
	}
	return nil, false
}

// dropFields reads a retype's drop-field: one name, a comma-separated list, or a YAML list.
func dropFields(n *yaml.Node) ([]string, error) {
	items, ok := oneOrList(n, yaml.ScalarNode)
	if !ok {
		return nil, fmt.Errorf("line %d: retype: drop-field: want a field name or a list of them", n.Line)
	}
	var out []string
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
			return nil, fmt.Errorf("line %d: retype: drop-field: want field names", it.Line)
		}
		for _, f := range strings.Split(it.Value, ",") {
			if f = strings.TrimSpace(f); f == "" {
				return nil, fmt.Errorf("line %d: retype: drop-field: empty field name", it.Line)
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// addFields reads a retype's add-field: one {name, type, default} mapping or a list of them.
// default is required; YAML null (null, ~) gives a null default, a quoted "null" the string.
func addFields(n *yaml.Node) ([]AddField, error) {
	items, ok := oneOrList(n, yaml.MappingNode)
	if !ok {
		return nil, fmt.Errorf("line %d: retype: add-field: want {name, type, default} or a list of them", n.Line)
	}
	var out []AddField
	for _, it := range items {
		if it.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("line %d: retype: add-field: want {name, type, default}", it.Line)
		}
		var a AddField
		seen := map[string]bool{}
		for i := 0; i+1 < len(it.Content); i += 2 {
			k, v := it.Content[i], it.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: retype: add-field: %s: want a scalar", v.Line, k.Value)
			}
			switch k.Value {
			case "name":
				a.Name = v.Value
			case "type":
				a.Type = v.Value
			case "default":
				a.Default, a.Null = v.Value, v.Tag == "!!null"
			default:
				return nil, fmt.Errorf("line %d: retype: add-field: unknown key %q (it takes name, type, default)", k.Line, k.Value)
			}
			seen[k.Value] = true
		}
		for _, k := range []string{"name", "type", "default"} {
			if !seen[k] {
				return nil, fmt.Errorf("line %d: retype: add-field: %s is required (default: null for null)", it.Line, k)
			}
		}
		out = append(out, a)
	}
	return out, nil
}

// patchStep reads a patch step: data (a file of records), delete-where (one predicate or a list)
// and operators, as NewPatchSteps takes them.
func patchStep(sp *stepSpec) (Step, error) {
	items, ok := oneOrList(&sp.DeleteWhere, yaml.ScalarNode)
	if !ok {
		return nil, fmt.Errorf("line %d: patch: delete-where: want a predicate or a list of them", sp.DeleteWhere.Line)
	}
	var where []string
	for _, it := range items {
		if it.Kind != yaml.ScalarNode {
			return nil, fmt.Errorf("line %d: patch: delete-where: want predicates (STATE: FIELD OP LITERAL)", it.Line)
		}
		where = append(where, it.Value)
	}
	st, err := NewPatchSteps(sp.Data, where, sp.Operators)
	if err != nil {
		return nil, fmt.Errorf("patch: %w", err)
	}
	return st, nil
}

// NewPatchSteps is what `migrate patch` and a script's patch step run: the records of the data
// file (Patch), then the entries the predicates hold for deleted (DeleteWhere) from the operators
// given (selectors; default every keyed one).
func NewPatchSteps(data string, where, operators []string) (Step, error) {
	if data == "" && len(where) == 0 {
		return nil, fmt.Errorf("give data, delete-where, or both")
	}
	if len(operators) > 0 && len(where) == 0 {
		return nil, fmt.Errorf("operators select what delete-where reads; without delete-where they would change nothing")
	}
	var steps Steps
	if data != "" {
		steps = append(steps, &Patch{Data: data})
	}
	if len(where) > 0 {
		dw := &DeleteWhere{}
		for _, w := range where {
			p, err := ParsePredicate(w)
			if err != nil {
				return nil, err
			}
			dw.Where = append(dw.Where, p)
		}
		for _, o := range operators {
			sel, err := ParseSelector(o)
			if err != nil {
				return nil, err
			}
			dw.Operators = append(dw.Operators, sel)
		}
		steps = append(steps, dw)
	}
	if len(steps) == 1 {
		return steps[0], nil
	}
	return steps, nil
}

// Steps applies its steps in order as one (a script's patch step is Patch, then DeleteWhere); its
// report lists what each did, operator by operator.
type Steps []Step

// Describe says what the steps do.
func (ss Steps) Describe() string {
	var ds []string
	for _, st := range ss {
		ds = append(ds, st.Describe())
	}
	return strings.Join(ds, ", then ")
}

func (ss Steps) apply(s *session) (*StepReport, error) {
	rep := &StepReport{Step: ss.Describe()}
	for _, st := range ss {
		r, err := st.apply(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", st.Describe(), err)
		}
		rep.Operators = append(rep.Operators, r.Operators...)
	}
	return rep, nil
}

// offsetsStep reads an offsets step: each of set, shift, rename-topic and drop-topic is one
// value or a list of them, in the command line's forms; from-file names a CSV or JSON file of
// offsets to set (OffsetsFromFile), read when the step is validated, before anything is written.
func offsetsStep(op Selector, sp *stepSpec) (Step, error) {
	st := &Offsets{Operator: op}
	for _, f := range []struct {
		kind string
		n    *yaml.Node
	}{{"set", &sp.Set}, {"shift", &sp.Shift}, {"rename-topic", &sp.RenameTopic}, {"drop-topic", &sp.DropTopic}} {
		items, ok := oneOrList(f.n, yaml.ScalarNode)
		if !ok {
			return nil, fmt.Errorf("line %d: offsets: %s: want a value or a list of them", f.n.Line, f.kind)
		}
		for _, it := range items {
			if it.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: offsets: %s: want a value or a list of them", it.Line, f.kind)
			}
			c, err := sourcestate.ParseOffsetChange(f.kind, it.Value)
			if err != nil {
				return nil, fmt.Errorf("line %d: offsets: %w", it.Line, err)
			}
			st.Changes = append(st.Changes, c)
		}
	}
	st.FromFile = sp.FromFile
	at, err := NewTimeLookup(sp.ToTimestamp, sp.Bootstrap, sp.KafkaConfig)
	if err != nil {
		return nil, fmt.Errorf("offsets %s: %w", op, err)
	}
	st.AtTime = at
	if len(st.Changes) == 0 && at == nil && st.FromFile == "" {
		return nil, fmt.Errorf("offsets %s: give at least one of set, shift, rename-topic, drop-topic, from-file, to-timestamp", op)
	}
	return st, nil
}
