package keyed

import (
	"bytes"
	"testing"

	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestDeclaredHeadersAreFlinks: headers declared by type names (savepoint create --spec) are
// byte for byte the keyed-state headers Flink 2.3.0 wrote for the same states: basic, tuple and
// POJO and Row types, each state kind, TTL values (plain, list elements, map values), user and window
// timers, window namespaces.
func TestDeclaredHeadersAreFlinks(t *testing.T) {
	ty := func(name string) *serializer.Snapshot {
		t.Helper()
		s, err := serializer.Declare(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	account, err := serializer.DeclarePojo("dev.statecraft.oracle.savepoints.Account", []serializer.DeclaredField{
		{Name: "owner", Type: ty("String")}, {Name: "version", Type: ty("Integer")}, {Name: "balance", Type: ty("Long")},
	})
	if err != nil {
		t.Fatal(err)
	}
	userTimers := func(ns *serializer.Snapshot) []DeclaredState {
		return []DeclaredState{
			{Name: "_timer_state/processing_user-timers", Kind: "timer", Namespace: ns},
			{Name: "_timer_state/event_user-timers", Kind: "timer", Namespace: ns},
		}
	}
	cases := []struct {
		fixture, op string
		key         *serializer.Snapshot
		states      []DeclaredState
	}{
		{"types-hashmap", "6af7359fed1bbb5594df959e25af80ad", ty("Tuple2<Integer, String>"), append([]DeclaredState{
			{Name: "score", Kind: "value", Value: ty("Integer")},
			{Name: "avg", Kind: "aggregating", Value: ty("Tuple2<Long, Long>")},
			{Name: "tags", Kind: "map", UserKey: ty("String"), Value: ty("Double")},
		}, userTimers(nil)...)},
		{"types-hashmap", "e96676d2a3621a713f8229ed21cc08b2", ty("Long"), append([]DeclaredState{
			{Name: "last", Kind: "value", Value: ty("String")},
			{Name: "byName", Kind: "map", UserKey: ty("Long"), Value: ty("String")},
			{Name: "history", Kind: "list", Value: ty("Long")},
			{Name: "account", Kind: "value", Value: account},
		}, userTimers(nil)...)},
		{"types-hashmap", "69ee92ec1299dfd00071bfb77ad99663", ty("String"), append([]DeclaredState{
			{Name: "session", Kind: "value", Value: ty("String"), TTL: true},
			{Name: "concat", Kind: "reducing", Value: ty("String")},
			{Name: "pair", Kind: "value", Value: ty("Tuple2<Integer, String>")},
		}, userTimers(nil)...)},
		{"keyed-ttl-collections", "3e8e8aa52ab938ef3560fd1c4260e14a", ty("Integer"), append([]DeclaredState{
			{Name: "plain", Kind: "value", Value: ty("Long")},
			{Name: "recent", Kind: "list", Value: ty("String"), TTL: true},
			{Name: "attrs", Kind: "map", UserKey: ty("String"), Value: ty("Long"), TTL: true},
		}, userTimers(nil)...)},
		// Row values (Types.ROW): plain, TTL, list elements, map values; the states in the
		// order Flink wrote them.
		{"evolve-hashmap", "1636040045c1b63d6715dc94cd23eb31", ty("Integer"), append([]DeclaredState{
			{Name: "ttlProfile", Kind: "value", Value: ty("Row<String, Integer>"), TTL: true},
			{Name: "scores", Kind: "map", UserKey: ty("String"), Value: ty("Row<Long, Double>")},
			{Name: "profile", Kind: "value", Value: ty("Row<String, Integer>")},
			{Name: "events", Kind: "list", Value: ty("Row<Integer, String>")},
			{Name: "account", Kind: "value", Value: account},
		}, userTimers(nil)...)},
		{"window-hashmap", "e094fcd3c8eeead8401ea876c03e85a3", ty("Integer"), []DeclaredState{
			{Name: "window-contents", Kind: "aggregating", Value: ty("Tuple2<Long, Long>"), Namespace: ty("TimeWindow")},
			{Name: "_timer_state/processing_window-timers", Kind: "timer", Namespace: ty("TimeWindow")},
			{Name: "_timer_state/event_window-timers", Kind: "timer", Namespace: ty("TimeWindow")},
		}},
	}
	for _, c := range cases {
		t.Run(c.fixture+"/"+c.op, func(t *testing.T) {
			flink := fixtureHeader(t, c.fixture, c.op)
			h, err := DeclareHeader(c.key, c.states)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(h.Raw, flink.Raw) {
				for i := range min(len(h.Raw), len(flink.Raw)) {
					if h.Raw[i] != flink.Raw[i] {
						t.Fatalf("declared header differs from Flink's at byte %d of %d/%d:\n ours  %q\n flink %q", i, len(h.Raw), len(flink.Raw),
							h.Raw[max(0, i-40):min(len(h.Raw), i+40)], flink.Raw[max(0, i-40):min(len(flink.Raw), i+40)])
					}
				}
				t.Fatalf("declared header is %d bytes, Flink's %d", len(h.Raw), len(flink.Raw))
			}
		})
	}
}

// fixtureHeader is the keyed-state header Flink wrote for operator op (uid hash) of fixture.
func fixtureHeader(t *testing.T, fixture, op string) *Header {
	t.Helper()
	sp, err := savepoint.Open("../../testdata/savepoints/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	for _, o := range sp.Metadata.Operators {
		if o.ID.String() != op {
			continue
		}
		subs, closeAll, err := OpenSubtasks(sp, o)
		if err != nil || len(subs) == 0 {
			t.Fatalf("operator %s: %d subtasks, %v", op, len(subs), err)
		}
		defer closeAll()
		return subs[0].Header
	}
	t.Fatalf("%s has no operator %s", fixture, op)
	return nil
}
