package dev.statecraft.oracle.savepoints;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;

/**
 * {@code judge-evolve-selftest WORKDIR [SAVEPOINT_DIR EXPECT_JSON]}: shows, before any migration
 * code exists, that judge-savepoint can tell a Row/POJO field add/drop that was really done from
 * one that was only declared (issue #6). From the evolve fixture (default
 * testdata/savepoints/evolve-hashmap, from the repository root):
 * <ul>
 *   <li>the fixture against its own expectation: accepted;</li>
 *   <li>the UNMIGRATED fixture against an expectation that declares one state with the evolved
 *       type and the values a correct migration would give: rejected, by both the State Processor
 *       API read and the restore, each on its own (Flink refuses the serializer change);</li>
 *   <li>a savepoint in which Flink itself wrote the evolved state (the State Processor API
 *       bootstraps the evolve operator from the evolved expectation: Flink's own serializers and
 *       snapshots for the new types), judged against that expectation: accepted. This is the
 *       reference a statecraft migration must match; it is kept in WORKDIR/migrated/ with
 *       WORKDIR/migrated.expect.json;</li>
 *   <li>that savepoint against the evolved expectation with one added-field value changed, and
 *       against the ORIGINAL expectation: rejected;</li>
 *   <li>a class rename that keeps the old field list (snapshot AccountV3{balance, owner,
 *       version}, written by Flink through a hand-built PojoSerializer) against an AccountV3
 *       expectation with level null: the read half accepts (the values match, Flink would
 *       migrate), the restore half's as-is snapshot check rejects.</li>
 * </ul>
 * Prints case, expected and actual verdict as TSV (Flink's reasons on stderr); exits 0 only if
 * every case behaves.
 */
public final class EvolveSelfTest {
    private EvolveSelfTest() {}

    /** One state's schema change: the new type name and what it does to each stored row/POJO. */
    record Change(String state, String newType, UnaryOperator<JsonNode> value) {}

    /** Row<String,Integer> + a Long field, default 0. */
    static final Change PROFILE_ADD = new Change("profile", "Row<String,Integer,Long>", v -> append(v, Json.F.numberNode(0L)));
    /** Row<Integer,String> minus its last field (list state: every element). */
    static final Change EVENTS_DROP = new Change("events", "Row<Integer>", v -> drop(v, 1));
    /** Row<Long,Double> minus its first field: the remaining field moves to position 0. */
    static final Change SCORES_DROP_FIRST = new Change("scores", "Row<Double>", v -> drop(v, 0));
    /** The TTL-wrapped Row<String,Integer> + a Long field whose default is null. */
    static final Change TTL_PROFILE_ADD = new Change("ttlProfile", "Row<String,Integer,Long>", v -> append(v, Json.F.nullNode()));
    /** Account minus version, plus tier = "basic": the class changes to AccountV2. */
    static final Change ACCOUNT_V2 = new Change("account", "AccountV2", v -> {
        ObjectNode o = ((ObjectNode) v).deepCopy();
        o.remove("version");
        o.put("tier", "basic");
        return o;
    });
    /** Account plus Integer level = null: the class changes to AccountV3. */
    static final Change ACCOUNT_V3 = new Change("account", "AccountV3", v -> {
        ObjectNode o = ((ObjectNode) v).deepCopy();
        o.putNull("level");
        return o;
    });

    /** readAccept: the verdict of the State Processor API half alone, when it differs. */
    record Case(String name, boolean accept, String savepoint, JsonNode expectation, boolean readAccept) {
        Case(String name, boolean accept, String savepoint, JsonNode expectation) {
            this(name, accept, savepoint, expectation, accept);
        }
    }

