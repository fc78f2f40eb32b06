package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.configuration.Configuration;

import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code native-rescaled-checkpoint OUTDIR}: a job's retained incremental RocksDB checkpoint
 * directory written after a rescaled restore, as OUTDIR/native-chain-rescaled/ with
 * OUTDIR/native-chain-rescaled.expect.json (the State Processor API's reading of its latest
 * checkpoint).
 *
 * <p>The keyed job (uid int-keyed) runs at parallelism 2 to a native savepoint (as
 * native-rescaled's first part), then is restored from it at parallelism 3 with incremental
 * checkpoints (2 retained) and gets the 40 records again in 4 batches, two completed checkpoints
 * after each. Each restored RocksDB instance starts from a parallelism-2 instance clipped to its
 * new key-group range with deleteRange, so the checkpoints' SST files hold range tombstones over
 * keys of key groups the subtask no longer owns.
 */
public final class RescaledCheckpoint {
    private RescaledCheckpoint() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: native-rescaled-checkpoint OUTDIR");
            return 2;
        }
        String name = "native-chain-rescaled";
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path tmp = Files.createTempDirectory(out, ".tmp-" + name);
        try {
            SavepointJobs.Fixture first = new SavepointJobs.Fixture(name, "keyed", "rocksdb", false, true, false, 2, 128);
            Path firstDir = Files.createDirectories(tmp.resolve("first"));
            String savepoint = SavepointJobs.runToSavepoint(first, firstDir, 2, null);
            Configuration conf = NativeCheckpoints.incrementalRocksDB(2);
            conf.setString("execution.state-recovery.path", savepoint);
            NativeCheckpoints.make(out, tmp, name, "rocksdb", true, conf, 2, NativeCheckpoints.BATCHES,
                    new FixtureFunctions.IntKeyed(), 3);
        } finally {
            SavepointDirs.deleteTree(tmp);
        }
        return 0;
    }
}
