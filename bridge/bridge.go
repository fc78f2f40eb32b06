// Package bridge connects the exec nodes of a compiled plan with the operators of a savepoint.
//
// Flink restores a job's state by OperatorID: each operator of the new job takes the savepoint
// state stored under its own OperatorID, which for a job executed from a compiled plan is the
// murmur3_128 hash of the UID the plan gives the operator's transformation (plan.UIDs). So the
// bridge is a hash join:
//
//	plan node --plan.UIDs--> transformation UIDs --uid.Hash--> OperatorIDs
//	                                                               ||
//	savepoint _metadata -----------------------------------> operator IDs (+ UID when V5+)
//
// Check then answers "would this savepoint restore under this plan?" the way Flink 2.3.0's
// Checkpoints.loadAndValidateCheckpoint decides it:
//   - a savepoint operator whose ID no operator of the new job has: if it holds any state
//     (coordinator state or a subtask with a state handle), the restore fails unless
//     non-restored state is allowed ("Cannot map checkpoint/savepoint state for operator ... to
//     the new program"); if it holds nothing, Flink skips it;
//   - a matched operator whose max parallelism differs from the new job's: the restore fails
//     when the new job's max parallelism is set explicitly (an unset one adopts the savepoint's);
//   - a stateful operator of the new job that finds nothing starts with empty state.
package bridge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// Operator summarises one savepoint operator.
type Operator struct {
	Name           string   `json:"name,omitempty"` // operator name, V5+ ("" when absent)
	UID            string   `json:"uid,omitempty"`  // V5+ ("" when the operator had no UID)
	Hash           string   `json:"uidHash"`
	Parallelism    int32    `json:"parallelism"`
	MaxParallelism int32    `json:"maxParallelism"`
	Size           int64    `json:"sizeBytes"` // savepoint_metadata's operator-total-size-in-bytes
	HasState       bool     `json:"hasState"`  // what Flink's restore check looks at
	KeyedStates    []string `json:"keyedStates,omitempty"`
	Timers         []string `json:"timers,omitempty"`
	OperatorStates []string `json:"operatorStates,omitempty"`
	StateError     string   `json:"stateError,omitempty"` // why keyed state names could not be read

	op *metadata.OperatorState
	// keySerializer and metas are the first readable keyed-state header's key serializer and
	// state meta infos by name: what Flink compares the new job's serializers with on restore.
	keySerializer *serializer.Snapshot
	metas         map[string]*keyed.StateMeta
}

// Operators summarises every operator of the savepoint in file order. Keyed state names come
// from the keyed-state headers (canonical and native RocksDB savepoints; otherwise StateError says why not).
func Operators(sp *savepoint.Savepoint) []*Operator {
	var out []*Operator
	readable := sp.CheckReadable()
	for _, op := range sp.Metadata.Operators {
		o := &Operator{Name: op.Name, UID: op.UID, Hash: op.ID.String(), Parallelism: op.Parallelism,
			MaxParallelism: op.MaxParallelism, Size: op.CheckpointedSize(), HasState: HasState(op), op: op}
		o.OperatorStates = operatorStateNames(op)
		if hasKeyed(op) {
			if readable != nil {
				o.StateError = readable.Error()
			} else {
				o.KeyedStates, o.Timers, o.StateError = keyedStateNames(sp, op, o)
			}
		}
		out = append(out, o)
	}
	return out
}

// HasState is what Flink's restore check asks of a savepoint operator it cannot map: coordinator
// state, or any subtask with an operator, keyed or channel state handle
// (OperatorSubtaskState.hasState; a finished subtask has none).
func HasState(op *metadata.OperatorState) bool {
	if op.Coordinator != nil {
		return true
	}
	for _, s := range op.Subtasks {
		if s == nil || s.Finished {
			continue
		}
		if s.ManagedOperator != nil || s.RawOperator != nil || s.ManagedKeyed != nil || s.RawKeyed != nil ||
			len(s.InputChannels) > 0 || len(s.OutputChannels) > 0 {
			return true
		}
	}
	return false
}

