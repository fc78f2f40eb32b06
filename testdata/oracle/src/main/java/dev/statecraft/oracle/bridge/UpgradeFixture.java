package dev.statecraft.oracle.bridge;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.common.SavepointDirs;
import dev.statecraft.oracle.plans.Script;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.table.api.CompiledPlan;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.PlanReference;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;

/**
 * Oracle command {@code upgrade-fixture OUTDIR}: the fixtures of the plan-upgrade and TTL-impact
 * features, each a directory under OUTDIR:
 *
 * <ul>
 *   <li>{@code agg-filter-added/}: {@code old.sql}/{@code old.plan.json} (a group aggregate) and
 *       {@code new.sql}/{@code new.plan.json} (the same query with a WHERE filter before the
 *       aggregate, so the planner adds a Calc node and every later exec node id shifts by one: the
 *       aggregate's UID changes from {@code 3_group-aggregate} to {@code 4_group-aggregate});
 *       {@code savepoint/}: OLD run on 60 scripted rows (20 keys, 3 rows each) and stopped with a
 *       canonical savepoint; {@code spec.json}: the input for a restore of NEW (one more row per key)
 *       and the sink's final row per key when the old counts were kept (count 4, sum old + new).
 *   <li>{@code agg-ttl/}: {@code plan.sql}/{@code plan.json} (the aggregate compiled with
 *       {@code table.exec.state.ttl = 1 h}), {@code savepoint/} after 20 rows (one per key) handed over 40 ms apart (the source's settle time), so
 *       each key's accumulator carries its own TTL timestamp; {@code run.json}: the wall-clock
 *       window (ms) in which the job wrote them.
 * </ul>
 *
 * Parallelism 2, hashmap backend, as {@code sql-savepoint}.
 */
public final class UpgradeFixture {
    static final int KEYS = 20;
    static final String SRC = "CREATE TABLE src (\n  k BIGINT,\n  v BIGINT\n) WITH ('connector' = 'statecraft-source',"
            + " 'after-script' = 'idle')";
    static final String SINK = "CREATE TABLE counts (\n  k BIGINT,\n  c BIGINT,\n  s BIGINT\n)"
            + " WITH ('connector' = 'statecraft-sink')";
    static final String OLD_DML = "INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY k";
    static final String NEW_DML =
            "INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nWHERE v >= 0\nGROUP BY k";

    private UpgradeFixture() {}

