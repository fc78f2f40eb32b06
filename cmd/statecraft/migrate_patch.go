package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/migrate"
)

func init() {
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "patch",
			Usage:     "write a copy of a savepoint with keyed entries set or deleted (from a JSONL file, or by predicate)",
			ArgsUsage: "SRC DST",
			Description: "Each line is a record as 'savepoint dump' prints it without --operator (operator, state, key,\n" +
				"namespace, userKey, value, ttlTimestamp): it sets that entry (adds it or replaces its value; a\n" +
				"list state's whole list), or with \"op\":\"delete\" removes it (a map state's record without\n" +
				"userKey removes every entry of the key). Keys go to the key group of their Java hashCode; only\n" +
				"touched key groups are rewritten, other blocks copied and untouched files linked. The report\n" +
				"counts set, added and deleted entries per state.\n\n" +
				"--delete-where 'STATE: FIELD OP LITERAL' (repeatable; an entry goes when any holds) removes\n" +
				"every entry of STATE whose FIELD (key, namespace, userKey, value, ttlTimestamp, then .name or\n" +
				".index into it) compares so with the JSON LITERAL (OP: == != < <= > >=), e.g. 'count: value ==\n" +
				"null' or 'session: ttlTimestamp < 1700000000000'; it reads every entry of the selected operators\n" +
				"(--operator, default every keyed one) and runs after --data. With both, --dry-run counts\n" +
				"--delete-where's deletions on the source's entries, before --data's records apply.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "data", Usage: "JSONL (or .csv) `FILE` of patch records"},
				&cli.StringSliceFlag{Name: "delete-where", Usage: "'STATE: FIELD OP LITERAL': delete the entries it holds for (repeatable)"},
				&cli.StringSliceFlag{Name: "operator", Usage: "uid:NAME or hash:HEX: the operators --delete-where reads (repeatable; default: every keyed operator)"},
			}, migrateFlags()...),
			Action: func(c *cli.Context) error {
				src, dst, err := migrateArgs(c, "migrate patch")
				if err != nil {
					return err
				}
				step, err := migrate.NewPatchSteps(c.String("data"), c.StringSlice("delete-where"), c.StringSlice("operator"))
				if err != nil {
					return withCode(exitFailure, fmt.Errorf("migrate patch: %w", err))
				}
				return runMigration(c, src, dst, []migrate.Step{step})
			},
		}
	})
}
