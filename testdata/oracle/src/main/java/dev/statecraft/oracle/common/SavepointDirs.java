package dev.statecraft.oracle.common;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
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
