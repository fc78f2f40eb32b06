// Package spec reads a savepoint declaration (`savepoint create --spec SPEC.yaml`) and writes the
// empty canonical savepoint it declares: its operators with their ids, parallelism and max
// parallelism, and for each keyed operator one keyed-state file per subtask holding only the
// header (key type, states, serializer snapshots as Flink writes them) and no key group. The
// entries are loaded into it afterwards like `create --like` loads a dump (migrate.Load), so a
// declared savepoint and a copied one go through the same encoding, sorting and verification.
//
// A declaration:
//
//	operators:
//	  - uid: long-keyed            # or uidHash: 32 hex digits (an operator without a uid)
//	    parallelism: 2             # default 1
//	    maxParallelism: 128        # default: Flink's for the parallelism (at least 128)
//	    keyType: Long              # absent: the operator has no keyed state
//	    states:                    # in the order the job registers them; timers last
//	      - {name: last, kind: value, valueType: String, ttl: true}
//	      - {name: byName, kind: map, userKeyType: Long, valueType: String}
//	      - name: account
//	        kind: value
//	        valueType: {pojo: com.example.Account, fields: {owner: String, balance: Long}}
//	      - {name: window-contents, kind: aggregating, valueType: "Tuple2<Long, Long>", namespace: TimeWindow}
//	      - {name: _timer_state/event_user-timers, kind: timer}
//	    operatorStates:            # operator state, keyed operator or not
//	      - {name: buffer, mode: split, valueType: String}     # ListState
//	      - {name: offsets, mode: union, valueType: Long}      # UnionListState
//	      - {name: rules, mode: broadcast, keyType: String, valueType: Long}  # BroadcastState
//	  - plan: job.plan.json        # a SQL group aggregate: uid, key and states from the
//	    node: 3                    # compiled plan's exec node 3 (sqlplan.go)
//	    parallelism: 2
//
// Types: Integer, Long, Short, Byte, Float, Double, Boolean, Character, String, primitive arrays,
// String[], object arrays of boxed types (Integer[] ..), TupleN<..>, Row<..>, List<T>, Map<K, V>, and POJOs ({pojo: CLASS, fields: {NAME:
// TYPE}}; a POJO key's hashCode is the job's, so the data gives each entry's keyGroup);
// namespaces VoidNamespace (default), TimeWindow, GlobalWindow. Kinds: value, list (valueType is
// the element's), map, reducing, aggregating (valueType is the accumulator's), timer. Operator
// states are written header only (opstate.Write), with no element; the data's lines fill them.
package spec

import (
	"bytes"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/serializer"
	"github.com/statecraft/statecraft/statecore/uid"
)

// savepointProperties is the Java-serialized CheckpointProperties Flink 2.3.0 and 1.20.0 write at
// the end of every canonical savepoint's _metadata (taken from one; TestPropertiesAreFlinks holds
// it to every canonical fixture).
//
//go:embed savepoint-properties.ser
var savepointProperties []byte

// Spec is a parsed declaration.
type Spec struct {
	Operators []Operator `yaml:"operators"`
	file      string
}

// Operator declares one operator.
type Operator struct {
	UID            string    `yaml:"uid"`
	UIDHash        string    `yaml:"uidHash"`
	Name           string    `yaml:"name"`
	Parallelism    int32     `yaml:"parallelism"`
	MaxParallelism int32     `yaml:"maxParallelism"`
	KeyType        *Type     `yaml:"keyType"`
	States         []State   `yaml:"states"`
	OperatorStates []OpState `yaml:"operatorStates"`
	// Plan and Node declare a SQL operator: the compiled plan (relative to the declaration) and
	// the exec node whose state it holds (sqlplan.go).
	Plan string `yaml:"plan"`
	Node int    `yaml:"node"`
	line int
}

// OpState declares one operator state: a list state (mode split: ListState, or union:
// UnionListState; valueType is the element's) or a broadcast state (mode broadcast, keyType and
// valueType the map's).
type OpState struct {
	Name      string `yaml:"name"`
	Mode      string `yaml:"mode"`
	ValueType *Type  `yaml:"valueType"`
	KeyType   *Type  `yaml:"keyType"`
}

// State declares one keyed state or timer queue.
type State struct {
	Name        string `yaml:"name"`
	Kind        string `yaml:"kind"`
	ValueType   *Type  `yaml:"valueType"`
	UserKeyType *Type  `yaml:"userKeyType"`
	Namespace   *Type  `yaml:"namespace"`
	TTL         bool   `yaml:"ttl"`
	line        int
}

// Type is a type name, or a POJO with its class and fields.
type Type struct {
	snap *serializer.Snapshot
	err  error
	line int
}

