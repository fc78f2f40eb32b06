package dev.statecraft.oracle.bridge;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.plans.PlanCatalog;
import dev.statecraft.oracle.plans.PlanJudge;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.flink.table.api.CompiledPlan;

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
 *
 * <p>With a fourth argument FLINK120DIR ({@code testdata/flink-1.20}), also the 1.20 -> 2.3 cases:
 * a catalogue program's runnable twin ({@code upgrades/new/runnable-<program>.sql}) with one text
 * change, compiled by this Flink into {@code OUTDIR/<case>/new.plan.json}, and Flink's verdict
 * ({@code judge-plan NEW SPEC SAVEPOINT}: 0 restored, 1 restored-wrong, 3 refused) restoring the
 * program's Flink 1.20 savepoint ({@code savepoints/upgrade-<program>}) fed its spec's "after"
 * rows. The 2.3 -> 2.3 cases ({@link TypeCatalogueV23}) restore savepoints this Flink takes.
 *
 * <p>TYPE_CATALOGUE_ONLY=REGEX runs only the 1.20 and 2.3 cases whose names match (none of the
 * 2.3 cases of the first kind); a 2.3 case's savepoint is then reused when it exists.
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


    private static final String MINIBATCH = "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '100 ms';\nSET 'table.exec.mini-batch.size' = '10';\nSET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\n";

    /**
     * 1.20 -> 2.3 cases: name -> {program, text in its runnable SQL, replacement[, text, replacement]...}:
     * every text must occur in the program, and each is replaced wherever it occurs.
     */
    static final Map<String, String[]> V120 = new LinkedHashMap<>();

    static {
        V120.put("v120-join-key-column-added", new String[] {"join-inner", "ON o.user_id = u.user_id",
            "ON o.user_id = u.user_id AND o.order_id = u.user_id"});
        V120.put("v120-top-n-key-retyped", new String[] {"top-n", "  user_id BIGINT,\n  amount INT,\n  pt AS PROCTIME()",
            "  user_id INT,\n  amount INT,\n  pt AS PROCTIME()"});
        V120.put("v120-window-alias-changed", new String[] {"window-aggregate", "SUM(amount) AS total", "SUM(amount) AS amount_sum"});
        V120.put("v120-window-aggregate-added", new String[] {"window-aggregate", "SUM(amount) AS total", "SUM(amount) + MAX(amount) AS total"});
        V120.put("v120-join-alias-changed", new String[] {"join-inner", "SELECT o.order_id, o.amount, u.name", "SELECT o.order_id AS id, o.amount AS amt, u.name AS who"});
        // Regular joins: the key retyped on both sides, a filter in front, another column of the
        // same type read from the build side, outer -> inner, STATE_TTL hint changed and removed.
        V120.put("v120-join-key-retyped", new String[] {"join-inner", "  user_id BIGINT,\n", "  user_id INT,\n"});
        V120.put("v120-join-filter-added", new String[] {"join-inner", "JOIN users AS u ON o.user_id = u.user_id;",
            "JOIN users AS u ON o.user_id = u.user_id\nWHERE o.amount > 0;"});
        V120.put("v120-join-projection-changed", new String[] {"join-inner", "SELECT o.order_id, o.amount, u.name", "SELECT o.order_id, o.amount, u.region"});
        V120.put("v120-join-left-to-inner", new String[] {"join-left", "LEFT JOIN users", "JOIN users"});
        // TTL timestamps in the savepoint are wall-clock times of the 1.20 run: a TTL shorter than
        // the fixture's age expires the restored rows (with 1d -> 2d Flink dropped them), so the
        // changed TTL is one no fixture outlives.
        V120.put("v120-join-ttl-hint-changed", new String[] {"join-state-ttl-hint", "'a' = '1d', 'b' = '12h'", "'a' = '3650d', 'b' = '3650d'"});
        V120.put("v120-join-ttl-hint-removed", new String[] {"join-state-ttl-hint", "/*+ STATE_TTL('a' = '1d', 'b' = '12h') */ ", ""});
        // Interval join: the time bound widened, a key column added.
        V120.put("v120-interval-join-bound-changed", new String[] {"interval-join", "INTERVAL '1' HOUR", "INTERVAL '2' HOUR"});
        V120.put("v120-interval-join-key-added", new String[] {"interval-join", "WHERE o.order_id = s.order_id",
            "WHERE o.order_id = s.order_id AND o.user_id = s.order_id"});
        // Group aggregates: key column added, COUNT DISTINCT, SUM -> MAX, two-phase (local/global)
        // and split distinct (incremental) plans, TTL switched on / changed / off, sink materializer.
        V120.put("v120-group-key-column-added", new String[] {"group-aggregate", "GROUP BY user_id;", "GROUP BY user_id, order_id;"});
        V120.put("v120-group-count-distinct", new String[] {"group-aggregate", "COUNT(*) AS cnt", "COUNT(DISTINCT order_id) AS cnt"});
        V120.put("v120-group-sum-to-max", new String[] {"group-aggregate", "SUM(amount) AS total", "MAX(amount) AS total"});
        V120.put("v120-group-two-phase", new String[] {"group-aggregate", "CREATE TABLE orders (", MINIBATCH + "CREATE TABLE orders ("});
        V120.put("v120-group-incremental", new String[] {"group-aggregate", "COUNT(*) AS cnt", "COUNT(DISTINCT order_id) AS cnt",
            "CREATE TABLE orders (", MINIBATCH + "SET 'table.optimizer.distinct-agg.split.enabled' = 'true';\nCREATE TABLE orders ("});
        V120.put("v120-group-ttl-switched-on", new String[] {"group-aggregate", "CREATE TABLE orders (", "SET 'table.exec.state.ttl' = '5400 s';\nCREATE TABLE orders ("});
        V120.put("v120-group-ttl-changed", new String[] {"group-aggregate-ttl-config", "'5400 s'", "'3650 d'"});
        V120.put("v120-group-ttl-switched-off", new String[] {"group-aggregate-ttl-config", "SET 'table.exec.state.ttl' = '5400 s';\n", ""});
        V120.put("v120-sink-materialize", new String[] {"group-aggregate", "  total INT\n)",
            "  total INT,\n  PRIMARY KEY (user_id) NOT ENFORCED\n)",
            "CREATE TABLE orders (", "SET 'table.exec.sink.upsert-materialize' = 'FORCE';\nCREATE TABLE orders ("});
        // Deduplication and Top-N: keep first -> keep last, partition key meaning changed, sort order
        // reversed, the aggregate behind a dedup changed.
        V120.put("v120-dedup-first-to-last", new String[] {"dedup-keep-first", "ORDER BY pt ASC", "ORDER BY pt DESC"});
        V120.put("v120-dedup-key-changed", new String[] {"dedup-keep-last", "PARTITION BY order_id", "PARTITION BY user_id"});
        V120.put("v120-dedup-aggregate-sum-to-max", new String[] {"dedup-then-aggregate", "SUM(amount) AS total", "MAX(amount) AS total"});
        V120.put("v120-top-n-order-reversed", new String[] {"top-n", "ORDER BY amount DESC", "ORDER BY amount ASC"});
        V120.put("v120-top-n-partition-changed", new String[] {"top-n", "PARTITION BY user_id", "PARTITION BY order_id"});
        // Over aggregate, changelog normalize, statement set, window aggregate.
        V120.put("v120-over-key-retyped", new String[] {"over-aggregate", "  user_id BIGINT,\n", "  user_id INT,\n"});
        V120.put("v120-over-sum-to-max", new String[] {"over-aggregate", "SUM(amount) OVER", "MAX(amount) OVER"});
        V120.put("v120-changelog-filter-rewritten", new String[] {"changelog-normalize", "WHERE balance > 0", "WHERE balance >= 1"});
        V120.put("v120-changelog-key-retyped", new String[] {"changelog-normalize", "  account_id BIGINT,\n", "  account_id INT,\n"});
        V120.put("v120-statement-set-key-meaning-changed", new String[] {"statement-set",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total\nFROM orders\nGROUP BY user_id;",
            "SELECT order_id AS user_id, COUNT(*) AS cnt, SUM(amount) AS total\nFROM orders\nGROUP BY order_id;"});
        V120.put("v120-statement-set-insert-dropped", new String[] {"statement-set",
            "INSERT INTO order_out\nSELECT order_id, user_id, amount FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn\n  FROM orders)\nWHERE rn = 1;\n", ""});
        V120.put("v120-window-size-changed", new String[] {"window-aggregate", "INTERVAL '10' SECOND", "INTERVAL '20' SECOND"});
        V120.put("v120-window-sum-to-max", new String[] {"window-aggregate", "SUM(amount) AS total", "MAX(amount) AS total"});
        // Built-in aggregate functions (TypeCatalogueAggs has the 2.3 ones): AVG's accumulator
        // against a 1.20 SUM's, over retractions and not.
        V120.put("v120-dedup-aggregate-sum-to-avg", new String[] {"dedup-then-aggregate", "SUM(amount) AS total", "CAST(AVG(amount) AS INT) AS total"});
        V120.put("v120-group-avg-added", new String[] {"group-aggregate", "SUM(amount) AS total", "SUM(amount) + CAST(AVG(amount) AS INT) AS total"});
        TypeCatalogueNodes.registerTwins(V120);
    }

    public static int run(String[] args) throws Exception {
        if (args.length != 3 && args.length != 4) {
            System.err.println("usage: type-catalogue OUTDIR SAVEPOINT SPEC [FLINK120DIR]");
            return 2;
        }
        Path out = Path.of(args[0]).toAbsolutePath();
        Path sp = Path.of(args[1]).toAbsolutePath();
        JsonNode spec = Json.read(Path.of(args[2]).toAbsolutePath());
        boolean onlySome = !System.getenv().getOrDefault("TYPE_CATALOGUE_ONLY", "").isEmpty();
        for (Map.Entry<String, String[]> c : onlySome ? Map.<String, String[]>of().entrySet() : CASES.entrySet()) {
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
        if (args.length == 4) {
            Path v120 = Path.of(args[3]).toAbsolutePath();
            // TYPE_CATALOGUE_ONLY=REGEX regenerates only the 1.20 cases it matches (adding a case
            // need not rerun the others); a case that fails is reported and the rest still run.
            String only = System.getenv().getOrDefault("TYPE_CATALOGUE_ONLY", "");
            int failed = 0;
            for (Map.Entry<String, String[]> c : V120.entrySet()) {
                if (!only.isEmpty() && !c.getKey().matches(only)) {
                    continue;
                }
                try {
                    if (v120Case(out.resolve(c.getKey()), v120, c.getKey(), c.getValue()) != 0) {
                        failed++;
                    }
                } catch (Exception e) {
                    System.err.println("type-catalogue: " + c.getKey() + ": failed: " + e);
                    failed++;
                }
            }
            failed += TypeCatalogueV23.run(out, v120, only);
            if (failed > 0) {
                System.err.println("type-catalogue: " + failed + " case(s) failed");
                return 1;
            }
        }
        return 0;
    }

    private static int v120Case(Path dir, Path v120, String name, String[] v) throws Exception {
        String program = v[0];
        String sql = Files.readString(v120.resolve("upgrades/new/runnable-" + program + ".sql"), StandardCharsets.UTF_8);
        String[] changed = change(name, "runnable-" + program + ".sql", sql, v, 1);
        if (changed == null) {
            return 1;
        }
        Files.createDirectories(dir);
        Path plan = dir.resolve("new.plan.json");
        compile(changed[0], plan);
        Files.writeString(dir.resolve("new.sql"), "-- type-catalogue case " + name + ": runnable-" + program
                + ".sql with " + changed[1] + "\n" + changed[0], StandardCharsets.UTF_8);
        // A twin of a 2.3 catalogue base (TypeCatalogueNodes.registerTwins) has the base's spec.
        Path spec = TypeCatalogueV23.BASES.containsKey(program)
                ? TypeCatalogueV23.spec(out(dir).resolve("types-savepoints"), v120, program)
                : v120.resolve("upgrades/specs/" + program + ".json");
        String[] verdict = judgePlan(name, plan, spec, v120.resolve("savepoints/upgrade-" + program));
        if (verdict == null) {
            return 1;
        }
        ObjectNode rec = Json.obj();
        rec.put("case", name);
        rec.put("flinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
        rec.put("oldFlinkVersion", "1.20.0");
        rec.put("oldPlan", "flink-1.20/upgrades/old/runnable-" + program + ".json");
        rec.put("savepoint", "flink-1.20/savepoints/upgrade-" + program);
        rec.put("flink", verdict[0]);
        rec.put("message", verdict[1]);
        Json.write(dir.resolve("flink.json"), rec);
        System.err.println("type-catalogue: " + name + ": " + verdict[0] + ": " + verdict[1]);
        return 0;
    }

    /** The catalogue's directory (testdata/upgrades) of a case directory OUTDIR/<case>. */
    private static Path out(Path caseDir) {
        return caseDir.getParent().getParent();
    }

    /**
     * Applies the text changes v[from], v[from+1], ... (text, replacement pairs) to sql: {the
     * changed SQL, the changes as a readable list}, or null (said on stderr) when a text does not
     * occur in it.
     */
    static String[] change(String name, String what, String sql, String[] v, int from) {
        StringBuilder change = new StringBuilder();
        for (int i = from; i + 1 < v.length; i += 2) {
            if (!sql.contains(v[i])) {
                System.err.println("type-catalogue: " + name + ": " + what + " has no \"" + v[i] + "\"");
                return null;
            }
            sql = sql.replace(v[i], v[i + 1]);
            change.append(change.length() == 0 ? "" : ", ").append('"').append(v[i].replace("\n", " ")).append("\" -> \"")
                    .append(v[i + 1].replace("\n", " ")).append('"');
        }
        return new String[] {sql, change.toString()};
    }

    /** Compiles a runnable program's SQL (DDL, SET lines, one INSERT or a statement set) into plan. */
    static void compile(String sql, Path plan) throws Exception {
        CompiledPlan p = PlanCatalog.compile(PlanCatalog.parse("type-catalogue", sql));
        Files.deleteIfExists(plan);
        p.writeToFile(plan.toFile());
    }

    /**
     * Flink's verdict on restoring savepoint under plan, fed spec's "after" rows (judge-plan):
     * {restored | restored-wrong | refused, the judge's report (at most 600 characters)}, or null
     * (said on stderr) when the judge itself failed.
     */
    static String[] judgePlan(String name, Path plan, Path spec, Path savepoint) throws Exception {
        // judge-plan reports on stderr; keep a copy for the record (one command at a time per JVM).
        PrintStream err = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                log.write(b);
                err.write(b);
            }
        }, true, StandardCharsets.UTF_8));
        int rc;
        try {
            rc = PlanJudge.run(new String[] {plan.toString(), spec.toString(), savepoint.toString()});
        } finally {
            System.setErr(err);
        }
        String verdict = switch (rc) {
            case 0 -> "restored";
            case 1 -> "restored-wrong";
            case 3 -> "refused";
            default -> "error";
        };
        if (verdict.equals("error")) {
            System.err.println("type-catalogue: " + name + ": judge-plan exit " + rc);
            return null;
        }
        String msg = "";
        for (String l : log.toString(StandardCharsets.UTF_8).split("\n")) {
            if (l.contains("REFUSED") || l.contains("REJECTED") || l.contains("ACCEPTED") || l.startsWith("  sink")) {
                msg += (msg.isEmpty() ? "" : " ") + l.strip();
            }
        }
        return new String[] {verdict, msg.length() > 600 ? msg.substring(0, 600) + "..." : msg};
    }
}
