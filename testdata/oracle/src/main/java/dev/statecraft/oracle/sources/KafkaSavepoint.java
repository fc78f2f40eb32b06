package dev.statecraft.oracle.sources;

import java.io.DataInputStream;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumState;
import org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumStateSerializer;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplit;
import org.apache.flink.connector.kafka.source.split.KafkaPartitionSplitSerializer;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.io.SimpleVersionedSerialization;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code kafka-savepoint OUTDIR}: starts a real Kafka broker on loopback, writes a few records
 * into two multi-partition topics, runs a DataStream job whose KafkaSource (uid kafka-source)
 * reads them all from the earliest offsets, stops it with a savepoint into OUTDIR/kafka-datastream
 * and writes OUTDIR/kafka-datastream.expect.json: what the job read per partition (so the next
 * offset each split must hold), the reader splits decoded by the connector's own split serializer
 * (read back with the State Processor API), and the enumerator state decoded by the connector's
 * enumerator serializer from the coordinator state in _metadata. The broker is stopped before the
 * command returns.
 */
public final class KafkaSavepoint {
    private KafkaSavepoint() {}

    static final String UID = "kafka-source";
    /** topic -> record count per partition (index = partition): a different count everywhere. */
    static final Map<String, int[]> TOPICS = new LinkedHashMap<>();

    static {
        TOPICS.put("orders", new int[] {2, 3, 4});
        TOPICS.put("payments", new int[] {5, 6});
    }

