package keygroup_test

import (
	"path/filepath"
	"testing"

	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/keygroup"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// These vectors come from real Flink 2.3.0 savepoints (testdata/savepoints, made by the oracle):
// the key group each entry sits in is where Flink's backend put it.

func fixtureDirs(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob("../../testdata/savepoints/*/_metadata")
	if len(files) == 0 {
		t.Skip("no fixtures in testdata/savepoints yet (testdata/oracle/run.sh savepoints makes them)")
	}
	var dirs []string
	for _, f := range files {
		dirs = append(dirs, filepath.Dir(f))
	}
	return dirs
}

// TestFixtureRanges: every keyed handle Flink wrote covers exactly the key-group range
// RangeForOperator computes for its subtask (native RocksDB handles included).
func TestFixtureRanges(t *testing.T) {
	n := 0
	for _, dir := range fixtureDirs(t) {
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range sp.Metadata.Operators {
			for _, st := range op.Subtasks {
				if st.ManagedKeyed == nil {
					continue
				}
				r, err := keygroup.RangeForOperator(op.MaxParallelism, op.Parallelism, st.Index)
				if err != nil {
					t.Fatalf("%s %s: %v", dir, op.ID, err)
				}
				got := st.ManagedKeyed.KeyGroups()
				if got.Start != r.Start || got.End() != r.End {
					t.Errorf("%s operator %s subtask %d: Flink stored key groups [%d, %d], computed %v", dir, op.ID, st.Index, got.Start, got.End(), r)
				}
				n++
			}
		}
		sp.Close()
	}
	if n == 0 {
		t.Error("no keyed handle in the fixtures")
	}
}

// TestFixtureKeyGroups: for every keyed entry and timer of every canonical fixture, ForKey of the
// decoded key equals the key group of the block Flink wrote it in, and the owning subtask is the
// one OperatorIndex computes.
func TestFixtureKeyGroups(t *testing.T) {
	checked := map[string]int{}
	for _, dir := range fixtureDirs(t) {
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if sp.CheckCanonical() != nil {
			sp.Close()
			continue
		}
		for _, op := range sp.Metadata.Operators {
			subs, closeAll, err := keyed.OpenSubtasks(sp, op)
			if err != nil {
				t.Fatalf("%s operator %s: %v", dir, op.ID, err)
			}
			for _, s := range subs {
				err := s.Records(nil, func(r keyed.Record) error {
					key, ok := toKey(r.Key)
					if !ok {
						t.Errorf("%s: key %#v (%T) of state %s: no Go key mapping", dir, r.Key, r.Key, r.State)
						return keyed.ErrStop
					}
					kg, err := keygroup.ForKey(key, op.MaxParallelism)
					if err != nil {
						t.Errorf("%s: key %#v: %v", dir, r.Key, err)
						return keyed.ErrStop
					}
					if int(kg) != r.KeyGroup {
						t.Errorf("%s state %s key %#v: computed key group %d, Flink stored it in %d", dir, r.State, r.Key, kg, r.KeyGroup)
					}
					if sub := keygroup.OperatorIndex(op.MaxParallelism, op.Parallelism, kg); sub != s.Index {
						t.Errorf("%s state %s key %#v: key group %d belongs to subtask %d, Flink wrote it in subtask %d", dir, r.State, r.Key, kg, sub, s.Index)
					}
					checked[typeName(key)]++
					return nil
				})
				if err != nil {
					t.Errorf("%s operator %s subtask %d: %v", dir, op.ID, s.Index, err)
				}
			}
			closeAll()
		}
		sp.Close()
	}
	if len(checked) == 0 {
		t.Fatal("no keyed entries checked")
	}
	t.Logf("keys checked against Flink's key groups, by type: %v", checked)
}

// toKey maps a value decoded by statecore/serializer to the Go types keygroup hashes.
func toKey(v any) (any, bool) {
	switch v := v.(type) {
	case int32, int64, int16, int8, bool, string, float64, float32:
		return v, true
	case serializer.Float:
		return float64(v), true
	case serializer.BinaryRow: // Flink SQL key: BinaryRowData, hashed over its bytes
		return keygroup.BinaryRow(v.Raw), true
	case serializer.Fields: // TupleN: f0, f1, ...
		t := make(keygroup.Tuple, len(v))
		for i, f := range v {
			if f.Value == nil {
				continue
			}
			k, ok := toKey(f.Value)
			if !ok {
				return nil, false
			}
			t[i] = k
		}
		return t, true
	}
	return nil, false
}

func typeName(v any) string {
	switch v.(type) {
	case int32:
		return "Integer"
	case int64:
		return "Long"
	case string:
		return "String"
	case keygroup.Tuple:
		return "Tuple"
	case keygroup.BinaryRow:
		return "BinaryRowData"
	}
	return "other"
}
