package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

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
        System.out.println("accepted: " + sp + " (" + summary(expectation) + ", read and restored into " + String.join(" and ", restoreBackends(expectation)) + ")");
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
        int ttlStates = 0;
        for (JsonNode o : expectation.path("operators")) {
            for (JsonNode s : o.path("keyedStates")) if (s.path("ttlMillis").asLong(0) > 0) ttlStates++;
        }
        return ops + " operators, " + entries + " keyed entries, " + timers + " timers, " + elements + " operator-state entries"
                + (ttlStates > 0 ? ", TTL timestamps of " + ttlStates + " states judged by expiry" : "");
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

    /**
     * (b) what a job restored from the savepoint finds in its state backends: one restore per
     * backend of {@link #restoreBackends}, all from the one job description parsed here.
     */
    static String judgeRestore(String savepoint, JsonNode expectation) {
        List<Specs.Operator> ops = Specs.parse(expectation);
        for (String backend : restoreBackends(expectation)) {
            ArrayNode restored;
            long before = System.currentTimeMillis(), after;
            try {
                restored = RestoreJob.restore(savepoint, ops, backend);
            } catch (Exception e) {
                return "restore into " + backend + ": " + Expect.rootMessage(e);
            } finally {
                after = System.currentTimeMillis();
            }
            JsonNode view;
            try {
                view = ttlView(expectation, before, after);
            } catch (IllegalArgumentException e) {
                return "TTL timestamps: " + e.getMessage();
            }
            ObjectNode actual = Json.obj();
            actual.set("operators", restored);
            String d = Compare.operators(view, actual, true);
            if (d != null) return "restored job (" + backend + "): " + d;
        }
        return null;
    }

    /**
     * The backends the savepoint is restored into: the expectation's "restoreBackends" (e.g.
     * ["hashmap", "rocksdb"]: a canonical savepoint must restore into either), else its
     * "backend" (hashmap when absent). "backend" alone still names the State Processor API's.
     */
    static List<String> restoreBackends(JsonNode expectation) {
        JsonNode list = expectation.path("restoreBackends");
        if (!list.isArray()) return List.of(expectation.path("backend").asText("hashmap"));
        if (list.isEmpty()) throw new IllegalArgumentException("expectation: restoreBackends is empty");
        List<String> out = new ArrayList<>();
        for (JsonNode b : list) out.add(b.asText());
        return out;
    }

    /**
     * What the restored job must see of states whose expectation gives ttlMillis: the job
     * declares that TTL (processing time, expired values never returned), so an entry (a list
     * element) is visible iff its ttlTimestamp (a list's: ttlTimestamp[i], as dump prints it) plus ttlMillis lies after
     * the clock when it was read, between before and after. An expiry inside [before, after] could
     * go either way and is refused, and so is a state whose entries are all visible or all
     * expired: the restore must prove both sides of each timestamp's expiry.
     */
    static JsonNode ttlView(JsonNode expectation, long before, long after) {
        JsonNode view = expectation.deepCopy();
        for (JsonNode o : view.path("operators")) {
            for (JsonNode s : o.path("keyedStates")) {
                long ttl = s.path("ttlMillis").asLong(0);
                if (ttl <= 0) continue;
                String name = s.get("name").asText();
                int visible = 0, expired = 0;
                ArrayNode kept = Json.arr();
                for (JsonNode e : s.get("entries")) {
                    boolean list = s.get("kind").asText().equals("list");
                    JsonNode tss = list ? e.get("ttlTimestamp") : Json.arr().add(e.path("ttlTimestamp"));
                    JsonNode vals = list ? e.get("value") : Json.arr().add(e.get("value"));
                    if (tss == null || tss.size() != vals.size()) {
                        throw new IllegalArgumentException("state " + name + " " + Compare.slot(e) + ": " + (list ? "ttlTimestamp needs an array of one timestamp per element" : "no ttlTimestamp"));
                    }
                    ArrayNode live = Json.arr();
                    for (int i = 0; i < vals.size(); i++) {
                        if (!tss.get(i).canConvertToLong()) throw new IllegalArgumentException("state " + name + " " + Compare.slot(e) + ": ttlTimestamp " + tss.get(i) + " is not a number");
                        long expiry = tss.get(i).asLong() + ttl;
                        if (expiry >= before && expiry <= after) {
                            throw new IllegalArgumentException("state " + name + " " + Compare.slot(e) + ": expires at " + expiry + ", while the restored job read it (" + before + ".." + after + ")");
                        }
                        if (expiry > after) {
                            live.add(vals.get(i));
                            visible++;
                        } else {
                            expired++;
                        }
                    }
                    if (live.size() == 0) continue;
                    ObjectNode k = (ObjectNode) e;
                    k.set("value", list ? live : live.get(0));
                    kept.add(k);
                }
                if (visible == 0 || expired == 0) {
                    throw new IllegalArgumentException("state " + name + ": " + visible + " visible and " + expired + " expired values: the restore would not prove both sides of the expiry");
                }
                ((ObjectNode) s).set("entries", kept);
            }
        }
        return view;
    }
}
