package spdiff

import (
	"fmt"
	"testing"
)

// TestComparison: entries are matched by identity (state, key, namespace, map key; a timer also
// by its timestamp; a list element by itself, as a multiset; broadcast entries once whatever the
// number of subtask copies), and counted as only in A, only in B or changed.
func TestComparison(t *testing.T) {
	v := func(state string, key, val any) Record {
		return Record{State: state, Kind: "value", Key: key, Value: val}
	}
	timer := func(key any, ts int64) Record { return Record{State: "t", Kind: "timer", Key: key, Timestamp: ts} }
	split := func(val any) Record { return Record{State: "l", Kind: "split", Value: val} }
	bc := func(key, val any) Record { return Record{State: "b", Kind: "broadcast", Key: key, Value: val} }
	m := func(key, uk, val any) Record {
		return Record{State: "m", Kind: "map", Key: key, UserKey: uk, Value: val}
	}
	for _, c := range []struct {
		name string
		a, b []Record
		want string // per state: name -onlyA +onlyB ~changed
	}{
		{"equal in another order", []Record{v("s", 1, "x"), v("s", 2, "y")}, []Record{v("s", 2, "y"), v("s", 1, "x")}, "s -0 +0 ~0"},
		{"changed value", []Record{v("s", 1, "x")}, []Record{v("s", 1, "z")}, "s -0 +0 ~1"},
		{"only in A and only in B", []Record{v("s", 1, "x")}, []Record{v("s", 2, "x")}, "s -1 +1 ~0"},
		{"ttl counts as the value", []Record{{State: "s", Kind: "value", Key: 1, Value: "x", TTL: int64(5)}}, []Record{{State: "s", Kind: "value", Key: 1, Value: "x", TTL: int64(6)}}, "s -0 +0 ~1"},
		{"map by user key", []Record{m(1, "a", 1), m(1, "b", 2)}, []Record{m(1, "a", 1), m(1, "c", 2)}, "m -1 +1 ~0"},
		{"timer by timestamp", []Record{timer(1, 10)}, []Record{timer(1, 11)}, "t -1 +1 ~0"},
		{"list elements as a multiset", []Record{split("x"), split("x"), split("y")}, []Record{split("y"), split("x"), split("z")}, "l -1 +1 ~0"},
		{"broadcast copies once", []Record{bc("k", 1), bc("k", 1)}, []Record{bc("k", 1), bc("k", 1), bc("k", 1)}, "b -0 +0 ~0"},
		{"broadcast changed", []Record{bc("k", 1), bc("k", 1)}, []Record{bc("k", 2)}, "b -0 +0 ~1"},
		{"state only in A", []Record{v("gone", 1, "x")}, nil, "gone -1 +0 ~0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmp := NewComparison(1)
			for _, r := range c.a {
				if err := cmp.AddA(r); err != nil {
					t.Fatal(err)
				}
			}
			seen := map[string]bool{}
			for _, r := range c.b {
				if err := cmp.AddB(r, seen); err != nil {
					t.Fatal(err)
				}
			}
			got := ""
			for _, s := range cmp.Finish() {
				got += fmt.Sprintf("%s -%d +%d ~%d", s.Name, s.OnlyA, s.OnlyB, s.Changed)
				if n := len(s.OnlyASam) + len(s.OnlyBSam) + len(s.ChgSam); int64(n) != min(s.OnlyA, 1)+min(s.OnlyB, 1)+min(s.Changed, 1) {
					t.Errorf("%d samples for %+v (limit 1)", n, s)
				}
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestSampleSpelling(t *testing.T) {
	cmp := NewComparison(5)
	cmp.AddA(Record{State: "m", Kind: "map", Key: "k", Namespace: "w", UserKey: 3, Value: 1, TTL: int64(9)})
	cmp.AddB(Record{State: "m", Kind: "map", Key: "k", Namespace: "w", UserKey: 3, Value: 2, TTL: int64(9)}, nil)
	cmp.AddB(Record{State: "t", Kind: "timer", Key: "k", Timestamp: 42}, nil)
	cmp.AddA(Record{State: "l", Kind: "split", Value: []any{"e"}})
	var got []string
	for _, s := range cmp.Finish() {
		for _, l := range [][]Entry{s.OnlyASam, s.OnlyBSam, s.ChgSam} {
			for _, e := range l {
				got = append(got, e.Spell())
			}
		}
	}
	want := []string{
		`key="k" namespace="w" userKey=3: {"value":1,"ttlTimestamp":9} -> {"value":2,"ttlTimestamp":9}`,
		`key="k" timestamp=42`,
		`element ["e"]`,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
