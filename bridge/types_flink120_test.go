package bridge

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/statecraft/statecraft/plan"
	"github.com/statecraft/statecraft/statecore/savepoint"
	"github.com/statecraft/statecraft/statecore/serializer"
)

// TestTypesAgreeWithFlink120Upgrades: Flink 2.3.0 restored every Flink 1.20 savepoint of the
// catalogue programs (joins, interval join, dedup, Top-N, over, window and group aggregates,
// changelog normalize, a statement set) into the plan 2.3 compiles for the same query
// (testdata/flink-1.20/upgrades/EVIDENCE.tsv). So the types statecraft derives from those plans
// must match the serializer snapshots of the savepoints: no type error anywhere, and every key
// statecraft derives is checked and compatible (a key left unchecked would hide a bad
// derivation).
func TestTypesAgreeWithFlink120Upgrades(t *testing.T) {
	root := testdata("flink-1.20")
	f, err := os.Open(filepath.Join(root, "upgrades", "EVIDENCE.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if strings.HasPrefix(cols[0], "#") || cols[0] == "name" || len(cols) < 2 {
			continue
		}
		name, outcome := cols[0], cols[1]
		n++
		t.Run(name, func(t *testing.T) {
			if outcome == "refused" {
				t.Skipf("Flink refused %s; this test covers restored cases", name)
			}
			sp, err := savepoint.Open(filepath.Join(root, "savepoints", "upgrade-"+name))
			if err != nil {
				t.Fatal(err)
			}
			defer sp.Close()
			b, err := Open(loadPlan(t, filepath.Join(root, "upgrades", "new", "runnable-"+name+".json")), plan.UIDOptions{}, sp)
			if err != nil {
				t.Fatal(err)
			}
			r := Check(b, CheckOptions{})
			if !r.Restores {
				t.Errorf("Flink 2.3.0 restored it (%s), check says it does not: %v", outcome, r.Findings)
			}
			for _, ns := range r.Nodes {
				for _, v := range ns.Types {
					t.Logf("node %d %s %s: %s %v / %v %s", ns.ID, ns.Type, v.State, v.Verdict, v.Savepoint, v.Plan, v.Detail)
					// Flink restored every state: a value statecraft derives must not be
					// called incompatible (a wrong derivation would be).
					if v.State != KeyState && v.Verdict == TypesIncompatible {
						t.Errorf("node %d (%s): state %s: plan %v, savepoint %v: %s", ns.ID, ns.Type, v.State, v.Plan, v.Savepoint, v.Detail)
					}
					if v.State == KeyState && v.Plan != nil && v.Verdict != TypesCompatible {
						t.Errorf("node %d (%s): key %v derived from the plan, savepoint %v: %s %s", ns.ID, ns.Type, v.Plan, v.Savepoint, v.Verdict, v.Detail)
					}
				}
			}
		})
	}
	if n < 14 {
		t.Errorf("EVIDENCE.tsv has %d cases, want the 14 of the catalogue", n)
	}
}

// TestLogicalTypeSQLHostile: a LogicalType stream Flink wrote (the aggregate's BIGINT key), cut
// at every length and with every byte flipped, never panics, and a cut one never renders.
func TestLogicalTypeSQLHostile(t *testing.T) {
	_, _, sp, _ := upgradeFixture(t)
	var stream []byte
	for _, o := range Operators(sp) {
		if o.keySerializer != nil && len(o.keySerializer.LogicalTypes) > 0 {
			stream = o.keySerializer.LogicalTypes[0]
		}
	}
	if got, ok := serializer.LogicalTypeSQL(stream); !ok || got != "BIGINT" {
		t.Fatalf("Flink's key type renders as %q, %v; want BIGINT", got, ok)
	}
	for n := 0; n < len(stream); n++ {
		if got, ok := serializer.LogicalTypeSQL(stream[:n]); ok {
			t.Errorf("stream cut at %d of %d bytes renders as %q", n, len(stream), got)
		}
	}
	for i := range stream {
		b := append([]byte(nil), stream...)
		b[i] ^= 0xFF
		serializer.LogicalTypeSQL(b) // must not panic; a flipped byte may still render
	}
}
