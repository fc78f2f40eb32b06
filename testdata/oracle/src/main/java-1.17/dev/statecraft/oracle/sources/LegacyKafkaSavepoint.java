package dev.statecraft.oracle.sources;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.runtime.TupleSerializer;
import org.apache.flink.api.java.typeutils.runtime.kryo.KryoSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.connectors.kafka.FlinkKafkaConsumer;
import org.apache.flink.streaming.connectors.kafka.KafkaDeserializationSchema;
import org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartition;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code kafka-legacy-savepoint OUTDIR} (Flink 1.17 only): starts a real Kafka broker, writes the
 * same records as kafka-savepoint into the same topics, runs a job whose legacy
 * {@code FlinkKafkaConsumer} (uid kafka-consumer, removed from the connector in 4.x) reads them all
 * from the earliest offsets, takes a savepoint into OUTDIR/flink-kafka-consumer (then cancels the job) and writes
 * OUTDIR/flink-kafka-consumer.expect.json: what the job read per partition and the union list state
 * {@code topic-partition-offset-states} read back with the State Processor API and the
 * connector's own state serializer (Tuple2 of a Kryo-serialized KafkaTopicPartition and the
 * offset of the last record read).
 */
public final class LegacyKafkaSavepoint {
    private LegacyKafkaSavepoint() {}

    static final String UID = "kafka-consumer";
    static final String STATE = "topic-partition-offset-states";

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: kafka-legacy-savepoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        try (KafkaBroker broker = KafkaBroker.start()) {
            long total = KafkaSavepoint.produceTopics(broker);
            Path sp = out.resolve("flink-kafka-consumer");
            runJob(broker.bootstrap, total, sp);
            ObjectNode expect = Json.obj();
            expect.put("connector", KafkaSavepoint.connectorVersion());
            expect.put("operatorUid", UID);
            expect.put("state", STATE);
            expect.set("read", KafkaSavepoint.readPositions());
            expect.set("offsets", unionState(sp));
            Json.write(out.resolve("flink-kafka-consumer.expect.json"), expect);
        }
        return 0;
    }

    static void runJob(String bootstrap, long total, Path sp) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        Properties props = new Properties();
        props.setProperty("bootstrap.servers", bootstrap);
        props.setProperty("group.id", "statecraft-legacy-fixture");
        FlinkKafkaConsumer<String> consumer = new FlinkKafkaConsumer<>(
                new ArrayList<>(KafkaSavepoint.TOPICS.keySet()), new Position(), props);
        consumer.setStartFromEarliest();
        KafkaSavepoint.NEXT.clear();
        KafkaSavepoint.FIRST.clear();
        KafkaSavepoint.READ.set(0);
        env.addSource(consumer).uid(UID).name("kafka-consumer")
                .map(new KafkaSavepoint.Note()).returns(Types.STRING).uid("note").name("note")
                .addSink(new DiscardingSink<>()).uid("discard").name("discard");
        JobClient client = env.executeAsync("statecraft-kafka-legacy-fixture");
        try {
            long deadline = System.currentTimeMillis() + 180_000;
            while (KafkaSavepoint.READ.get() < total) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("read " + KafkaSavepoint.READ.get() + " of " + total + " records in 180 s");
                }
                if (client.getJobStatus().get().isGloballyTerminalState()) {
                    throw new IllegalStateException("job ended early: " + client.getJobStatus().get());
                }
                Thread.sleep(50);
            }
            // A plain savepoint, then cancel: stop-with-savepoint stops a legacy SourceFunction
            // before the snapshot, and a stopped FlinkKafkaConsumer writes an empty union state.
            Path tmp = Files.createTempDirectory("statecraft-kafka-legacy-sp");
            String location = client.triggerSavepoint(tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                    .get(60, TimeUnit.SECONDS);
            SavepointDirs.deleteTree(sp);
            Files.move(Path.of(URI.create(location.startsWith("file:") ? location : "file:" + location)), sp);
            SavepointDirs.deleteTree(tmp);
        } finally {
            try {
                client.cancel().get();
            } catch (Exception ignored) {
                // already ended: an error is thrown from above
            }
        }
    }

    /** Emits "topic:partition:offset" for each record, as kafka-savepoint's deserializer does. */
    static final class Position implements KafkaDeserializationSchema<String> {
        @Override
        public boolean isEndOfStream(String next) {
            return false;
        }

        @Override
        public String deserialize(ConsumerRecord<byte[], byte[]> r) {
            return r.topic() + ":" + r.partition() + ":" + r.offset();
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    /**
     * The consumer's union list state read back with the serializer FlinkKafkaConsumerBase
     * declares for it (createStateSerializer: a TupleSerializer of a KryoSerializer for
     * KafkaTopicPartition and a LongSerializer), sorted by topic and partition.
     */
    static ArrayNode unionState(Path sp) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        @SuppressWarnings({"unchecked", "rawtypes"})
        TypeSerializer<Tuple2<KafkaTopicPartition, Long>> ser = new TupleSerializer<>((Class) Tuple2.class,
                new TypeSerializer<?>[] {new KryoSerializer<>(KafkaTopicPartition.class, new ExecutionConfig()), LongSerializer.INSTANCE});
        SavepointReader reader = SavepointReader.read(env, sp.toUri().toString());
        List<Tuple2<KafkaTopicPartition, Long>> elements = new ArrayList<>();
        try (var it = reader.readUnionState(OperatorIdentifier.forUid(UID), STATE,
                TypeInformation.of(new TypeHint<Tuple2<KafkaTopicPartition, Long>>() {}), ser).executeAndCollect()) {
            it.forEachRemaining(elements::add);
        }
        TreeMap<String, ObjectNode> sorted = new TreeMap<>();
        for (Tuple2<KafkaTopicPartition, Long> t : elements) {
            ObjectNode o = Json.obj();
            o.put("topic", t.f0.getTopic());
            o.put("partition", t.f0.getPartition());
            o.put("offset", t.f1);
            sorted.put(t.f0.getTopic() + "-" + t.f0.getPartition(), o);
        }
        ArrayNode a = Json.arr();
        sorted.values().forEach(a::add);
        return a;
    }
}
