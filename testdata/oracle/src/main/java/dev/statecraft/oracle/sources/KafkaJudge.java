package dev.statecraft.oracle.sources;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;

/**
 * {@code kafka-judge SPEC_JSON} (or {@code kafka-judge SAVEPOINT SPEC_JSON} for one case): does
 * Flink resume a KafkaSource from each case's savepoint where the spec says? Starts ONE real
 * Kafka broker for all cases, creates the spec's topics and writes {@code produce[topic][p]}
 * records into each partition (the fixture job's data, so offsets mean what they meant when the
 * savepoint was taken) plus {@code more} records each, record i of partition p with timestamp
 * {@link KafkaBroker#timestamp}. Then, per case of {@code cases} ({@code savepoint},
 * {@code subscribe}, {@code expect}), runs the fixture's pipeline restored from the savepoint
 * (unclaimed state NOT allowed), subscribed to the case's topics, until it has read every record
 * from the expected offsets on. Accepted (exit 0) when in every case the first offset read in
 * every partition is {@code expect["topic:p"]} and no other partition was read; rejected (exit 1,
 * reasons on stderr) otherwise. Prints what was read per case. A case with a {@code plan} (a
 * compiled SQL plan reading Kafka, see {@link SqlKafka}) restores that plan under EXECUTE PLAN
 * instead; its topics are the plan's, or {@code topics} ("a;b", the table's 'topic' option).
 *
 * <p>{@code expect["topic:p"] = "latest"} (DataStream cases): the partition must start at its end
 * as of the restore. Once the restored job runs, the judge appends one record at a time to such
 * partitions until the job has read one from each; it accepts when the first offset read is at or
 * past the partition's end before the restore (nothing produced before was read) and every record
 * from there on was read (what was produced after was). Records appended count for later cases.
 */
