package dev.statecraft.oracle.common;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;

/**
 * Savepoint directories on the local file system, shared by the commands that take savepoints
 * (sql-savepoint, plan-savepoint, upgrade-fixture) so each does not carry its own copy.
 */
public final class SavepointDirs {
    private SavepointDirs() {}

    /**
     * Stops the job with a canonical savepoint (60 s at most) and moves it to spDir, replacing
     * whatever was there. Flink names the directory savepoint-&lt;job id prefix&gt;-&lt;random&gt;
     * inside a target directory, so it is taken in a temporary directory named tmpPrefix... and
     * only its content kept.
     */
    public static void stopInto(JobClient client, Path spDir, String tmpPrefix) throws Exception {
        Path tmp = Files.createTempDirectory(tmpPrefix);
        String location = client.stopWithSavepoint(false, tmp.toUri().toString(), SavepointFormatType.CANONICAL)
                .get(60, TimeUnit.SECONDS);
        Path written = Path.of(URI.create(location.startsWith("file:") ? location : "file:" + location));
        deleteTree(spDir);
        Files.move(written, spDir);
        deleteTree(tmp);
    }

    /**
     * Waits until the job has processed want records by its own count (polling every pollMs, 180 s
     * at most; an error if the job ends first), then stops it into spDir as stopInto does. On any
     * failure the job is cancelled and the reason thrown. The source fixtures (Kafka, FileSource,
     * another FLIP-27 source) stop their jobs part way through their input this way.
     */
    public static void stopAfter(JobClient client, LongSupplier processed, long want, String what, long pollMs,
            Path spDir, String tmpPrefix) throws Exception {
        try {
            long deadline = System.currentTimeMillis() + 180_000;
            while (processed.getAsLong() < want) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("read " + processed.getAsLong() + " of " + want + " " + what + " in 180 s");
                }
                if (client.getJobStatus().get().isGloballyTerminalState()) {
                    throw new IllegalStateException("job ended early: " + client.getJobStatus().get());
                }
                Thread.sleep(pollMs);
            }
            stopInto(client, spDir, tmpPrefix);
        } catch (Exception e) {
            try {
                client.cancel().get();
            } catch (Exception ignored) {
                // already ended: the reason is thrown
            }
            throw e;
        }
    }

    /** Deletes p and everything under it; nothing if p does not exist. */
    public static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> s = Files.walk(p)) {
            for (Path q : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(q);
            }
        }
    }
}
