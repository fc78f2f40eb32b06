package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Paths;

import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import dev.statecraft.oracle.bridge.JudgeRestore;
import dev.statecraft.oracle.common.Json;

/**
 * {@code judge-savepoint-s3 ENDPOINT ACCESS_KEY SECRET_KEY SAVEPOINT EXPECT_JSON [SAVEPOINT EXPECT_JSON ...]}:
 * judge-savepoint for savepoints on an S3 server, read and restored by Flink through its own S3
 * file system (flink-s3-fs-presto): the State Processor API reads each there, and the restored
 * job's {@code execution.state-recovery.path} is the s3:// URI. A SAVEPOINT that is a local
 * directory is judged from the disk, so that one call judges every savepoint of a test (those
 * copied down from the GCS and Azure emulators, which Flink has no file system for, included).
 * An EXPECT_JSON with a {@code "plan"} field is judge-restore's spec for a SQL job: Flink executes
 * that compiled plan restoring from the savepoint (non-restored state not allowed) and every
 * key's aggregate must go on from its saved value. The server's endpoint and credentials are
 * arguments, not the environment, because a served oracle JVM does not see the caller's. Every
 * pair is judged and every rejection printed. Exit 0 = all accepted, 1 = some rejected, 2 = usage.
 */
public final class S3Judge {
    private S3Judge() {}

    public static int run(String[] args) throws Exception {
        if (args.length < 5 || (args.length - 3) % 2 != 0) {
            System.err.println("usage: judge-savepoint-s3 ENDPOINT ACCESS_KEY SECRET_KEY SAVEPOINT EXPECT_JSON [SAVEPOINT EXPECT_JSON ...]");
            return 2;
        }
        initialize(args[0], args[1], args[2]);
        int rejected = 0;
        for (int i = 3; i < args.length; i += 2) {
            String reason = judgeOne(args[i], args[i + 1]);
            if (reason != null) {
                System.err.println("rejected: " + reason);
                rejected++;
            }
        }
        return rejected == 0 ? 0 : 1;
    }

    /** Judges one savepoint; null when accepted (and says so on stdout), else why not. */
    private static String judgeOne(String location, String expectFile) throws Exception {
        boolean s3 = location.startsWith("s3://");
        String sp = s3 ? location.replaceAll("/+$", "") : Paths.get(location).toAbsolutePath().normalize().toString();
        if (s3 ? !new Path(sp + "/_metadata").getFileSystem().exists(new Path(sp + "/_metadata"))
                : !Files.isRegularFile(Paths.get(sp, "_metadata"))) {
            return sp + ": no _metadata " + (s3 ? "object" : "file");
        }
        JsonNode expectation = Json.read(Paths.get(expectFile));
        String where = s3 ? "from S3" : "from the disk";
        if (expectation.has("plan")) {
            String[] outcome = JudgeRestore.judge(Paths.get(expectation.get("plan").asText()), sp, expectation);
            if (!outcome[0].equals("RESTORED")) {
                return sp + ": SQL job " + outcome[0] + ": " + outcome[1];
            }
            System.out.println("accepted: " + sp + " (SQL job restored " + where + " under its compiled plan: " + outcome[1] + ")");
            return null;
        }
        String reason = SavepointJudge.judge(sp, expectation);
        if (reason != null) {
            return sp + ": " + reason;
        }
        System.out.println("accepted: " + sp + " (" + SavepointJudge.summary(expectation) + ", read and restored " + where + ")");
        return null;
    }

    /**
     * Points Flink's S3 file systems at the server. FileSystem.initialize must run before any
     * job: the s3.* keys of a job's own configuration do not reach the file system factories.
     */
    static void initialize(String endpoint, String accessKey, String secretKey) {
        S3Savepoints.initialize(endpoint, accessKey, secretKey, false);
    }
}
