// Command plangen writes a synthetic compiled plan (see package plangen) to stdout:
//
//	go run ./internal/plangen/cmd/plangen -nodes 5000 -seed 1 > plan.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/statecraft/statecraft/internal/plangen"
)

func main() {
	nodes := flag.Int("nodes", 5000, "number of nodes")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if _, err := os.Stdout.Write(plangen.Generate(plangen.Options{Nodes: *nodes, Seed: *seed})); err != nil {
		fmt.Fprintln(os.Stderr, "plangen:", err)
		os.Exit(1)
	}
}