public final class KafkaJudge {
    private KafkaJudge() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 1 && args.length != 2) {
            System.err.println("usage: kafka-judge [SAVEPOINT] SPEC_JSON");
            return 2;
        }
        JsonNode spec = Json.read(Paths.get(args[args.length - 1]));
        int more = spec.path("more").asInt(0);
        Map<String, int[]> produce = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = spec.get("produce").fields(); it.hasNext(); ) {
            var e = it.next();
            int[] c = new int[e.getValue().size()];
            for (int i = 0; i < c.length; i++) c[i] = e.getValue().get(i).asInt();
            produce.put(e.getKey(), c);
        }
        List<JsonNode> cases = new ArrayList<>();
        if (args.length == 2) {
            ObjectNode one = spec.deepCopy();
            one.put("savepoint", args[0]);
            cases.add(one);
        } else {
            spec.get("cases").forEach(cases::add);
        }

        try (KafkaBroker broker = KafkaBroker.start()) {
            Map<String, Integer> parts = new LinkedHashMap<>();
            produce.forEach((t, c) -> parts.put(t, c.length));
            broker.createTopics(parts);
            // records in each "topic:p" so far (latest cases append)
            Map<String, Long> produced = new TreeMap<>();
            for (var e : produce.entrySet()) {
                for (int p = 0; p < e.getValue().length; p++) {
                    broker.produce(e.getKey(), p, e.getValue()[p] + more);
                    produced.put(e.getKey() + ":" + p, (long) e.getValue()[p] + more);
                }
            }
            List<String> wrong = new ArrayList<>();
            for (JsonNode c : cases) {
                String name = c.path("name").asText(c.get("savepoint").asText());
                for (String w : judge(broker, c, produced)) wrong.add(name + ": " + w);
            }
            if (!wrong.isEmpty()) {
                System.err.println("REJECTED: " + String.join("; ", wrong));
                return 1;
            }
            System.out.println("ACCEPTED");
            return 0;
        }
    }

    /** Restores one case's savepoint and returns what is wrong (empty: resumed as expected). */
    private static List<String> judge(KafkaBroker broker, JsonNode c, Map<String, Long> produced) throws Exception {
        Path sp = Paths.get(c.get("savepoint").asText()).toAbsolutePath();
        Map<String, Long> expect = new TreeMap<>();
        // latest partitions: their end before the restore (nothing before it may be read)
        Map<String, Long> latest = new TreeMap<>();
        for (var it = c.get("expect").fields(); it.hasNext(); ) {
            var e = it.next();
            if (e.getValue().isTextual() && e.getValue().asText().equals("latest")) {
                latest.put(e.getKey(), produced.get(e.getKey()));
            } else {
                expect.put(e.getKey(), e.getValue().asLong());
            }
        }
        for (var it = c.get("expect").fieldNames(); it.hasNext(); ) {
            String k = it.next();
            if (!produced.containsKey(k)) throw new IllegalArgumentException("expect names " + k + ", which the spec does not produce");
        }
        long total = 0;
        for (var e : expect.entrySet()) total += produced.get(e.getKey()) - e.getValue();
        if (c.has("plan")) {
            if (!latest.isEmpty()) throw new IllegalArgumentException("latest expectations are judged for DataStream cases only");
            // a SQL job: its plan names the topics; the records it consumed show where it resumed
            Map<String, Long> first = new TreeMap<>();
            long[] read = new long[1];
            String failure = SqlKafka.judge(broker, c, total, first, read);
            return verdict(c.path("name").asText(sp.toString()), failure, expect, first, read[0], total);
        }
        List<String> subscribe = new ArrayList<>();
        c.get("subscribe").forEach(n -> subscribe.add(n.asText()));
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        conf.setString("execution.state-recovery.path", sp.toUri().toString());
        conf.setString("execution.state-recovery.ignore-unclaimed-state", "false");
        StreamExecutionEnvironment env = Cluster.stream(2, conf);
        KafkaSource<String> source = KafkaSource.<String>builder()
                .setBootstrapServers(broker.bootstrap)
                .setTopics(subscribe)
                .setGroupId("statecraft-judge")
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new KafkaSavepoint.Position())
                .build();
        KafkaSavepoint.pipeline(env, source);
        JobClient client = env.executeAsync("statecraft-kafka-judge");
        String failure = null;
        try {
            long deadline = System.currentTimeMillis() + 180_000;
            long lastAppend = 0;
            // until every latest partition has been read from, the total is not known yet
            while ((!latest.isEmpty() || KafkaSavepoint.READ.get() < total) && failure == null) {
                if (!latest.isEmpty() && latest.keySet().stream().allMatch(KafkaSavepoint.FIRST::containsKey)) {
                    for (String k : latest.keySet()) {
                        long first = KafkaSavepoint.FIRST.get(k);
                        total += produced.get(k) - first;
                        expect.put(k, first);
                        if (first < latest.get(k)) {
                            failure = k + " resumed at " + first + ", before its end " + latest.get(k) + " at the restore (want latest)";
                        }
                    }
                    System.out.println(c.path("name").asText(sp.toString()) + ": latest partitions resumed at " + new TreeMap<>(KafkaSavepoint.FIRST)
                            + ", ends before the restore " + latest);
                    latest.clear();
                    continue;
                }
                if (!latest.isEmpty() && System.currentTimeMillis() - lastAppend > 300
                        && client.getJobStatus().get() == org.apache.flink.api.common.JobStatus.RUNNING) {
                    // one more record where the job has read nothing yet: the reader seeks to the
                    // end when it gets the split, so records from then on must arrive
                    for (String k : latest.keySet()) {
                        if (KafkaSavepoint.FIRST.containsKey(k)) continue;
                        int i = k.lastIndexOf(':');
                        broker.produce(k.substring(0, i), Integer.parseInt(k.substring(i + 1)), produced.get(k).intValue(), 1);
                        produced.merge(k, 1L, Long::sum);
                    }
                    lastAppend = System.currentTimeMillis();
                }
                if (client.getJobStatus().get().isGloballyTerminalState()) {
                    failure = "job ended: " + client.getJobExecutionResult().handle((r, t) -> t == null ? "finished" : rootMessage(t)).get();
                } else if (System.currentTimeMillis() > deadline) {
                    failure = "read " + KafkaSavepoint.READ.get() + " of " + total + " records in 180 s"
                            + (latest.isEmpty() ? "" : "; latest partitions never read from: " + latest.keySet());
                } else {
                    Thread.sleep(50);
                }
            }
        } finally {
            try {
                client.cancel().get();
            } catch (Exception ignored) {
                // already ended
            }
        }
        return verdict(c.path("name").asText(sp.toString()), failure, expect, new TreeMap<>(KafkaSavepoint.FIRST), KafkaSavepoint.READ.get(), total);
    }

    /** What is wrong with a restored run that read `read` records, first offsets `first`. */
    private static List<String> verdict(String name, String failure, Map<String, Long> expect, Map<String, Long> first, long read, long total) {
        System.out.println(name + ": read " + read + " records; first offsets " + first);
        List<String> wrong = new ArrayList<>();
        if (failure != null) wrong.add(failure);
        for (var e : expect.entrySet()) {
            Long got = first.get(e.getKey());
            if (got == null || got.longValue() != e.getValue()) {
                wrong.add(e.getKey() + " resumed at " + got + ", want " + e.getValue());
            }
        }
        for (String k : first.keySet()) {
            if (!expect.containsKey(k)) wrong.add(k + " was read (from " + first.get(k) + ") but is not expected");
        }
        if (read != total) wrong.add("read " + read + " records, want " + total);
        return wrong;
    }

    static String rootMessage(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (b.length() > 0) b.append(" <- ");
            b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            if (c.getCause() == c) break;
        }
        return b.toString();
    }
}
