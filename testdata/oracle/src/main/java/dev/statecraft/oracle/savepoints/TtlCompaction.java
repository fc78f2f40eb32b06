package dev.statecraft.oracle.savepoints;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;
import org.apache.flink.util.Collector;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code ttl-compaction SAVEPOINTS_DIR CHECKPOINTS_DIR}: TTL state cleaned up by RocksDB's
 * compaction filter ({@code StateTtlConfig.cleanupInRocksdbCompactFilter}), snapshotted when every
 * entry of its short-TTL states has expired: a native savepoint SAVEPOINTS_DIR/native-ttl-compaction
 * and the job's retained incremental checkpoint directory CHECKPOINTS_DIR/ttl-compaction, both of
 * ONE running job (RocksDB, incremental checkpoints every 200 ms, 2 retained, parallelism 2, max
 * parallelism 128), each with NAME.expect.json, the State Processor API's reading (readers use a
 * century TTL, Specs.READ_TTL, so they return what the snapshot still holds, expired or not).
 *
 * <p>Operator uid ttl-compaction, Integer keys. States "session" (value String), "tags" (map
 * String -> Long) and "events" (list Long) have a TTL of {@link #SHORT_TTL}; "total" (value Long)
 * has one day. All four clean up in compaction, querying the time after every entry. The source
 * emits {@link #PHASES} phases of {@link #PER_PHASE} records (i = phase * 100 + j): j = 0..3 write
 * session, tags and total of key phase * 10 + j (new keys each phase), j = 4..7 append i to the
 * events of key 100 + j - 4 (the same four lists every phase) and count total. After each phase it
 * waits for two completed checkpoints (the second flushed the phase into an L0 file of each column
 * family) and sleeps SHORT_TTL + 1 s, so the phase has expired. The fourth L0 file of a column family
 * (RocksDB's level0_file_num_compaction_trigger) starts a compaction, whose filter drops what has
 * expired: the first phases' session and tags entries and their elements of the events lists. The
 * last phase lands in a new L0 file after that compaction and stays, expired. Last, key
 * {@link #MARKER_KEY} counts total once: its TTL timestamp is a time after every short-TTL entry
 * expired, and both snapshots are taken after it. The command fails unless the snapshot shows
 * both: a first-phase key without session (removed by the filter) and short-TTL entries that are
 * still there.
 *
 * <p>It also reads the savepoint with the job's own TTL ({@link #SHORT_TTL}, NeverReturnExpired):
 * Flink's State Processor API then returns no session, tags or events entry at all (every one has
 * expired), which the command checks; the counts go into the expectation as "jobTtlEntries".
 */
public final class TtlCompaction {
    private TtlCompaction() {}

    static final Duration SHORT_TTL = Duration.ofSeconds(3);
    static final int PHASES = 5, PER_PHASE = 8, MARKER_KEY = 999;
    static final String NAME = "ttl-compaction", SAVEPOINT_NAME = "native-ttl-compaction";
    static final AtomicBoolean DONE = new AtomicBoolean();

    public static int run(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ttl-compaction SAVEPOINTS_DIR CHECKPOINTS_DIR");
            return 2;
        }
        Path spOut = Paths.get(args[0]).toAbsolutePath(), cpOut = Paths.get(args[1]).toAbsolutePath();
        Files.createDirectories(spOut);
        Files.createDirectories(cpOut);
        Path tmp = Files.createTempDirectory(cpOut, ".tmp-" + NAME);
        try {
            make(spOut, cpOut, tmp);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }

    static void make(Path spOut, Path cpOut, Path tmp) throws Exception {
        Configuration conf = NativeCheckpoints.incrementalRocksDB(2);
        NativeCheckpoints.retainedCheckpoints(conf, tmp.resolve("checkpoints"));
        StreamExecutionEnvironment env = Cluster.stream(2, conf);
        env.setMaxParallelism(128);
        NativeCheckpoints.COMPLETED.set(0);
        DONE.set(false);
        env.addSource(new PhasedSource(), "phased-source", Types.LONG).uid("source").setParallelism(1)
                .keyBy(TtlCompaction::key, Types.INT).process(new Expiring()).returns(Types.LONG)
                .uid(NAME).name(NAME);
        JobClient client = env.executeAsync("statecraft-" + NAME);
        String job = client.getJobID().toString(), savepoint;
        try {
            long deadline = System.currentTimeMillis() + 300_000;
            while (!DONE.get()) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException(NAME + ": not done in 300 s");
                JobStatus st = client.getJobStatus().get();
                if (st.isGloballyTerminalState()) throw new IllegalStateException(NAME + ": job ended early: " + st);
                Thread.sleep(50);
            }
            savepoint = client.triggerSavepoint(tmp.toUri().toString(), SavepointFormatType.NATIVE).get();
        } finally {
            try {
                client.cancel().get();
                client.getJobExecutionResult().get();
            } catch (Exception ignored) {
                // cancelled on purpose
            }
        }

        // the native savepoint: its content as SAVEPOINTS_DIR/native-ttl-compaction
        Path sp = Paths.get(URI.create(savepoint.startsWith("file:") ? savepoint : "file:" + savepoint));
        Path spDst = spOut.resolve(SAVEPOINT_NAME);
        SavepointDirs.deleteTree(spDst);
        Files.move(sp, spDst);
        ObjectNode spExp = StateDump.dump(spDst.toString(), describe(true));
        check(spExp, SAVEPOINT_NAME);
        spExp.set("jobTtlEntries", jobTtlEntries(spDst.toString(), spExp));
        Json.write(spOut.resolve(SAVEPOINT_NAME + ".expect.json"), spExp);

        // the retained checkpoints, read at the latest
        Path jobDir = tmp.resolve("checkpoints").resolve(job);
        Path latest = NativeCheckpoints.latestComplete(jobDir, NAME, 2);
        ObjectNode cpExp = StateDump.dump(latest.toString(), describe(true));
        check(cpExp, NAME);
        cpExp.put("checkpoint", latest.getFileName().toString());
        Path cpDst = cpOut.resolve(NAME);
        SavepointDirs.deleteTree(cpDst);
        Files.move(jobDir, cpDst);
        Json.write(cpOut.resolve(NAME + ".expect.json"), cpExp);
        System.out.println(NAME + "\t" + spDst + ", " + cpDst + " (latest " + latest.getFileName() + ")");
    }

    static int key(Long i) {
        if (i == MARKER_KEY) return MARKER_KEY;
        int phase = (int) (i / 100), j = (int) (i % 100);
        return j < 4 ? phase * 10 + j : 100 + j - 4;
    }

    /** The job's description (states and types; entries filled by the reader). */
    static ObjectNode describe(boolean nativeFormat) {
        ObjectNode d = Json.obj();
        d.put("job", NAME);
        d.put("backend", "rocksdb");
        d.put("format", nativeFormat ? "native" : "canonical");
        d.put("compression", false);
        d.set("operators", Json.arr().add(SavepointJobs.operator(NAME, null, java.util.List.of(
                SavepointJobs.keyed("session", "value", "Integer", "String", null, true),
                SavepointJobs.keyed("tags", "map", "Integer", "Long", "String", true),
                SavepointJobs.keyed("events", "list", "Integer", "Long", null, true),
                SavepointJobs.keyed("total", "value", "Integer", "Long", null, true)), java.util.List.of())));
        return d;
    }

    /** Fails unless the reading shows the filter's work (key 0's session is gone, its total is
     *  not) and expired entries left in the snapshot (session entries of the last phase). */
    static void check(ObjectNode reading, String name) {
        JsonNode op = reading.path("operators").get(0);
        boolean total0 = false, session0 = false, lastPhase = false;
        for (JsonNode s : op.path("keyedStates")) {
            for (JsonNode e : s.path("entries")) {
                int k = e.path("key").asInt();
                if (s.path("name").asText().equals("total") && k == 0) total0 = true;
                if (s.path("name").asText().equals("session") && k == 0) session0 = true;
                if (s.path("name").asText().equals("session") && k / 10 == PHASES - 1) lastPhase = true;
            }
        }
        if (!total0 || session0 || !lastPhase) {
            throw new IllegalStateException(name + ": the snapshot does not show the compaction filter's work (total of key 0: " + total0
                    + ", session of key 0: " + session0 + ", session of the last phase: " + lastPhase + "); run the command again");
        }
    }

    /** Entries per state that Flink's State Processor API returns when it reads the savepoint with
     *  the job's own TTLs (NeverReturnExpired): none of the short-TTL states, all of "total" that
     *  the reading all (with Specs.READ_TTL) found. */
    static ObjectNode jobTtlEntries(String savepoint, ObjectNode all) throws Exception {
        java.util.function.Function<String, StateTtlConfig> saved = Specs.readTtl;
        ObjectNode counts = Json.obj();
        try {
            Specs.readTtl = name -> ttl(name.equals("total") ? Duration.ofDays(1) : SHORT_TTL);
            ObjectNode r = StateDump.dump(savepoint, describe(true));
            for (JsonNode s : r.path("operators").get(0).path("keyedStates")) {
                counts.put(s.path("name").asText(), s.path("entries").size());
            }
        } finally {
            Specs.readTtl = saved;
        }
        for (String s : new String[] {"session", "tags", "events"}) {
            if (counts.path(s).asInt(-1) != 0) throw new IllegalStateException(SAVEPOINT_NAME + ": read with the job's TTL, " + s + " has " + counts.path(s) + " entries, want 0 (all expired)");
        }
        int totals = 0;
        for (JsonNode s : all.path("operators").get(0).path("keyedStates")) {
            if (s.path("name").asText().equals("total")) totals = s.path("entries").size();
        }
        if (counts.path("total").asInt(-1) != totals) throw new IllegalStateException(SAVEPOINT_NAME + ": read with the job's TTL, total has " + counts.path("total") + " entries, want all " + totals);
        return counts;
    }

    /** TTL of ttl, cleaned up in compaction (the time queried after every entry), expired entries never returned. */
    static StateTtlConfig ttl(Duration ttl) {
        return StateTtlConfig.newBuilder(ttl)
                .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
                .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                .cleanupInRocksdbCompactFilter(1)
                .build();
    }

    /** Emits the phases (see the class comment), then the marker, then idles until cancelled. */
    static final class PhasedSource implements SourceFunction<Long>, CheckpointListener {
        private volatile boolean running = true;

        @Override
        public void run(SourceContext<Long> ctx) throws Exception {
            for (int p = 0; p < PHASES && running; p++) {
                synchronized (ctx.getCheckpointLock()) {
                    for (int j = 0; j < PER_PHASE; j++) ctx.collect((long) p * 100 + j);
                }
                awaitCheckpoints(2);
                Thread.sleep(SHORT_TTL.toMillis() + 1000);
            }
            synchronized (ctx.getCheckpointLock()) {
                ctx.collect((long) MARKER_KEY);
            }
            awaitCheckpoints(2);
            DONE.set(true);
            while (running) Thread.sleep(20);
        }

        private void awaitCheckpoints(int n) throws InterruptedException {
            long target = NativeCheckpoints.COMPLETED.get() + n;
            while (running && NativeCheckpoints.COMPLETED.get() < target) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            NativeCheckpoints.COMPLETED.incrementAndGet();
        }
    }

    /** The states of the class comment, written as its phases say. */
    static final class Expiring extends KeyedProcessFunction<Integer, Long, Long> {
        private transient ValueState<String> session;
        private transient MapState<String, Long> tags;
        private transient ListState<Long> events;
        private transient ValueState<Long> total;

        @Override
        public void open(OpenContext ctx) {
            StateTtlConfig shortTtl = ttl(SHORT_TTL);
            ValueStateDescriptor<String> s = new ValueStateDescriptor<>("session", Types.STRING);
            s.enableTimeToLive(shortTtl);
            session = getRuntimeContext().getState(s);
            MapStateDescriptor<String, Long> t = new MapStateDescriptor<>("tags", Types.STRING, Types.LONG);
            t.enableTimeToLive(shortTtl);
            tags = getRuntimeContext().getMapState(t);
            ListStateDescriptor<Long> e = new ListStateDescriptor<>("events", Types.LONG);
            e.enableTimeToLive(shortTtl);
            events = getRuntimeContext().getListState(e);
            ValueStateDescriptor<Long> c = new ValueStateDescriptor<>("total", Types.LONG);
            c.enableTimeToLive(ttl(Duration.ofDays(1)));
            total = getRuntimeContext().getState(c);
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            int k = ctx.getCurrentKey();
            if (k < 100) {
                session.update("s" + i);
                tags.put("t" + (i % 2), i);
                tags.put("u" + (i % 2), i + 1);
            } else if (k < MARKER_KEY) {
                events.add(i);
            }
            Long c = total.value();
            total.update(c == null ? 1 : c + 1);
        }
    }
}
