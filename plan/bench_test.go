package plan

import (
	"testing"

	"github.com/statecraft/statecraft/internal/plangen"
	"github.com/statecraft/statecraft/ttl"
)

// benchPlan is a synthetic 5,000-node plan shaped like Flink's (internal/plangen).
var benchPlan = plangen.Generate(plangen.Options{Nodes: 5000, Seed: 1})

// BenchmarkTTLSetAll is what `statecraft plan ttl set PLAN --all --ttl 1h` does in memory:
// parse, select every state, splice the new values, validate the edited model.
func BenchmarkTTLSetAll(b *testing.B) {
	b.SetBytes(int64(len(benchPlan)))
	for i := 0; i < b.N; i++ {
		p, err := Parse("bench.json", benchPlan)
		if err != nil {
			b.Fatal(err)
		}
		sel, _ := ParseSelector("all")
		states, err := p.Select(sel)
		if err != nil {
			b.Fatal(err)
		}
		changes := make([]Change, len(states))
		for k, s := range states {
			changes[k] = Change{Entry: s, TTL: ttl.TTL(3600000)}
		}
		out, edits, err := p.Apply(changes)
		if err != nil {
			b.Fatal(err)
		}
		if r := p.Edited(out, edits).Validate(); r.Count(Error) != 0 {
			b.Fatal("validation errors")
		}
	}
}

// BenchmarkValidate is `statecraft plan validate PLAN` in memory: parse and validate.
func BenchmarkValidate(b *testing.B) {
	b.SetBytes(int64(len(benchPlan)))
	for i := 0; i < b.N; i++ {
		p, err := Parse("bench.json", benchPlan)
		if err != nil {
			b.Fatal(err)
		}
		if r := p.Validate(); r.Count(Error) != 0 {
			b.Fatal("validation errors")
		}
	}
}
