package opstate

import (
	"bytes"
	"slices"
	"testing"

	"github.com/statecraft/statecraft/statecore/metadata"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestWriteIsFlinks: streams written from declared types and the elements Flink 2.3.0 stored
// are byte for byte Flink's, with the same offsets: split and union list states (String, Long)
// and a broadcast state (String -> Long), every subtask of the operator-state fixture.
func TestWriteIsFlinks(t *testing.T) {
	decl := func(name string) *serializer.Snapshot {
		s, err := serializer.Declare(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	types := map[string][2]*serializer.Snapshot{ // state -> value, key
		"buffer":  {decl("String"), nil},
		"offsets": {decl("Long"), nil},
		"rules":   {decl("Long"), decl("String")},
	}
	sp, err := savepoint.Open("../../testdata/savepoints/operator-state")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	streams := 0
	for _, op := range sp.Metadata.Operators {
		for _, st := range op.Subtasks {
			oh, ok := st.ManagedOperator.(*metadata.OperatorStreamHandle)
			if !ok || oh.Delegate == nil {
				continue
			}
			str, err := sp.OpenStream(oh.Delegate)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Open(str, str.Size(), str.Name, oh)
			str.Close()
			if err != nil {
				t.Fatal(err)
			}
			elems := map[string][][]byte{}
			if err := s.Read(func(e Element) error {
				elems[e.State] = append(elems[e.State], slices.Clone(e.Raw))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			var ws []WriteState
			for _, m := range append(slices.Clone(s.Header.States), s.Header.Broadcast...) {
				ty, ok := types[m.Name]
				if !ok {
					t.Fatalf("state %s: no declared type", m.Name)
				}
				mode := byte(metadata.ModeSplitDistribute)
				for _, i := range oh.States {
					if i.Name == m.Name {
						mode = i.Mode
					}
				}
				ws = append(ws, WriteState{Name: m.Name, Mode: mode, Value: ty[0], Key: ty[1], Elements: elems[m.Name]})
			}
			data, infos, err := Write(ws)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, s.Data) {
				t.Errorf("%s subtask %d: written stream (%d bytes) differs from Flink's (%d)", op.UID, st.Index, len(data), len(s.Data))
			}
			for i, info := range infos {
				if i >= len(oh.States) || info.Name != oh.States[i].Name || info.Mode != oh.States[i].Mode || !slices.Equal(info.Offsets, oh.States[i].Offsets) {
					t.Errorf("%s subtask %d: state info %+v, Flink's %+v", op.UID, st.Index, info, oh.States)
				}
			}
			streams++
		}
	}
	if streams < 4 {
		t.Fatalf("compared %d streams, want the fixture's 4", streams)
	}
}
