package dev.statecraft.oracle.sources;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.FileSourceSplit;
import org.apache.flink.connector.file.src.FileSourceSplitSerializer;
import org.apache.flink.connector.file.src.PendingSplitsCheckpoint;
import org.apache.flink.connector.file.src.PendingSplitsCheckpointSerializer;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.io.SimpleVersionedSerialization;
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
 * {@code file-source-savepoint OUTDIR INPUTDIR}: writes three text files into INPUTDIR, runs a job
 * whose FileSource (uid file-source, TextLineInputFormat, monitoring INPUTDIR continuously) feeds
 * a slow map with tiny network buffers, so that the one reader is part way through a file when the
 * job is stopped with a savepoint into OUTDIR/file-source, and the other files are still pending
 * in the enumerator. Writes OUTDIR/file-source.expect.json: the reader splits decoded by the
 * connector's FileSourceSplitSerializer (read back with the State Processor API) and the
 * enumerator's PendingSplitsCheckpoint decoded by its serializer from the coordinator state.
 */
public final class FileSourceSavepoint {
    private FileSourceSavepoint() {}

    static final String UID = "file-source";
    static final int LINES = 20_000;
    static final AtomicLong READ = new AtomicLong();

    public static int run(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: file-source-savepoint OUTDIR INPUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Path in = Paths.get(args[1]).toAbsolutePath();
        Files.createDirectories(out);
        SavepointDirs.deleteTree(in);
        Files.createDirectories(in);
        for (String name : new String[] {"a.txt", "b.txt", "c.txt"}) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < LINES; i++) sb.append(name, 0, 1).append("-line-").append(i).append('\n');
            Files.writeString(in.resolve(name), sb);
        }
        Path sp = out.resolve("file-source");
        READ.set(0);
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        // tiny buffers: the slow map holds the reader back within a few hundred lines
        conf.setString("taskmanager.memory.segment-size", "4kb");
        conf.setString("taskmanager.network.memory.buffers-per-channel", "1");
        conf.setString("taskmanager.network.memory.floating-buffers-per-gate", "1");
        StreamExecutionEnvironment env = Cluster.stream(1, conf);
        FileSource<String> source = FileSource.forRecordStreamFormat(new TextLineInputFormat(), new org.apache.flink.core.fs.Path(in.toUri()))
                .monitorContinuously(Duration.ofHours(1))
                .build();
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "file-source").uid(UID)
                .map(new Slow()).returns(Types.STRING).uid("slow").name("slow").disableChaining()
                .sinkTo(new DiscardingSink<>()).uid("discard").name("discard");
        JobClient client = env.executeAsync("statecraft-file-source-fixture");
        SavepointDirs.stopAfter(client, READ::get, 100, "lines", 20, sp, "statecraft-file-source-sp");
        ObjectNode expect = Json.obj();
        expect.put("operatorUid", UID);
        expect.put("inputDir", in.toString());
        expect.put("linesPerFile", LINES);
        expect.set("splits", readerSplits(sp));
        expect.set("enumerator", enumerator(sp));
        Json.write(out.resolve("file-source.expect.json"), expect);
        return 0;
    }

    /** One millisecond a line: with tiny buffers the source waits for it. */
    static final class Slow implements MapFunction<String, String> {
        @Override
        public String map(String v) throws Exception {
            READ.incrementAndGet();
            Thread.sleep(1);
            return v;
        }
    }

    static ArrayNode readerSplits(Path sp) throws Exception {
        List<byte[]> elements = KafkaSavepoint.readerElements(sp, UID);
        TreeMap<String, ObjectNode> sorted = new TreeMap<>();
        for (byte[] b : elements) {
            FileSourceSplit s = SimpleVersionedSerialization.readVersionAndDeSerialize(FileSourceSplitSerializer.INSTANCE, b);
            sorted.put(s.splitId(), split(s));
        }
        ArrayNode a = Json.arr();
        sorted.values().forEach(a::add);
        return a;
    }

    static ObjectNode split(FileSourceSplit s) {
        ObjectNode o = Json.obj();
        o.put("id", s.splitId());
        o.put("path", s.path().toString());
        o.put("offset", s.offset());
        o.put("length", s.length());
        o.put("fileModificationTime", s.fileModificationTime());
        o.put("fileSize", s.fileSize());
        ArrayNode h = o.putArray("hostnames");
        for (String x : s.hostnames()) h.add(x);
        s.getReaderPosition().ifPresentOrElse(p -> {
            ObjectNode rp = o.putObject("readerPosition");
            rp.put("offset", p.getOffset());
            rp.put("recordsAfterOffset", p.getRecordsAfterOffset());
        }, () -> o.putNull("readerPosition"));
        return o;
    }

    static ObjectNode enumerator(Path sp) throws Exception {
        CheckpointMetadata md;
        try (InputStream raw = Files.newInputStream(sp.resolve("_metadata"));
                DataInputStream in = new DataInputStream(raw)) {
            md = Checkpoints.loadCheckpointMetadata(in, FileSourceSavepoint.class.getClassLoader(), sp.toUri().toString());
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
            o.put("serializerVersion", version);
            byte[] enumBytes = in.readNBytes(in.readInt());
            PendingSplitsCheckpoint<FileSourceSplit> cp =
                    new PendingSplitsCheckpointSerializer<>(FileSourceSplitSerializer.INSTANCE).deserialize(version, enumBytes);
            TreeMap<String, ObjectNode> sorted = new TreeMap<>();
            for (FileSourceSplit x : cp.getSplits()) sorted.put(x.splitId(), split(x));
            ArrayNode a = o.putArray("pendingSplits");
            sorted.values().forEach(a::add);
            List<String> paths = new ArrayList<>();
            for (var p : cp.getAlreadyProcessedPaths()) paths.add(p.toString());
            paths.sort(null);
            ArrayNode pp = o.putArray("alreadyProcessedPaths");
            paths.forEach(pp::add);
            return o;
        }
        throw new IllegalStateException("no operator " + UID + " in " + sp);
    }
}
