package dev.statecraft.oracle.savepoints;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;
import org.apache.flink.util.Collector;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * The fixture pair NAME-a and NAME-b (job "churn" of {@code savepoints}): two savepoints of ONE
 * running job taken at two moments, for judging {@code savepoint diff} against the State
 * Processor API's readings of both (NAME-a.expect.json, NAME-b.expect.json).
 *
 * <p>Phase 1 (records 0..39, key i % 12): keys 0..11 get a count, a list of names, map entries
 * m(i % 5) and an event timer; savepoint A. Phase 2 (records 40..79, key 6 + i % 12, so keys
 * 6..17): keys 6..8 have every state cleared and their timer deleted (keys only in A), keys 9..11
 * count on, lose one map entry, gain others and a second timer (changed, with map entries and
 * timers only in A or only in B), keys 12..17 are new (only in B), keys 0..5 get nothing (equal);
 * savepoint B. The source emits phase 2 only once savepoint A is taken.
 */
final class ChurnPair {
    private ChurnPair() {}

    static final int RECORDS = 40; // per phase
    static final AtomicBoolean PHASE2 = new AtomicBoolean();

    static void make(SavepointJobs.Fixture f, Path out) throws Exception {
        Path tmp = Files.createTempDirectory(out, ".tmp-" + f.name());
        try {
            StreamExecutionEnvironment env = SavepointJobs.env(f, tmp.resolve("checkpoints").toUri().toString(), f.parallelism(), null);
            PHASE2.set(false);
            FixtureFunctions.PROCESSED.set(0);
            env.addSource(new TwoPhaseSource(), "churn-source", Types.LONG).uid("source").setParallelism(1)
                    .keyBy(new ChurnKey(), Types.INT).process(new Churn()).returns(Types.LONG).uid("churn").name("churn");
            JobClient client = env.executeAsync("statecraft-fixture-" + f.name());
            SavepointFormatType format = f.native_() ? SavepointFormatType.NATIVE : SavepointFormatType.CANONICAL;
            String a, b;
            try {
                SavepointJobs.awaitProcessed(f, client, RECORDS);
                a = client.triggerSavepoint(tmp.toUri().toString(), format).get();
                PHASE2.set(true);
                SavepointJobs.awaitProcessed(f, client, 2L * RECORDS);
                b = client.triggerSavepoint(tmp.toUri().toString(), format).get();
            } finally {
                try {
                    client.cancel().get();
                    client.getJobExecutionResult().get();
                } catch (Exception ignored) {
                    // cancelled on purpose, or already failed: the reason is thrown above
                }
            }
            keep(f, a, out.resolve(f.name() + "-a"), out);
            keep(f, b, out.resolve(f.name() + "-b"), out);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
    }

    /** Moves the savepoint at location to dst and writes dst.expect.json from its reading. */
    static void keep(SavepointJobs.Fixture f, String location, Path dst, Path out) throws Exception {
        Path sp = Paths.get(URI.create(location.startsWith("file:") ? location : "file:" + location));
        SavepointDirs.deleteTree(dst);
        Files.move(sp, dst);
        ObjectNode expectation = StateDump.dump(dst.toString(), SavepointJobs.describe(f, dst.toString()));
        Json.write(out.resolve(dst.getFileName() + ".expect.json"), expectation);
    }

    /** Emits 0..RECORDS-1, waits for PHASE2, emits RECORDS..2*RECORDS-1, then idles until cancelled. */
    static final class TwoPhaseSource implements SourceFunction<Long> {
        private volatile boolean running = true;

        @Override
        public void run(SourceContext<Long> ctx) throws Exception {
            for (long i = 0; i < 2L * RECORDS && running; i++) {
                while (i == RECORDS && running && !PHASE2.get()) Thread.sleep(20);
                synchronized (ctx.getCheckpointLock()) {
                    ctx.collect(i);
                }
            }
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    static final class ChurnKey implements KeySelector<Long, Integer> {
        @Override
        public Integer getKey(Long i) {
            return i < RECORDS ? (int) (i % 12) : 6 + (int) (i % 12);
        }
    }

    static final class Churn extends KeyedProcessFunction<Integer, Long, Long> {
        private transient ValueState<Long> count;
        private transient ListState<String> names;
        private transient MapState<String, Integer> seen;

        @Override
        public void open(OpenContext ctx) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
            names = getRuntimeContext().getListState(new ListStateDescriptor<>("names", Types.STRING));
            seen = getRuntimeContext().getMapState(new MapStateDescriptor<>("seen", Types.STRING, Types.INT));
        }

        @Override
        public void processElement(Long i, Context ctx, Collector<Long> out) throws Exception {
            int k = ctx.getCurrentKey();
            long timer = FixtureFunctions.EVENT_TIMER_BASE + k * 1000L;
            if (i >= RECORDS && k <= 8) {
                count.clear();
                names.clear();
                seen.clear();
                ctx.timerService().deleteEventTimeTimer(timer);
            } else {
                Long c = count.value();
                count.update(c == null ? 1 : c + 1);
                names.add("n" + i);
                if (i >= RECORDS && k <= 11) {
                    seen.remove("m" + (k % 5));
                    seen.put("p" + (i % 2), i.intValue());
                    ctx.timerService().registerEventTimeTimer(timer + 1);
                } else {
                    seen.put("m" + (i % 5), i.intValue());
                    ctx.timerService().registerEventTimeTimer(timer);
                }
            }
            FixtureFunctions.PROCESSED.incrementAndGet();
        }
    }
}
