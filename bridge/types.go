package bridge

import (
	"fmt"
	"sort"
	"strings"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// Type verdicts: what Flink does when the new job's operator declares its state with the types
// the plan implies and the savepoint holds serializer snapshots of other (or the same) types.
//
//	savepoint keyed-state header                    plan node (plan.Node.StateTypes)
//	  key serializer  RowData[BIGINT]   <--equal?-->  key   [BIGINT]          (grouping, join keys, ...)
//	  accState value  (TTL)RowData[...] <--equal?-->  accState [BIGINT, BIGINT] (accumulators)
//
// Flink 2.3.0 resolves a RowDataSerializer against the restored one by comparing the field
// LogicalTypes with equals (RowDataSerializerSnapshot.resolveSchemaCompatibility): any
// difference in arity, type, length, precision or nullability is "incompatible", which fails the
// restore with a StateMigrationException ("The new key serializer (RowDataSerializer) must be
// compatible with the previous key serializer", or "... must not be incompatible with the old
// state serializer" for values). There is no migration between different row types, so the
// verdict is either compatible or incompatible; a field statecraft cannot render, or a state
// whose declared type it does not derive, is "not-checked", never counted as compatible.
const (
	TypesCompatible   = "compatible"
	TypesIncompatible = "incompatible"
	TypesNotChecked   = "not-checked"
	// TypesMigrates: equal types, but TTL switched on or off between the savepoint and the
	// plan. Flink 2.2+ migrates such state on restore (TtlAwareSerializer, FLINK-37295); older
	// versions refuse it, so for a plan of Flink < 2.2 the verdict is incompatible instead.
	TypesMigrates = "compatible-after-migration"
	// TypesNotRead: a state of the savepoint that the plan's operator does not register (its
	// states are all known, plan.StateTypes.Complete): Flink restores it and never reads it, so
	// the node goes on without it.
	TypesNotRead = "not-read"
)

// TypeVerdict is the prediction for one state of a restored node ("(key)" for its key).
type TypeVerdict struct {
	State     string   `json:"state"`
	Verdict   string   `json:"verdict"`
	Savepoint []string `json:"savepointTypes,omitempty"`
	Plan      []string `json:"planTypes,omitempty"`
	Detail    string   `json:"detail,omitempty"`
	// Finding is the finding code of an incompatible verdict that is not a serializer
	// mismatch ("state-missing"), "" for "type-incompatible".
	Finding string `json:"finding,omitempty"`
}

// KeyState names the key serializer among a node's type verdicts.
const KeyState = "(key)"

// checkTypes compares the state types node n of the plan declares with the serializer snapshots
// the savepoint stores for operator o.
func checkTypes(n *plan.Node, o *Operator) []TypeVerdict {
	if o.StateError != "" || o.metas == nil {
		return []TypeVerdict{{State: KeyState, Verdict: TypesNotChecked, Detail: "the savepoint's keyed-state headers were not read" + errSuffix(o.StateError)}}
	}
	st := n.StateTypes()
	out := []TypeVerdict{compareRow(KeyState, o.keySerializer, st.Key, st.KeyWhy)}
	for _, name := range o.KeyedStates {
		want, ok := st.Values[name]
		if !ok && st.Complete {
			out = append(out, TypeVerdict{State: name, Verdict: TypesNotRead, Savepoint: []string{snapshotShape(valueSnapshot(o.metas[name]))},
				Detail: fmt.Sprintf("%s's operator registers %s, not %s", n.Name, strings.Join(sortedNames(st.Values), ", "), name)})
			continue
		}
		if !ok {
			why := st.ValueWhy
			if why == "" {
				why = fmt.Sprintf("statecraft does not derive the value type of %s's state %s", n.Name, name)
			}
			out = append(out, TypeVerdict{State: name, Verdict: TypesNotChecked, Detail: why, Savepoint: []string{snapshotShape(valueSnapshot(o.metas[name]))}})
			continue
		}
		v := compareValue(name, valueSnapshot(o.metas[name]), want)
		if v.Verdict == TypesCompatible {
			ttlMigration(&v, n, name, o.metas[name])
		}
		if v.Verdict != TypesIncompatible {
			compareNamespace(&v, o.metas[name].Serializer(keyed.SerNamespace), st.NamespaceOf(name))
		}
		out = append(out, v)
	}
	// A state the plan's node cannot do without, beside one the savepoint holds.
	for _, name := range sortedNames(st.Requires) {
		req := st.Requires[name]
		if o.metas[req.With] != nil && o.metas[name] == nil {
			out = append(out, TypeVerdict{State: name, Verdict: TypesIncompatible, Finding: "state-missing",
				Detail: fmt.Sprintf("the savepoint has %s but no %s: %s", req.With, name, req.Why)})
		}
	}
	// Timers: a TimerSerializer of the key and the namespace; the key is checked above.
	for _, name := range o.Timers {
		ts := o.metas[name].Serializer(keyed.SerValue)
		v := TypeVerdict{State: name, Verdict: TypesCompatible}
		if ts == nil || len(ts.Nested) != 2 {
			v.Verdict, v.Detail = TypesNotChecked, "the savepoint's timer serializer has no key and namespace serializers"
		} else {
			compareNamespace(&v, ts.Nested[1], st.Namespace)
		}
		if v.Verdict != TypesCompatible {
			out = append(out, v)
		}
	}
	return out
}

// compareNamespace turns v incompatible when the savepoint's namespace serializer s is not the
// one the plan's node declares (Flink: "the new namespace serializer must be compatible"), or
// not checked when the plan's is not derived.
func compareNamespace(v *TypeVerdict, s *serializer.Snapshot, want string) {
	got := serializer.JavaType(s)
	switch {
	case s == nil:
		return
	case want == "":
		v.Verdict, v.Detail = TypesNotChecked, "statecraft does not derive the namespace of this node's states (the savepoint's: "+got+")"
	case got != want:
		v.Verdict, v.Detail = TypesIncompatible, fmt.Sprintf("its namespace is %s in the savepoint, %s in the plan", got, want)
	}
}

// ttlMigration turns a compatible verdict into "after migration" (or incompatible before Flink
// 2.2) when the savepoint's values carry TTL timestamps and the plan's state has none, or the
// other way round. The plan's TTL of a state: the join's sides are its "state" entries 0 and 1,
// every other node's keyed states share its entries' TTL.
func ttlMigration(v *TypeVerdict, n *plan.Node, name string, m *keyed.StateMeta) {
	if m == nil || len(n.State) == 0 {
		return
	}
	planTTL := false
	for _, e := range n.State {
		side := map[string]int{"left-records": 0, "right-records": 1}
		if i, ok := side[name]; ok && e.Index != i {
			continue
		}
		planTTL = planTTL || (e.TTLErr == nil && !e.TTL.IsNever())
	}
	spTTL := hasTTL(m.Serializer(keyed.SerValue))
	if spTTL == planTTL {
		return
	}
	what := "TTL switched on (the savepoint's values carry no TTL timestamp)"
	if spTTL {
		what = "TTL switched off (the savepoint's values carry TTL timestamps)"
	}
	if before, known := plan.VersionBefore(n.Owner().FlinkVersion, 2, 2); known && before {
		v.Verdict, v.Detail = TypesIncompatible, what+fmt.Sprintf(": Flink %s cannot migrate it (TTL state migration needs Flink 2.2+)", n.Owner().FlinkVersion)
		return
	}
	v.Verdict, v.Detail = TypesMigrates, what+": Flink 2.2+ migrates the values on restore"
}

// hasTTL: a TTL serializer anywhere in the tree (the join wraps its map values, not the map).
func hasTTL(s *serializer.Snapshot) bool {
	if s == nil {
		return false
	}
	if serializer.UnwrapTTL(s) != s {
		return true
	}
	for _, c := range s.Nested {
		if hasTTL(c) {
			return true
		}
	}
	return false
}

// sortedNames are m's keys in order.
func sortedNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

// valueSnapshot is a state's value serializer without its TTL wrapper, or nil.
func valueSnapshot(m *keyed.StateMeta) *serializer.Snapshot {
	if m == nil {
		return nil
	}
	return serializer.UnwrapTTL(m.Serializer(keyed.SerValue))
}

// compareRow predicts Flink's resolution of a RowData serializer of types want against the
// savepoint's snapshot s.
func compareRow(state string, s *serializer.Snapshot, want []string, why string) TypeVerdict {
	v := TypeVerdict{State: state, Plan: want}
	if s == nil || s.Kind != serializer.KindRowData {
		v.Verdict, v.Detail = TypesNotChecked, "the savepoint's serializer is not a RowDataSerializer"
		if s != nil {
			v.Detail += " (" + s.Short() + ")"
		}
		return v
	}
	got, known := s.RowFieldTypes()
	v.Savepoint = got
	if want == nil {
		v.Verdict, v.Detail = TypesNotChecked, why
		return v
	}
	if len(got) != len(want) {
		v.Verdict = TypesIncompatible
		v.Detail = fmt.Sprintf("the savepoint's row has %d fields (%s), the plan's %d (%s)", len(got), strings.Join(shown(got, known), ", "), len(want), strings.Join(want, ", "))
		return v
	}
	var unknown []string
	for i := range got {
		if !known[i] || want[i] == "" {
			unknown = append(unknown, fmt.Sprintf("field %d", i))
			continue
		}
		if got[i] != want[i] {
			v.Verdict = TypesIncompatible
			v.Detail = fmt.Sprintf("field %d is %s in the savepoint, %s in the plan", i, got[i], want[i])
			return v
		}
	}
	if len(unknown) > 0 {
		v.Verdict, v.Detail = TypesNotChecked, "statecraft does not compare the time attribute or unrendered type of "+strings.Join(unknown, ", ")
		return v
	}
	v.Verdict = TypesCompatible
	return v
}

func shown(types []string, known []bool) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = t
		if !known[i] {
			out[i] = "?"
		}
	}
	return out
}