    public static int run(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: upgrade-fixture OUTDIR");
            return 2;
        }
        Path out = Path.of(args[0]).toAbsolutePath();
        int rc = filterAdded(out.resolve("agg-filter-added"));
        if (rc != 0) {
            return rc;
        }
        return ttlCase(out.resolve("agg-ttl"));
    }

    private static int filterAdded(Path dir) throws Exception {
        Files.createDirectories(dir);
        Path oldPlan = dir.resolve("old.plan.json");
        Path newPlan = dir.resolve("new.plan.json");
        writePlan(oldPlan, dir.resolve("old.sql"), OLD_DML, Map.of(), "OLD: the group aggregate before the change.");
        writePlan(newPlan, dir.resolve("new.sql"), NEW_DML, Map.of(),
                "NEW: the same aggregate with a filter before it (a Calc node: later node ids shift by one).");

        // OLD input: k = 1..20 three rows each, v = row number.
        List<Script.Step> steps = new ArrayList<>();
        Map<Long, long[]> want = new TreeMap<>();
        for (long i = 0; i < 3 * KEYS; i++) {
            long k = i % KEYS + 1;
            steps.add(Script.Step.emit("src", "+I", List.of(k, i)));
            long[] cs = want.computeIfAbsent(k, x -> new long[2]);
            cs[0]++;
            cs[1] += i;
        }
        int rc = runAndSavepoint(oldPlan, steps, 0, want, dir.resolve("savepoint"));
        if (rc != 0) {
            return rc;
        }

        // NEW's restore input: one more row per key, v = 1000 + k. With the old state kept, each
        // key ends at count 4 and sum old + 1000 + k; with empty state it would end at count 1.
        ObjectNode spec = Json.obj();
        spec.put("sink", "counts");
        ArrayNode input = Json.arr();
        ArrayNode fin = Json.arr();
        for (long k = 1; k <= KEYS; k++) {
            input.add(Json.arr().add("src").add(k).add(1000 + k));
            long[] cs = want.get(k);
            fin.add(Json.arr().add(k).add(cs[0] + 1).add(cs[1] + 1000 + k));
        }
        spec.set("input", input);
        spec.set("final", fin);
        spec.put("note", "restore NEW from OLD's savepoint: each key gets one more row; the final row per key"
                + " is [k, count, sum] with OLD's counts kept (count 4)");
        Json.write(dir.resolve("spec.json"), spec);
        return 0;
    }

    private static int ttlCase(Path dir) throws Exception {
        Files.createDirectories(dir);
        Path plan = dir.resolve("plan.json");
        writePlan(plan, dir.resolve("plan.sql"), OLD_DML, Map.of("table.exec.state.ttl", "1 h"),
                "The group aggregate with table.exec.state.ttl = 1 h: accumulators carry TTL timestamps.");
        List<Script.Step> steps = new ArrayList<>();
        Map<Long, long[]> want = new TreeMap<>();
        for (long k = 1; k <= KEYS; k++) {
            steps.add(Script.Step.emit("src", "+I", List.of(k, k * 10)));
            want.put(k, new long[] {1, k * 10});
        }
        long started = System.currentTimeMillis();
        int rc = runAndSavepoint(plan, steps, 40, want, dir.resolve("savepoint"));
        long stopped = System.currentTimeMillis();
        if (rc != 0) {
            return rc;
        }
        ObjectNode run = Json.obj();
        run.put("startedMillis", started);
        run.put("stoppedMillis", stopped);
        run.put("ttlMillis", 3_600_000L);
        run.put("keys", KEYS);
        run.put("note", "wall clock around the job that wrote savepoint/: every TTL timestamp lies in between");
        Json.write(dir.resolve("run.json"), run);
        return 0;
    }

    static void writePlan(Path planFile, Path sqlFile, String dml, Map<String, String> config, String note)
            throws Exception {
        Configuration conf = new Configuration();
        TableEnvironment tEnv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        StringBuilder sql = new StringBuilder("-- " + note + "\n-- Compiled by the statecraft oracle (upgrade-fixture).\n\n");
        for (Map.Entry<String, String> e : config.entrySet()) {
            tEnv.getConfig().set(e.getKey(), e.getValue());
            sql.append("SET '").append(e.getKey()).append("' = '").append(e.getValue()).append("';\n\n");
        }
        tEnv.executeSql(SRC);
        tEnv.executeSql(SINK);
        sql.append(SRC).append(";\n\n").append(SINK).append(";\n\n").append(dml).append(";\n");
        resetNodeIds(tEnv);
        CompiledPlan p = tEnv.compilePlanSql(dml);
        Files.deleteIfExists(planFile);
        p.writeToFile(planFile.toFile());
        Files.writeString(sqlFile, sql.toString(), StandardCharsets.UTF_8);
    }

    /** Exec node ids come from a JVM-wide counter; reset it so every plan numbers from 1. */
    static void resetNodeIds(TableEnvironment tEnv) {
        try {
            Object planner = tEnv.getClass().getMethod("getPlanner").invoke(tEnv);
            Class.forName("org.apache.flink.table.planner.plan.nodes.exec.ExecNodeContext", true,
                            planner.getClass().getClassLoader())
                    .getMethod("resetIdCounter")
                    .invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reset the planner's exec node ids", e);
        }
    }

    /** Runs the plan on the script until the sink saw every key's final count and sum, then stops with a savepoint. */
    static int runAndSavepoint(Path plan, List<Script.Step> steps, long settleMillis, Map<Long, long[]> want, Path spDir)
            throws Exception {
        Script.install(steps, settleMillis);
        Configuration conf = new Configuration();
        conf.set(CoreOptions.DEFAULT_PARALLELISM, 2);
        conf.setString("state.backend.type", "hashmap");
        TableEnvironment tEnv = TableEnvironment.create(
                EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
        TableResult result = tEnv.loadPlan(PlanReference.fromFile(plan.toFile())).execute();
        JobClient client = result.getJobClient().orElseThrow();
        long deadline = System.currentTimeMillis() + 60_000;
        Map<Long, String> exp = new TreeMap<>();
        want.forEach((k, v) -> exp.put(k, v[0] + ", " + v[1]));
        while (!exp.equals(JudgeRestore.lastRows("counts"))) {
            if (System.currentTimeMillis() > deadline) {
                client.cancel();
                System.err.println("upgrade-fixture: the sink did not reach " + exp + " in 60 s: " + Script.output());
                return 1;
            }
            Thread.sleep(100);
        }
        SavepointDirs.stopInto(client, spDir, "upgrade-fixture");
        System.err.println("upgrade-fixture: savepoint " + spDir);
        return 0;
    }
}
