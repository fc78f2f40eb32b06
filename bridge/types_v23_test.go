package bridge

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/statecraft/statecraft/statecore/javaio"
	"github.com/statecraft/statecraft/statecore/keyed"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestTypeSavepointsRead: every savepoint Flink 2.3.0 took for the type catalogue
// (upgrades/types-savepoints) has its keyed-state headers read, and each re-encodes to Flink's
// exact bytes, so the snapshots the DISTINCT aggregates add (ExternalSerializer of the view's map
// and null state, the RAW view field of the accumulator row) are read, not skipped. The
// DISTINCT ones render as the types plan/accumulators.go derives.
func TestTypeSavepointsRead(t *testing.T) {
	dirs, err := filepath.Glob(testdata("upgrades", "types-savepoints", "*", "_metadata"))
	if err != nil || len(dirs) < 12 {
		t.Fatalf("%d savepoints under upgrades/types-savepoints (%v), want the catalogue's 12+", len(dirs), err)
	}
	seen := map[string]string{}
	for _, m := range dirs {
		dir := filepath.Dir(m)
		sp, err := savepoint.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range Operators(sp) {
			if o.StateError != "" {
				t.Errorf("%s: operator %s: %s", filepath.Base(dir), o.Hash, o.StateError)
			}
			if !hasKeyed(o.op) {
				continue
			}
			subs, closeAll, err := keyed.OpenSubtasks(sp, o.op)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range subs {
				b, err := s.Header.Encode()
				if err != nil || !bytes.Equal(b, s.Header.Raw) {
					t.Errorf("%s: operator %s: re-encoded header differs from Flink's (%v)", filepath.Base(dir), o.Hash, err)
				}
			}
			closeAll()
			for name, meta := range o.metas {
				seen[filepath.Base(dir)+"/"+name] = snapshotShape(meta.Serializer(keyed.SerValue))
			}
		}
		sp.Close()
	}
	view := "RAW('org.apache.flink.table.api.dataview.MapView', NullSerializer)"
	for state, want := range map[string]string{
		"group-count-distinct/accState":                 "Row<BIGINT, INT, " + view + ">",
		"group-count-distinct/distinctAcc_0":            "Map<External<Long>, External<Long>>",
		"group-count-distinct/distinctAcc_0_null_state": "External<Long>",
		"window-sum-distinct/window-aggs":               "Row<INT, " + view + ">",
		"window-sum-distinct/distinctAcc_0":             "Map<External<Integer>, External<Long>>",
		"dedup-then-aggregate/accState":                 "Row<BIGINT, INT, BIGINT>",
		"over-range/accState":                           "Row<BIGINT, INT, BIGINT>",
	} {
		if seen[state] != want {
			t.Errorf("%s: savepoint holds %q, want %q", state, seen[state], want)
		}
	}
}

// TestExternalSnapshotHostile: the ExternalSerializer snapshot of a DISTINCT view, cut at every
// length, is refused with an error, never a panic.
func TestExternalSnapshotHostile(t *testing.T) {
	sp, err := savepoint.Open(testdata("upgrades", "types-savepoints", "group-count-distinct"))
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	var raw []byte
	for _, o := range Operators(sp) {
		if m := o.metas["distinctAcc_0_null_state"]; m != nil {
			s := m.Serializer(keyed.SerValue)
			if serializer.JavaType(s) != "External<Long>" {
				t.Fatalf("null state serializer %s", serializer.JavaType(s))
			}
			if raw, err = serializer.EncodeVersioned(s); err != nil {
				t.Fatal(err)
			}
		}
	}
	if raw == nil {
		t.Fatal("no distinctAcc_0_null_state in the savepoint")
	}
	read := func(b []byte) (*serializer.Snapshot, error) {
		r := javaio.NewBytesReader(b, "snapshot", 0)
		s := serializer.ReadVersioned(r, "value")
		return s, r.Err()
	}
	if s, err := read(raw); err != nil || serializer.JavaType(s) != "External<Long>" {
		t.Fatalf("the whole snapshot: %v", err)
	}
	for n := 0; n < len(raw); n++ {
		if _, err := read(raw[:n]); err == nil {
			t.Errorf("snapshot cut at %d of %d bytes reads without an error", n, len(raw))
		}
	}
}
