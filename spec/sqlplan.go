package spec

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// A SQL operator is declared by the compiled plan and the exec node whose state it holds; its
// uid, key type and states come from the plan (the same derivations `plan` and `savepoint
// check` use, plan/statetypes.go and plan/accumulators.go):
//
//	operators:
//	  - plan: job.plan.json        # COMPILE PLAN's output, relative to the declaration
//	    node: 3                    # the exec node's id: a group aggregate
//	    parallelism: 2
//
// declares the operator <id>_group-aggregate (the plan's uid format) keyed by a RowData of the
// node's grouping columns, with accState (a RowData of the accumulators; TTL when the plan's
// state TTL is set) and the user timer queues GroupAggFunction's operator registers. Its data
// lines give keys and accumulators as `dump` prints RowData: `"key":[1]`, `"value":[3,60]`.
// Only group aggregates (stream-exec-group-aggregate, not in mini-batch mode; a two-phase
// aggregate's global half runs in a mini-batch operator) without data views in states of their own (DISTINCT, MIN/MAX over
// retractions) and whose every field type statecraft writes (serializer.DeclareRowData) are
// declared; any other node is refused with the reason, never guessed.

// sqlNodes are the exec nodes a declaration may name: their only keyed state is accState.
var sqlNodes = map[string]bool{"stream-exec-group-aggregate": true}

// fromPlan fills a plan-declared operator's uid, key type and states from its plan; dir is the
// declaration's directory.
func (o *Operator) fromPlan(dir string) error {
	if o.UID != "" || o.UIDHash != "" || o.KeyType != nil || len(o.States) > 0 {
		return fmt.Errorf("plan %s: a plan's operator takes its uid, key type and states from the plan; declare none of them", o.Plan)
	}
	if o.Node == 0 {
		return fmt.Errorf("plan %s: node: want the id of the exec node whose state the operator holds", o.Plan)
	}
	file := o.Plan
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	p, err := plan.Parse(file, b)
	if err != nil {
		return err
	}
	n := p.Node(o.Node)
	if n == nil {
		return fmt.Errorf("plan %s: no exec node with id %d", o.Plan, o.Node)
	}
	if !sqlNodes[n.Name] {
		return fmt.Errorf("plan %s: node %d is %s; statecraft declares the state of group aggregates (stream-exec-group-aggregate) only", o.Plan, o.Node, n.Name)
	}
	if n.Configuration()["table.exec.mini-batch.enabled"] == "true" {
		return fmt.Errorf("plan %s: node %d runs in a mini-batch operator (table.exec.mini-batch.enabled), whose states statecraft does not declare", o.Plan, o.Node)
	}
	uids, err := p.UIDs(plan.UIDOptions{})
	if err != nil {
		return err
	}
	for _, nu := range uids {
		if nu.ID != n.ID {
			continue
		}
		for _, t := range nu.Transformations {
			if t.State {
				o.UID = t.UID
			}
		}
		if o.UID == "" {
			return fmt.Errorf("plan %s: node %d's stateful operator has no uid (%s)", o.Plan, o.Node, nu.NoUID)
		}
	}
	st := n.StateTypes()
	if st.Key == nil {
		return fmt.Errorf("plan %s: node %d: key type not derived: %s", o.Plan, o.Node, st.KeyWhy)
	}
	acc, ok := st.Values["accState"]
	if !ok || acc.Kind != "Row" {
		return fmt.Errorf("plan %s: node %d: the accumulator row is not derived: %s", o.Plan, o.Node, st.ValueWhy)
	}
	if len(st.Values) != 1 {
		return fmt.Errorf("plan %s: node %d: the aggregate keeps states besides accState (%s: data views of DISTINCT or MIN/MAX over retractions); statecraft declares accState only", o.Plan, o.Node, strings.Join(slices.Sorted(maps.Keys(st.Values)), ", "))
	}
	key, err := serializer.DeclareRowData(st.Key)
	if err != nil {
		return fmt.Errorf("plan %s: node %d: key row %v: %w", o.Plan, o.Node, st.Key, err)
	}
	value, err := serializer.DeclareRowData(acc.Row)
	if err != nil {
		return fmt.Errorf("plan %s: node %d: accumulator row %s: %w", o.Plan, o.Node, acc, err)
	}
	ttl := false
	for _, e := range n.State {
		if e.TTLErr != nil {
			return fmt.Errorf("plan %s: node %d: %s: %w", o.Plan, o.Node, e.Path(), e.TTLErr)
		}
		ttl = ttl || !e.TTL.IsNever()
	}
	if o.Name == "" {
		o.Name = o.UID
	}
	o.KeyType = &Type{snap: key}
	o.States = []State{
		{Name: "accState", Kind: "value", ValueType: &Type{snap: value}, TTL: ttl, line: o.line},
		{Name: "_timer_state/processing_user-timers", Kind: "timer", line: o.line},
		{Name: "_timer_state/event_user-timers", Kind: "timer", line: o.line},
	}
	return nil
}
