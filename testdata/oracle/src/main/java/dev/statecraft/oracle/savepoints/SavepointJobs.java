package dev.statecraft.oracle.savepoints;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;
import dev.statecraft.oracle.savepoints.FixtureFunctions.*;

/**
 * {@code savepoints OUTDIR}: runs each fixture job in a local MiniCluster, waits until every
 * record is processed, takes a savepoint, moves it to OUTDIR/NAME/ and writes
 * OUTDIR/NAME.expect.json by reading the savepoint back with the State Processor API.
 * Optional further arguments restrict the run to the named fixtures.
 */
public final class SavepointJobs {
    private SavepointJobs() {}

    static final int RECORDS = 40;
    /** The evolve job's records: 6 keys, 3 records each, so its lists stay short enough to read. */
    static final int EVOLVE_RECORDS = 18;

    /** One fixture: a job (by name) run with one backend and storage setting. */
    record Fixture(String name, String job, String backend, boolean compression, boolean native_,
                   boolean inline, int parallelism, int maxParallelism, boolean incremental,
                   String rocksCompression, int restoredFrom) {
        Fixture(String name, String job, String backend, boolean compression, boolean native_,
                boolean inline, int parallelism, int maxParallelism) {
            this(name, job, backend, compression, native_, inline, parallelism, maxParallelism, false, null, 0);
        }
        Fixture(String name, String job, String backend, boolean compression, boolean native_,
                boolean inline, int parallelism, int maxParallelism, boolean incremental, String rocksCompression) {
            this(name, job, backend, compression, native_, inline, parallelism, maxParallelism, incremental, rocksCompression, 0);
        }
    }

    static final List<Fixture> FIXTURES = List.of(
            new Fixture("keyed-hashmap", "keyed", "hashmap", false, false, false, 2, 128),
            new Fixture("keyed-hashmap-compressed", "keyed", "hashmap", true, false, false, 2, 128),
            new Fixture("keyed-rocksdb", "keyed", "rocksdb", false, false, false, 2, 128),
            new Fixture("keyed-rocksdb-compressed", "keyed", "rocksdb", true, false, false, 2, 128),
            new Fixture("keyed-maxpar-256", "keyed", "hashmap", false, false, false, 2, 256),
            new Fixture("keyed-par3", "keyed", "hashmap", false, false, false, 3, 128),
            new Fixture("keyed-inline", "keyed", "hashmap", false, false, true, 2, 128),
            new Fixture("types-hashmap", "types", "hashmap", false, false, true, 2, 128),
            new Fixture("types-rocksdb", "types", "rocksdb", false, false, false, 2, 128),
            new Fixture("window-hashmap", "window", "hashmap", false, false, false, 2, 128),
            new Fixture("operator-state", "operator-state", "hashmap", false, false, true, 2, 128),
            new Fixture("native-rocksdb", "keyed", "rocksdb", false, true, false, 2, 128),
            new Fixture("operator-state-compressed", "operator-state", "hashmap", true, false, false, 2, 128),
            new Fixture("keyed-ttl-collections", "ttl-collections", "hashmap", false, false, false, 2, 128),
            new Fixture("evolve-hashmap", "evolve", "hashmap", false, false, false, 2, 128),
            new Fixture("evolve-rocksdb", "evolve", "rocksdb", false, false, false, 2, 128),
            // Row values of every RowKind (RowSerializer keeps it in the null mask's first bits).
            new Fixture("row-kinds-hashmap", "row-kinds", "hashmap", false, false, false, 2, 128),
            // Native RocksDB savepoints for statecore/rocksdb: variable-length keys with incremental
            // snapshots on (SSTs as shared-state handles), TTL'd collections with small files inline in
            // _metadata, and window namespaces plus RocksDB timers at max parallelism 256 (2-byte key groups).
            new Fixture("native-types-incremental", "types", "rocksdb", false, true, false, 2, 128, true, null),
            // RocksDB's own block compression other than the default Snappy (every level).
            new Fixture("native-lz4", "keyed", "rocksdb", false, true, false, 2, 128, false, "LZ4_COMPRESSION"),
            new Fixture("native-zstd", "keyed", "rocksdb", false, true, false, 2, 128, false, "ZSTD_COMPRESSION"),
            // Rescaled: the job runs at parallelism 2 to a native savepoint, is restored from it at
            // parallelism 3 (the source emits its records again) and stopped with a native savepoint.
            // Restored RocksDB instances are clipped with deleteRange: range tombstones and keys of
            // other key groups stay in the files.
            new Fixture("native-rescaled", "keyed", "rocksdb", false, true, false, 3, 128, false, null, 2),
            new Fixture("native-ttl-inline", "ttl-collections", "rocksdb", false, true, true, 2, 128),
            new Fixture("native-window-maxpar-256", "window", "rocksdb", false, true, false, 2, 256),
            // A user-defined window (NamedWindow: a String name plus an end) over String keys: key and
            // namespace serializers both variable-length, so every composite key carries a length
            // after the key and after the namespace. Native RocksDB, canonical RocksDB and hashmap.
            new Fixture("native-named-window", "named-window", "rocksdb", false, true, false, 2, 128),
            new Fixture("named-window-rocksdb", "named-window", "rocksdb", false, false, false, 2, 128),
            new Fixture("named-window-hashmap", "named-window", "hashmap", false, false, false, 2, 128),
            // A user-defined window (SlotWindow) whose serializer snapshot is a SimpleTypeSerializerSnapshot
            // subclass: an empty payload nothing gives the length of. Integer keys. Native and canonical.
            new Fixture("native-slot-window", "slot-window", "rocksdb", false, true, false, 2, 128),
            new Fixture("slot-window-rocksdb", "slot-window", "rocksdb", false, false, false, 2, 128),
            // The same window whose function keeps per-window map state ("fired", String user keys)
            // and a trigger that fires on every element: map entries under the opaque namespace,
            // some of whose keys split two ways (testdata/savepoints-refused; made only by name).
            new Fixture("native-slot-window-fired", "slot-window-fired", "rocksdb", false, true, false, 2, 128),
            // Two native savepoints of one running job (ChurnPair): NAME-a, then NAME-b after keys
            // were removed, added and changed; savepoint diff is judged on the pair.
            new Fixture("native-churn", "churn", "rocksdb", false, true, false, 2, 128));

