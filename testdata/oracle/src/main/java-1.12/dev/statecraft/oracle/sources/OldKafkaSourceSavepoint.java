package dev.statecraft.oracle.sources;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.ExecutionEnvironment;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumStateSerializer;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializer;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplitSerializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.memory.MemoryStateBackend;
import org.apache.flink.runtime.util.EnvironmentInformation;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.Savepoint;
import org.apache.flink.state.api.runtime.OperatorIDGenerator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code kafka-old-source-savepoint OUTDIR} (Flink 1.12 only: FLINK_VERSION=1.12.2 or 1.12.7,
 * pom-1.12.xml): the KafkaSource fixture of {@code kafka-savepoint} as the in-tree
 * flink-connector-kafka of Flink 1.12 wrote it. Its KafkaSourceEnumStateSerializer wrote
 * enumerator state version 0 (every split per reader subtask) up to 1.12.2, and version 1 (only
 * the assigned topic partitions; FLINK-21817) from 1.12.3 on, as later releases did up to
 * connector 3.0.x. Same broker, topics, records, uid and parallelism as {@code kafka-savepoint};
 * the job records which subtask read each partition, so the v0 assignment can be checked against
 * what the job saw. A plain savepoint is taken, then the job cancelled. Writes OUTDIR/kafka-datastream and OUTDIR/kafka-datastream.expect.json (same
 * shape as kafka-savepoint's, plus the subtask per partition).
 */
public final class OldKafkaSourceSavepoint {
    private OldKafkaSourceSavepoint() {}

    static final String UID = "kafka-source";
    static final Map<String, int[]> TOPICS = new LinkedHashMap<>();

    static {
        TOPICS.put("orders", new int[] {2, 3, 4});
        TOPICS.put("payments", new int[] {5, 6});
    }

    /** Next offset and reading subtask per "topic:partition", filled inside the MiniCluster. */
    static final Map<String, Long> NEXT = new ConcurrentHashMap<>();
    static final Map<String, Integer> SUBTASK = new ConcurrentHashMap<>();
    static final AtomicLong READ = new AtomicLong();

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: kafka-old-source-savepoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        try (KafkaBroker broker = KafkaBroker.start()) {
            Map<String, Integer> parts = new LinkedHashMap<>();
            TOPICS.forEach((t, c) -> parts.put(t, c.length));
            broker.createTopics(parts);
            long total = 0;
            for (var e : TOPICS.entrySet()) {
                for (int p = 0; p < e.getValue().length; p++) {
                    broker.produce(e.getKey(), p, e.getValue()[p]);
                    total += e.getValue()[p];
                }
            }
            Path sp = out.resolve("kafka-datastream");
            runJob(broker.bootstrap, total, sp);
            ObjectNode expect = Json.obj();
            expect.put("connector", "flink-connector-kafka_2.12-" + EnvironmentInformation.getVersion());
            expect.put("operatorUid", UID);
            expect.set("read", readPositions());
            expect.set("splits", decodedSplits(sp));
            expect.set("enumerator", decodedEnumerator(sp));
            Json.write(out.resolve("kafka-datastream.expect.json"), expect);
        }
        return 0;
    }

    static void runJob(String bootstrap, long total, Path sp) throws Exception {
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        // 1.12's MiniCluster asks its dispatcher with a 10 s timeout: too short for a savepoint
        // on a loaded machine
        conf.setString("akka.ask.timeout", "120 s");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        KafkaSource<String> source = KafkaSource.<String>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(new ArrayList<>(TOPICS.keySet()))
                .setGroupId("statecraft-fixture")
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new Position())
                .build();
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-source").uid(UID)
                .map(new Note()).returns(Types.STRING).uid("note").name("note")
                .addSink(new DiscardingSink<>()).uid("discard").name("discard");
        JobClient client = env.executeAsync("statecraft-kafka-old-fixture");
        try {
            long deadline = System.currentTimeMillis() + 180_000;
            while (READ.get() < total) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("read " + READ.get() + " of " + total + " records in 180 s");
                }
                if (client.getJobStatus().get().isGloballyTerminalState()) {
                    throw new IllegalStateException("job ended early: " + client.getJobStatus().get());
                }
                Thread.sleep(50);
            }
            if (READ.get() != total) throw new IllegalStateException("read " + READ.get() + ", expected exactly " + total);
            // a plain savepoint, then cancel: the first try, stop-with-savepoint, ran into 1.12's
            // 10 s dispatcher ask timeout on the loaded machine (now raised above); the reader
            // state is the same either way, every record read
            Path tmp = Files.createTempDirectory("statecraft-kafka-old-sp");
            String location = client.triggerSavepoint(tmp.toUri().toString()).get(180, TimeUnit.SECONDS);
            Path written = Path.of(URI.create(location.startsWith("file:") ? location : "file:" + location));
            SavepointDirs.deleteTree(sp);
            Files.move(written, sp);
            SavepointDirs.deleteTree(tmp);
        } finally {
            try {
                client.cancel().get();
            } catch (Exception ignored) {
                // already ended
            }
        }
    }

    /** Emits "topic:partition:offset" for each record (1.12's deserializer interface). */
    static final class Position implements KafkaRecordDeserializer<String> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<String> out) {
            out.collect(r.topic() + ":" + r.partition() + ":" + r.offset());
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    /** Chained to the source (same parallelism, forward): its subtask is the reader's. */
    static final class Note extends RichMapFunction<String, String> {
        @Override
        public String map(String v) {
            int i = v.lastIndexOf(':');
            long off = Long.parseLong(v.substring(i + 1));
            String tp = v.substring(0, i);
            NEXT.merge(tp, off + 1, Math::max);
            SUBTASK.put(tp, getRuntimeContext().getIndexOfThisSubtask());
            READ.incrementAndGet();
            return v;
        }
    }

    static ArrayNode readPositions() {
        ArrayNode a = Json.arr();
        for (var e : TOPICS.entrySet()) {
            for (int p = 0; p < e.getValue().length; p++) {
                ObjectNode o = a.addObject();
                o.put("topic", e.getKey());
                o.put("partition", p);
                o.put("records", e.getValue()[p]);
                o.put("nextOffset", NEXT.getOrDefault(e.getKey() + ":" + p, -1L));
                o.put("subtask", SUBTASK.getOrDefault(e.getKey() + ":" + p, -1));
            }
        }
        return a;
    }

    /** The SourceReaderState elements, read with 1.12's (DataSet) State Processor API and decoded. */
    static ArrayNode decodedSplits(Path sp) throws Exception {
        ExecutionEnvironment env = ExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        List<byte[]> elements = Savepoint.load(env, sp.toUri().toString(), new MemoryStateBackend())
                .readListState(UID, "SourceReaderState", PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO)
                .collect();
        KafkaPartitionSplitSerializer ser = new KafkaPartitionSplitSerializer();
        TreeMap<String, ObjectNode> sorted = new TreeMap<>();
        for (byte[] b : elements) {
            KafkaPartitionSplit s = SimpleVersionedSerialization.readVersionAndDeSerialize(ser, b);
            sorted.put(s.splitId(), split(s));
        }
        ArrayNode a = Json.arr();
        sorted.values().forEach(a::add);
        return a;
    }

    static ObjectNode split(KafkaPartitionSplit s) {
        ObjectNode o = Json.obj();
        o.put("topic", s.getTopic());
        o.put("partition", s.getPartition());
        o.put("startingOffset", s.getStartingOffset());
        o.put("stoppingOffset", s.getStoppingOffset().orElse(KafkaPartitionSplit.NO_STOPPING_OFFSET));
        return o;
    }

    /**
     * The coordinator state in _metadata, its enumerator checkpoint decoded by the connector's own
     * serializer. 1.12.0-1.12.2: getCurrentAssignment() (subtask -> splits); 1.12.3 on:
     * assignedPartitions() (topic partitions only, listed with Long.MIN_VALUE offsets, not
     * recorded). Found by reflection so one source compiles against both.
     */
    @SuppressWarnings("unchecked")
    static ObjectNode decodedEnumerator(Path sp) throws Exception {
        CheckpointMetadata md;
        try (InputStream raw = Files.newInputStream(sp.resolve("_metadata"));
                DataInputStream in = new DataInputStream(raw)) {
            md = Checkpoints.loadCheckpointMetadata(in, OldKafkaSourceSavepoint.class.getClassLoader(), sp.toUri().toString());
        }
        var id = OperatorIDGenerator.fromUid(UID);
        for (OperatorState s : md.getOperatorStates()) {
            if (!s.getOperatorID().equals(id)) continue;
            StreamStateHandle h = s.getCoordinatorState();
            byte[] bytes;
            try (var in = h.openInputStream()) {
                bytes = in.readAllBytes();
            }
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
            ObjectNode o = Json.obj();
            o.put("coordinatorSerdeVersion", in.readInt());
            int version = in.readInt();
            o.put("serializerVersion", version);
            byte[] enumBytes = in.readNBytes(in.readInt());
            o.put("trailingBytes", in.available());
            KafkaSourceEnumState st = new KafkaSourceEnumStateSerializer().deserialize(version, enumBytes);
            // neither release records it: a restored enumerator takes the discovery as done
            o.put("initialDiscoveryFinished", true);
            TreeMap<String, ObjectNode> sorted = new TreeMap<>();
            try {
                var m = st.getClass().getMethod("getCurrentAssignment");
                var assignment = (Map<Integer, Set<KafkaPartitionSplit>>) m.invoke(st);
                for (var e : assignment.entrySet()) {
                    for (KafkaPartitionSplit ks : e.getValue()) {
                        ObjectNode so = split(ks);
                        so.put("status", "ASSIGNED");
                        so.put("subtask", e.getKey());
                        sorted.put(ks.splitId(), so);
                    }
                }
            } catch (NoSuchMethodException v1) {
                var m = st.getClass().getMethod("assignedPartitions");
                for (TopicPartition tp : (Collection<TopicPartition>) m.invoke(st)) {
                    ObjectNode so = Json.obj();
                    so.put("topic", tp.topic());
                    so.put("partition", tp.partition());
                    so.put("startingOffset", Long.MIN_VALUE);
                    so.put("stoppingOffset", Long.MIN_VALUE);
                    so.put("status", "ASSIGNED");
                    sorted.put(tp.toString(), so);
                }
            }
            ArrayNode a = o.putArray("partitions");
            sorted.values().forEach(a::add);
            return o;
        }
        throw new IllegalStateException("no operator " + UID + " in " + sp);
    }
}
