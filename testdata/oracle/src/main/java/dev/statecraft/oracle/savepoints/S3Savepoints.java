package dev.statecraft.oracle.savepoints;

import java.util.List;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;

import dev.statecraft.oracle.plans.SqlSavepoint;

/**
 * {@code savepoints-s3 ENDPOINT ACCESS_KEY SECRET_KEY s3://BUCKET/PREFIX FIXTURE[:entropy]...}:
 * runs each named fixture job (see SavepointJobs.FIXTURES; same job, records and settings, so
 * the committed FIXTURE.expect.json describes its state) and stops it with a savepoint that
 * Flink writes to the S3 server through its own S3 file system (flink-s3-fs-presto), under
 * s3://BUCKET/PREFIX/FIXTURE. With ":entropy" the file system injects entropy
 * ({@code s3.entropy.key=_entropy_}, 4 characters) and the target is
 * s3://BUCKET/PREFIX/_entropy_/FIXTURE: _metadata lands under the path without the key, the
 * state files under random prefixes that _metadata names by absolute s3:// paths. Prints
 * "FIXTURE\tLOCATION" per savepoint. FIXTURE sql-group-aggregate is sql-savepoint's SQL job
 * (group aggregate executed from its compiled plan; its state in files beside _metadata). Exit 0 = written, 1 = failed, 2 = usage.
 */
public final class S3Savepoints {
    private S3Savepoints() {}

    static final String ENTROPY_KEY = "_entropy_";

    public static int run(String[] args) throws Exception {
        if (args.length < 5 || !args[3].startsWith("s3://")) {
            System.err.println("usage: savepoints-s3 ENDPOINT ACCESS_KEY SECRET_KEY s3://BUCKET/PREFIX FIXTURE[:entropy]...");
            return 2;
        }
        String base = args[3].replaceAll("/+$", "");
        for (String spec : List.of(args).subList(4, args.length)) {
            boolean entropy = spec.endsWith(":entropy");
            String name = entropy ? spec.substring(0, spec.length() - ":entropy".length()) : spec;
            if (name.equals(SqlSavepoint.FIXTURE) && !entropy) {
                initialize(args[0], args[1], args[2], false);
                String dir = base + "/" + name;
                String location = SqlSavepoint.toSavepoint(dir + "-checkpoints", dir);
                if (location == null) {
                    return 1;
                }
                System.out.println(name + "\t" + location);
                continue;
            }
            SavepointJobs.Fixture f = SavepointJobs.FIXTURES.stream().filter(x -> x.name().equals(name)).findFirst().orElse(null);
            if (f == null || f.restoredFrom() > 0) {
                System.err.println("savepoints-s3: " + name + ": not a fixture written in one run (see SavepointJobs.FIXTURES)");
                return 2;
            }
            initialize(args[0], args[1], args[2], entropy);
            String dir = base + (entropy ? "/" + ENTROPY_KEY : "") + "/" + name;
            String location = SavepointJobs.runToSavepoint(f, dir + "-checkpoints", dir, f.parallelism(), null);
            System.out.println(name + "\t" + location);
        }
        return 0;
    }

    /** S3Judge.initialize, with entropy injection on or off (the setting is global: every call
     *  sets it anew). */
    static void initialize(String endpoint, String accessKey, String secretKey, boolean entropy) {
        Configuration conf = new Configuration();
        conf.setString("s3.endpoint", endpoint);
        conf.setString("s3.path.style.access", "true");
        conf.setString("s3.access-key", accessKey);
        conf.setString("s3.secret-key", secretKey);
        conf.setString("s3.region", "us-east-1");
        if (entropy) {
            conf.setString("s3.entropy.key", ENTROPY_KEY);
            conf.setString("s3.entropy.length", "4");
        }
        FileSystem.initialize(conf, null);
    }
}
