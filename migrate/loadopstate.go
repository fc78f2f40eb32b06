package migrate

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/opstate"
	"github.com/statecraft/statecraft/statecore/serializer"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

// opRecord is one operator-state line of a load's data, kept until every line is read
// (operator state is small: it lives in every subtask's memory).
type opRecord struct {
	rec   map[string]any
	where string
}

// sourceOpState is one subtask's operator-state stream in the source: its header and the
// encoded elements of each state.
type sourceOpState struct {
	header *opstate.Header
	modes  map[string]byte
	elems  map[string][][]byte
}

// writeOperatorState replaces the operator states the data names, in every subtask of lo.op;
// states it does not name keep the source's elements, and an operator the data does not name
// keeps its files. A record goes to its "subtask" when it gives one; otherwise a split list's
// elements are dealt round-robin over the subtasks, and union and broadcast state (which
// Flink restores whole into every subtask) goes to every subtask. Types are the source's
// (a declared savepoint's are the declaration's): each value, and a broadcast entry's key, is
// checked and encoded with them before anything is written. With dry, nothing is written.
func (s *session) writeOperatorState(lo *loadOp, dry bool) error {
	if len(lo.opRecs) == 0 {
		return nil
	}
	op := lo.op
	src := make([]*sourceOpState, op.Parallelism)
	var first *sourceOpState
	for _, st := range op.Subtasks {
		oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
		if !ok || oh.Delegate == nil || st.Index < 0 || st.Index >= op.Parallelism {
			continue
		}
		so, err := readSourceOpState(s, oh)
		if err != nil {
			return err
		}
		src[st.Index] = so
		if first == nil {
			first = so
		}
	}
	if first == nil {
		return fmt.Errorf("%s: the source has no operator state for this operator (declare its operator states in the spec: operatorStates)", lo.opRecs[0].where)
	}
	metas := append(slices.Clone(first.header.States), first.header.Broadcast...)
	var names []string
	for _, m := range metas {
		names = append(names, m.Name)
	}
	type enc struct {
		value, key serializer.Encoder
		mode       byte
	}
	encs := map[string]*enc{}
	for _, m := range metas {
		e := &enc{mode: first.modes[m.Name]}
		var err error
		if e.value, err = serializer.NewEncoder(m.Serializer(keyed.SerValue)); err != nil {
			return fmt.Errorf("operator state %q: %w", m.Name, err)
		}
		if e.mode == metadata.ModeBroadcast {
			if e.key, err = serializer.NewEncoder(m.Serializer(keyed.SerKey)); err != nil {
				return fmt.Errorf("operator state %q: %w", m.Name, err)
			}
		}
		encs[m.Name] = e
	}
	// The data's elements of each named state, per subtask.
	data := map[string][][][]byte{}
	next := map[string]int{}
	seenKeys := map[string]bool{}
	for _, r := range lo.opRecs {
		name, _ := r.rec["state"].(string)
		e := encs[name]
		if e == nil {
			return fmt.Errorf("%s: operator state %q: no such operator state (the operator has %s)", r.where, name, strings.Join(names, ", "))
		}
		if mode := r.rec["mode"].(string); mode != metadata.ModeName(e.mode) {
			return fmt.Errorf("%s: mode: operator state %q is %s, not %s", r.where, name, metadata.ModeName(e.mode), mode)
		}
		if data[name] == nil {
			data[name] = make([][][]byte, op.Parallelism)
		}
		var b []byte
		var err error
		if e.key != nil {
			k, ok := r.rec["key"]
			if !ok {
				return fmt.Errorf("%s: key: missing (a broadcast state's entry has a key)", r.where)
			}
			if b, err = e.key(b, k, "key"); err != nil {
				return fmt.Errorf("%s: %w", r.where, err)
			}
		}
		v, ok := r.rec["value"]
		if !ok {
			return fmt.Errorf("%s: value: missing", r.where)
		}
		if name == sourcestate.ReaderStateName {
			// a source's split as dump prints it (decoded): back to the element's bytes
			el, isSplit, err := sourcestate.DumpedSplit(v)
			if err != nil {
				return fmt.Errorf("%s: value: %w", r.where, err)
			}
			if isSplit {
				v = base64.StdEncoding.EncodeToString(el)
			}
		}
		if b, err = e.value(b, v, "value"); err != nil {
			return fmt.Errorf("%s: %w", r.where, err)
		}
		subs := []int32{}
		if sv, ok := r.rec["subtask"]; ok {
			n, err := int64Of(sv)
			if err != nil || n < 0 || n >= int64(op.Parallelism) {
				return fmt.Errorf("%s: subtask: want a subtask index (0..%d), got %v", r.where, op.Parallelism-1, sv)
			}
			subs = append(subs, int32(n))
		} else if e.mode == metadata.ModeSplitDistribute {
			subs = append(subs, int32(next[name]%int(op.Parallelism)))
			next[name]++
		} else {
			for i := range op.Parallelism {
				subs = append(subs, i)
			}
		}
		for _, i := range subs {
			if e.key != nil {
				// A broadcast state is a map: one entry per key in each subtask.
				kb, _ := e.key(nil, r.rec["key"], "key")
				id := fmt.Sprintf("%s\x00%d\x00%x", name, i, kb)
				if seenKeys[id] {
					return fmt.Errorf("%s: key: broadcast state %q already has this key in subtask %d", r.where, name, i)
				}
				seenKeys[id] = true
			}
			data[name][i] = append(data[name][i], b)
		}
	}
	sums := map[string]*Sum{}
	for _, n := range names {
		sums[n] = &Sum{}
	}
	for i := range op.Parallelism {
		var states []opstate.WriteState
		for _, m := range metas {
			ws := opstate.WriteState{Name: m.Name, Mode: encs[m.Name].mode, Value: m.Serializer(keyed.SerValue)}
			if ws.Mode == metadata.ModeBroadcast {
				ws.Key = m.Serializer(keyed.SerKey)
			}
			switch {
			case data[m.Name] != nil:
				ws.Elements = data[m.Name][i]
			case src[i] != nil:
				ws.Elements = src[i].elems[m.Name]
			}
			for _, e := range ws.Elements {
				sums[m.Name].add(bytesHash(e))
			}
			states = append(states, ws)
		}
		stream, infos, err := opstate.Write(states)
		if err != nil {
			return err
		}
		if dry {
			continue
		}
		name := newStateFileName()
		f, err := os.OpenFile(filepath.Join(s.stage, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		s.fresh[name] = 0
		bw := bufio.NewWriter(f)
		bw.Write(stream)
		if err := finishFile(bw, f); err != nil {
			return err
		}
		s.fresh[name] = int64(len(stream))
		oh := &metadata.OperatorStreamHandle{TagByte: metadata.TagPartitionableOperatorState, States: infos,
			Delegate: &metadata.RelativeFileHandle{Path: name, Size: int64(len(stream))}}
		if st := op.Subtask(i); st != nil {
			st.ManagedOperator = oh
		} else {
			op.Subtasks = append(op.Subtasks, &metadata.SubtaskState{Index: i, ManagedOperator: oh})
			slices.SortFunc(op.Subtasks, func(a, b *metadata.SubtaskState) int { return int(a.Index - b.Index) })
		}
	}
	if dg := s.digest[op.ID]; dg != nil && !dry {
		dg.OpState = sums
	}
	return nil
}

// readSourceOpState reads one subtask's operator-state stream of the source.
func readSourceOpState(s *session, oh *metadata.OperatorStreamHandle) (*sourceOpState, error) {
	str, err := s.src.OpenStream(oh.Delegate)
	if err != nil {
		return nil, err
	}
	defer str.Close()
	os, err := opstate.Open(str, str.Size(), str.Name, oh)
	if err != nil {
		return nil, err
	}
	so := &sourceOpState{header: os.Header, modes: map[string]byte{}, elems: map[string][][]byte{}}
	for _, m := range append(slices.Clone(os.Header.States), os.Header.Broadcast...) {
		so.modes[m.Name] = metadata.ModeSplitDistribute
		if m.Type == keyed.Broadcast {
			so.modes[m.Name] = metadata.ModeBroadcast
		}
	}
	for _, i := range oh.States {
		so.modes[i.Name] = i.Mode
	}
	err = os.Read(func(e opstate.Element) error {
		so.elems[e.State] = append(so.elems[e.State], slices.Clone(e.Raw))
		return nil
	})
	return so, err
}
