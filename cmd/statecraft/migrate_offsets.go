package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/statecraft/statecraft/migrate"
	"github.com/statecraft/statecraft/statecore/sourcestate"
)

func init() {
	register([]string{"migrate"}, func() *cli.Command {
		return &cli.Command{
			Name:      "offsets",
			Usage:     "change where a KafkaSource resumes: its readers' splits and its enumerator state together",
			ArgsUsage: "SRC DST",
			Description: "Changes (repeatable, combinable; one per partition):\n" +
				"  --set TOPIC:PARTITION=OFFSET   --set TOPIC=earliest|latest|committed|OFFSET (all partitions)\n" +
				"  --shift TOPIC[:PARTITION]=+N|-N   --rename-topic OLD=NEW   --drop-topic TOPIC\n" +
				"  --from-file FILE: CSV (topic,partition,offset) or a JSON list of {topic, partition, offset}\n" +
				"  --to-timestamp T --bootstrap-servers HOSTS [--kafka-config FILE]: every partition (but dropped\n" +
				"    topics; renamed ones under the new name) to the first offset at or after T (epoch ms or RFC 3339),\n" +
				"    asked of the Kafka cluster now; FILE is a Kafka client properties file (security.protocol,\n" +
				"    sasl.mechanism PLAIN/SCRAM, sasl.jaas.config, PEM ssl.truststore/keystore settings)\n" +
				"A change naming a topic or partition the savepoint does not hold is an error listing what it holds.",
			Flags: append(migrateFlags(),
				&cli.StringFlag{Name: "operator", Usage: "the source: uid:NAME or hash:HEX", Required: true},
				&cli.StringSliceFlag{Name: "set", Usage: "TOPIC:PARTITION=OFFSET or TOPIC=earliest|latest|committed|OFFSET"},
				&cli.StringSliceFlag{Name: "shift", Usage: "TOPIC[:PARTITION]=+N|-N"},
				&cli.StringSliceFlag{Name: "rename-topic", Usage: "OLD=NEW"},
				&cli.StringSliceFlag{Name: "drop-topic", Usage: "TOPIC"},
				&cli.StringFlag{Name: "from-file", Usage: "offsets to set, CSV or JSON (topic, partition, offset)"},
				&cli.StringFlag{Name: "to-timestamp", Usage: "move every partition to the first offset at or after T (epoch ms or RFC 3339), asked of the Kafka cluster"},
				&cli.StringFlag{Name: "bootstrap-servers", Usage: "HOST:PORT[,...] of the Kafka cluster (with --to-timestamp)"},
				&cli.StringFlag{Name: "kafka-config", Usage: "Kafka client properties file: TLS and SASL settings (with --to-timestamp)"},
			),
			Action: runMigrateOffsets,
		}
	})
}

func runMigrateOffsets(c *cli.Context) error {
	src, dst, err := migrateArgs(c, "migrate offsets")
	if err != nil {
		return err
	}
	op, err := migrate.ParseSelector(c.String("operator"))
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("migrate offsets: %w", err))
	}
	var changes []sourcestate.OffsetChange
	for _, kind := range []string{"set", "shift", "rename-topic", "drop-topic"} {
		for _, arg := range c.StringSlice(kind) {
			ch, err := sourcestate.ParseOffsetChange(kind, arg)
			if err != nil {
				return withCode(exitFailure, fmt.Errorf("migrate offsets: %w", err))
			}
			changes = append(changes, ch)
		}
	}
	if f := c.String("from-file"); f != "" {
		more, err := migrate.OffsetsFromFile(f)
		if err != nil {
			return withCode(exitFailure, fmt.Errorf("migrate offsets: --from-file %s: %w", f, err))
		}
		changes = append(changes, more...)
	}
	at, err := migrate.NewTimeLookup(c.String("to-timestamp"), c.String("bootstrap-servers"), c.String("kafka-config"))
	if err != nil {
		return withCode(exitFailure, fmt.Errorf("migrate offsets: --%w", err))
	}
	if len(changes) == 0 && at == nil {
		return withCode(exitFailure, fmt.Errorf("migrate offsets: give at least one of --set, --shift, --rename-topic, --drop-topic, --from-file, --to-timestamp"))
	}
	return runMigration(c, src, dst, []migrate.Step{&migrate.Offsets{Operator: op, Changes: changes, AtTime: at}})
}
