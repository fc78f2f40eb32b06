package dev.statecraft.oracle.sources;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.TableEnvironment;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;
import dev.statecraft.oracle.plans.Script;

/**
 * A Flink SQL job reading Kafka through the connector's table source ('connector' = 'kafka',
 * topics orders and payments, raw values, the topic/partition/offset metadata columns) into the
 * oracle's collecting sink, one row "topic:partition:offset" per record.
 *
 * <p>{@code kafka-sql-savepoint OUTDIR}: starts a broker, writes kafka-savepoint's records,
 * compiles the INSERT into OUTDIR/sql-kafka.plan.json, runs that plan until every record reached
 * the sink, stops it with a savepoint into OUTDIR/sql-kafka and writes OUTDIR/sql-kafka.expect.json
 * (what the job read per partition, as kafka-savepoint's "read").
 *
 * <p>{@link #judge}: kafka-judge's cases with a {@code plan} restore that plan with EXECUTE PLAN
 * (its bootstrap servers pointed at the judge's broker, its topics at the case's {@code topics}
 * when given) from the case's savepoint.
 */
public final class SqlKafka {
    private SqlKafka() {}

    static final String SINK = "consumed";

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: kafka-sql-savepoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        try (KafkaBroker broker = KafkaBroker.start()) {
            long total = KafkaSavepoint.produceTopics(broker);
            Path plan = out.resolve("sql-kafka.plan.json");
            Files.deleteIfExists(plan);
            TableEnvironment tEnv = tableEnv(new Configuration());
            tEnv.executeSql("CREATE TABLE src (v STRING, `topic` STRING NOT NULL METADATA VIRTUAL, "
                    + "`partition` INT NOT NULL METADATA VIRTUAL, `offset` BIGINT NOT NULL METADATA VIRTUAL) WITH ("
                    + "'connector' = 'kafka', 'topic' = 'orders;payments', 'properties.bootstrap.servers' = '" + broker.bootstrap + "', "
                    + "'properties.group.id' = 'statecraft-sql', 'scan.startup.mode' = 'earliest-offset', 'format' = 'raw')");
            tEnv.executeSql("CREATE TABLE " + SINK + " (k STRING) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'insert')");
            tEnv.executeSql("COMPILE PLAN '" + plan.toUri() + "' FOR INSERT INTO " + SINK
                    + " SELECT CONCAT(`topic`, ':', CAST(`partition` AS STRING), ':', CAST(`offset` AS STRING)) FROM src");
            Script.install(List.of(), 0);
            JobClient client = tableEnv(new Configuration()).loadPlan(PlanReference.fromFile(plan.toFile())).execute()
                    .getJobClient().orElseThrow();
            try {
                String failure = await(client, total);
                if (failure != null) throw new IllegalStateException(failure);
                SavepointDirs.stopInto(client, out.resolve("sql-kafka"), "statecraft-sql-kafka-sp");
            } catch (Exception e) {
                try {
                    client.cancel().get();
                } catch (Exception ignored) {
                    // already ended: the reason is thrown
                }
                throw e;
            }
            Map<String, Long> next = new TreeMap<>();
            positions().forEach((k, v) -> next.put(k, v[1] + 1));
            ObjectNode expect = Json.obj();
            expect.put("connector", KafkaSavepoint.connectorVersion());
            expect.put("bootstrap", broker.bootstrap);
            var read = expect.putArray("read");
            for (var e : KafkaSavepoint.TOPICS.entrySet()) {
                for (int p = 0; p < e.getValue().length; p++) {
                    ObjectNode o = read.addObject();
                    o.put("topic", e.getKey());
                    o.put("partition", p);
                    o.put("nextOffset", next.getOrDefault(e.getKey() + ":" + p, -1L));
                }
            }
            Json.write(out.resolve("sql-kafka.expect.json"), expect);
        }
        return 0;
    }

    static TableEnvironment tableEnv(Configuration conf) {
        conf.setString("rest.bind-port", "0");
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        return TableEnvironment.create(EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
    }

    /** Per "topic:partition": {first, last} offset the sink saw. */
    static Map<String, long[]> positions() {
        Map<String, long[]> m = new TreeMap<>();
        for (String row : Script.output().getOrDefault(SINK, List.of())) {
            String v = row.substring(row.indexOf('[') + 1, row.length() - 1); // "+I[orders:1:2]"
            int i = v.lastIndexOf(':');
            long off = Long.parseLong(v.substring(i + 1));
            long[] fl = m.computeIfAbsent(v.substring(0, i), k -> new long[] {Long.MAX_VALUE, Long.MIN_VALUE});
            fl[0] = Math.min(fl[0], off);
            fl[1] = Math.max(fl[1], off);
        }
        return m;
    }

    static int rows() {
        return Script.output().getOrDefault(SINK, List.of()).size();
    }

    /** Waits until the sink has total rows; the failure, or null. */
    static String await(JobClient client, long total) throws Exception {
        long deadline = System.currentTimeMillis() + 180_000;
        while (rows() < total) {
            if (client.getJobStatus().get().isGloballyTerminalState()) {
                return "job ended: " + client.getJobExecutionResult().handle((r, t) -> t == null ? "finished" : KafkaJudge.rootMessage(t)).get();
            }
            if (System.currentTimeMillis() > deadline) return "read " + rows() + " of " + total + " records in 180 s";
            Thread.sleep(50);
        }
        return null;
    }

    /**
     * Restores case c's plan from its savepoint (unclaimed state not allowed) against the judge's
     * broker and returns the first offset read per partition and the failure (or null).
     */
    static String judge(KafkaBroker broker, JsonNode c, long total, Map<String, Long> first, long[] read) throws Exception {
        String plan = Files.readString(Paths.get(c.get("plan").asText()));
        // the plan holds the fixture broker's address: point it at this one
        plan = plan.replaceAll("127\\.0\\.0\\.1:[0-9]+", broker.bootstrap);
        if (c.has("topics")) {
            // the topics the restored table reads (a renamed or dropped topic): its 'topic' option
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"topic\" : \"[^\"]*\"").matcher(plan);
            if (!m.find()) return "the plan has no 'topic' option to point at " + c.get("topics").asText();
            plan = m.replaceFirst(java.util.regex.Matcher.quoteReplacement("\"topic\" : \"" + c.get("topics").asText() + "\""));
        }
        Configuration conf = new Configuration();
        conf.setString("execution.state-recovery.path", Paths.get(c.get("savepoint").asText()).toAbsolutePath().toUri().toString());
        conf.setString("execution.state-recovery.ignore-unclaimed-state", "false");
        Script.install(List.of(), 0);
        JobClient client;
        try {
            client = tableEnv(conf).loadPlan(PlanReference.fromJsonString(plan)).execute().getJobClient().orElseThrow();
        } catch (Exception e) {
            return "EXECUTE PLAN refused: " + KafkaJudge.rootMessage(e);
        }
        String failure;
        try {
            failure = await(client, total);
        } finally {
            try {
                client.cancel().get();
            } catch (Exception ignored) {
                // already ended
            }
        }
        positions().forEach((k, v) -> first.put(k, v[0]));
        read[0] = rows();
        return failure;
    }
}
