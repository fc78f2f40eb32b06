package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;

import dev.statecraft.oracle.common.Cluster;
import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code native-checkpoints OUTDIR}: the keyed job with the RocksDB backend and incremental
 * checkpoints, its 40 records emitted in 4 batches with two completed checkpoints after each, so
 * that later checkpoints reuse the SST files earlier ones uploaded to shared/. The last 3
 * checkpoints are retained (on cancellation too). The job's checkpoint directory becomes
 * OUTDIR/native-chain/ (chk-N/, shared/, taskowned/: _metadata keeps the absolute paths of where
 * Flink wrote it), and OUTDIR/native-chain.expect.json is what the State Processor API reads from
 * the latest checkpoint (read before the move, at the paths the metadata names).
 */
public final class NativeCheckpoints {
    private NativeCheckpoints() {}

    static final int BATCHES = 4;
    static final AtomicLong COMPLETED = new AtomicLong();
    static final AtomicBoolean DONE = new AtomicBoolean();

    public static int run(String[] args) throws Exception {
        return runIncremental(args, "native-checkpoints", "native-chain", 3, BATCHES, new FixtureFunctions.IntKeyed());
    }

    /** The body of a command {@code COMMAND OUTDIR} that makes OUTDIR/name (and its expectation):
     *  fn's job on RocksDB with incremental checkpoints, the last retained ones kept (and at least
     *  that many complete), its records in the given number of batches. */
    static int runIncremental(String[] args, String command, String name, int retained, int batches,
                              KeyedProcessFunction<Integer, Long, Long> fn) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: " + command + " OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path tmp = Files.createTempDirectory(out, ".tmp-" + name);
        try {
            make(out, tmp, name, "rocksdb", true, incrementalRocksDB(retained), retained, batches, fn, 2);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }

    /** The RocksDB backend with incremental checkpoints, the last retained ones kept. */
    static Configuration incrementalRocksDB(int retained) {
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", "rocksdb");
        conf.setString("execution.checkpointing.incremental", "true");
        conf.setString("execution.checkpointing.num-retained", Integer.toString(retained));
        return conf;
    }

    /** Runs the keyed job with conf (backend and checkpointing options; the rest is set here) until
     *  its records are in a completed checkpoint, and moves its checkpoint directory to OUT/name
     *  with the State Processor API's reading of the latest checkpoint as OUT/name.expect.json.
     *  Fewer than minRetained complete checkpoints is an error. */
    static void make(Path out, Path tmp, String name, String backend, boolean nativeFormat, Configuration conf, int minRetained) throws Exception {
        make(out, tmp, name, backend, nativeFormat, conf, minRetained, BATCHES, new FixtureFunctions.IntKeyed(), 2);
    }

    /** make with the records in the given number of batches, processed by fn (a function with
     *  the "keyed" job's states, uid int-keyed) at the given parallelism. */
    static void make(Path out, Path tmp, String name, String backend, boolean nativeFormat, Configuration conf, int minRetained,
                     int batches, KeyedProcessFunction<Integer, Long, Long> fn, int parallelism) throws Exception {
        make(out, tmp, name, "keyed", backend, nativeFormat, conf, minRetained, env -> keyedJob(env, new BatchSource(batches), fn), parallelism);
    }

    /** make for any job of SavepointJobs.describe: pipeline adds it to the environment, with a
     *  BatchSource as its source. */
    static void make(Path out, Path tmp, String name, String job, String backend, boolean nativeFormat, Configuration conf, int minRetained,
                     java.util.function.Consumer<StreamExecutionEnvironment> pipeline, int parallelism) throws Exception {
        retainedCheckpoints(conf, tmp.resolve("checkpoints"));
        // No checkpoint may be in flight when the job is cancelled below (about 100 ms after DONE,
        // i.e. after a checkpoint completed): it would upload to shared/ the files RocksDB
        // compacted since, and the local cluster stops before Flink discards an aborted
        // checkpoint's uploads. A rerun of native-checkpoints without the pause left 4 such files
        // beside chk-8 (statecore/savepoint's TestGC wants none with every chk-N kept).
        conf.setString("execution.checkpointing.min-pause", "2s");
        StreamExecutionEnvironment env = Cluster.stream(parallelism, conf);

        FixtureFunctions.PROCESSED.set(0);
        COMPLETED.set(0);
        DONE.set(false);
        pipeline.accept(env);
        JobClient client = env.executeAsync("statecraft-" + name);
        String jobId = client.getJobID().toString();
        try {
            long deadline = System.currentTimeMillis() + 300_000;
            while (!DONE.get() || FixtureFunctions.PROCESSED.get() < SavepointJobs.RECORDS) {
                if (System.currentTimeMillis() > deadline) throw new IllegalStateException(name + ": not done in 300 s");
                JobStatus st = client.getJobStatus().get();
                if (st.isGloballyTerminalState()) throw new IllegalStateException(name + ": job ended early: " + st);
                Thread.sleep(50);
            }
        } finally {
            try {
                client.cancel().get();
                client.getJobExecutionResult().get();
            } catch (Exception ignored) {
                // cancelled on purpose
            }
        }
        publish(out, name, tmp.resolve("checkpoints").resolve(jobId), job, backend, nativeFormat, minRetained);
    }

