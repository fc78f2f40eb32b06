package dev.statecraft.oracle;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Entry point of statecraft's oracle. Each command is a class with a
 * {@code public static int run(String[] args)} method returning the exit code; the table below
 * names them, so that each job lives in its own file and can be added without touching the others.
 */
public final class Main {
    private static final Map<String, String> COMMANDS = new LinkedHashMap<>();

    static {
        COMMANDS.put("plans", "dev.statecraft.oracle.plans.PlanCatalog");
        COMMANDS.put("judge-plan", "dev.statecraft.oracle.plans.PlanJudge");
        COMMANDS.put("durations", "dev.statecraft.oracle.plans.Durations");
        COMMANDS.put("sql-savepoint", "dev.statecraft.oracle.plans.SqlSavepoint");
        COMMANDS.put("savepoints", "dev.statecraft.oracle.savepoints.SavepointJobs");
        COMMANDS.put("expect", "dev.statecraft.oracle.savepoints.Expect");
        COMMANDS.put("native-checkpoints", "dev.statecraft.oracle.savepoints.NativeCheckpoints");
        COMMANDS.put("snapshot-kinds", "dev.statecraft.oracle.savepoints.SnapshotKinds");
        COMMANDS.put("native-deletes", "dev.statecraft.oracle.savepoints.NativeDeletes");
        COMMANDS.put("native-rescaled-checkpoint", "dev.statecraft.oracle.savepoints.RescaledCheckpoint");
        COMMANDS.put("gc-leftovers", "dev.statecraft.oracle.savepoints.GcLeftovers");
        COMMANDS.put("named-window-checkpoint", "dev.statecraft.oracle.savepoints.NamedWindowCheckpoint");
        COMMANDS.put("rocksdb-single-delete", "dev.statecraft.oracle.savepoints.SingleDeletes");
        COMMANDS.put("ttl-compaction", "dev.statecraft.oracle.savepoints.TtlCompaction");
        COMMANDS.put("judge-savepoint", "dev.statecraft.oracle.savepoints.SavepointJudge");
        COMMANDS.put("judge-savepoints", "dev.statecraft.oracle.savepoints.SavepointsJudge");
        COMMANDS.put("judge-savepoint-s3", "dev.statecraft.oracle.savepoints.S3Judge");
        COMMANDS.put("savepoints-s3", "dev.statecraft.oracle.savepoints.S3Savepoints");
        COMMANDS.put("judge-selftest", "dev.statecraft.oracle.savepoints.JudgeSelfTest");
        COMMANDS.put("judge-evolve-selftest", "dev.statecraft.oracle.savepoints.EvolveSelfTest");
        COMMANDS.put("bench-savepoint", "dev.statecraft.oracle.bench.BenchSavepoint");
        COMMANDS.put("bench-spa-dump", "dev.statecraft.oracle.bench.SpaDump");
        COMMANDS.put("bench-spa-rescale", "dev.statecraft.oracle.bench.SpaRescale");
        // Built only with ORACLE_PROFILE=bench-parquet (run.sh): src/bench-parquet/java.
        COMMANDS.put("bench-spa-parquet", "dev.statecraft.oracle.bench.SpaParquet");
        COMMANDS.put("bench-spa-bootstrap", "dev.statecraft.oracle.bench.SpaBootstrap");
        COMMANDS.put("bench-spa-bootstrap-jsonl", "dev.statecraft.oracle.bench.SpaBootstrapJsonl");
        COMMANDS.put("metadata-versions", "dev.statecraft.oracle.metadata.MetadataVersions");
        COMMANDS.put("metadata-handles", "dev.statecraft.oracle.metadata.MetadataHandles");
        COMMANDS.put("uid-hashes", "dev.statecraft.oracle.metadata.UidHashes");
        COMMANDS.put("upgrade-fixture", "dev.statecraft.oracle.bridge.UpgradeFixture");
        COMMANDS.put("judge-restore", "dev.statecraft.oracle.bridge.JudgeRestore");
        COMMANDS.put("type-catalogue", "dev.statecraft.oracle.bridge.TypeCatalogue");
        COMMANDS.put("kafka-savepoint", "dev.statecraft.oracle.sources.KafkaSavepoint");
        COMMANDS.put("kafka-judge", "dev.statecraft.oracle.sources.KafkaJudge");
        COMMANDS.put("kafka-files-savepoint", "dev.statecraft.oracle.sources.KafkaFilesSavepoint");
        COMMANDS.put("kafka-sql-savepoint", "dev.statecraft.oracle.sources.SqlKafka");
        COMMANDS.put("file-source-savepoint", "dev.statecraft.oracle.sources.FileSourceSavepoint");
        COMMANDS.put("number-source-savepoint", "dev.statecraft.oracle.sources.NumberSourceSavepoint");
        // Flink 1.17 only (FLINK_VERSION=1.17.2; src/main/java-1.17): the legacy FlinkKafkaConsumer
        COMMANDS.put("kafka-legacy-savepoint", "dev.statecraft.oracle.sources.LegacyKafkaSavepoint");
        // Flink 1.12 only (FLINK_VERSION=1.12.2 or 1.12.7; src/main/java-1.12): KafkaSource
        // enumerator state versions 0 and 1
        COMMANDS.put("kafka-old-source-savepoint", "dev.statecraft.oracle.sources.OldKafkaSourceSavepoint");
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("serve")) {
            System.exit(Serve.run(Arrays.copyOfRange(args, 1, args.length)));
        }
        System.exit(dispatch(args));
    }

    /**
     * Runs one oracle command (args[0] names it) and returns its exit code. Both the one-shot
     * {@code main} and the {@link Serve} loop go through here, so a command behaves the same either
     * way.
     */
    static int dispatch(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: run.sh COMMAND [ARGS...]; commands: version, serve, " + String.join(", ", COMMANDS.keySet()));
            return 2;
        }
        if (args[0].equals("version")) {
            System.out.println(org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
            return 0;
        }
        String cls = COMMANDS.get(args[0]);
        if (cls == null) {
            System.err.println("unknown oracle command: " + args[0] + "; commands: version, serve, " + String.join(", ", COMMANDS.keySet()));
            return 2;
        }
        Method run;
        try {
            run = Class.forName(cls).getMethod("run", String[].class);
        } catch (ClassNotFoundException e) {
            System.err.println("oracle command " + args[0] + " is not built yet (" + cls + ")");
            return 2;
        }
        try {
            return (Integer) run.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            // What an uncaught exception does to a one-shot JVM: the trace on stderr, exit 1.
            e.getCause().printStackTrace();
            return 1;
        }
    }
}
