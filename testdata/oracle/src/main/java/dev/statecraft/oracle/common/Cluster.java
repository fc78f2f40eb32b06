package dev.statecraft.oracle.common;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.configuration.DeploymentOptions;
import org.apache.flink.runtime.client.JobStatusMessage;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.util.MiniClusterPipelineExecutorServiceLoader;

/**
 * Where the oracle's Flink jobs run.
 *
 * <p>Run as one command ({@code run.sh COMMAND}), every job gets its own local MiniCluster, as
 * {@link StreamExecutionEnvironment#createLocalEnvironment(int, Configuration)} makes one. Served
 * ({@code run.sh serve}), the server starts ONE MiniCluster and every job of every command is
 * submitted to it: starting and stopping a MiniCluster (RPC services, blob server, a task
 * manager, memory pools) costs seconds per job on this 2-core machine, many times what a small
 * judge job itself needs, and the judges run a few hundred jobs per make check.
 *
 * <p>What the jobs set in their Configuration still applies: state backend, checkpoint storage,
 * restore path, restart strategy, runtime mode and parallelism are job settings, carried in the
 * job graph. Cluster settings a job may give (task slots, REST port) are the shared cluster's
 * instead; it has slots to spare. Table API jobs reach it too: {@link #startShared} installs a
 * context environment, which {@code TableEnvironment.create} asks for its executor.
 *
 * <p>The server runs one command at a time; after each, {@link #afterCommand} cancels whatever
 * job the command left running and waits for it to end, so the next command starts on an idle
 * cluster and no task of an earlier command writes into its output.
 */
public final class Cluster {
    /** Task slots of the shared cluster: jobs here run at parallelism 1 to 4, a few at once. */
    private static final int SLOTS = 16;

    private static volatile MiniCluster shared;

    private Cluster() {}

    /** Starts the shared MiniCluster (once) and routes every later job of this JVM to it. */
    public static synchronized void startShared() throws Exception {
        if (shared != null) {
            return;
        }
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        // Each slot gets the managed memory (RocksDB) and network buffers a small local
        // environment gives one of its four slots.
        conf.setString("taskmanager.memory.managed.size", "512m");
        conf.setString("taskmanager.memory.network.min", "128m");
        conf.setString("taskmanager.memory.network.max", "128m");
        // The State Processor API writers must keep the parallelism they are given: no
        // adaptive batch parallelism (the jobs say so too; the scheduler may read either).
        conf.setString("execution.batch.adaptive.auto-parallelism.enabled", "false");
        MiniCluster mc = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(SLOTS)
                .build());
        mc.start();
        shared = mc;
        Context.install();
    }

    /** Whether jobs go to the shared cluster (this JVM serves commands). */
    public static boolean isShared() {
        return shared != null;
    }

    /**
     * A stream environment at the given parallelism with the job settings of conf: on the shared
     * cluster when serving, else on a new local MiniCluster of its own.
     */
    public static StreamExecutionEnvironment stream(int parallelism, Configuration conf) {
        MiniCluster mc = shared;
        if (mc == null) {
            return StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        }
        StreamExecutionEnvironment env = onShared(mc, conf);
        env.setParallelism(parallelism);
        return env;
    }

    private static StreamExecutionEnvironment onShared(MiniCluster mc, Configuration jobConf) {
        Configuration c = new Configuration(jobConf);
        c.set(DeploymentOptions.TARGET, MiniClusterPipelineExecutorServiceLoader.NAME);
        c.set(DeploymentOptions.ATTACHED, true);
        return new StreamExecutionEnvironment(new MiniClusterPipelineExecutorServiceLoader(mc), c,
                Cluster.class.getClassLoader());
    }

    /**
     * Cancels every job the last command left running on the shared cluster and waits until
     * each has ended. Returns the number cancelled; problems go to log. A cluster that will not
     * quiesce is replaced by a new one.
     */
    public static int afterCommand(PrintStream log) {
        MiniCluster mc = shared;
        if (mc == null) {
            return 0;
        }
        try {
            List<JobID> running = running(mc);
            for (JobID id : running) {
                try {
                    mc.cancelJob(id).get(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    // It may have ended between the listing and the cancel: the wait below
                    // decides, so a job that finished on its own never costs a new cluster.
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!running(mc).isEmpty()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("jobs still running 60 s after cancelling: " + running(mc));
                }
                TimeUnit.MILLISECONDS.sleep(50);
            }
            return running.size();
        } catch (Exception e) {
            log.println("oracle serve: shared MiniCluster did not quiesce (" + e + "); starting a new one");
            synchronized (Cluster.class) {
                shared = null;
                try {
                    mc.close();
                } catch (Exception closeError) {
                    log.println("oracle serve: closing the old MiniCluster: " + closeError);
                }
                try {
                    startShared();
                } catch (Exception startError) {
                    log.println("oracle serve: no shared MiniCluster, jobs get their own: " + startError);
                }
            }
            return -1;
        }
    }

    private static List<JobID> running(MiniCluster mc) throws Exception {
        Collection<JobStatusMessage> jobs = mc.listJobs().get(30, TimeUnit.SECONDS);
        List<JobID> ids = new ArrayList<>();
        for (JobStatusMessage j : jobs) {
            if (!j.getJobState().isGloballyTerminalState()) {
                ids.add(j.getJobId());
            }
        }
        return ids;
    }

    /**
     * Installs the context environment that {@code StreamExecutionEnvironment
     * .getExecutionEnvironment} (and through it the Table API) returns: a subclass, because
     * Flink keeps that hook protected for the environments of its own runners and tests.
     */
    private static final class Context extends StreamExecutionEnvironment {
        static void install() {
            initializeContextEnvironment(conf -> {
                MiniCluster mc = shared;
                if (mc == null) {
                    return StreamExecutionEnvironment.createLocalEnvironment(conf);
                }
                StreamExecutionEnvironment env = onShared(mc, conf);
                // A local environment's default parallelism: the number of cores.
                if (!conf.contains(CoreOptions.DEFAULT_PARALLELISM)) {
                    env.setParallelism(Runtime.getRuntime().availableProcessors());
                }
                return env;
            });
        }
    }
}