    /** Fixtures made only when named (make fixtures puts them elsewhere than testdata/savepoints). */
    static final java.util.Set<String> NAMED_ONLY = java.util.Set.of("native-slot-window-fired");

    public static int run(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: savepoints OUTDIR [FIXTURE...]");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        List<String> only = List.of(args).subList(1, args.length);
        for (Fixture f : FIXTURES) {
            if (!only.isEmpty() && !only.contains(f.name())) continue;
            if (only.isEmpty() && NAMED_ONLY.contains(f.name())) continue;
            long t0 = System.currentTimeMillis();
            make(f, out);
            System.out.println(f.name() + "\t" + (System.currentTimeMillis() - t0) + " ms");
        }
        return 0;
    }

    static void make(Fixture f, Path out) throws Exception {
        if (f.job().equals("churn")) {
            ChurnPair.make(f, out);
            return;
        }
        Path tmp = Files.createTempDirectory(out, ".tmp-" + f.name());
        String location;
        try {
            String restore = null;
            if (f.restoredFrom() > 0) restore = runToSavepoint(f, tmp, f.restoredFrom(), null);
            location = runToSavepoint(f, tmp, f.parallelism(), restore);
        } catch (Exception e) {
            SavepointDirs.deleteTree(tmp);
            throw e;
        }

        // Flink names the directory savepoint-<jobid prefix>-<random>; keep only its content.
        Path dst = out.resolve(f.name());
        try {
            Path sp = Paths.get(URI.create(location.startsWith("file:") ? location : "file:" + location));
            SavepointDirs.deleteTree(dst);
            Files.move(sp, dst);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }

        ObjectNode desc = describe(f, dst.toString());
        ObjectNode expectation = StateDump.dump(dst.toString(), desc);
        Json.write(out.resolve(f.name() + ".expect.json"), expectation);
    }

    /** Runs f's job at the given parallelism (restored from a savepoint when restore is set) until
     *  every record is processed, takes a savepoint under tmp and returns its location. */
    static String runToSavepoint(Fixture f, Path tmp, int parallelism, String restore) throws Exception {
        return runToSavepoint(f, tmp.resolve("checkpoints").toUri().toString(), tmp.toUri().toString(), parallelism, restore);
    }