// typeFindings turns a node's verdicts into findings: an incompatible type fails the restore,
// an unchecked one is said as such.
func typeFindings(r *Report, n *plan.NodeUIDs, o *Operator, vs []TypeVerdict) {
	var unchecked []string
	for _, v := range vs {
		switch v.Verdict {
		case TypesIncompatible:
			if v.Finding != "" {
				r.add(SevError, v.Finding, n.ID, o.UID, o.Hash, fmt.Sprintf("node %d (%s): state %s: %s", n.ID, n.Type, v.State, v.Detail))
				continue
			}
			what := "state " + v.State + "'s value serializer"
			flinkSays := "the new state serializer must not be incompatible with the old state serializer"
			if v.State == KeyState {
				what, flinkSays = "key serializer", "The new key serializer (RowDataSerializer) must be compatible with the previous key serializer"
			}
			r.add(SevError, "type-incompatible", n.ID, o.UID, o.Hash, fmt.Sprintf("node %d (%s): %s: %s: Flink refuses the restore (StateMigrationException: %s)",
				n.ID, n.Type, what, v.Detail, flinkSays))
		case TypesNotChecked:
			unchecked = append(unchecked, fmt.Sprintf("%s (%s)", v.State, v.Detail))
		case TypesNotRead:
			r.add(SevWarning, "state-unread", n.ID, o.UID, o.Hash, fmt.Sprintf("node %d (%s): the savepoint's state %s is not one the plan's operator reads (%s): Flink restores it unread, so the node goes on without it",
				n.ID, n.Type, v.State, v.Detail))
		case TypesMigrates:
			r.add(SevInfo, "type-migrates", n.ID, o.UID, o.Hash, fmt.Sprintf("node %d (%s): state %s restores after migration: %s", n.ID, n.Type, v.State, v.Detail))
		}
	}
	if len(unchecked) > 0 {
		r.TypesNotChecked++
		r.add(SevInfo, "types-not-checked", n.ID, o.UID, o.Hash, fmt.Sprintf("node %d (%s): types not checked: %s", n.ID, n.Type, strings.Join(unchecked, "; ")))
	}
}