func hasKeyed(op *metadata.OperatorState) bool {
	for _, s := range op.Subtasks {
		if s != nil && !s.Finished && s.ManagedKeyed != nil {
			return true
		}
	}
	return false
}

// keyedStateNames is the union of the state names in every subtask's keyed-state header, timers
// ("_timer_state/...") apart.
func keyedStateNames(sp *savepoint.Savepoint, op *metadata.OperatorState, o *Operator) (states, timers []string, errText string) {
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		return nil, nil, err.Error()
	}
	defer closeAll()
	seen := map[string]bool{}
	o.metas = map[string]*keyed.StateMeta{}
	for _, s := range subs {
		if o.keySerializer == nil {
			o.keySerializer = s.Header.KeySerializer
		}
		for _, m := range s.Header.States {
			if m == nil || seen[m.Name] {
				continue
			}
			seen[m.Name] = true
			o.metas[m.Name] = m
			if strings.HasPrefix(m.Name, "_timer_state/") {
				timers = append(timers, m.Name)
			} else {
				states = append(states, m.Name)
			}
		}
	}
	sort.Strings(states)
	sort.Strings(timers)
	return states, timers, ""
}

// operatorStateNames lists the operator (non-keyed) state names of every subtask's handles.
func operatorStateNames(op *metadata.OperatorState) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range op.Subtasks {
		if s == nil {
			continue
		}
		for _, h := range []metadata.OperatorHandle{s.ManagedOperator, s.RawOperator} {
			oh, ok := h.(*metadata.OperatorStreamHandle)
			if !ok {
				continue
			}
			for _, st := range oh.States {
				if !seen[st.Name] {
					seen[st.Name] = true
					out = append(out, st.Name)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// Match is a savepoint operator and the plan transformation whose UID hashes to its ID.
type Match struct {
	Node           *plan.NodeUIDs
	Transformation *plan.TransformationUID
	Operator       *Operator
}

// Bridge is the join of a plan's transformations and a savepoint's operators.
type Bridge struct {
	Nodes     []plan.NodeUIDs
	Operators []*Operator
	Matches   []Match     // in savepoint file order
	Unclaimed []*Operator // savepoint operators no plan transformation produces, file order
	byHash    map[string]*Match
}

// Join matches every savepoint operator to the plan transformation with the same OperatorID.
func Join(nodes []plan.NodeUIDs, ops []*Operator) *Bridge {
	b := &Bridge{Nodes: nodes, Operators: ops, byHash: map[string]*Match{}}
	idx := plan.Index(nodes)
	for _, o := range ops {
		refs := idx[o.Hash]
		if len(refs) == 0 {
			b.Unclaimed = append(b.Unclaimed, o)
			continue
		}
		// With a collision Flink refuses the job anyway; the first node is named.
		b.Matches = append(b.Matches, Match{Node: refs[0].Node, Transformation: refs[0].T, Operator: o})
	}
	for i := range b.Matches {
		b.byHash[b.Matches[i].Operator.Hash] = &b.Matches[i]
	}
	return b
}

// Operator returns the savepoint operator that restores into transformation t, or nil.
func (b *Bridge) Operator(t *plan.TransformationUID) *Operator {
	if t == nil || t.Hash == "" {
		return nil
	}
	if m := b.byHash[t.Hash]; m != nil {
		return m.Operator
	}
	return nil
}

// Open reads the plan's UIDs under opts and joins them with the savepoint's operators.
func Open(p *plan.Plan, opts plan.UIDOptions, sp *savepoint.Savepoint) (*Bridge, error) {
	nodes, err := p.UIDs(opts)
	if err != nil {
		return nil, fmt.Errorf("plan UIDs: %w", err)
	}
	return Join(nodes, Operators(sp)), nil
}