// UnmarshalYAML takes a type name (a string) or {pojo: CLASS, fields: {NAME: TYPE}}.
func (t *Type) UnmarshalYAML(n *yaml.Node) error {
	t.line = n.Line
	if n.Kind == yaml.ScalarNode {
		t.snap, t.err = serializer.Declare(n.Value)
		return nil
	}
	var p struct {
		Pojo   string          `yaml:"pojo"`
		Fields map[string]Type `yaml:"fields"`
	}
	if err := n.Decode(&p); err != nil {
		return err
	}
	if p.Pojo == "" || len(p.Fields) == 0 {
		t.err = fmt.Errorf("a type is a name or {pojo: CLASS, fields: {NAME: TYPE, ...}}")
		return nil
	}
	var fs []serializer.DeclaredField
	for name, ft := range p.Fields {
		if ft.err != nil {
			t.err = fmt.Errorf("POJO %s field %s: %w", p.Pojo, name, ft.err)
			return nil
		}
		fs = append(fs, serializer.DeclaredField{Name: name, Type: ft.snap})
	}
	t.snap, t.err = serializer.DeclarePojo(p.Pojo, fs)
	return nil
}

// Read parses the declaration in file, checking every operator and type; errors name the file,
// line and field.
func Read(file string) (*Spec, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	s := &Spec{file: file}
	d := yaml.NewDecoder(bytes.NewReader(b))
	d.KnownFields(true)
	if err := d.Decode(s); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	// Lines of operators and states, for errors.
	if len(root.Content) == 1 {
		for i := 0; i+1 < len(root.Content[0].Content); i += 2 {
			if root.Content[0].Content[i].Value != "operators" {
				continue
			}
			for j, on := range root.Content[0].Content[i+1].Content {
				if j < len(s.Operators) {
					s.Operators[j].line = on.Line
					states := mapValue(on, "states")
					for k := range s.Operators[j].States {
						if states != nil && k < len(states.Content) {
							s.Operators[j].States[k].line = states.Content[k].Line
						}
					}
				}
			}
		}
	}
	if len(s.Operators) == 0 {
		return nil, fmt.Errorf("%s: no operators declared", file)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// check fills defaults and refuses what Flink could not restore.
func (s *Spec) check() error {
	ids := map[metadata.OperatorID]bool{}
	for i := range s.Operators {
		o := &s.Operators[i]
		where := fmt.Sprintf("%s:%d: operators[%d]", s.file, o.line, i)
		if o.Plan != "" {
			if err := o.fromPlan(filepath.Dir(s.file)); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		} else if o.Node != 0 {
			return fmt.Errorf("%s: node %d without a plan", where, o.Node)
		}
		id, err := o.ID()
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if ids[id] {
			return fmt.Errorf("%s: operator %s declared twice", where, id)
		}
		ids[id] = true
		if o.Parallelism == 0 {
			o.Parallelism = 1
		}
		if o.MaxParallelism == 0 {
			o.MaxParallelism = defaultMaxParallelism(o.Parallelism)
		}
		if o.Parallelism < 1 || o.MaxParallelism < 1 || o.MaxParallelism > 1<<15 || o.Parallelism > o.MaxParallelism {
			return fmt.Errorf("%s: parallelism %d, max parallelism %d: want 1 <= parallelism <= max parallelism <= 32768", where, o.Parallelism, o.MaxParallelism)
		}
		if _, err := o.operatorStates(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if o.KeyType == nil {
			if len(o.States) > 0 {
				return fmt.Errorf("%s: keyed states declared without a keyType", where)
			}
			continue
		}
		if o.KeyType.err != nil {
			return fmt.Errorf("%s:%d: keyType: %w", s.file, o.KeyType.line, o.KeyType.err)
		}
		if _, err := o.header(); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	return nil
}

// defaultMaxParallelism is Flink's KeyGroupRangeAssignment.computeDefaultMaxParallelism: 1.5 x
// the parallelism rounded up to a power of two, within [128, 32768].
func defaultMaxParallelism(p int32) int32 {
	n := int32(1)
	for n < p+p/2 {
		n <<= 1
	}
	return min(max(n, 128), 1<<15)
}

// ID is the operator's id: the hash of its uid, or its declared uid hash.
func (o *Operator) ID() (metadata.OperatorID, error) {
	switch {
	case o.UID != "" && o.UIDHash != "":
		if uid.Hash(o.UID) != strings.ToLower(o.UIDHash) {
			return metadata.OperatorID{}, fmt.Errorf("uid %q hashes to %s, not uidHash %s", o.UID, uid.Hash(o.UID), o.UIDHash)
		}
		return uid.OperatorID(o.UID), nil
	case o.UID != "":
		return uid.OperatorID(o.UID), nil
	case o.UIDHash != "":
		b, err := hex.DecodeString(o.UIDHash)
		if err != nil || len(b) != 16 {
			return metadata.OperatorID{}, fmt.Errorf("uidHash %q: want 32 hex digits", o.UIDHash)
		}
		return metadata.OperatorID(b), nil
	}
	return metadata.OperatorID{}, fmt.Errorf("an operator needs a uid or a uidHash")
}

// header builds the keyed-state header of a keyed operator.
func (o *Operator) header() (*keyed.Header, error) {
	var states []keyed.DeclaredState
	for i, st := range o.States {
		where := fmt.Sprintf("states[%d] (line %d)", i, st.line)
		ds := keyed.DeclaredState{Name: st.Name, Kind: st.Kind, TTL: st.TTL}
		for _, t := range []struct {
			name string
			t    *Type
			to   **serializer.Snapshot
		}{{"valueType", st.ValueType, &ds.Value}, {"userKeyType", st.UserKeyType, &ds.UserKey}, {"namespace", st.Namespace, &ds.Namespace}} {
			if t.t == nil {
				continue
			}
			if t.t.err != nil {
				return nil, fmt.Errorf("%s: %s (line %d): %w", where, t.name, t.t.line, t.t.err)
			}
			*t.to = t.t.snap
		}
		states = append(states, ds)
	}
	h, err := keyed.DeclareHeader(o.KeyType.snap, states)
	if err != nil {
		return nil, fmt.Errorf("keyed state: %w", err)
	}
	return h, nil
}

// modes are the distribution modes of operator state by their declared names.
var modes = map[string]byte{"split": metadata.ModeSplitDistribute, "union": metadata.ModeUnion, "broadcast": metadata.ModeBroadcast}

// operatorStates are the declared operator states, without elements.
func (o *Operator) operatorStates() ([]opstate.WriteState, error) {
	var out []opstate.WriteState
	for i, st := range o.OperatorStates {
		where := fmt.Sprintf("operatorStates[%d] %q", i, st.Name)
		mode, ok := modes[st.Mode]
		if !ok {
			return nil, fmt.Errorf("%s: mode %q, want split, union or broadcast", where, st.Mode)
		}
		ws := opstate.WriteState{Name: st.Name, Mode: mode}
		for _, t := range []struct {
			name string
			t    *Type
			to   **serializer.Snapshot
		}{{"valueType", st.ValueType, &ws.Value}, {"keyType", st.KeyType, &ws.Key}} {
			if t.t == nil {
				continue
			}
			if t.t.err != nil {
				return nil, fmt.Errorf("%s: %s (line %d): %w", where, t.name, t.t.line, t.t.err)
			}
			*t.to = t.t.snap
		}
		out = append(out, ws)
	}
	if _, _, err := opstate.Write(out); err != nil {
		return nil, err
	}
	return out, nil
}

// WriteEmpty writes the declared savepoint, without any entry, into dir (which must exist and
// be empty): one header-only keyed-state file per subtask of each keyed operator, one
// operator-state file per subtask holding the declared operator states without elements, then
// _metadata.
func (s *Spec) WriteEmpty(dir string) error {
	m := &metadata.Metadata{Version: 6, CheckpointID: 1, Tail: slices.Clone(savepointProperties)}
	for _, o := range s.Operators {
		id, _ := o.ID()
		op := &metadata.OperatorState{Name: o.Name, UID: o.UID, ID: id, Parallelism: o.Parallelism, MaxParallelism: o.MaxParallelism}
		if op.Name == "" {
			op.Name = o.UID
		}
		m.Operators = append(m.Operators, op)
		if len(o.OperatorStates) > 0 {
			states, err := o.operatorStates()
			if err != nil {
				return err
			}
			data, infos, err := opstate.Write(states)
			if err != nil {
				return err
			}
			for i := range o.Parallelism {
				name := fmt.Sprintf("declared-%s-op-%d", id, i)
				if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
					return err
				}
				op.Subtasks = append(op.Subtasks, &metadata.SubtaskState{Index: i, ManagedOperator: &metadata.OperatorStreamHandle{
					TagByte:  metadata.TagPartitionableOperatorState,
					States:   infos,
					Delegate: &metadata.RelativeFileHandle{Path: name, Size: int64(len(data))},
				}})
			}
		}
		if o.KeyType == nil {
			continue
		}
		h, err := o.header()
		if err != nil {
			return err
		}
		for i := range o.Parallelism {
			rg, err := keygroup.RangeForOperator(o.MaxParallelism, o.Parallelism, i)
			if err != nil {
				return err
			}
			name := fmt.Sprintf("declared-%s-%d", id, i)
			if err := os.WriteFile(filepath.Join(dir, name), h.Raw, 0o644); err != nil {
				return err
			}
			kh := &metadata.KeyGroupsHandle{
				TagByte:  metadata.TagSavepointKeyGroups,
				Range:    metadata.KeyGroupRange{Start: rg.Start, Num: rg.Len()},
				Offsets:  make([]int64, rg.Len()),
				Delegate: &metadata.RelativeFileHandle{Path: name, Size: int64(len(h.Raw))},
			}
			if st := op.Subtask(i); st != nil {
				st.ManagedKeyed = kh
			} else {
				op.Subtasks = append(op.Subtasks, &metadata.SubtaskState{Index: i, ManagedKeyed: kh})
			}
		}
	}
	var buf bytes.Buffer
	if err := metadata.Encode(&buf, m); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "_metadata"), buf.Bytes(), 0o644)
}