// CheckMeaning adds what the serializers cannot show: a restored node whose state NEW would
// read with another meaning than OLD wrote it (plan.Diff calls the pair incompatible, for
// example SUM turned into MAX, or another key column of the same type). Flink restores such
// state without a word and the results are wrong (testdata/upgrades/types: sum-to-max), so it
// is an error. d is plan.Diff(OLD, NEW) of the plan the savepoint was taken under and r's plan.
func CheckMeaning(r *Report, d *plan.DiffReport) {
	restored := map[int]*NodeState{}
	for i := range r.Nodes {
		if r.Nodes[i].Status == "restored" {
			restored[r.Nodes[i].ID] = &r.Nodes[i]
		}
	}
	for _, nd := range d.Nodes {
		if nd.New == nil || nd.Old == nil || nd.Verdict != plan.Incompatible {
			continue
		}
		ns := restored[nd.New.ID]
		if ns == nil || hasFinding(r, ns.ID, "type-incompatible") {
			continue
		}
		r.add(SevError, "state-meaning", ns.ID, ns.UID, ns.UIDHash, fmt.Sprintf("node %d (%s) restores OLD node %d's state, but %s: Flink would restore it without an error and compute wrong results",
			ns.ID, ns.Type, nd.Old.ID, nd.Reason))
	}
	r.Restores = r.Count(SevError) == 0
}

func hasFinding(r *Report, node int, code string) bool {
	for _, f := range r.Findings {
		if f.Node == node && f.Code == code {
			return true
		}
	}
	return false
}
