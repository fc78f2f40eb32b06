package migrate

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseScript reads a migration script: a YAML document with a list of steps, applied in order.
// Each step is a mapping with exactly one key, the step's kind, whose value holds its fields.
// Operators are selected as uid:NAME or hash:HEX everywhere.
//
//	# statecraft migration script
//	steps:
//	  - rename-uid:                # one or more renames, applied together (swaps allowed)
//	      renames:
//	        - {from: "hash:5534c038c66cc9b701311c8cdd8de69b", to: counter}
//	        - {from: "uid:old-name", to: new-name}
//	  - rename-uid: {from: "uid:a", to: b}      # short form for one rename
//	  - rescale:
//	      max-parallelism: 256
//	      parallelism: 4           # optional: default the old one, capped at the new max
//	      operators: ["uid:counter"] # optional: default every keyed operator
//	  - retype: {operator: "uid:counter", state: count, to: Long}
//	  - retype: {operator: "uid:counter", state: byId, key-to: Long}  # a map's key type
//	  - retype: {operator: "uid:counter", state: pair, field: f0, to: Long}  # a tuple field
//	  - rename-state: {operator: "uid:counter", from: seen, to: seen-v2}
//	  - drop-state: {operator: "uid:counter", state: names}
//	  - drop-operator: {operator: "uid:legacy"}
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
	"retype":        {"*operator", "*state", "to", "key-to", "field"},
	"rename-state":  {"*operator", "*from", "*to"},
	"drop-state":    {"*operator", "*state"},
	"drop-operator": {"*operator"},
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
	}
	op, err := sel(sp.Operator)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	switch kind {
	case "retype":
		return &Retype{Operator: op, State: sp.State, To: sp.To, KeyTo: sp.KeyTo, Field: sp.Field}, nil
	case "rename-state":
		return &RenameState{Operator: op, From: sp.From, To: sp.To}, nil
	case "drop-state":
		return &DropState{Operator: op, State: sp.State}, nil
	default:
		return &DropOperator{Operator: op}, nil
	}
}

func kinds() string {
	var k []string
	for n := range stepFields {
		k = append(k, n)
	}
	sort.Strings(k)
	return strings.Join(k, ", ")
}