    /** runToSavepoint with the checkpoint directory and the savepoint target given as URIs (an
     *  s3:// target makes Flink write the savepoint through its S3 file system). */
    static String runToSavepoint(Fixture f, String checkpointDir, String target, int parallelism, String restore) throws Exception {
        StreamExecutionEnvironment env = env(f, checkpointDir, parallelism, restore);
        FixtureFunctions.PROCESSED.set(0);
        long expected = build(f.job(), env);
        JobClient client = env.executeAsync("statecraft-fixture-" + f.name());
        String location = null;
        try {
            awaitProcessed(f, client, expected);
            location = client.triggerSavepoint(target, f.native_() ? SavepointFormatType.NATIVE : SavepointFormatType.CANONICAL).get();
        } finally {
            try {
                client.cancel().get();
                client.getJobExecutionResult().get();
            } catch (Exception ignored) {
                // cancelled on purpose, or already failed: the reason is thrown above
            }
        }
        return location;
    }

    /** The environment f's job runs in: its backend, snapshot settings and parallelism, restored
     *  from restore when set. */
    static StreamExecutionEnvironment env(Fixture f, String checkpointDir, int parallelism, String restore) {
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", f.backend());
        conf.setString("execution.checkpointing.snapshot-compression", Boolean.toString(f.compression()));
        conf.setString("execution.checkpointing.incremental", Boolean.toString(f.incremental()));
        if (f.rocksCompression() != null) conf.setString("state.backend.rocksdb.compression.per.level", f.rocksCompression());
        // 0 bytes forces every state chunk into a file beside _metadata; the default (20 KiB)
        // keeps these small states inline in _metadata as byte-stream handles.
        if (!f.inline()) conf.setString("execution.checkpointing.data-inline-threshold", "0b");
        if (restore != null) conf.setString("execution.state-recovery.path", restore);
        // File-system checkpoint storage, so that the inline threshold above applies to savepoints.
        conf.setString("execution.checkpointing.storage", "filesystem");
        conf.setString("execution.checkpointing.dir", checkpointDir);
        conf.setString("taskmanager.numberOfTaskSlots", "4");
        conf.setString("rest.bind-port", "0");
        conf.setString("pipeline.max-parallelism", Integer.toString(f.maxParallelism()));
        StreamExecutionEnvironment env = Cluster.stream(parallelism, conf);
        env.setMaxParallelism(f.maxParallelism());
        return env;
    }

