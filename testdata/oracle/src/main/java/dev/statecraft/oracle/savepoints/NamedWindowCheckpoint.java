package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.api.common.typeinfo.Types;

import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code named-window-checkpoint OUTDIR}: the named-window job (SavepointJobs.namedWindowJob: String
 * keys, NamedWindow namespaces, both variable-length) on RocksDB with incremental checkpoints, its
 * records in 4 batches with two completed checkpoints after each (NativeCheckpoints.BatchSource),
 * the last checkpoint retained: OUTDIR/named-window-incremental/ is the job's checkpoint directory
 * (its latest chk-N reuses SSTs earlier checkpoints uploaded to shared/), with the State Processor
 * API's reading of that checkpoint as OUTDIR/named-window-incremental.expect.json.
 */
public final class NamedWindowCheckpoint {
    private NamedWindowCheckpoint() {}

    static final String NAME = "named-window-incremental";

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: named-window-checkpoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path tmp = Files.createTempDirectory(out, ".tmp-" + NAME);
        try {
            NativeCheckpoints.make(out, tmp, NAME, "named-window", "rocksdb", true, NativeCheckpoints.incrementalRocksDB(1), 1, env -> {
                env.setMaxParallelism(128);
                SavepointJobs.namedWindowJob(env.addSource(new NativeCheckpoints.BatchSource(NativeCheckpoints.BATCHES), "batch-source", Types.LONG)
                        .uid("source").setParallelism(1));
            }, 2);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }
}
