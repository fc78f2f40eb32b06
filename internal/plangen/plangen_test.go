package plangen_test

import (
	"bytes"
	"testing"

	"github.com/statecraft/statecraft/internal/plangen"
	"github.com/statecraft/statecraft/plan"
)

func TestGenerateIsAValidPlanOfTheRequestedSize(t *testing.T) {
	for _, n := range []int{3, 10, 100, 5000} {
		data := plangen.Generate(plangen.Options{Nodes: n, Seed: 7})
		p, err := plan.Parse("gen.json", data)
		if err != nil {
			t.Fatalf("%d nodes: %v", n, err)
		}
		if len(p.Nodes) != n {
			t.Fatalf("asked for %d nodes, got %d", n, len(p.Nodes))
		}
		r := p.Validate()
		if c := r.Count(plan.Error); c != 0 {
			t.Fatalf("%d nodes: %d validation errors, first: %+v", n, c, r.Findings[0])
		}
		if n >= 100 {
			kinds := map[plan.Class]int{}
			joins := 0
			for _, nd := range p.Nodes {
				c, _ := nd.Classify()
				kinds[c]++
				if nd.Name == "stream-exec-join" {
					joins++
				}
			}
			if kinds[plan.TTLConfigurable] == 0 || kinds[plan.StatefulNoTTL] == 0 || kinds[plan.Stateless] == 0 || joins == 0 {
				t.Fatalf("%d nodes: class mix %v, %d joins; want every class and some joins", n, kinds, joins)
			}
		}
	}
	if !bytes.Equal(plangen.Generate(plangen.Options{Nodes: 500, Seed: 3}), plangen.Generate(plangen.Options{Nodes: 500, Seed: 3})) {
		t.Fatal("same seed, different plans")
	}
}
