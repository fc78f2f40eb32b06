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
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import dev.statecraft.oracle.common.Json;

/**
 * {@code kafka-judge SAVEPOINT SPEC_JSON}: does Flink resume a KafkaSource from SAVEPOINT where
 * the spec says? Starts a real Kafka broker, creates the spec's topics and writes
 * {@code produce[topic][p]} records into each partition (the fixture job's data, so offsets
 * mean what they meant when the savepoint was taken) plus {@code more} records each, then runs
 * the fixture's pipeline restored from SAVEPOINT (unclaimed state NOT allowed), subscribed to the
 * spec's topics, until it has read every record from the expected offsets on. Accepted (exit 0)
 * when the first offset read in every partition is {@code expect["topic:p"]} and no other
 * partition was read; rejected (exit 1, reasons on stderr) otherwise. Prints what was read.
 */
public final class KafkaJudge {
    private KafkaJudge() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: kafka-judge SAVEPOINT SPEC_JSON");
            return 2;
        }
        Path sp = Paths.get(args[0]).toAbsolutePath();
        JsonNode spec = Json.read(Paths.get(args[1]));
        int more = spec.path("more").asInt(0);
        Map<String, int[]> produce = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = spec.get("produce").fields(); it.hasNext(); ) {
            var e = it.next();
            int[] c = new int[e.getValue().size()];
            for (int i = 0; i < c.length; i++) c[i] = e.getValue().get(i).asInt();
            produce.put(e.getKey(), c);
        }
        Map<String, Long> expect = new TreeMap<>();
        spec.get("expect").fields().forEachRemaining(e -> expect.put(e.getKey(), e.getValue().asLong()));
        long total = 0;
        for (var e : expect.entrySet()) {
            String[] tp = e.getKey().split(":");
            total += produce.get(tp[0])[Integer.parseInt(tp[1])] + more - e.getValue();
        }
        List<String> subscribe = new ArrayList<>();
        spec.get("subscribe").forEach(n -> subscribe.add(n.asText()));

        try (KafkaBroker broker = KafkaBroker.start()) {
            Map<String, Integer> parts = new LinkedHashMap<>();
            produce.forEach((t, c) -> parts.put(t, c.length));
            broker.createTopics(parts);
            for (var e : produce.entrySet()) {
                for (int p = 0; p < e.getValue().length; p++) {
                    broker.produce(e.getKey(), p, e.getValue()[p] + more, 1_700_000_000_000L + 1000L * p);
                }
            }
            Configuration conf = new Configuration();
            conf.setString("rest.bind-port", "0");
            conf.setString("taskmanager.numberOfTaskSlots", "2");
            conf.setString("execution.state-recovery.path", sp.toUri().toString());
            conf.setString("execution.state-recovery.ignore-unclaimed-state", "false");
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
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
                while (KafkaSavepoint.READ.get() < total && failure == null) {
                    if (client.getJobStatus().get().isGloballyTerminalState()) {
                        failure = "job ended: " + client.getJobExecutionResult().handle((r, t) -> t == null ? "finished" : rootMessage(t)).get();
                    } else if (System.currentTimeMillis() > deadline) {
                        failure = "read " + KafkaSavepoint.READ.get() + " of " + total + " records in 180 s";
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
            Map<String, Long> first = new TreeMap<>(KafkaSavepoint.FIRST);
            System.out.println("read " + KafkaSavepoint.READ.get() + " records; first offsets " + first);
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
            if (KafkaSavepoint.READ.get() != total) wrong.add("read " + KafkaSavepoint.READ.get() + " records, want " + total);
            if (!wrong.isEmpty()) {
                System.err.println("REJECTED: " + String.join("; ", wrong));
                return 1;
            }
            System.out.println("ACCEPTED");
            return 0;
        }
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
