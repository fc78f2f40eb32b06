package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/ttl"
)

func init() {
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "purge-expired",
			Usage:     "write a copy of a savepoint without the keyed entries whose TTL has expired",
			ArgsUsage: "SRC DST",
			Description: "An entry (a list element) of a state stored with TTL is expired when its last-access\n" +
				"timestamp + TTL <= --at, Flink's rule, the one 'plan ttl impact' counts by. A savepoint does\n" +
				"not record TTL durations, so --ttl gives it. Lists keep their live elements; the report gives,\n" +
				"per state, the entries before and after and the bytes of the entries removed.",
			Flags: append([]cli.Flag{
				&cli.StringFlag{Name: "ttl", Usage: "the states' TTL (Flink or Go duration: 1 h, 90m, 2d)", Required: true},
				&cli.StringFlag{Name: "at", Value: "now", Usage: "`TIME` to purge at: now, now+DURATION, now-DURATION, RFC 3339 or epoch ms"},
				&cli.StringSliceFlag{Name: "state", Usage: "only the state with this name (repeatable; default: every state stored with TTL)"},
				&cli.StringSliceFlag{Name: "operator", Usage: "uid:NAME or hash:HEX (repeatable; default: every keyed operator)"},
			}, migrateFlags()...),
			Action: runMigratePurge,
		}
	})
}

func runMigratePurge(c *cli.Context) error {
	src, dst, err := migrateArgs(c, "migrate purge-expired")
	if err != nil {
		return err
	}
	t, err := ttl.ParseInput(c.String("ttl"))
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("--ttl: %w", err))
	}
	at, err := parseAt(c.String("at"), time.Now())
	if err != nil {
		return withCode(exitFailure, err)
	}
	step := &migrate.PurgeExpired{TTL: t, At: at, States: c.StringSlice("state")}
	if step.Operators, err = operatorSelectors(c); err != nil {
		return err
	}
	return runMigration(c, src, dst, []migrate.Step{step})
}
