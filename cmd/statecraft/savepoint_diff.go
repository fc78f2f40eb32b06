package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/spdiff"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "diff",
			Usage:     "compare two savepoints: per operator and state, keys only in A, only in B and changed, and metadata differences",
			ArgsUsage: "A B (savepoint directories or their _metadata files)",
			Description: "Operators are matched by operator id; one whose UID changed (and so its id) is matched by its name.\n" +
				"Entries are compared by decoded key, namespace and map key, not by key group, so a rescale\n" +
				"shows as parallelism and max parallelism changes with no state changed.\n" +
				"Exit 0 when the states and metadata are equal, 2 when they differ, 1 on errors.",
			Flags: []cli.Flag{
				pathMapFlag(),
				&cli.StringSliceFlag{Name: "state", Usage: "compare only the state with this name (repeatable)"},
				&cli.IntFlag{Name: "limit", Value: 10, Usage: "decoded entries to show per kind of difference and state"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			},
			Action: runSavepointDiff,
		}
	})
}

// diffJSON is `savepoint diff --json`.
type diffJSON struct {
	A         string         `json:"a"`
	B         string         `json:"b"`
	Equal     bool           `json:"equal"`
	Operators []diffOperator `json:"operators"`
}

// diffOperator is one operator of either side, or one matched pair.
type diffOperator struct {
	Operator string `json:"operator"` // uid:NAME or hash:HEX, of A when it is there
	// Match is "id" (same operator id), "name" (an operator whose UID changed, found by name),
	// "only in A" or "only in B".
	Match    string              `json:"match"`
	Metadata []spdiff.Change     `json:"metadata,omitempty"`
	States   []*spdiff.StateDiff `json:"states,omitempty"`
}

func (d *diffOperator) differs() bool {
	if d.Match == "only in A" || d.Match == "only in B" || len(d.Metadata) > 0 {
		return true
	}
	for _, s := range d.States {
		if s.Differs() {
			return true
		}
	}
	return false
}

func runSavepointDiff(c *cli.Context) error {
	if c.NArg() != 2 {
		return withCode(exitFailure, fmt.Errorf("savepoint diff: want two savepoints A B, got %s", english.Count(c.NArg(), "argument")))
	}
	if c.Int("limit") < 0 {
		return withCode(exitFailure, fmt.Errorf("savepoint diff: --limit %d: want 0 or more", c.Int("limit")))
	}
	var sps [2]*savepoint.Savepoint
	for i, p := range c.Args().Slice() {
		sp, err := openSavepoint(c, p)
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("savepoint diff: %s: %w", "AB"[i:i+1], err))
		}
		defer sp.Close()
		sps[i] = sp
	}
	want := map[string]bool{}
	for _, s := range c.StringSlice("state") {
		want[s] = true
	}
	defer removeSpillsOnSignal(c.App.ErrWriter)()
	out := diffJSON{A: c.Args().Get(0), B: c.Args().Get(1), Equal: true}
	for _, p := range pairOperators(sps[0].Metadata, sps[1].Metadata) {
		d, err := diffPair(sps[0], sps[1], p, want, c.Int("limit"))
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("savepoint diff: %w", err))
		}
		if d == nil {
			continue
		}
		if d.differs() {
			out.Equal = false
		}
		out.Operators = append(out.Operators, *d)
	}
	if len(want) > 0 {
		if missing := missingStates(out.Operators, want); missing != "" {
			return withCode(exitFailure, fmt.Errorf("savepoint diff: --state %s: no operator of either savepoint has it", missing))
		}
	}
	var err error
	if c.Bool("json") {
		err = encodeJSON(c.App.Writer, out)
	} else {
		printDiff(c.App.Writer, out)
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	if !out.Equal {
		return withCode(exitFindings, nil)
	}
	return nil
}

// opPair is an operator of A, of B, or of both.
type opPair struct {
	a, b  *metadata.OperatorState
	match string
}

