package dev.statecraft.oracle.bridge;

import dev.statecraft.oracle.common.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Oracle command {@code type-catalogue OUTDIR SAVEPOINT SPEC}: the evidence for type-aware restore
 * predictions (issue 18). SAVEPOINT is {@code upgrades/agg-filter-added/savepoint} (OLD: {@code
 * SELECT k, COUNT(*) AS c, SUM(v) AS s FROM src GROUP BY k}, 20 keys, 3 rows each) and SPEC its
 * restore spec (one more row per key; the final row per key when OLD's state is kept). For each
 * case, a changed query NEW is compiled into {@code OUTDIR/<case>/new.plan.json} (+ {@code
 * new.sql}) and Flink restores SAVEPOINT under it (non-restored state not allowed, {@code
 * judge-restore}): {@code OUTDIR/<case>/flink.json} records the outcome: {@code restored} (the
 * sink's rows are those of an uninterrupted run of OLD on the same rows), {@code restored-wrong}
 * (Flink accepted the state and the rows differ) or {@code refused}, with Flink's message.
 */
public final class TypeCatalogue {
    private TypeCatalogue() {}

    /** Case name -> NEW's DML and the SET options it is compiled with ("" for none). */
    static final Map<String, String[]> CASES = new LinkedHashMap<>();

    static {
        String base = "INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY k";
        CASES.put("same", new String[] {base, ""});
        CASES.put("alias-changed", new String[] {"INSERT INTO counts\nSELECT k, COUNT(*) AS cnt, SUM(v) AS total\nFROM src\nGROUP BY k", ""});
        CASES.put("key-column-added", new String[] {"INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY k, v", ""});
        CASES.put("key-retyped", new String[] {
            "INSERT INTO counts\nSELECT CAST(k AS INT) AS k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY CAST(k AS INT)", ""});
        CASES.put("key-not-null", new String[] {
            "INSERT INTO counts\nSELECT COALESCE(k, 0) AS k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY COALESCE(k, 0)", ""});
        CASES.put("aggregate-added", new String[] {"INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(v) + MAX(v) AS s\nFROM src\nGROUP BY k", ""});
        CASES.put("aggregate-removed", new String[] {
            "INSERT INTO counts\nSELECT k, COUNT(*) AS c, CAST(NULL AS BIGINT) AS s\nFROM src\nGROUP BY k", ""});
        CASES.put("count-distinct", new String[] {"INSERT INTO counts\nSELECT k, COUNT(DISTINCT v) AS c, SUM(v) AS s\nFROM src\nGROUP BY k", ""});
        CASES.put("sum-retyped", new String[] {
            "INSERT INTO counts\nSELECT k, COUNT(*) AS c, SUM(CAST(v AS INT)) AS s\nFROM src\nGROUP BY k", ""});
        CASES.put("sum-to-max", new String[] {"INSERT INTO counts\nSELECT k, COUNT(*) AS c, MAX(v) AS s\nFROM src\nGROUP BY k", ""});
        CASES.put("key-meaning-changed", new String[] {"INSERT INTO counts\nSELECT v AS k, COUNT(*) AS c, SUM(v) AS s\nFROM src\nGROUP BY v", ""});
        CASES.put("ttl-switched-on", new String[] {base, "1 h"});
    }

    public static int run(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: type-catalogue OUTDIR SAVEPOINT SPEC");
            return 2;
        }
        Path out = Path.of(args[0]).toAbsolutePath();
        Path sp = Path.of(args[1]).toAbsolutePath();
        JsonNode spec = Json.read(Path.of(args[2]).toAbsolutePath());
        for (Map.Entry<String, String[]> c : CASES.entrySet()) {
            Path dir = out.resolve(c.getKey());
            Files.createDirectories(dir);
            Path plan = dir.resolve("new.plan.json");
            Map<String, String> conf = c.getValue()[1].isEmpty() ? Map.of() : Map.of("table.exec.state.ttl", c.getValue()[1]);
            UpgradeFixture.writePlan(plan, dir.resolve("new.sql"), c.getValue()[0], conf,
                    "NEW of type-catalogue case " + c.getKey() + " (OLD: upgrades/agg-filter-added/old.sql).");
            String[] outcome = JudgeRestore.judge(plan, sp, spec);
            String verdict = switch (outcome[0]) {
                case "RESTORED" -> "restored";
                case "REJECTED" -> "restored-wrong";
                default -> "refused";
            };
            ObjectNode rec = Json.obj();
            rec.put("case", c.getKey());
            rec.put("flinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
            rec.put("flink", verdict);
            String msg = outcome[1];
            rec.put("message", msg.length() > 600 ? msg.substring(0, 600) + "..." : msg);
            Json.write(dir.resolve("flink.json"), rec);
            System.err.println("type-catalogue: " + c.getKey() + ": " + verdict + ": " + rec.get("message").asText());
        }
        return 0;
    }
}
