package plan

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/statecraft/statecraft/internal/plangen"
	"github.com/statecraft/statecraft/ttl"
	"github.com/tidwall/sjson"
)

// diffBenchPlans returns a synthetic 5,000-node plan (internal/plangen) and a copy that
// differs in 50 places: 40 state TTLs changed by the plan editor and 10 calc nodes given
// another filter condition (description and condition member).
func diffBenchPlans(b testing.TB) (oldRaw, newRaw []byte) {
	oldRaw = plangen.Generate(plangen.Options{Nodes: 5000, Seed: 1})
	p, err := Parse("old.json", oldRaw)
	if err != nil {
		b.Fatal(err)
	}
	states := p.States()
	var changes []Change
	for i := 0; i < 40; i++ {
		s := states[i*len(states)/40]
		changes = append(changes, Change{Entry: s, TTL: ttl.TTL(int64(i+1) * 60000)})
	}
	newRaw, _, err = p.Apply(changes)
	if err != nil {
		b.Fatal(err)
	}
	edited := 0
	for _, n := range p.Nodes {
		if edited == 10 {
			break
		}
		if n.Name == "stream-exec-calc" && n.Pos%97 == 0 {
			newRaw, err = sjson.SetBytes(newRaw, fmt.Sprintf("nodes.%d.description", n.Pos), "Calc(select=[k, v, state], where=[(k > 10)])")
			if err == nil {
				newRaw, err = sjson.SetRawBytes(newRaw, fmt.Sprintf("nodes.%d.condition", n.Pos), []byte(`{"kind":"LITERAL","value":true,"type":"BOOLEAN"}`))
			}
			if err != nil {
				b.Fatal(err)
			}
			edited++
		}
	}
	if edited != 10 {
		b.Fatalf("only %d calc nodes edited", edited)
	}
	return oldRaw, newRaw
}

func diffOnce(b testing.TB, oldRaw, newRaw []byte) *DiffReport {
	oldp, err := Parse("old.json", oldRaw)
	if err != nil {
		b.Fatal(err)
	}
	newp, err := Parse("new.json", newRaw)
	if err != nil {
		b.Fatal(err)
	}
	return Diff(oldp, newp)
}

// The benchmark's input is what it claims: 50 differences, all found, nothing else.
func TestDiffBenchPlans(t *testing.T) {
	oldRaw, newRaw := diffBenchPlans(t)
	r := diffOnce(t, oldRaw, newRaw)
	if r.Verdict != Compatible || r.Counts.TTLChanges != 40 || r.Counts.Changed != 50 || r.Counts.MatchedByID != 5000 {
		t.Errorf("verdict %s, counts %+v; want compatible, 40 TTL changes, 50 changed nodes, 5000 matched by id", r.Verdict, r.Counts)
	}
}

// BenchmarkDiff5000 is `statecraft plan diff` in memory on two 5,000-node plans that differ
// in 50 places: parse both, match, compare, judge. Target: under 200 ms.
func BenchmarkDiff5000(b *testing.B) {
	oldRaw, newRaw := diffBenchPlans(b)
	b.Run("ids-kept", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			diffOnce(b, oldRaw, newRaw)
		}
	})
	// Diff alone, on plans parsed once (Parse is the plan package's, measured by its own
	// benchmarks).
	b.Run("diff-only", func(b *testing.B) {
		oldp, _ := Parse("old.json", oldRaw)
		newp, _ := Parse("new.json", newRaw)
		b.ResetTimer()
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			Diff(oldp, newp)
		}
	})
	// The worst case for matching: every id shifted, so every node is matched by structure.
	p, err := Parse("new.json", newRaw)
	if err != nil {
		b.Fatal(err)
	}
	shifted := renumber(b, p, func(id int) int { return id + 1 })
	if r := diffOnce(b, oldRaw, shifted); r.Counts.MatchedByStructure != 5000 {
		b.Fatalf("renumbered: counts %+v", r.Counts)
	}
	b.Run("all-renumbered", func(b *testing.B) {
		defer reportCPU(b)()
		for i := 0; i < b.N; i++ {
			diffOnce(b, oldRaw, shifted)
		}
	})
}

// reportCPU adds the process's CPU time per operation (user+system, from getrusage) to a
// benchmark's output: on a shared, overloaded machine wall time says little, CPU time is what
// the diff costs.
func reportCPU(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			return 0
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpu()-start).Milliseconds())/float64(b.N), "cpu-ms/op")
		}
	}
}
