package dev.statecraft.oracle.sources;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code number-source-savepoint OUTDIR}: a FLIP-27 source that is neither Kafka's nor
 * FileSource's, for the listings' raw fallback. A DataGeneratorSource (flink-connector-datagen;
 * its splits and enumerator checkpoint are NumberSequenceSource's) with uid number-source,
 * parallelism 2, throttled to a few records a second so it is still running when the job is
 * stopped with a savepoint into OUTDIR/number-source. Writes OUTDIR/number-source.expect.json:
 * each reader split as Flink's SimpleVersionedSerialization framed it (serializer version and
 * payload, base64) with what NumberSequenceSource's split serializer decodes from it, and the
 * coordinator state's enumerator checkpoint (version, payload) with the splits it holds.
 */
public final class NumberSourceSavepoint {
    private NumberSourceSavepoint() {}

    static final String UID = "number-source";
    static final AtomicLong READ = new AtomicLong();

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: number-source-savepoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path sp = out.resolve("number-source");
        READ.set(0);
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("taskmanager.numberOfTaskSlots", "2");
        StreamExecutionEnvironment env = Cluster.stream(2, conf);
        DataGeneratorSource<Long> source = new DataGeneratorSource<>((GeneratorFunction<Long, Long>) i -> i,
                Long.MAX_VALUE, RateLimiterStrategy.perSecond(20), Types.LONG);
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "number-source").uid(UID)
                .map(new Count()).uid("count").name("count")
                .sinkTo(new DiscardingSink<>()).uid("discard").name("discard");
        JobClient client = env.executeAsync("statecraft-number-source-fixture");
        SavepointDirs.stopAfter(client, READ::get, 10, "records", 50, sp, "statecraft-number-sp");
        ObjectNode expect = Json.obj();
        expect.put("operatorUid", UID);
        expect.put("read", READ.get());
        expect.set("splits", splits(sp, source.getSplitSerializer()));
        expect.set("enumerator", enumerator(sp, source));
        Json.write(out.resolve("number-source.expect.json"), expect);
        return 0;
    }

    static final class Count implements MapFunction<Long, Long> {
        @Override
        public Long map(Long v) {
            READ.incrementAndGet();
            return v;
        }
    }

    /**
     * The SourceReaderState elements (State Processor API): i32 serializer version, i32 length,
     * payload, the payload also decoded by the split serializer.
     */
    static ArrayNode splits(Path sp, SimpleVersionedSerializer<NumberSequenceSource.NumberSequenceSplit> ser) throws Exception {
        List<byte[]> elements = KafkaSavepoint.readerElements(sp, UID);
        TreeMap<String, ObjectNode> sorted = new TreeMap<>();
        for (byte[] b : elements) {
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
            int version = in.readInt();
            byte[] payload = in.readNBytes(in.readInt());
            NumberSequenceSource.NumberSequenceSplit s = ser.deserialize(version, payload);
            ObjectNode o = Json.obj();
            o.put("serializerVersion", version);
            o.put("base64", Base64.getEncoder().encodeToString(payload));
            o.put("splitId", s.splitId());
            o.put("from", s.from());
            o.put("to", s.to());
            sorted.put(s.splitId(), o);
        }
        ArrayNode a = Json.arr();
        sorted.values().forEach(a::add);
        return a;
    }

    /** The coordinator state: Flink's framing, the enumerator checkpoint raw and decoded. */
    static ObjectNode enumerator(Path sp, DataGeneratorSource<Long> source) throws Exception {
        CheckpointMetadata md;
        try (InputStream raw = Files.newInputStream(sp.resolve("_metadata"));
                DataInputStream in = new DataInputStream(raw)) {
            md = Checkpoints.loadCheckpointMetadata(in, NumberSourceSavepoint.class.getClassLoader(), sp.toUri().toString());
        }
        var id = OperatorIdentifier.forUid(UID).getOperatorId();
        for (OperatorState s : md.getOperatorStates()) {
            if (!s.getOperatorID().equals(id)) continue;
            byte[] bytes;
            try (var in = s.getCoordinatorState().openInputStream()) {
                bytes = in.readAllBytes();
            }
            DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
            ObjectNode o = Json.obj();
            o.put("coordinatorSerdeVersion", in.readInt());
            int version = in.readInt();
            byte[] payload = in.readNBytes(in.readInt());
            o.put("serializerVersion", version);
            o.put("base64", Base64.getEncoder().encodeToString(payload));
            Collection<NumberSequenceSource.NumberSequenceSplit> pending =
                    source.getEnumeratorCheckpointSerializer().deserialize(version, payload);
            o.put("pendingSplits", pending.size());
            return o;
        }
        throw new IllegalStateException("no operator " + UID + " in " + sp);
    }
}
