package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code judge-selftest WORKDIR [SAVEPOINT_DIR EXPECT_JSON]}: shows that judge-savepoint rejects
 * what it must. From a real fixture (default ../savepoints/types-hashmap, relative to the oracle
 * directory) it writes, with the State Processor API, savepoints that differ in one known way and
 * judges each against the ORIGINAL expectation; and judges the original against an expectation
 * that forgets one operator (unclaimed state) or one keyed state; and accepts a valid migration
 * (an operator's UID changed, judged against the expectation for the new UID). Prints case, expected and actual verdict as TSV
 * (reasons on stderr); exits 0 only if every case behaves.
 */
public final class JudgeSelfTest {
    private JudgeSelfTest() {}

    /** readAccept: the verdict of the State Processor API half alone, when it differs. */
    record Case(String name, boolean accept, String savepoint, JsonNode expectation, boolean readAccept) {
        Case(String name, boolean accept, String savepoint) {
            this(name, accept, savepoint, null, accept);
        }

        Case(String name, boolean accept, String savepoint, JsonNode expectation) {
            this(name, accept, savepoint, expectation, accept);
        }
    }

    public static int run(String[] args) throws Exception {
        if (args.length != 1 && args.length != 3) {
            System.err.println("usage: judge-selftest WORKDIR [SAVEPOINT_DIR EXPECT_JSON] (default: testdata/savepoints/types-hashmap, from the repository root)");
            return 2;
        }
        Path work = Paths.get(args[0]).toAbsolutePath().normalize();
        Path orig = Paths.get(args.length == 3 ? args[1] : "testdata/savepoints/types-hashmap").toAbsolutePath().normalize();
        Path expPath = Paths.get(args.length == 3 ? args[2] : "testdata/savepoints/types-hashmap.expect.json").toAbsolutePath().normalize();
        JsonNode exp = Json.read(expPath);
        Files.createDirectories(work);

        // The operators to tamper with: the first three keyed, non-window operators.
        List<JsonNode> keyed = new ArrayList<>();
        for (JsonNode o : exp.get("operators")) {
            if (o.get("keyedStates").size() > 0 && !Specs.parse(wrap(o)).get(0).window() && keyed.size() < 3) keyed.add(o);
        }
        if (keyed.size() < 3) {
            System.err.println("judge-selftest: " + expPath + " needs three keyed operators, has " + keyed.size());
            return 2;
        }
        JsonNode changedOp = keyed.get(0), removedOp = keyed.get(1), rescaledOp = keyed.get(2);
        int maxPar = rescaledOp.get("maxParallelism").asInt() * 2;

        List<Case> cases = new ArrayList<>();
        cases.add(new Case("original", true, orig.toString()));
        cases.add(new Case("rewritten-unchanged", true,
                rewrite(orig, exp, work.resolve("rewritten-unchanged"), changedOp, changedOp, changedOp.get("maxParallelism").asInt())));
        cases.add(new Case("value-changed", false,
                rewrite(orig, exp, work.resolve("value-changed"), changedOp, changeOneValue(changedOp), changedOp.get("maxParallelism").asInt())));
        cases.add(new Case("operator-removed", false, remove(orig, exp, work.resolve("operator-removed"), removedOp)));
        cases.add(new Case("max-parallelism-" + maxPar, false,
                rewrite(orig, exp, work.resolve("max-parallelism-" + maxPar), rescaledOp, rescaledOp, maxPar)));

        // The original savepoint judged against an expectation that forgets one operator: the
        // savepoint then holds state nobody claims, which the restore must refuse.
        ObjectNode forgetful = exp.deepCopy();
        org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode kept = Json.arr();
        for (JsonNode o : exp.get("operators")) if (!o.get("uidHash").equals(removedOp.get("uidHash"))) kept.add(o);
        forgetful.set("operators", kept);
        org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode rows = Json.arr();
        for (JsonNode r : exp.get("metadata")) if (!r.get("operatorUidHash").equals(removedOp.get("uidHash"))) rows.add(r);
        forgetful.set("metadata", rows);
        cases.add(new Case("unclaimed-operator", false, orig.toString(), forgetful));

        // An expectation that forgets one keyed state of an operator it does name. The State
        // Processor API reads only the states it is told about, so that half accepts; the restore
        // half must catch it through the backend's own entry count.
        ObjectNode noState = exp.deepCopy();
        boolean dropped = false;
        for (JsonNode o : noState.get("operators")) {
            if (!dropped && o.get("keyedStates").size() >= 2) {
                ((org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode) o.get("keyedStates")).remove(0);
                dropped = true;
            }
        }
        if (!dropped) throw new IllegalStateException(expPath + ": no operator with two keyed states to drop one from");
        cases.add(new Case("unnamed-keyed-state", false, orig.toString(), noState, true));

        // A valid migration: one operator's UID changed with the State Processor API, judged
        // against the expectation rewritten for the new UID (and its hash). Must be accepted.
        String newUid = (rescaledOp.get("uid").isNull() ? "nouid" : rescaledOp.get("uid").asText()) + "-renamed";
        String newHash = OperatorIdentifier.forUid(newUid).getOperatorId().toHexString();
        ObjectNode renamed = exp.deepCopy();
        for (JsonNode o : renamed.get("operators")) {
            if (o.get("uidHash").equals(rescaledOp.get("uidHash"))) {
                ((ObjectNode) o).put("uid", newUid);
                ((ObjectNode) o).put("uidHash", newHash);
            }
        }
        for (JsonNode r : renamed.get("metadata")) {
            if (r.get("operatorUidHash").equals(rescaledOp.get("uidHash"))) {
                ((ObjectNode) r).put("operatorUid", newUid);
                ((ObjectNode) r).put("operatorUidHash", newHash);
            }
        }
        cases.add(new Case("uid-changed", true, renameUid(orig, exp, work.resolve("uid-changed"), rescaledOp, newUid), renamed));

        boolean ok = true;
        System.out.println("case\texpected\tactual");
        for (Case c : cases) {
            // The whole judge, then each half alone: the restore half must catch every case on
            // its own too, not only rely on the State Processor API half running first.
            JsonNode e = c.expectation() != null ? c.expectation() : exp;
            String read = SavepointJudge.judgeRead(c.savepoint(), e);
            String restore = SavepointJudge.judgeRestore(c.savepoint(), e);
            // the whole judge is exactly "read half, then restore half" (SavepointJudge.judge)
            ok &= report(c.name(), c.accept(), read != null ? read : restore);
            ok &= report(c.name() + "/read", c.readAccept(), read);
            ok &= report(c.name() + "/restore", c.accept(), restore);
        }
        return ok ? 0 : 1;
    }

    private static boolean report(String name, boolean expectAccept, String reason) {
        boolean accepted = reason == null;
        System.out.println(name + "\t" + verdict(expectAccept) + "\t" + verdict(accepted));
        System.out.flush();
        System.err.println(name + ": " + (accepted ? "accepted" : reason));
        return accepted == expectAccept;
    }

    private static String verdict(boolean accept) {
        return accept ? "accept" : "reject";
    }

    private static ObjectNode wrap(JsonNode op) {
        ObjectNode w = Json.obj();
        w.set("operators", Json.arr().add(op));
        return w;
    }

    private static OperatorIdentifier id(JsonNode op) {
        return Specs.parse(wrap(op)).get(0).id();
    }

    /** A copy of the operator with the first entry of its first value (or other) state altered. */
    static JsonNode changeOneValue(JsonNode op) {
        ObjectNode copy = op.deepCopy();
        for (JsonNode s : copy.get("keyedStates")) {
            if (s.get("entries").size() == 0) continue;
            ObjectNode e = (ObjectNode) s.get("entries").get(0);
            JsonNode v = e.get("value");
            if (v.isInt() || v.isLong()) e.put("value", v.asLong() + 1);
            else if (v.isTextual()) e.put("value", v.asText() + "-changed");
            else if (v.isDouble()) e.put("value", v.asDouble() + 1);
            else continue;
            return copy;
        }
        throw new IllegalArgumentException(Compare.label(op) + ": no number or string value to change");
    }

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StateDump.localEnv(2);
        env.setRuntimeMode(RuntimeExecutionMode.BATCH);
        return env;
    }

    /** The original savepoint with one operator replaced by a bootstrapped copy of content. */
    static String rewrite(Path orig, JsonNode exp, Path out, JsonNode op, JsonNode content, int maxParallelism) throws Exception {
        SavepointDirs.deleteTree(out);
        StreamExecutionEnvironment env = env();
        SavepointWriter.fromExistingSavepoint(env, orig.toString(), StateDump.backend(Json.text(exp, "backend")))
                .removeOperator(id(op))
                .withOperator(id(op), Bootstrap.keyed(env, content, maxParallelism))
                .write(out.toString());
        env.execute("statecraft-selftest-" + out.getFileName());
        return out.toString();
    }

    /** The original savepoint with one operator's identifier changed to a new UID. */
    static String renameUid(Path orig, JsonNode exp, Path out, JsonNode op, String newUid) throws Exception {
        SavepointDirs.deleteTree(out);
        StreamExecutionEnvironment env = env();
        SavepointWriter.fromExistingSavepoint(env, orig.toString(), StateDump.backend(Json.text(exp, "backend")))
                .changeOperatorIdentifier(id(op), OperatorIdentifier.forUid(newUid))
                .write(out.toString());
        env.execute("statecraft-selftest-" + out.getFileName());
        return out.toString();
    }

    /** The original savepoint without one operator. */
    static String remove(Path orig, JsonNode exp, Path out, JsonNode op) throws Exception {
        SavepointDirs.deleteTree(out);
        StreamExecutionEnvironment env = env();
        SavepointWriter.fromExistingSavepoint(env, orig.toString(), StateDump.backend(Json.text(exp, "backend")))
                .removeOperator(id(op))
                .write(out.toString());
        env.execute("statecraft-selftest-" + out.getFileName());
        return out.toString();
    }
}
