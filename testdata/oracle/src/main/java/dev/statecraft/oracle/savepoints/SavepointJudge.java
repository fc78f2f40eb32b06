package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import dev.statecraft.oracle.common.Json;

/**
 * {@code judge-savepoint SAVEPOINT_DIR EXPECT_JSON}: accepts a savepoint only if Flink (a) reads
 * exactly the expected state with the State Processor API and savepoint_metadata, and (b) restores
 * a job built from the expectation without ignoring unclaimed state, whose operators find exactly
 * the expected keys, values, timers and operator state in their backends.
 * Exit 0 = accepted, 1 = rejected (first difference on stderr), 2 = usage.
 */
public final class SavepointJudge {
    private SavepointJudge() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: judge-savepoint SAVEPOINT_DIR EXPECT_JSON");
            return 2;
        }
        Path sp = Paths.get(args[0]).toAbsolutePath().normalize();
        if (!Files.isRegularFile(sp.resolve("_metadata"))) {
            System.err.println("rejected: " + sp + ": no _metadata file");
            return 1;
        }
        JsonNode expectation = Json.read(Paths.get(args[1]));
        String reason = judge(sp.toString(), expectation);
        if (reason != null) {
            System.err.println("rejected: " + reason);
            return 1;
        }
        System.out.println("accepted: " + sp + " (" + summary(expectation) + ", read and restored)");
        return 0;
    }

    static String summary(JsonNode expectation) {
        int ops = 0, entries = 0, timers = 0, elements = 0;
        for (JsonNode o : expectation.path("operators")) {
            ops++;
            for (JsonNode s : o.path("keyedStates")) entries += s.path("entries").size();
            timers += o.path("timers").size();
            for (JsonNode s : o.path("operatorStates")) elements += s.path("entries").size();
        }
        return ops + " operators, " + entries + " keyed entries, " + timers + " timers, " + elements + " operator-state entries";
    }

    /** Returns null when the savepoint matches the expectation, else the first difference. */
    static String judge(String savepoint, JsonNode expectation) {
        String d = judgeRead(savepoint, expectation);
        return d != null ? d : judgeRestore(savepoint, expectation);
    }

    /** (a) what the State Processor API and savepoint_metadata read. */
    static String judgeRead(String savepoint, JsonNode expectation) {
        ObjectNode read;
        try {
            read = StateDump.dump(savepoint, expectation);
        } catch (Exception e) {
            return "State Processor API: " + Expect.rootMessage(e);
        }
        String d = Compare.operators(expectation, read, true);
        if (d != null) return "State Processor API: " + d;
        d = Compare.metadata(expectation, read);
        return d != null ? "savepoint_metadata: " + d : null;
    }

    /** (b) what a job restored from the savepoint finds in its state backends. */
    static String judgeRestore(String savepoint, JsonNode expectation) {
        ArrayNode restored;
        try {
            restored = RestoreJob.restore(savepoint, expectation);
        } catch (Exception e) {
            return "restore: " + Expect.rootMessage(e);
        }
        ObjectNode actual = Json.obj();
        actual.set("operators", restored);
        String d = Compare.operators(expectation, actual, true);
        return d != null ? "restored job: " + d : null;
    }
}
