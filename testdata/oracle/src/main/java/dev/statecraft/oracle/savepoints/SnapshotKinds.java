package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;

import org.apache.flink.configuration.Configuration;

import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code snapshot-kinds OUTDIR [KIND...]}: the keyed job's retained checkpoint directory for each
 * kind of snapshot other than the canonical savepoint and the incremental RocksDB chain
 * (native-checkpoints), made the same way (OUTDIR/KIND/ with its chk-N/, shared/, taskowned/, and
 * OUTDIR/KIND.expect.json: the State Processor API's reading of the latest checkpoint):
 * <ul>
 * <li>hashmap-full: a full checkpoint of the hashmap backend (the heap's own key-group layout);
 * <li>rocksdb-full: RocksDB with incremental checkpoints off (in Flink 2.x a native full snapshot);
 * <li>file-merged: incremental RocksDB with file merging on (segments of shared files);
 * <li>forst-checkpoint: the ForSt backend of Flink 2.x, incremental.
 * </ul>
 * One checkpoint is retained (each fixture stays a few dozen KB).
 */
public final class SnapshotKinds {
    private SnapshotKinds() {}

    record Kind(String name, String backend, boolean nativeFormat, String... conf) {}

    static final List<Kind> KINDS = List.of(
            new Kind("hashmap-full", "hashmap", false, "execution.checkpointing.incremental", "false"),
            new Kind("rocksdb-full", "rocksdb", true, "execution.checkpointing.incremental", "false"),
            new Kind("file-merged", "rocksdb", true, "execution.checkpointing.incremental", "true",
                    "execution.checkpointing.file-merging.enabled", "true"),
            new Kind("forst-checkpoint", "forst", true, "execution.checkpointing.incremental", "true"));

    public static int run(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: snapshot-kinds OUTDIR [KIND...]");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        List<String> only = List.of(args).subList(1, args.length);
        for (Kind k : KINDS) {
            if (!only.isEmpty() && !only.contains(k.name())) continue;
            Configuration conf = new Configuration();
            conf.setString("state.backend.type", k.backend());
            conf.setString("execution.checkpointing.num-retained", "1");
            for (int i = 0; i < k.conf().length; i += 2) conf.setString(k.conf()[i], k.conf()[i + 1]);
            Path tmp = Files.createTempDirectory(out, ".tmp-" + k.name());
            try {
                NativeCheckpoints.make(out, tmp, k.name(), k.backend(), k.nativeFormat(), conf, 1);
            } finally {
                SavepointDirs.deleteTree(tmp);
            }
        }
        return 0;
    }
}