    public static int run(String[] args) throws Exception {
        if (args.length != 1 && args.length != 3) {
            System.err.println("usage: judge-evolve-selftest WORKDIR [SAVEPOINT_DIR EXPECT_JSON] (default: testdata/savepoints/evolve-hashmap, from the repository root)");
            return 2;
        }
        Path work = Paths.get(args[0]).toAbsolutePath().normalize();
        Path orig = Paths.get(args.length == 3 ? args[1] : "testdata/savepoints/evolve-hashmap").toAbsolutePath().normalize();
        Path expPath = Paths.get(args.length == 3 ? args[2] : "testdata/savepoints/evolve-hashmap.expect.json").toAbsolutePath().normalize();
        JsonNode exp = Json.read(expPath);
        Files.createDirectories(work);

        List<Case> cases = new ArrayList<>();
        cases.add(new Case("original", true, orig.toString(), exp));
        for (Change c : List.of(PROFILE_ADD, EVENTS_DROP, SCORES_DROP_FIRST, TTL_PROFILE_ADD, ACCOUNT_V2, ACCOUNT_V3)) {
            cases.add(new Case("unmigrated/" + c.state() + "->" + c.newType(), false, orig.toString(), evolve(exp, List.of(c))));
        }

        // Flink's own migration: the evolve operator rewritten from the evolved expectation.
        List<Change> all = List.of(PROFILE_ADD, EVENTS_DROP, SCORES_DROP_FIRST, TTL_PROFILE_ADD, ACCOUNT_V2);
        ObjectNode evolved = evolve(exp, all);
        JsonNode op = evolveOperator(evolved);
        Path migrated = work.resolve("migrated");
        JudgeSelfTest.rewrite(orig, exp, migrated, op, op, op.get("maxParallelism").asInt());
        // What Flink reads back from it, for the record (and as the reference expectation).
        Json.write(work.resolve("migrated.expect.json"), StateDump.dump(migrated.toString(), evolved));
        cases.add(new Case("flink-migrated", true, migrated.toString(), evolved));

        ObjectNode wrongDefault = evolved.deepCopy();
        ObjectNode first = (ObjectNode) state(evolveOperator(wrongDefault), "profile").get("entries").get(0);
        ((ArrayNode) first.get("value")).set(2, Json.F.numberNode(1L));
        cases.add(new Case("flink-migrated/wrong-added-value", false, migrated.toString(), wrongDefault));
        cases.add(new Case("flink-migrated/old-expectation", false, migrated.toString(), exp));

        // A class rename that leaves the old field list: the evolve operator written again by
        // Flink with Account's values as AccountV3 objects, but through a PojoSerializer that
        // knows only balance, owner and version, so the snapshot names AccountV3 without level.
        // Flink reads it (it would migrate on restore: compatible after migration) and the values
        // match an AccountV3 expectation with level null, so only the judge's as-is check in the
        // restore half can refuse it.
        ObjectNode v3 = evolve(exp, List.of(ACCOUNT_V3));
        Path stale = work.resolve("stale-field-list");
        SavepointDirs.deleteTree(stale);
        org.apache.flink.streaming.api.environment.StreamExecutionEnvironment env = StateDump.localEnv(2);
        env.setRuntimeMode(org.apache.flink.api.common.RuntimeExecutionMode.BATCH);
        JsonNode v3op = evolveOperator(v3);
        org.apache.flink.state.api.OperatorIdentifier id = org.apache.flink.state.api.OperatorIdentifier.forUid("evolve");
        org.apache.flink.state.api.SavepointWriter.fromExistingSavepoint(env, orig.toString(), StateDump.backend(Json.text(exp, "backend")))
                .removeOperator(id)
                .withOperator(id, Bootstrap.keyed(env, v3op, v3op.get("maxParallelism").asInt(), new StaleAccountWriter(Json.compact(v3op))))
                .write(stale.toString());
        env.execute("statecraft-evolve-selftest-stale-field-list");
        cases.add(new Case("stale-pojo-field-list", false, stale.toString(), v3, true));

        boolean ok = true;
        System.out.println("case\texpected\tactual");
        for (Case c : cases) {
            // Each half alone: the restore must refuse a declared-only change by itself too.
            String read = SavepointJudge.judgeRead(c.savepoint(), c.expectation());
            String restore = SavepointJudge.judgeRestore(c.savepoint(), c.expectation());
            ok &= report(c.name() + "/read", c.readAccept(), read);
            ok &= report(c.name() + "/restore", c.accept(), restore);
        }
        return ok ? 0 : 1;
    }

