package dev.statecraft.oracle.bench;

import dev.statecraft.oracle.common.SavepointDirs;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.source.legacy.RichParallelSourceFunction;
import org.apache.flink.util.Collector;

/**
 * {@code bench-savepoint OUTDIR KEYS [MAP_ENTRIES_PER_KEY] [BACKEND] [FORMAT]}: the large input of the
 * benchmarks, written by a real Flink job. One keyed operator (uid {@value #UID}, Integer keys
 * 0..KEYS-1, parallelism 2, max parallelism 128) holds, per key k, ValueState&lt;Long&gt;
 * {@value #VALUE_STATE} = 3k and MapState&lt;Integer, Long&gt; {@value #MAP_STATE} with user keys
 * 0..M-1 mapped to k+j, so the savepoint holds KEYS * (1 + M) keyed entries. The job is stopped
 * with a savepoint moved to OUTDIR (which must not exist yet). BACKEND defaults to rocksdb: its
 * state lives off the 2 GiB heap, so millions of keys fit; the canonical format is the same for
 * both backends. FORMAT is canonical (the default) or native: a native savepoint of the rocksdb
 * backend holds RocksDB's own SST files, the input of the native-read benchmarks (bench/native.sh).
 */
public final class BenchSavepoint {
    private BenchSavepoint() {}

    static final String UID = "bench-keyed";
    static final String VALUE_STATE = "count";
    static final String MAP_STATE = "attrs";
    static final int MAX_PARALLELISM = 128;

    static final AtomicLong PROCESSED = new AtomicLong();

    static ValueStateDescriptor<Long> valueDescriptor() {
        return new ValueStateDescriptor<>(VALUE_STATE, Types.LONG);
    }

    static MapStateDescriptor<Integer, Long> mapDescriptor() {
        return new MapStateDescriptor<>(MAP_STATE, Types.INT, Types.LONG);
    }

