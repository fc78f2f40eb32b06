package dev.statecraft.oracle.sources;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code kafka-files-savepoint OUTDIR}: kafka-savepoint's job and records, stopped with a
 * savepoint into OUTDIR/kafka-files whose every state chunk is a file beside _metadata
 * (file-system checkpoint storage, inline threshold 0 bytes): each reader subtask's
 * SourceReaderState lives in its own state file, where kafka-datastream keeps it inline. The
 * coordinator (enumerator) state stays in _metadata, as Flink always keeps it. migrate offsets
 * must rewrite the files of the subtasks whose splits change and carry the others over as they
 * are. Writes OUTDIR/kafka-files.expect.json (what the job read per partition).
 */
public final class KafkaFilesSavepoint {
    private KafkaFilesSavepoint() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: kafka-files-savepoint OUTDIR");
            return 2;
        }
        Path out = Paths.get(args[0]).toAbsolutePath();
        Files.createDirectories(out);
        Path checkpoints = Files.createTempDirectory("statecraft-kafka-files-cp");
        try (KafkaBroker broker = KafkaBroker.start()) {
            long total = KafkaSavepoint.produceTopics(broker);
            Configuration conf = new Configuration();
            // file-system storage, so that the threshold applies to savepoints; 0 bytes puts
            // every state chunk into a file
            conf.setString("execution.checkpointing.storage", "filesystem");
            conf.setString("execution.checkpointing.dir", checkpoints.toUri().toString());
            conf.setString("execution.checkpointing.data-inline-threshold", "0b");
            KafkaSavepoint.runJob(broker.bootstrap, total, out.resolve("kafka-files"), conf);
            ObjectNode expect = Json.obj();
            expect.put("connector", KafkaSavepoint.connectorVersion());
            expect.put("operatorUid", KafkaSavepoint.UID);
            expect.set("read", KafkaSavepoint.readPositions());
            Json.write(out.resolve("kafka-files.expect.json"), expect);
        } finally {
            SavepointDirs.deleteTree(checkpoints);
        }
        return 0;
    }
}
