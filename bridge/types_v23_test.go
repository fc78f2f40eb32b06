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
	listView := "RAW('org.apache.flink.table.api.dataview.ListView', NullSerializer)"
	agg := "org.apache.flink.table.runtime.functions.aggregate."
	for state, want := range map[string]string{
		"group-count-distinct/accState":                 "Row<BIGINT, INT, " + view + ">",
		"group-count-distinct/distinctAcc_0":            "Map<External<Long>, External<Long>>",
		"group-count-distinct/distinctAcc_0_null_state": "External<Long>",
		"window-sum-distinct/window-aggs":               "Row<INT, " + view + ">",
		"window-sum-distinct/distinctAcc_0":             "Map<External<Integer>, External<Long>>",
		"dedup-then-aggregate/accState":                 "Row<BIGINT, INT, BIGINT>",
		"over-range/accState":                           "Row<BIGINT, INT, BIGINT>",
		// Built-in aggregates (plan/aggfuncs.go): AVG's sums, MIN's STRING over a VARCHAR(5),
		// FIRST_VALUE's and LAST_VALUE's named rows, LISTAGG's two strings.
		"group-builtins/accState": "Row<BIGINT, INT, BIGINT, BIGINT, BIGINT, BIGINT, DOUBLE, BIGINT, DECIMAL(38, 2), BIGINT, VARCHAR(2147483647), INT, " +
			"ROW<`firstValue` INT, `firstOrder` BIGINT>, ROW<`lastValue` INT, `lastOrder` BIGINT>, VARCHAR(2147483647), VARCHAR(2147483647)>",
		// Over retractions: structured accumulators and their views' states.
		"retract-builtins/accState": "Row<BIGINT, INT, BIGINT, BIGINT, BIGINT, " +
			"STRUCTURED<'" + agg + "MinWithRetractAggFunction$MinWithRetractAccumulator', `min` INT, `mapSize` BIGINT, `map` " + view + ">, " +
			"STRUCTURED<'" + agg + "MaxWithRetractAggFunction$MaxWithRetractAccumulator', `max` INT, `mapSize` BIGINT, `map` " + view + ">, " +
			"STRUCTURED<'" + agg + "FirstValueWithRetractAggFunction$FirstValueWithRetractAccumulator', `firstValue` INT, `firstOrder` BIGINT, `valueToOrderMap` " + view + ", `orderToValueMap` " + view + ">, " +
			"STRUCTURED<'" + agg + "LastValueWithRetractAggFunction$LastValueWithRetractAccumulator', `lastValue` INT, `lastOrder` BIGINT, `valueToOrderMap` " + view + ", `orderToValueMap` " + view + ">, " +
			"STRUCTURED<'" + agg + "ListAggWithRetractAggFunction$ListAggWithRetractAccumulator', `list` " + listView + ", `retractList` " + listView + ">>",
		"retract-builtins/agg3$map":             "Map<External<Integer>, External<Long>>",
		"retract-builtins/agg5$valueToOrderMap": "Map<External<Integer>, External<ArrayData<BIGINT>>>",
		"retract-builtins/agg5$orderToValueMap": "Map<External<Long>, External<ArrayData<INT NOT NULL>>>",
		"retract-builtins/agg7$retractList":     "List<External<StringData>>",
		"group-split-distinct/distinctAcc_0":    "Map<External<Long>, External<Long>>",
		"retract-two-phase/accState":            "Row<BIGINT, INT, BIGINT>",
		// SUM(order_id), SUM(amount) with retraction, then the inserted COUNT(*).
		"retract-two-phase-no-count/accState":              "Row<BIGINT, BIGINT, INT, BIGINT, BIGINT>",
		"group-split-incremental/distinctAcc_0":            "Map<External<Long>, External<Long>>",
		"group-split-incremental/distinctAcc_0_null_state": "External<Long>",
		// The second set: a first-N's counter, LISTAGG with a separator and the JSON
		// functions' views, data views keyed by DECIMAL and TIMESTAMP values with their
		// precision (Flink refuses another: v23-retract-more-distinct-*).
		"count-window/trigger-count-2":            "Long",
		"count-window/tumble-count-assigner":      "Long",
		"count-window-slide/slide-count-assigner": "Long",
		"count-window-slide/trigger-count-2":      "Long",
		"ranks/counterState":                      "Integer",
		"retract-more/agg2$retractList":           "List<External<StringData>>",
		"retract-more/agg3$map":                   "Map<External<StringData>, External<StringData>>",
		"retract-more/agg4$list":                  "List<External<StringData>>",
		"retract-more/agg5$map":                   "Map<External<DecimalData(10, 2)>, External<Long>>",
		"retract-more/agg6$map":                   "Map<External<TimestampData(3)>, External<Long>>",
		"retract-more/distinctAcc_0":              "Map<External<DecimalData(12, 2)>, External<Long>>",
		"retract-more/distinctAcc_1":              "Map<External<TimestampData(6)>, External<Long>>",
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

// TestNestedLogicalTypeHostile: the ROW and STRUCTURED accumulator types Flink 2.3.0 wrote (a
// FIRST_VALUE's row, a MIN with retraction's structured type, LISTAGG's with its List.of
// attributes), cut at every length and with every byte flipped, never panic, and a cut one
// never renders.
func TestNestedLogicalTypeHostile(t *testing.T) {
	for _, c := range []struct {
		base  string
		field int
		want  string
	}{
		{"group-builtins", 12, "ROW<`firstValue` INT, `firstOrder` BIGINT>"},
		{"retract-builtins", 5, "STRUCTURED<'org.apache.flink.table.runtime.functions.aggregate.MinWithRetractAggFunction$MinWithRetractAccumulator', " +
			"`min` INT, `mapSize` BIGINT, `map` RAW('org.apache.flink.table.api.dataview.MapView', NullSerializer)>"},
		{"retract-builtins", 9, "STRUCTURED<'org.apache.flink.table.runtime.functions.aggregate.ListAggWithRetractAggFunction$ListAggWithRetractAccumulator', " +
			"`list` RAW('org.apache.flink.table.api.dataview.ListView', NullSerializer), `retractList` RAW('org.apache.flink.table.api.dataview.ListView', NullSerializer)>"},
	} {
		sp, err := savepoint.Open(testdata("upgrades", "types-savepoints", c.base))
		if err != nil {
			t.Fatal(err)
		}
		var stream []byte
		for _, o := range Operators(sp) {
			if m := o.metas["accState"]; m != nil {
				if lt := serializer.UnwrapTTL(m.Serializer(keyed.SerValue)).LogicalTypes; len(lt) > c.field {
					stream = lt[c.field]
				}
			}
		}
		sp.Close()
		if got, ok := serializer.LogicalTypeSQL(stream); !ok || got != c.want {
			t.Fatalf("%s field %d renders as %q, %v; want %s", c.base, c.field, got, ok, c.want)
		}
		for n := 0; n < len(stream); n++ {
			if got, ok := serializer.LogicalTypeSQL(stream[:n]); ok {
				t.Errorf("%s field %d cut at %d of %d bytes renders as %q", c.base, c.field, n, len(stream), got)
			}
		}
		for i := range stream {
			b := append([]byte(nil), stream...)
			b[i] ^= 0xFF
			serializer.LogicalTypeSQL(b) // must not panic; a flipped byte may still render
		}
	}
}