    /** The keyed job (uid int-keyed, max parallelism 128): src's records (at parallelism 1) keyed
     *  by i % 12 into fn. */
    static SingleOutputStreamOperator<Long> keyedJob(StreamExecutionEnvironment env, SourceFunction<Long> src,
                                                     KeyedProcessFunction<Integer, Long, Long> fn) {
        env.setMaxParallelism(128);
        return env.addSource(src, "batch-source", Types.LONG).uid("source").setParallelism(1)
                .keyBy(i -> (int) (i % 12), Types.INT).process(fn).returns(Types.LONG)
                .uid("int-keyed").name("int-keyed");
    }

    /** Moves the job's checkpoint directory jobDir to OUT/name, with the State Processor API's
     *  reading of its latest complete checkpoint as OUT/name.expect.json (read before the move, at
     *  the paths the metadata names). Fewer than minRetained complete checkpoints is an error. */
    static void publish(Path out, String name, Path jobDir, String backend, boolean nativeFormat, int minRetained) throws Exception {
        publish(out, name, jobDir, "keyed", backend, nativeFormat, minRetained);
    }

    /** publish for the checkpoints of any job of SavepointJobs.describe. */
    static void publish(Path out, String name, Path jobDir, String job, String backend, boolean nativeFormat, int minRetained) throws Exception {
        Path latest = latestComplete(jobDir, name, minRetained);
        SavepointJobs.Fixture f = new SavepointJobs.Fixture(name, job, backend, false, nativeFormat, false, 2, 128);
        ObjectNode expectation = null;
        if (!backend.equals("forst")) {
            ObjectNode desc = SavepointJobs.describe(f, latest.toString());
            expectation = StateDump.dump(latest.toString(), desc);
            expectation.put("checkpoint", latest.getFileName().toString());
        }
        // else: Flink 2.3.0's State Processor API cannot read ForSt state (ForStStateBackend asks
        // the reader's environment for an async operations pool it does not have:
        // UnsupportedOperationException), so a ForSt checkpoint has no expectation file.
        Path dst = out.resolve(name);
        SavepointDirs.deleteTree(dst);
        Files.move(jobDir, dst);
        if (expectation != null) Json.write(out.resolve(name + ".expect.json"), expectation);
        System.out.println(name + "\t" + jobDir + " -> " + dst + ", latest " + latest.getFileName());
    }

    /** Sets conf for checkpoints every 200 ms into dir, retained on cancellation, none inlined
     *  (every SST a file in shared/: the default would inline these small ones in _metadata), on a
     *  local cluster of 4 slots with max parallelism 128. */
    static void retainedCheckpoints(Configuration conf, Path dir) {
        conf.setString("execution.checkpointing.storage", "filesystem");
        conf.setString("execution.checkpointing.dir", dir.toUri().toString());
        conf.setString("execution.checkpointing.interval", "200ms");
        conf.setString("execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION");
        conf.setString("execution.checkpointing.data-inline-threshold", "0b");
        conf.setString("taskmanager.numberOfTaskSlots", "4");
        conf.setString("rest.bind-port", "0");
        conf.setString("pipeline.max-parallelism", "128");
    }

    /** The newest chk-N of jobDir whose _metadata exists; fewer than minRetained such is an error. */
    static Path latestComplete(Path jobDir, String name, int minRetained) throws Exception {
        try (Stream<Path> s = Files.list(jobDir)) {
            List<Path> chks = s.filter(p -> p.getFileName().toString().matches("chk-\\d+"))
                    .filter(p -> Files.isRegularFile(p.resolve("_metadata")))
                    .sorted(Comparator.comparingLong(p -> Long.parseLong(p.getFileName().toString().substring(4))))
                    .toList();
            if (chks.size() < minRetained) throw new IllegalStateException(name + ": " + chks.size() + " complete checkpoints retained, want " + minRetained);
            return chks.get(chks.size() - 1);
        }
    }

    /** Emits records 0..39 in batches (the last one takes the remainder); after each it waits for
     *  two more completed checkpoints, so the second one holds the whole batch. */
    static final class BatchSource implements SourceFunction<Long>, CheckpointListener {
        private volatile boolean running = true;
        private final int batches;

        BatchSource(int batches) {
            this.batches = batches;
        }

        @Override
        public void run(SourceContext<Long> ctx) throws Exception {
            int per = SavepointJobs.RECORDS / batches;
            for (int b = 0; b < batches && running; b++) {
                int end = b == batches - 1 ? SavepointJobs.RECORDS : (b + 1) * per;
                synchronized (ctx.getCheckpointLock()) {
                    for (int i = b * per; i < end; i++) ctx.collect((long) i);
                }
                long target = COMPLETED.get() + 2;
                while (running && COMPLETED.get() < target) Thread.sleep(20);
            }
            DONE.set(true);
            while (running) Thread.sleep(20);
        }

        @Override
        public void cancel() {
            running = false;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            COMPLETED.incrementAndGet();
        }
    }
}
