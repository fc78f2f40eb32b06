package opstate

import (
	"bytes"
	"fmt"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// WriteState is one state of an operator-state stream to write: a list (split or union) state's
// elements, or a broadcast state's entries, each already encoded by the state's serializers.
type WriteState struct {
	Name     string
	Mode     byte                 // metadata.ModeSplitDistribute, ModeUnion or ModeBroadcast
	Value    *serializer.Snapshot // the element's serializer (broadcast: the value's)
	Key      *serializer.Snapshot // broadcast only: the key's serializer
	Elements [][]byte             // split/union: one element each; broadcast: key then value bytes
}

// modeOption is the OPERATOR_STATE_DISTRIBUTION_MODE a meta info names for each mode.
var modeOption = map[byte]string{
	metadata.ModeSplitDistribute: "SPLIT_DISTRIBUTE",
	metadata.ModeUnion:           "UNION",
	metadata.ModeBroadcast:       "BROADCAST",
}

// Write returns an uncompressed operator-state stream holding states, as a Flink 2.x operator
// state backend writes it (the package comment draws the layout), and where each state is in
// it, for the subtask's handle in _metadata. List and union states come first, in the given
// order, then broadcast states; a meta info is
//
//	list:      UTF name, i32 1 (OPERATOR), 1 option {DISTRIBUTION_MODE: SPLIT_DISTRIBUTE|UNION},
//	           1 serializer {VALUE_SERIALIZER: element}
//	broadcast: UTF name, i32 2 (BROADCAST), 1 option {DISTRIBUTION_MODE: BROADCAST},
//	           2 serializers {VALUE_SERIALIZER: value}, {KEY_SERIALIZER: key}
//
// Each list element gets its own offset; a broadcast state one offset, at its i32 entry count.
func Write(states []WriteState) ([]byte, []metadata.OperatorStateInfo, error) {
	var lists, bcast []WriteState
	seen := map[string]bool{}
	for _, s := range states {
		if s.Name == "" || seen[s.Name] {
			return nil, nil, fmt.Errorf("operator state %q: every state needs a name of its own", s.Name)
		}
		seen[s.Name] = true
		if _, ok := modeOption[s.Mode]; !ok {
			return nil, nil, fmt.Errorf("operator state %q: distribution mode %d, want split, union or broadcast", s.Name, s.Mode)
		}
		if s.Value == nil || (s.Key != nil) != (s.Mode == metadata.ModeBroadcast) {
			return nil, nil, fmt.Errorf("operator state %q: want a value type, and a key type for a broadcast state only", s.Name)
		}
		if s.Mode == metadata.ModeBroadcast {
			bcast = append(bcast, s)
		} else {
			lists = append(lists, s)
		}
	}
	var buf bytes.Buffer
	w := javaio.NewWriter(&buf)
	w.I32(ProxyVersion)
	w.Bool(false)
	for _, part := range [][]WriteState{lists, bcast} {
		w.I16(int16(len(part)))
		for _, s := range part {
			w.UTF(s.Name)
			typ, sers := keyed.Operator, []keyed.NamedSnapshot{{Key: keyed.SerValue, Snapshot: s.Value}}
			if s.Mode == metadata.ModeBroadcast {
				typ = keyed.Broadcast
				sers = append(sers, keyed.NamedSnapshot{Key: keyed.SerKey, Snapshot: s.Key})
			}
			w.I32(int32(typ))
			w.I32(1)
			w.UTF(keyed.OptDistributionMode)
			w.UTF(modeOption[s.Mode])
			w.I32(int32(len(sers)))
			for _, ns := range sers {
				w.UTF(ns.Key)
				if err := serializer.WriteTop(w, ns.Snapshot); err != nil {
					return nil, nil, fmt.Errorf("operator state %q %s: %w", s.Name, ns.Key, err)
				}
			}
		}
	}
	if err := w.Err(); err != nil {
		return nil, nil, err
	}
	var infos []metadata.OperatorStateInfo
	for _, s := range append(lists, bcast...) {
		info := metadata.OperatorStateInfo{Name: s.Name, Mode: s.Mode, Offsets: []int64{}}
		if s.Mode == metadata.ModeBroadcast {
			info.Offsets = append(info.Offsets, int64(buf.Len()))
			w.I32(int32(len(s.Elements)))
			if err := w.Err(); err != nil {
				return nil, nil, err
			}
		}
		for _, e := range s.Elements {
			if s.Mode != metadata.ModeBroadcast {
				info.Offsets = append(info.Offsets, int64(buf.Len()))
			}
			buf.Write(e)
		}
		infos = append(infos, info)
	}
	return buf.Bytes(), infos, nil
}