    private static boolean report(String name, boolean expectAccept, String reason) {
        boolean accepted = reason == null;
        System.out.println(name + "\t" + (expectAccept ? "accept" : "reject") + "\t" + (accepted ? "accept" : "reject"));
        System.out.flush();
        System.err.println(name + ": " + (accepted ? "accepted" : reason));
        return accepted == expectAccept;
    }

    /** Writes the account state with a PojoSerializer of AccountV3 over Account's three fields only. */
    static final class StaleAccountWriter extends Bootstrap.Writer {
        StaleAccountWriter(String opJson) {
            super(opJson);
        }

        @Override
        org.apache.flink.api.common.state.State register(Specs.KeyedState s) {
            if (!s.name.equals("account")) return super.register(s);
            try {
                java.lang.reflect.Field[] fields = {
                        AccountV3.class.getField("balance"), AccountV3.class.getField("owner"), AccountV3.class.getField("version")};
                org.apache.flink.api.common.typeutils.TypeSerializer<?>[] serializers = {
                        org.apache.flink.api.common.typeutils.base.LongSerializer.INSTANCE,
                        org.apache.flink.api.common.typeutils.base.StringSerializer.INSTANCE,
                        org.apache.flink.api.common.typeutils.base.IntSerializer.INSTANCE};
                org.apache.flink.api.java.typeutils.runtime.PojoSerializer<AccountV3> p = new org.apache.flink.api.java.typeutils.runtime.PojoSerializer<>(
                        AccountV3.class, serializers, fields, new org.apache.flink.api.common.serialization.SerializerConfigImpl());
                return getRuntimeContext().getState(new org.apache.flink.api.common.state.ValueStateDescriptor<>("account", p));
            } catch (NoSuchFieldException e) {
                throw new IllegalStateException("AccountV3 lost a field: " + e.getMessage(), e);
            }
        }
    }

    /** A copy of the expectation with each change applied to its state's type and every value. */
    static ObjectNode evolve(JsonNode exp, List<Change> changes) {
        ObjectNode out = exp.deepCopy();
        JsonNode op = evolveOperator(out);
        for (Change c : changes) {
            ObjectNode s = state(op, c.state());
            s.put("valueType", c.newType());
            boolean list = s.get("kind").asText().equals("list");
            for (JsonNode e : s.get("entries")) {
                JsonNode v = e.get("value");
                if (list) {
                    ArrayNode a = Json.arr();
                    for (JsonNode x : v) a.add(x.isNull() ? x : c.value().apply(x));
                    ((ObjectNode) e).set("value", a);
                } else if (!v.isNull()) {
                    ((ObjectNode) e).set("value", c.value().apply(v));
                }
            }
        }
        return out;
    }

    private static JsonNode evolveOperator(JsonNode exp) {
        for (JsonNode o : exp.get("operators")) if ("evolve".equals(Json.text(o, "uid"))) return o;
        throw new IllegalArgumentException("expectation has no operator with uid evolve");
    }

    private static ObjectNode state(JsonNode op, String name) {
        for (JsonNode s : op.get("keyedStates")) if (s.get("name").asText().equals(name)) return (ObjectNode) s;
        throw new IllegalArgumentException("operator evolve has no keyed state " + name);
    }

    private static JsonNode append(JsonNode row, JsonNode field) {
        ArrayNode a = ((ArrayNode) row).deepCopy();
        a.add(field);
        return a;
    }

    private static JsonNode drop(JsonNode row, int index) {
        ArrayNode a = ((ArrayNode) row).deepCopy();
        if (index >= a.size()) throw new IllegalArgumentException("row " + Json.compact(row) + " has no field " + index);
        a.remove(index);
        return a;
    }
}