    public static int run(String[] args) throws Exception {
        if (args.length < 2 || args.length > 5) {
            System.err.println("usage: bench-savepoint OUTDIR KEYS [MAP_ENTRIES_PER_KEY=1] [BACKEND=rocksdb] [FORMAT=canonical|native]");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        long keys = Long.parseLong(args[1]);
        int perKey = args.length > 2 ? Integer.parseInt(args[2]) : 1;
        String backend = args.length > 3 ? args[3] : "rocksdb";
        String format = args.length > 4 ? args[4] : "canonical";
        if (!format.equals("canonical") && !format.equals("native")) {
            System.err.println("bench-savepoint: FORMAT must be canonical or native, not " + format);
            return 2;
        }
        if (keys < 1 || keys > Integer.MAX_VALUE || perKey < 0) {
            System.err.println("bench-savepoint: KEYS must be 1.." + Integer.MAX_VALUE + " and MAP_ENTRIES_PER_KEY >= 0");
            return 2;
        }
        if (Files.exists(out)) {
            System.err.println("bench-savepoint: " + out + " exists; refusing to overwrite");
            return 2;
        }
        Path parent = out.getParent();
        Files.createDirectories(parent);
        Path tmp = Files.createTempDirectory(parent, ".tmp-bench-savepoint");
        long t0 = System.currentTimeMillis();

        Configuration conf = new Configuration();
        conf.setString("state.backend.type", backend);
        conf.setString("execution.checkpointing.storage", "filesystem");
        conf.setString("execution.checkpointing.dir", tmp.resolve("checkpoints").toUri().toString());
        conf.setString("taskmanager.numberOfTaskSlots", "4");
        conf.setString("rest.bind-port", "0");
        conf.setString("pipeline.max-parallelism", Integer.toString(MAX_PARALLELISM));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
        env.setMaxParallelism(MAX_PARALLELISM);

        PROCESSED.set(0);
        // The source runs at parallelism 2 too (each subtask emits every other key), so that
        // generation is not bound by one thread.
        env.addSource(new Keys(keys), "bench-source", Types.INT).uid("bench-source")
                .keyBy(k -> k, Types.INT)
                .process(new Fill(perKey)).uid(UID).name(UID);
        JobClient client = env.executeAsync("statecraft-bench-savepoint");
        String location;
        try {
            long lastProgress = System.currentTimeMillis();
            long last = -1;
            while (PROCESSED.get() < keys) {
                long p = PROCESSED.get();
                if (p != last) {
                    last = p;
                    lastProgress = System.currentTimeMillis();
                } else if (System.currentTimeMillis() - lastProgress > 120_000) {
                    throw new IllegalStateException("no progress for 120 s at " + p + " of " + keys + " keys");
                }
                JobStatus st = client.getJobStatus().get();
                if (st.isGloballyTerminalState()) throw new IllegalStateException("job ended early: " + st);
                Thread.sleep(100);
            }
            if (PROCESSED.get() != keys) throw new IllegalStateException("processed " + PROCESSED.get() + ", expected exactly " + keys);
            System.err.println("bench-savepoint: " + keys + " keys processed in " + (System.currentTimeMillis() - t0) + " ms; taking savepoint");
            location = client.triggerSavepoint(tmp.toUri().toString(),
                    format.equals("native") ? SavepointFormatType.NATIVE : SavepointFormatType.CANONICAL).get();
        } finally {
            client.cancel().get();
            try {
                client.getJobExecutionResult().get();
            } catch (Exception ignored) {
                // cancelled on purpose
            }
        }
        Path sp = Paths.get(URI.create(location.startsWith("file:") ? location : "file:" + location));
        Files.move(sp, out);
        SavepointDirs.deleteTree(tmp);
        String desc = String.format("{\"job\":\"bench-savepoint\",\"flinkVersion\":\"%s\",\"backend\":\"%s\",\"format\":\"%s\","
                        + "\"uid\":\"%s\",\"keys\":%d,\"mapEntriesPerKey\":%d,\"entries\":%d,\"parallelism\":2,\"maxParallelism\":%d,"
                        + "\"states\":{\"%s\":\"ValueState<Long> = 3*key\",\"%s\":\"MapState<Integer,Long> j -> key+j\"}}%n",
                org.apache.flink.runtime.util.EnvironmentInformation.getVersion(), backend, format, UID, keys, perKey,
                keys * (1 + perKey), MAX_PARALLELISM, VALUE_STATE, MAP_STATE);
        // Beside the savepoint, not inside it: the savepoint directory stays exactly as Flink wrote it.
        Files.writeString(Paths.get(out + ".json"), desc, StandardCharsets.UTF_8);
        System.err.println("bench-savepoint: " + out + " written in " + (System.currentTimeMillis() - t0) + " ms");
        return 0;
    }

    /** Emits the keys i = subtask, subtask+n, ... below keys once, then idles until cancelled. */
    static final class Keys extends RichParallelSourceFunction<Integer> {
        private final long keys;
        private volatile boolean running = true;

        Keys(long keys) {
            this.keys = keys;
        }

        @Override
        public void run(SourceContext<Integer> ctx) throws Exception {
            int n = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
            int me = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            for (long i = me; i < keys && running; i += n) {
                synchronized (ctx.getCheckpointLock()) {
                    ctx.collect((int) i);
                }
            }
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    static final class Fill extends KeyedProcessFunction<Integer, Integer, Void> {
        private final int perKey;
        private transient ValueState<Long> value;
        private transient MapState<Integer, Long> map;

        Fill(int perKey) {
            this.perKey = perKey;
        }

        @Override
        public void open(OpenContext ctx) {
            value = getRuntimeContext().getState(valueDescriptor());
            map = getRuntimeContext().getMapState(mapDescriptor());
        }

        @Override
        public void processElement(Integer k, Context ctx, Collector<Void> out) throws Exception {
            value.update(3L * k);
            for (int j = 0; j < perKey; j++) map.put(j, (long) k + j);
            PROCESSED.incrementAndGet();
        }
    }
}