// pairOperators matches operators by id, then pairs what is left by name when the name is
// unique on both sides (a UID change changes the id; migrate keeps the name).
func pairOperators(a, b *metadata.Metadata) []opPair {
	var out []opPair
	used := map[*metadata.OperatorState]bool{}
	for _, oa := range a.Operators {
		for _, ob := range b.Operators {
			if oa.ID == ob.ID {
				out = append(out, opPair{oa, ob, "id"})
				used[oa], used[ob] = true, true
				break
			}
		}
	}
	unique := func(ops []*metadata.OperatorState, name string) *metadata.OperatorState {
		var found *metadata.OperatorState
		for _, o := range ops {
			if !used[o] && o.Name == name {
				if found != nil {
					return nil
				}
				found = o
			}
		}
		return found
	}
	for _, oa := range a.Operators {
		if used[oa] || oa.Name == "" {
			continue
		}
		if ob := unique(b.Operators, oa.Name); ob != nil && unique(a.Operators, oa.Name) == oa {
			out = append(out, opPair{oa, ob, "name"})
			used[oa], used[ob] = true, true
		}
	}
	for _, oa := range a.Operators {
		if !used[oa] {
			out = append(out, opPair{a: oa, match: "only in A"})
		}
	}
	for _, ob := range b.Operators {
		if !used[ob] {
			out = append(out, opPair{b: ob, match: "only in B"})
		}
	}
	return out
}

// diffPair compares one pair; nil when neither side has state nor a metadata difference.
func diffPair(spA, spB *savepoint.Savepoint, p opPair, want map[string]bool, limit int) (*diffOperator, error) {
	keep := func(state string) bool { return len(want) == 0 || want[state] }
	d := &diffOperator{Match: p.match}
	if p.a != nil {
		d.Operator = opLabel(p.a)
	} else {
		d.Operator = opLabel(p.b)
	}
	var metas [2]*spdiff.Operator
	for i, side := range []struct {
		sp *savepoint.Savepoint
		op *metadata.OperatorState
	}{{spA, p.a}, {spB, p.b}} {
		if side.op == nil {
			continue
		}
		m, err := diffMeta(side.sp, side.op, keep)
		if err != nil {
			return nil, fmt.Errorf("%s: operator %s: %w", "AB"[i:i+1], opLabel(side.op), err)
		}
		metas[i] = m
	}
	if p.a == nil || p.b == nil {
		m := metas[0]
		if m == nil {
			m = metas[1]
		}
		if len(m.States) == 0 {
			return nil, nil // a stateless operator added or removed changes no state
		}
		for _, s := range m.States {
			d.States = append(d.States, &spdiff.StateDiff{Name: s.Name, Kind: s.Kind})
		}
		return d, nil
	}
	d.Metadata = spdiff.CompareMeta(metas[0], metas[1])
	cmp := spdiff.NewComparison(limit)
	if p.a.MaxParallelism == p.b.MaxParallelism {
		err := compareByKeyGroup(spA, spB, p, keep, cmp)
		if errors.Is(err, errNotAscending) {
			cmp = spdiff.NewComparison(limit)
			err = compareSorted(spA, spB, p, keep, cmp)
		}
		if err != nil {
			return nil, err
		}
	} else if err := compareSorted(spA, spB, p, keep, cmp); err != nil {
		return nil, err
	}
	d.States = cmp.Finish()
	if len(d.States) == 0 && len(d.Metadata) == 0 && len(metas[0].States) == 0 && len(metas[1].States) == 0 {
		return nil, nil
	}
	return d, nil
}

func diffRecord(r dumpRecord) (spdiff.Record, bool) {
	if k := r.Keyed; k != nil {
		return spdiff.Record{State: k.State, Kind: k.Kind, Key: k.Key, Namespace: k.Namespace, UserKey: k.UserKey,
			Timestamp: k.Timestamp, Value: k.Value, TTL: k.TTL}, true
	}
	if o := r.Operator; o != nil {
		return spdiff.Record{State: o.State, Kind: o.Mode, Key: o.Key, Value: o.Value}, true
	}
	return spdiff.Record{}, false
}

