package dev.statecraft.oracle.savepoints;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;

import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code gc-leftovers OUTDIR}: a job's checkpoint directory in which Flink itself left files no
 * complete checkpoint references, as a killed job leaves them: OUTDIR/gc-leftovers/ (chk-N/,
 * shared/, taskowned/) and OUTDIR/gc-leftovers.expect.json (the State Processor API's reading of
 * its latest complete checkpoint).
 *
 * <p>The keyed job (uid int-keyed, RocksDB, incremental checkpoints every 200 ms, 2 retained, so
 * Flink subsumes older checkpoints as it goes) runs in a child JVM, fed 30 of the 40 records in
 * 3 batches (two completed checkpoints after each). Then the source emits the last 10 records and
 * the next checkpoint starts: once the keyed operator's subtasks have uploaded that checkpoint's
 * new files to shared/ and their meta data to chk-N/, a stateless operator downstream (its
 * own task, so it sees the barrier after the keyed subtasks' synchronous part) halts the JVM, as a
 * kill -9 of the whole cluster would, before the checkpoint's _metadata exists. What that leaves
 * is Flink's: an incomplete chk-N, its unreferenced shared files, and whatever of the subsumed
 * checkpoints' files Flink had not deleted yet. The parent JVM reads the latest complete checkpoint
 * with the State Processor API. The child's exit is a halt, never this JVM's: served oracles keep
 * running.
 */
public final class GcLeftovers {
    private GcLeftovers() {}

    static final int BATCHES = 4;
    // Set and read only in the child JVM (the job runs there), never in a served oracle.
    static final AtomicLong COMPLETED = new AtomicLong();
    /** The id of the last checkpoint whose barrier the source emitted before the last batch
     *  (-1 until the last batch is out). */
    static final AtomicLong ARMED_AFTER = new AtomicLong(-1);
    static final AtomicLong LAST_BARRIER = new AtomicLong();

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: gc-leftovers OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path tmp = Files.createTempDirectory(out, ".tmp-gc-leftovers");
        try {
            Path root = tmp.resolve("checkpoints");
            Files.createDirectories(root);
            List<String> cmd = new ArrayList<>();
            cmd.add(ProcessHandle.current().info().command().orElse("java"));
            for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
                if (!a.startsWith("-agentlib") && !a.startsWith("-javaagent")) cmd.add(a);
            }
            cmd.add("-cp");
            cmd.add(System.getProperty("java.class.path"));
            cmd.add(Child.class.getName());
            cmd.add(root.toString());
            Process p = new ProcessBuilder(cmd).inheritIO().start();
            if (!p.waitFor(300, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("gc-leftovers: the child job did not halt in 300 s");
            }
            if (p.exitValue() != 99) throw new IllegalStateException("gc-leftovers: the child exited " + p.exitValue() + ", not halted mid-checkpoint (99)");
            Path jobDir;
            try (Stream<Path> s = Files.list(root)) {
                jobDir = s.filter(Files::isDirectory).findFirst().orElseThrow();
            }
            NativeCheckpoints.publish(out, "gc-leftovers", jobDir, "rocksdb", true, 1);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }

    /** The child JVM: runs the job until Halter halts it (exit 99). */
    public static final class Child {
        public static void main(String[] args) throws Exception {
            Path root = Paths.get(args[0]);
            Configuration conf = NativeCheckpoints.incrementalRocksDB(2);
            NativeCheckpoints.retainedCheckpoints(conf, root);
            StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);
            NativeCheckpoints.keyedJob(env, new Source(), new FixtureFunctions.IntKeyed())
                    .map(new Halter(root)).uid("halter").name("halter").setParallelism(1).disableChaining();
            env.execute("statecraft-gc-leftovers");
            System.exit(1); // the job ended without the halt
        }
    }

    /** Emits 3 batches of 10 records with two completed checkpoints after each, then the last 10,
     *  and arms the halter for the first checkpoint whose barrier follows them. */
    static final class Source implements SourceFunction<Long>, CheckpointListener, CheckpointedFunction {
        private volatile boolean running = true;

        @Override
        public void run(SourceContext<Long> ctx) throws Exception {
            int per = SavepointJobs.RECORDS / BATCHES;
            for (int b = 0; b < BATCHES && running; b++) {
                synchronized (ctx.getCheckpointLock()) {
                    for (int i = b * per; i < (b + 1) * per; i++) ctx.collect((long) i);
                    if (b == BATCHES - 1) ARMED_AFTER.set(LAST_BARRIER.get());
                }
                long target = COMPLETED.get() + 2;
                while (running && b < BATCHES - 1 && COMPLETED.get() < target) Thread.sleep(20);
            }
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

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) {
            LAST_BARRIER.set(ctx.getCheckpointId()); // called under the checkpoint lock
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) {}
    }

    /** Stateless; at the armed checkpoint waits until the keyed subtasks have written their
     *  meta data files to chk-N/ (one each; their SSTs and other RocksDB files go to shared/) and
     *  the files of chk-N/ and shared/ have not changed for 3 s (the uploads are done), then
     *  halts the JVM. */
    static final class Halter implements MapFunction<Long, Long>, CheckpointedFunction {
        private final String root;

        Halter(Path root) {
            this.root = root.toString();
        }

        @Override
        public Long map(Long v) {
            return v;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext ctx) throws Exception {
            long armed = ARMED_AFTER.get();
            if (armed < 0 || ctx.getCheckpointId() <= armed) return;
            Path job;
            try (Stream<Path> s = Files.list(Paths.get(root))) {
                job = s.filter(Files::isDirectory).findFirst().orElseThrow();
            }
            Path chk = job.resolve("chk-" + ctx.getCheckpointId());
            long deadline = System.currentTimeMillis() + 120_000;
            int chkFiles = 0, stable = 0;
            long seen = -1;
            while (System.currentTimeMillis() < deadline && stable < 30) {
                chkFiles = count(chk);
                long n = chkFiles * 100_000L + count(job.resolve("shared"));
                stable = chkFiles >= 2 && n == seen ? stable + 1 : 0;
                seen = n;
                Thread.sleep(100);
            }
            System.out.println("gc-leftovers: halting in checkpoint " + ctx.getCheckpointId() + " with " + chkFiles + " files in " + chk);
            System.out.flush();
            Runtime.getRuntime().halt(99);
        }

        private static int count(Path dir) throws Exception {
            if (!Files.isDirectory(dir)) return 0;
            try (Stream<Path> s = Files.list(dir)) {
                return (int) s.count();
            }
        }

        @Override
        public void initializeState(FunctionInitializationContext ctx) {}
    }
}