    /** Waits until the job has bumped PROCESSED to exactly expected (the barrier of a savepoint
     *  triggered then follows every record). */
    static void awaitProcessed(Fixture f, JobClient client, long expected) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        while (FixtureFunctions.PROCESSED.get() < expected) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(f.name() + ": processed " + FixtureFunctions.PROCESSED.get() + " of " + expected + " records in 120 s");
            }
            JobStatus st = client.getJobStatus().get();
            if (st.isGloballyTerminalState()) throw new IllegalStateException(f.name() + ": job ended early: " + st);
            Thread.sleep(50);
        }
        if (FixtureFunctions.PROCESSED.get() != expected) {
            throw new IllegalStateException(f.name() + ": processed " + FixtureFunctions.PROCESSED.get() + ", expected exactly " + expected);
        }
    }

    /** Builds the job's pipeline; returns how many PROCESSED bumps mark it as done. */
    static long build(String job, StreamExecutionEnvironment env) {
        int records = job.equals("evolve") || job.equals("row-kinds") ? EVOLVE_RECORDS : RECORDS;
        DataStream<Long> src = env.addSource(new FixedSource(records), "fixed-source", Types.LONG).uid("source").setParallelism(1);
        switch (job) {
            case "keyed":
                src.keyBy(i -> (int) (i % 12), Types.INT).process(new IntKeyed()).returns(Types.LONG).uid("int-keyed").name("int-keyed");
                return RECORDS;
            case "types":
                src.keyBy(i -> (i % 7) * 1_000_000_007L, Types.LONG).process(new LongKeyed()).returns(Types.LONG).uid("long-keyed").name("long-keyed");
                src.keyBy(i -> "user-" + (i % 5), Types.STRING).process(new StringKeyed()).returns(Types.LONG).uid("string-keyed").name("string-keyed");
                src.keyBy(new TupleKey(), Types.TUPLE(Types.INT, Types.STRING)).process(new TupleKeyed()).returns(Types.LONG).uid("tuple-keyed").name("tuple-keyed");
                src.keyBy(i -> (int) (i % 6), Types.INT).process(new NoUidCounter()).returns(Types.LONG).name("nouid-counter");
                return 4L * RECORDS;
            case "window":
                src.assignTimestampsAndWatermarks(WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ofDays(1))
                                .withTimestampAssigner((e, ts) -> e * 600_000L))
                        .uid("timestamps")
                        .keyBy(i -> (int) (i % 3), Types.INT)
                        .window(TumblingEventTimeWindows.of(Duration.ofHours(1)))
                        .aggregate(new SumCount<Long>(true), Types.TUPLE(Types.LONG, Types.LONG), Types.TUPLE(Types.LONG, Types.LONG))
                        .uid("window-agg").name("window-agg");
                return RECORDS;
            case "named-window":
                namedWindowJob(src);
                return RECORDS;
            case "slot-window":
            case "slot-window-fired":
                slotWindowJob(src, job.equals("slot-window-fired"));
                return RECORDS;
            case "ttl-collections":
                src.keyBy(i -> (int) (i % 5), Types.INT).process(new TtlCollections()).returns(Types.LONG).uid("ttl-collections").name("ttl-collections");
                return RECORDS;
            case "evolve":
                src.keyBy(i -> (int) (i % 6), Types.INT).process(new Evolve()).returns(Types.LONG).uid("evolve").name("evolve");
                return EVOLVE_RECORDS;
            case "row-kinds":
                src.keyBy(i -> (int) (i % 4), Types.INT).process(new RowKinds()).returns(Types.LONG).uid("row-kinds").name("row-kinds");
                return EVOLVE_RECORDS;
            case "operator-state": {
                DataStream<Long> rules = env.addSource(new FixedSource(3), "rules-source", Types.LONG).uid("rules-source").setParallelism(1);
                BroadcastStream<Long> b = rules.broadcast(FixtureFunctions.RULES);
                src.rebalance().map(new BufferMap()).returns(Types.LONG).uid("buffer-map").name("buffer-map")
                        .keyBy(i -> (int) (i % 4), Types.INT).connect(b).process(new RuleMatcher()).returns(Types.LONG)
                        .uid("broadcast-proc").name("broadcast-proc");
                // every record through both operators, every rule to each broadcast subtask
                return 2L * RECORDS + 3L * env.getParallelism();
            }
            default:
                throw new IllegalArgumentException("unknown job " + job);
        }
    }

    /** The named-window job: src's record i at event time i * 10 min, keyed by NamedWindow.key(i)
     *  (String), into the NamedWindow of NamedWindow.NAMES[i % 3] ending at its hour's end, summed
     *  and counted (SumCount). The watermark trails by a day, so no window fires: every window
     *  keeps its contents and its end-of-window event timer. */
    static void namedWindowJob(DataStream<Long> src) {
        src.assignTimestampsAndWatermarks(WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ofDays(1))
                        .withTimestampAssigner((e, ts) -> e * 600_000L))
                .uid("timestamps")
                .keyBy(NamedWindow::key, Types.STRING)
                .window(new NamedWindow.Assigner())
                .aggregate(new SumCount<Long>(true), Types.TUPLE(Types.LONG, Types.LONG), Types.TUPLE(Types.LONG, Types.LONG))
                .uid("named-window-agg").name("named-window-agg");
    }

    /** The slot-window job: src's record i at event time i * 10 min, keyed by i % 3, into the
     *  SlotWindow of its hour, summed and counted (SumCount); no window fires at its end (the
     *  watermark trails by a day). fired: the trigger fires on every element and SlotWindow.Fired
     *  keeps per-window map state. */
    static void slotWindowJob(DataStream<Long> src, boolean fired) {
        var windowed = src.assignTimestampsAndWatermarks(WatermarkStrategy.<Long>forBoundedOutOfOrderness(Duration.ofDays(1))
                        .withTimestampAssigner((e, ts) -> e * 600_000L))
                .uid("timestamps")
                .keyBy(i -> (int) (i % 3), Types.INT)
                .window(new SlotWindow.Assigner());
        if (fired) {
            windowed.trigger(new FixtureFunctions.WindowEndTrigger<>(true))
                    .aggregate(new SumCount<Long>(true), new SlotWindow.Fired(), Types.TUPLE(Types.LONG, Types.LONG), Types.TUPLE(Types.LONG, Types.LONG), Types.LONG)
                    .uid("slot-window-fired").name("slot-window-fired");
        } else {
            windowed.aggregate(new SumCount<Long>(true), Types.TUPLE(Types.LONG, Types.LONG), Types.TUPLE(Types.LONG, Types.LONG))
                    .uid("slot-window-agg").name("slot-window-agg");
        }
    }

    static final class TupleKey implements KeySelector<Long, Tuple2<Integer, String>> {
        @Override
        public Tuple2<Integer, String> getKey(Long i) {
            return Tuple2.of((int) (i % 4), "t" + (i % 2));
        }
    }

    // ---- job descriptions: the state layout the expectation records and the readers follow ----

    static ObjectNode keyed(String name, String kind, String keyType, String valueType, String userKeyType, boolean ttl) {
        ObjectNode s = Json.obj();
        s.put("name", name);
        s.put("kind", kind);
        s.put("keyType", keyType);
        s.put("valueType", valueType);
        if (userKeyType == null) s.putNull("userKeyType");
        else s.put("userKeyType", userKeyType);
        s.put("ttl", ttl);
        return s;
    }

    static ObjectNode opState(String name, String mode, String elementType, String keyType) {
        ObjectNode s = Json.obj();
        s.put("name", name);
        s.put("mode", mode);
        s.put("elementType", elementType);
        if (keyType == null) s.putNull("keyType");
        else s.put("keyType", keyType);
        return s;
    }

    static ObjectNode operator(String uid, String uidHash, List<ObjectNode> keyed, List<ObjectNode> opStates) {
        ObjectNode o = Json.obj();
        if (uid == null) o.putNull("uid");
        else o.put("uid", uid);
        if (uidHash == null) o.putNull("uidHash");
        else o.put("uidHash", uidHash);
        ArrayNode k = Json.arr();
        keyed.forEach(k::add);
        o.set("keyedStates", k);
        ArrayNode s = Json.arr();
        opStates.forEach(s::add);
        o.set("operatorStates", s);
        return o;
    }

    static final String PAIR = "Tuple2<Long,Long>";

    /** The description of a fixture: its job's operators and states (entries filled by the reader). */
    static ObjectNode describe(Fixture f, String savepoint) throws Exception {
        ObjectNode d = Json.obj();
        d.put("job", f.job());
        d.put("backend", f.backend());
        d.put("format", f.native_() ? "native" : "canonical");
        d.put("compression", f.compression());
        List<ObjectNode> ops = new ArrayList<>();
        switch (f.job()) {
            case "keyed":
                ops.add(operator("int-keyed", null, List.of(
                        keyed("count", "value", "Integer", "Long", null, false),
                        keyed("ratio", "value", "Integer", "Double", null, false),
                        keyed("names", "list", "Integer", "String", null, false),
                        keyed("seen", "map", "Integer", "Integer", "String", false),
                        keyed("sum", "reducing", "Integer", "Long", null, false),
                        keyed("minmax", "aggregating", "Integer", PAIR, null, false)), List.of()));
                break;
            case "types": {
                ops.add(operator("long-keyed", null, List.of(
                        keyed("last", "value", "Long", "String", null, false),
                        keyed("history", "list", "Long", "Long", null, false),
                        keyed("byName", "map", "Long", "String", "Long", false),
                        keyed("account", "value", "Long", "Account", null, false)), List.of()));
                ops.add(operator("string-keyed", null, List.of(
                        keyed("pair", "value", "String", "Tuple2<Integer,String>", null, false),
                        keyed("concat", "reducing", "String", "String", null, false),
                        keyed("session", "value", "String", "String", null, true)), List.of()));
                ops.add(operator("tuple-keyed", null, List.of(
                        keyed("avg", "aggregating", "Tuple2<Integer,String>", PAIR, null, false),
                        keyed("score", "value", "Tuple2<Integer,String>", "Integer", null, false),
                        keyed("tags", "map", "Tuple2<Integer,String>", "Double", "String", false)), List.of()));
                ops.add(operator(null, noUidHash(savepoint, "nouid-counter"), List.of(
                        keyed("hits", "value", "Integer", "Integer", null, false)), List.of()));
                break;
            }
            case "window":
                ops.add(operator("window-agg", null, List.of(
                        keyed(Specs.WINDOW_CONTENTS, "aggregating", "Integer", PAIR, null, false)), List.of()));
                break;
            case "named-window": {
                ObjectNode contents = keyed(Specs.WINDOW_CONTENTS, "aggregating", "String", PAIR, null, false);
                contents.put("namespace", Specs.NAMED_WINDOW);
                ops.add(operator("named-window-agg", null, List.of(contents), List.of()));
                break;
            }
            case "slot-window": {
                ObjectNode contents = keyed(Specs.WINDOW_CONTENTS, "aggregating", "Integer", PAIR, null, false);
                contents.put("namespace", Specs.SLOT_WINDOW);
                ops.add(operator("slot-window-agg", null, List.of(contents), List.of()));
                break;
            }
            case "slot-window-fired": {
                ObjectNode contents = keyed(Specs.WINDOW_CONTENTS, "aggregating", "Integer", PAIR, null, false);
                contents.put("namespace", Specs.SLOT_WINDOW);
                ObjectNode fired = keyed(SlotWindow.FIRED, "map", "Integer", "Long", "String", false);
                fired.put("namespace", Specs.SLOT_WINDOW);
                ops.add(operator("slot-window-fired", null, List.of(contents, fired), List.of()));
                break;
            }
            case "ttl-collections":
                ops.add(operator("ttl-collections", null, List.of(
                        keyed("recent", "list", "Integer", "String", null, true),
                        keyed("attrs", "map", "Integer", "Long", "String", true),
                        keyed("plain", "value", "Integer", "Long", null, false)), List.of()));
                break;
            case "evolve":
                ops.add(operator("evolve", null, List.of(
                        keyed("profile", "value", "Integer", "Row<String,Integer>", null, false),
                        keyed("events", "list", "Integer", "Row<Integer,String>", null, false),
                        keyed("scores", "map", "Integer", "Row<Long,Double>", "String", false),
                        keyed("account", "value", "Integer", "Account", null, false),
                        keyed("ttlProfile", "value", "Integer", "Row<String,Integer>", null, true)), List.of()));
                break;
            case "row-kinds":
                ops.add(operator("row-kinds", null, List.of(
                        keyed("last", "value", "Integer", "Row<String,Long>", null, false),
                        keyed("changes", "list", "Integer", "Row<Integer,String>", null, false),
                        keyed("byKind", "map", "Integer", "Row<Long>", "String", false)), List.of()));
                break;
            case "churn":
                ops.add(operator("churn", null, List.of(
                        keyed("count", "value", "Integer", "Long", null, false),
                        keyed("names", "list", "Integer", "String", null, false),
                        keyed("seen", "map", "Integer", "Integer", "String", false)), List.of()));
                break;
            case "operator-state":
                ops.add(operator("buffer-map", null, List.of(), List.of(
                        opState("buffer", "split", "String", null),
                        opState("offsets", "union", "Long", null))));
                ops.add(operator("broadcast-proc", null, List.of(
                        keyed("seen", "value", "Integer", "Integer", null, false)), List.of(
                        opState("rules", "broadcast", "Long", "String"))));
                break;
            default:
                throw new IllegalArgumentException("unknown job " + f.job());
        }
        ArrayNode a = Json.arr();
        ops.forEach(a::add);
        d.set("operators", a);
        return d;
    }

    /** The hash Flink generated for the operator without UID, found by its name in the metadata. */
    static String noUidHash(String savepoint, String name) throws Exception {
        String found = null;
        for (JsonNode r : StateDump.metadata(savepoint)) {
            if (r.get("operatorUid").isNull() && r.path("operatorName").asText().contains(name)) {
                if (found != null) throw new IllegalStateException("two operators named " + name + " without uid");
                found = r.get("operatorUidHash").asText();
            }
        }
        if (found == null) throw new IllegalStateException("no operator named " + name + " without uid in " + savepoint);
        return found;
    }
}
