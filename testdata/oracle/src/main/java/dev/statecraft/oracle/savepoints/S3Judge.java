package dev.statecraft.oracle.savepoints;

import java.nio.file.Paths;

import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import dev.statecraft.oracle.common.Json;

/**
 * {@code judge-savepoint-s3 ENDPOINT ACCESS_KEY SECRET_KEY s3://BUCKET/SAVEPOINT EXPECT_JSON}:
 * judge-savepoint for a savepoint on an S3 server, read and restored by Flink through its own S3
 * file system (flink-s3-fs-presto): the State Processor API reads it there, and the restored job's
 * {@code execution.state-recovery.path} is the s3:// URI. The server's endpoint and credentials
 * are arguments, not the environment, because a served oracle JVM does not see the caller's.
 * Exit 0 = accepted, 1 = rejected, 2 = usage.
 */
public final class S3Judge {
    private S3Judge() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 5 || !args[3].startsWith("s3://")) {
            System.err.println("usage: judge-savepoint-s3 ENDPOINT ACCESS_KEY SECRET_KEY s3://BUCKET/SAVEPOINT EXPECT_JSON");
            return 2;
        }
        initialize(args[0], args[1], args[2]);
        String sp = args[3].replaceAll("/+$", "");
        Path metadata = new Path(sp + "/_metadata");
        if (!metadata.getFileSystem().exists(metadata)) {
            System.err.println("rejected: " + sp + ": no _metadata object");
            return 1;
        }
        JsonNode expectation = Json.read(Paths.get(args[4]));
        String reason = SavepointJudge.judge(sp, expectation);
        if (reason != null) {
            System.err.println("rejected: " + reason);
            return 1;
        }
        System.out.println("accepted: " + sp + " (" + SavepointJudge.summary(expectation) + ", read and restored from S3)");
        return 0;
    }

    /**
     * Points Flink's S3 file systems at the server. FileSystem.initialize must run before any
     * job: the s3.* keys of a job's own configuration do not reach the file system factories.
     */
    static void initialize(String endpoint, String accessKey, String secretKey) {
        S3Savepoints.initialize(endpoint, accessKey, secretKey, false);
    }
}
