package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/internal/english"
	"github.com/statecraft/statecraft/migrate"
)

func init() {
	register([]string{"savepoint"}, func() *cli.Command {
		return &cli.Command{
			Name:      "create",
			Usage:     "write a new savepoint: operators and types of an existing one (--like), entries from a dump",
			ArgsUsage: "DST",
			Description: "--like SRC gives the operators, state names and types (serializer snapshots), parallelism\n" +
				"and max parallelism; --data FILE the keyed entries and timers, one JSON object a line as\n" +
				"'savepoint dump SRC' (without --operator) prints them, each naming its operator. Every key is\n" +
				"encoded with SRC's serializers and placed in the key group of its Java hashCode. Operator\n" +
				"state is carried over from SRC (records of it in FILE must match SRC's). DST is written like\n" +
				"a migration's output: staged, verified, _metadata last.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "like", Usage: "the savepoint whose operators, types and parallelism DST takes", Required: true},
				&cli.StringFlag{Name: "data", Usage: "JSONL `FILE` of entries (savepoint dump without --operator)", Required: true},
			}, migrateFlags()...),
			Action: runSavepointCreate,
		}
	})
}

func runSavepointCreate(c *cli.Context) error {
	if c.NArg() != 1 {
		return withCode(exitFailure, fmt.Errorf("savepoint create: want DST (a new output directory), got %s", english.Count(c.NArg(), "argument")))
	}
	return runMigration(c, c.String("like"), c.Args().First(), []migrate.Step{&migrate.Load{Data: c.String("data")}})
}
