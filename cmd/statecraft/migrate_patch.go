package main

import (
	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/migrate"
)

func init() {
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "patch",
			Usage:     "write a copy of a savepoint with keyed entries set or deleted from a JSONL file",
			ArgsUsage: "SRC DST",
			Description: "Each line is a record as 'savepoint dump' prints it without --operator (operator, state, key,\n" +
				"namespace, userKey, value, ttlTimestamp): it sets that entry (adds it or replaces its value; a\n" +
				"list state's whole list), or with \"op\":\"delete\" removes it (a map state's record without\n" +
				"userKey removes every entry of the key). Keys go to the key group of their Java hashCode; only\n" +
				"touched key groups are rewritten, other blocks copied and untouched files linked. The report\n" +
				"counts set, added and deleted entries per state.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "data", Usage: "JSONL `FILE` of patch records", Required: true},
			}, migrateFlags()...),
			Action: func(c *cli.Context) error {
				src, dst, err := migrateArgs(c, "migrate patch")
				if err != nil {
					return err
				}
				return runMigration(c, src, dst, []migrate.Step{&migrate.Patch{Data: c.String("data")}})
			},
		}
	})
}
