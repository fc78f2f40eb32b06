package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/spec"
)

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "create",
			Usage:     "write a new savepoint: operators and types of an existing one (--like) or of a declaration (--spec), entries from a dump",
			ArgsUsage: "DST",
			Description: "--like SRC gives the operators, state names and types (serializer snapshots), parallelism\n" +
				"and max parallelism; --data FILE the keyed entries and timers, one JSON object a line as\n" +
				"'savepoint dump SRC' (without --operator) prints them, each naming its operator. Every key is\n" +
				"encoded with SRC's serializers and placed in the key group of its Java hashCode. Operator\n" +
				"state is carried over from SRC, except the operator states FILE has records of, which take\n" +
				"those records' elements. FILE may be CSV (.csv) with the dump's fields as columns. DST is\n" +
				"written like a migration's output: staged, verified, _metadata last.\n\n" +
				"--spec SPEC.yaml declares the operators instead (uid or uidHash, parallelism, max\n" +
				"parallelism, key type, states with kind, value type, map key type, namespace, TTL, timer\n" +
				"queues, operator states); serializer snapshots are written as Flink writes them for the\n" +
				"declared types. A SQL group aggregate is declared by its compiled plan and exec node\n" +
				"(plan: job.plan.json, node: 3): uid, RowData key and accumulator types come from the plan,\n" +
				"with the keyed states of its data views (COUNT DISTINCT's distinctAcc_<n>, MIN/MAX over\n" +
				"retractions' agg<i>$map); a view's field in the accumulator row is {\"dataView\": \"MapView\"}.\n" +
				"The layout of a declaration is in the README (savepoint create --spec).",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "like", Usage: "the savepoint whose operators, types and parallelism DST takes"},
				&cli.StringFlag{Name: "spec", Usage: "YAML `FILE` declaring the operators, types and parallelism DST takes (instead of --like)"},
				&cli.StringFlag{Name: "data", Usage: "JSONL (or .csv) `FILE` of entries (savepoint dump without --operator)", Required: true},
			}, migrateFlags()...),
			Action: runSavepointCreate,
		}
	})
}

func runSavepointCreate(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint create: want DST (a new output directory), got %s", english.Count(c.NArg(), "argument")))
	}
	steps := []migrate.Step{&migrate.Load{Data: c.String("data")}}
	like, declared := c.String("like"), c.String("spec")
	switch {
	case like != "" && declared != "":
		return withCode(exitFailure, fmt.Errorf("savepoint create: --like and --spec both give the operators; give one"))
	case like != "":
		return runMigration(c, like, c.Args().First(), steps)
	case declared == "":
		return withCode(exitFailure, fmt.Errorf("savepoint create: want --like SRC or --spec SPEC.yaml (where the operators and types come from)"))
	}
	sp, err := spec.Read(declared)
	if err != nil {
		return withCode(exitFailure, err)
	}
	// The declared savepoint, empty, is the source the entries are loaded into; it is scratch.
	empty, err := os.MkdirTemp("", "statecraft-spec-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(empty)
	if err := sp.WriteEmpty(empty); err != nil {
		return fmt.Errorf("%s: %w", declared, err)
	}
	return runMigration(c, empty, c.Args().First(), steps)
}
