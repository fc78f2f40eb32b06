package dev.statecraft.oracle.metadata;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.checkpoint.metadata.MetadataSerializer;

/**
 * Oracle command {@code metadata-versions SAVEPOINTS_DIR OUTDIR [NAME...]}: the older
 * {@code _metadata} layouts, written by Flink itself.
 *
 * <p>For each savepoint {@code SAVEPOINTS_DIR/<name>/} (all that hold a {@code _metadata}, or only
 * the NAMEs given), Flink 2.3.0 loads the metadata with {@code Checkpoints.loadCheckpointMetadata}
 * and stores it again with each of {@code MetadataV3Serializer} .. {@code MetadataV6Serializer}:
 *
 * <pre>
 *   OUTDIR/&lt;name&gt;/v3/_metadata   (no checkpoint properties, no operator name/uid)
 *   OUTDIR/&lt;name&gt;/v4/_metadata   (+ checkpoint properties)
 *   OUTDIR/&lt;name&gt;/v5/_metadata   (+ operator name and uid)
 *   OUTDIR/&lt;name&gt;/v6/_metadata   (same body; channel handles may be merged)
 * </pre>
 *
 * Each written file is loaded back by Flink and must give the version it was written with and
 * the same checkpoint id and operator count, and storing what Flink loaded back must give the
 * same bytes; one line per file goes to stdout.
 */
public final class MetadataVersions {
    private MetadataVersions() {}

    public static int run(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: metadata-versions SAVEPOINTS_DIR OUTDIR [NAME...]");
            return 2;
        }
        Path savepoints = Path.of(args[0]);
        Path outDir = Path.of(args[1]);
        List<String> names = new ArrayList<>(Arrays.asList(args).subList(2, args.length));
        if (names.isEmpty()) {
            try (Stream<Path> s = Files.list(savepoints)) {
                s.filter(p -> Files.isRegularFile(p.resolve("_metadata")))
                        .map(p -> p.getFileName().toString())
                        .sorted()
                        .forEach(names::add);
            }
        }
        if (names.isEmpty()) {
            System.err.println("metadata-versions: no savepoint with a _metadata under " + savepoints);
            return 1;
        }
        for (String name : names) {
            CheckpointMetadata original = MetadataFiles.load(savepoints.resolve(name));
            for (MetadataSerializer serializer : MetadataFiles.WRITABLE) {
                Path dir = outDir.resolve(name).resolve("v" + serializer.getVersion());
                Path file = MetadataFiles.store(original, serializer, dir);
                String problem = check(original, serializer, file);
                if (problem != null) {
                    System.err.println("metadata-versions: " + file + ": " + problem);
                    return 1;
                }
                System.out.println(file + "\tversion " + serializer.getVersion() + "\t"
                        + Files.size(file) + " bytes\t" + original.getOperatorStates().size() + " operators");
            }
        }
        return 0;
    }

    /** Loads file back with Flink and says what differs from the original, or null. */
    private static String check(CheckpointMetadata original, MetadataSerializer serializer, Path file)
            throws IOException {
        int version = serializer.getVersion();
        int written = MetadataFiles.versionOf(file);
        if (written != version) {
            return "version " + written + ", want " + version;
        }
        CheckpointMetadata back = MetadataFiles.load(file.getParent());
        if (back.getCheckpointId() != original.getCheckpointId()) {
            return "checkpoint id " + back.getCheckpointId() + ", want " + original.getCheckpointId();
        }
        if (back.getOperatorStates().size() != original.getOperatorStates().size()) {
            return back.getOperatorStates().size() + " operators, want " + original.getOperatorStates().size();
        }
        // Byte comparison rather than equals: relative file handles resolve against the directory
        // they were loaded from, so equal files give unequal handle objects.
        long diff = MetadataFiles.firstDifference(MetadataFiles.bytes(back, serializer), Files.readAllBytes(file));
        if (diff >= 0) {
            return "storing what Flink loaded back gives different bytes from offset " + diff;
        }
        return null;
    }
}