// diffMeta gathers what the metadata and the keyed state headers say about op's states.
func diffMeta(sp *savepoint.Savepoint, op *metadata.OperatorState, keep func(string) bool) (*spdiff.Operator, error) {
	m := &spdiff.Operator{ID: op.ID.String(), UID: op.UID, Name: op.Name, Parallelism: op.Parallelism, MaxParallelism: op.MaxParallelism}
	subs, closeAll, err := keyed.OpenSubtasks(sp, op)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	seen := map[string]bool{}
	for _, s := range subs {
		if m.KeySerializer == nil {
			m.KeySerializer = s.Header.KeySerializer
		}
		for _, sm := range s.Header.States {
			if seen[sm.Name] || !keep(sm.Name) {
				continue
			}
			seen[sm.Name] = true
			st := spdiff.StateMeta{Name: sm.Name, Kind: sm.StateKind(), Serializers: map[string]*serializer.Snapshot{}}
			for _, ns := range sm.Serializers {
				st.Serializers[ns.Key] = ns.Snapshot
			}
			m.States = append(m.States, st)
		}
	}
	for _, st := range op.Subtasks {
		if st == nil {
			continue
		}
		if oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle); ok {
			for _, s := range oh.States {
				if !seen[s.Name] && keep(s.Name) {
					seen[s.Name] = true
					m.States = append(m.States, spdiff.StateMeta{Name: s.Name, Kind: metadata.ModeName(s.Mode)})
				}
			}
		}
	}
	return m, nil
}

func missingStates(ops []diffOperator, want map[string]bool) string {
	found := map[string]bool{}
	for _, d := range ops {
		for _, s := range d.States {
			found[s.Name] = true
		}
		for _, c := range d.Metadata {
			for name := range want {
				if strings.HasPrefix(c.Field, "state "+name) {
					found[name] = true
				}
			}
		}
	}
	var missing []string
	for name := range want {
		if !found[name] {
			missing = append(missing, fmt.Sprintf("%q", name))
		}
	}
	return strings.Join(missing, ", ")
}

func printDiff(w io.Writer, d diffJSON) {
	stateChanged, metaChanged := 0, 0
	var fields []string // distinct metadata changes, for the summary
	for _, o := range d.Operators {
		if !o.differs() {
			continue
		}
		fmt.Fprintf(w, "operator %s", o.Operator)
		switch o.Match {
		case "only in A", "only in B":
			var names []string
			for _, s := range o.States {
				names = append(names, s.Name)
			}
			fmt.Fprintf(w, ": %s (states %s)\n", o.Match, strings.Join(names, ", "))
			stateChanged++
			continue
		case "name":
			fmt.Fprint(w, " (matched by name: its UID and so its id changed)")
		}
		fmt.Fprintln(w)
		if len(o.Metadata) > 0 {
			metaChanged++
		}
		for _, c := range o.Metadata {
			fmt.Fprintf(w, "  %s: %s -> %s\n", c.Field, c.A, c.B)
			if f := fmt.Sprintf("%s %s -> %s", c.Field, c.A, c.B); !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
		changed := false
		for _, s := range o.States {
			if !s.Differs() {
				continue
			}
			changed = true
			fmt.Fprintf(w, "  state %s (%s): %d entries in A, %d in B: %d only in A, %d only in B, %d changed\n",
				s.Name, s.Kind, s.EntriesA, s.EntriesB, s.OnlyA, s.OnlyB, s.Changed)
			for _, e := range s.OnlyASam {
				fmt.Fprintf(w, "    - %s\n", e.Spell())
			}
			for _, e := range s.OnlyBSam {
				fmt.Fprintf(w, "    + %s\n", e.Spell())
			}
			for _, e := range s.ChgSam {
				fmt.Fprintf(w, "    ~ %s\n", e.Spell())
			}
		}
		if changed {
			stateChanged++
		}
	}
	switch {
	case d.Equal:
		fmt.Fprintln(w, "equal: no state and no metadata changed")
	case stateChanged == 0 && len(fields) <= 2:
		// The common case of a migration check: "no state changed, max parallelism 128 -> 256".
		fmt.Fprintf(w, "no state changed, %s (%s)\n", strings.Join(fields, ", "), english.Count(metaChanged, "operator"))
	case stateChanged == 0:
		fmt.Fprintf(w, "no state changed; metadata of %s changed\n", english.Count(metaChanged, "operator"))
	default:
		fmt.Fprintf(w, "state of %s changed\n", english.Count(stateChanged, "operator"))
	}
}