    /** Next offset to read per "topic:partition", filled inside the MiniCluster (same JVM). */
    static final Map<String, Long> NEXT = new ConcurrentHashMap<>();
    /** First offset read per "topic:partition" (the judge's evidence of where a restore resumed). */
    static final Map<String, Long> FIRST = new ConcurrentHashMap<>();
    static final AtomicLong READ = new AtomicLong();

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: kafka-savepoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        try (KafkaBroker broker = KafkaBroker.start()) {
            long total = produceTopics(broker);
            Path sp = out.resolve("kafka-datastream");
            runJob(broker.bootstrap, total, sp);
            ObjectNode expect = Json.obj();
            expect.put("connector", connectorVersion());
            expect.put("operatorUid", UID);
            expect.set("read", readPositions());
            expect.set("splits", decodedSplits(sp));
            expect.set("enumerator", decodedEnumerator(sp));
            Json.write(out.resolve("kafka-datastream.expect.json"), expect);
        }
        return 0;
    }

    /** Creates TOPICS on the broker and writes their records; returns how many. */
    static long produceTopics(KafkaBroker broker) throws Exception {
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
        return total;
    }

    static void runJob(String bootstrap, long total, Path sp) throws Exception {
        runJob(bootstrap, total, sp, new Configuration());
    }

    /** runJob with the job settings of conf besides the fixture's own. */
    static void runJob(String bootstrap, long total, Path sp, Configuration conf) throws Exception {
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        StreamExecutionEnvironment env = Cluster.stream(2, conf);
        KafkaSource<String> source = KafkaSource.<String>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(new ArrayList<>(TOPICS.keySet()))
                .setGroupId("statecraft-fixture")
                .setStartingOffsets(OffsetsInitializer.earliest())
                .setDeserializer(new Position())
                .build();
        pipeline(env, source);
        JobClient client = env.executeAsync("statecraft-kafka-fixture");
        SavepointDirs.stopAfter(client, READ::get, total, "records", 50, sp, "statecraft-kafka-sp");
        if (READ.get() != total) throw new IllegalStateException("read " + READ.get() + ", expected exactly " + total);
    }

    /** The fixture job's operators (the judge restores the same pipeline); resets the counters. */
    static void pipeline(StreamExecutionEnvironment env, KafkaSource<String> source) {
        NEXT.clear();
        FIRST.clear();
        READ.set(0);
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "kafka-source").uid(UID)
                .map(new Note()).returns(Types.STRING).uid("note").name("note")
                .sinkTo(new DiscardingSink<>()).uid("discard").name("discard");
    }

    /** Emits "topic:partition:offset" for each record, so the job knows where it stands. */
    static final class Position implements KafkaRecordDeserializationSchema<String> {
        @Override
        public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<String> out) {
            out.collect(r.topic() + ":" + r.partition() + ":" + r.offset());
        }

        @Override
        public TypeInformation<String> getProducedType() {
            return Types.STRING;
        }
    }

    static final class Note implements MapFunction<String, String> {
        @Override
        public String map(String v) {
            int i = v.lastIndexOf(':');
            long off = Long.parseLong(v.substring(i + 1));
            NEXT.merge(v.substring(0, i), off + 1, Math::max);
            FIRST.merge(v.substring(0, i), off, Math::min);
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
            }
        }
        return a;
    }

    /** The SourceReaderState list of the source, each element decoded by the connector's serializer. */
    static ArrayNode decodedSplits(Path sp) throws Exception {
        List<byte[]> elements = readerElements(sp, UID);
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

    /** The SourceReaderState elements of source uid, read back with the State Processor API. */
    static List<byte[]> readerElements(Path sp, String uid) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        SavepointReader reader = SavepointReader.read(env, sp.toUri().toString());
        List<byte[]> elements = new ArrayList<>();
        try (var it = reader.readListState(OperatorIdentifier.forUid(uid), "SourceReaderState",
                PrimitiveArrayTypeInfo.BYTE_PRIMITIVE_ARRAY_TYPE_INFO).executeAndCollect()) {
            it.forEachRemaining(elements::add);
        }
        return elements;
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
     * The coordinator state of the source: Flink's SourceCoordinator framing (i32 coordinator serde
     * version, i32 enumerator serializer version, i32 length, bytes) around the connector's
     * enumerator checkpoint, which the connector's serializer decodes.
     */
    static ObjectNode decodedEnumerator(Path sp) throws Exception {
        CheckpointMetadata md;
        try (InputStream raw = Files.newInputStream(sp.resolve("_metadata"));
                DataInputStream in = new DataInputStream(raw)) {
            md = Checkpoints.loadCheckpointMetadata(in, KafkaSavepoint.class.getClassLoader(), sp.toUri().toString());
        }
        var id = OperatorIdentifier.forUid(UID).getOperatorId();
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
            KafkaSourceEnumState st = new KafkaSourceEnumStateSerializer().deserialize(version, enumBytes);
            o.put("initialDiscoveryFinished", st.initialDiscoveryFinished());
            TreeMap<String, ObjectNode> sorted = new TreeMap<>();
            for (ObjectNode so : enumPartitions(st)) {
                sorted.put(so.get("topic").asText() + "-" + so.get("partition").asInt(), so);
            }
            ArrayNode a = o.putArray("partitions");
            sorted.values().forEach(a::add);
            return o;
        }
        throw new IllegalStateException("no operator " + UID + " in " + sp);
    }

    /**
     * The partitions of an enumerator state with their assignment status. Connector 4.x and later
     * keep whole splits ({@code splits()}, SplitAndAssignmentStatus); 3.x (Flink 1.20) only topic
     * and partition ({@code partitions()}, TopicPartitionAndAssignmentStatus), listed with
     * Long.MIN_VALUE offsets (not recorded). Found by reflection so this file compiles against
     * both releases.
     */
    static List<ObjectNode> enumPartitions(KafkaSourceEnumState st) throws Exception {
        boolean whole = true;
        java.lang.reflect.Method m;
        try {
            m = st.getClass().getMethod("splits");
        } catch (NoSuchMethodException e) {
            m = st.getClass().getMethod("partitions");
            whole = false;
        }
        List<ObjectNode> out = new ArrayList<>();
        for (Object x : (java.util.Collection<?>) m.invoke(st)) {
            java.lang.reflect.Method status = x.getClass().getMethod("assignmentStatus");
            status.setAccessible(true);
            ObjectNode so;
            if (whole) {
                java.lang.reflect.Method sp = x.getClass().getMethod("split");
                sp.setAccessible(true);
                so = split((KafkaPartitionSplit) sp.invoke(x));
            } else {
                java.lang.reflect.Method tpm = x.getClass().getMethod("topicPartition");
                tpm.setAccessible(true);
                org.apache.kafka.common.TopicPartition tp = (org.apache.kafka.common.TopicPartition) tpm.invoke(x);
                so = Json.obj();
                so.put("topic", tp.topic());
                so.put("partition", tp.partition());
                so.put("startingOffset", Long.MIN_VALUE);
                so.put("stoppingOffset", Long.MIN_VALUE);
            }
            Object st8 = status.invoke(x);
            so.put("status", st8 instanceof Enum<?> en ? en.name() : String.valueOf(st8));
            out.add(so);
        }
        return out;
    }

    static String connectorVersion() {
        Package p = KafkaSource.class.getPackage();
        String v = p == null ? null : p.getImplementationVersion();
        if (v != null) return v;
        String loc = KafkaSource.class.getProtectionDomain().getCodeSource().getLocation().getPath();
        return loc.substring(loc.lastIndexOf('/') + 1);
    }
}
