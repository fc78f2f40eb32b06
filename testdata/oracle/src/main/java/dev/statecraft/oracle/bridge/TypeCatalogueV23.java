package dev.statecraft.oracle.bridge;

import dev.statecraft.oracle.common.Json;
import dev.statecraft.oracle.plans.Script;
import dev.statecraft.oracle.plans.SqlSavepoint;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The 2.3 -> 2.3 cases of {@code type-catalogue} (issue 18): savepoints this Flink (2.3.0) takes of
 * the catalogue programs' runnable twins, or of a twin with one change (a DISTINCT aggregate, a
 * two-phase plan, ...), restored by the same Flink under a changed plan. Each savepoint ("base") is
 * taken once ({@code sql-savepoint}: the program's spec "before" rows) into {@code
 * OUTDIR/../types-savepoints/<base>/}, with the plan it ran beside it ({@code <base>.plan.json},
 * {@code <base>.sql}); each case compiles the base's SQL with its own text changes into {@code
 * OUTDIR/<case>/new.plan.json} and records Flink's verdict ({@code judge-plan}: the spec's "after"
 * rows must be those of an uninterrupted run of the base) in {@code OUTDIR/<case>/flink.json}.
 */
final class TypeCatalogueV23 {
    private TypeCatalogueV23() {}

    /** Base name -> {program (upgrades/new/runnable-<program>.sql), text, replacement, ...}. */
    static final Map<String, String[]> BASES = new LinkedHashMap<>();

    /** Case name -> {base, text, replacement, ...}: NEW is the base's SQL with these changes. */
    static final Map<String, String[]> CASES = new LinkedHashMap<>();

    private static final String MINIBATCH = "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '100 ms';\nSET 'table.exec.mini-batch.size' = '10';\nSET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\n";

    static {
        for (String p : new String[] {"join-inner", "join-left", "interval-join", "dedup-keep-first", "dedup-keep-last", "top-n",
            "window-aggregate", "over-aggregate", "dedup-then-aggregate"}) {
            BASES.put(p, new String[] {p});
        }
        // The spec's order ids are unique per user and its amounts per window, so the DISTINCT
        // twins emit the same rows as the programs and share their specs.
        BASES.put("group-count-distinct", new String[] {"group-aggregate", "COUNT(*) AS cnt", "COUNT(DISTINCT order_id) AS cnt"});
        BASES.put("window-sum-distinct", new String[] {"window-aggregate", "SUM(amount) AS total", "SUM(DISTINCT amount) AS total"});
        // A RANGE over window (its own spec, types-specs/over-range.json: the sums of every row so far).
        BASES.put("over-range", new String[] {"over-aggregate", "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW",
            "RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW"});
        // Event-time deduplication (keep the first row per user by rowtime), written over the
        // window program's tables; its own spec, types-specs/dedup-rowtime.json.
        BASES.put("dedup-rowtime", new String[] {"window-aggregate",
            "SELECT window_start, window_end, user_id, SUM(amount) AS total\nFROM TABLE(TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND))\nGROUP BY window_start, window_end, user_id;",
            "SELECT CAST(ts AS TIMESTAMP(3)), CAST(ts AS TIMESTAMP(3)), user_id, amount FROM (\n  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn\n  FROM orders_rt)\nWHERE rn = 1;"});
        // Top-N over an updating input (a keep-last dedup in front): the retracting rank strategy.
        BASES.put("top-n-retract", new String[] {"top-n", "  FROM orders)",
            "  FROM (SELECT order_id, user_id, amount, pt FROM (\n    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rk FROM orders)\n    WHERE rk = 1))"});
        BASES.put("group-two-phase", new String[] {"group-aggregate", "CREATE TABLE orders (", MINIBATCH + "CREATE TABLE orders ("});
        TypeCatalogueNodes.register(BASES, CASES);

        // Regular and interval joins.
        CASES.put("v23-join-key-retyped", new String[] {"join-inner", "  user_id BIGINT,\n", "  user_id INT,\n"});
        CASES.put("v23-join-alias-changed", new String[] {"join-inner", "SELECT o.order_id, o.amount, u.name",
            "SELECT o.order_id AS id, o.amount AS amt, u.name AS who"});
        CASES.put("v23-join-key-column-added", new String[] {"join-inner", "ON o.user_id = u.user_id",
            "ON o.user_id = u.user_id AND o.order_id = u.user_id"});
        CASES.put("v23-join-left-to-inner", new String[] {"join-left", "LEFT JOIN users", "JOIN users"});
        CASES.put("v23-interval-join-bound-changed", new String[] {"interval-join", "INTERVAL '1' HOUR", "INTERVAL '2' HOUR"});
        // Deduplication and Top-N.
        CASES.put("v23-dedup-first-to-last", new String[] {"dedup-keep-first", "ORDER BY pt ASC", "ORDER BY pt DESC"});
        CASES.put("v23-dedup-key-changed", new String[] {"dedup-keep-last", "PARTITION BY order_id", "PARTITION BY user_id"});
        CASES.put("v23-top-n-key-retyped", new String[] {"top-n", "  user_id BIGINT,\n  amount INT,\n  pt AS PROCTIME()",
            "  user_id INT,\n  amount INT,\n  pt AS PROCTIME()"});
        CASES.put("v23-top-n-order-reversed", new String[] {"top-n", "ORDER BY amount DESC", "ORDER BY amount ASC"});
        // Window TVF aggregates.
        CASES.put("v23-window-alias-changed", new String[] {"window-aggregate", "SUM(amount) AS total", "SUM(amount) AS amount_sum"});
        CASES.put("v23-window-aggregate-added", new String[] {"window-aggregate", "SUM(amount) AS total", "SUM(amount) + MAX(amount) AS total"});
        CASES.put("v23-window-sum-to-distinct", new String[] {"window-aggregate", "SUM(amount) AS total", "SUM(DISTINCT amount) AS total"});
        CASES.put("v23-window-distinct-same", new String[] {"window-sum-distinct"});
        CASES.put("v23-window-distinct-removed", new String[] {"window-sum-distinct", "SUM(DISTINCT amount) AS total", "SUM(amount) AS total"});
        // Window namespaces: a session window keeps TimeWindow namespaces where a tumbling one
        // keeps its slice end (Long); a hopping window adds a COUNT(*); a cumulating one keeps both.
        CASES.put("v23-window-tumble-to-session", new String[] {"window-aggregate", "TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
            "SESSION(TABLE orders_rt PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '10' SECOND)"});
        CASES.put("v23-window-tumble-to-hop", new String[] {"window-aggregate", "TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
            "HOP(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"});
        CASES.put("v23-window-tumble-to-cumulate", new String[] {"window-aggregate", "TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
            "CUMULATE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)"});
        // Event-time deduplication and a retracting Top-N.
        CASES.put("v23-dedup-rowtime-same", new String[] {"dedup-rowtime"});
        CASES.put("v23-dedup-rowtime-first-to-last", new String[] {"dedup-rowtime", "ORDER BY ts ASC", "ORDER BY ts DESC"});
        CASES.put("v23-dedup-rowtime-key-retyped", new String[] {"dedup-rowtime", "  user_id BIGINT,\n", "  user_id INT,\n"});
        CASES.put("v23-top-n-retract-same", new String[] {"top-n-retract"});
        CASES.put("v23-top-n-retract-order-reversed", new String[] {"top-n-retract", "ORDER BY amount DESC", "ORDER BY amount ASC"});
        // Over aggregates.
        CASES.put("v23-over-sum-to-max", new String[] {"over-aggregate", "SUM(amount) OVER", "MAX(amount) OVER"});
        CASES.put("v23-over-alias-changed", new String[] {"over-aggregate", "CURRENT ROW) AS last3", "CURRENT ROW) AS sum3"});
        CASES.put("v23-over-range-same", new String[] {"over-range"});
        CASES.put("v23-over-range-sum-to-max", new String[] {"over-range", "SUM(amount) OVER", "MAX(amount) OVER"});
        // Group aggregates with a DISTINCT aggregate (its distinct map view), two-phase
        // (local/global) and over a retracting input (dedup keep last in front).
        CASES.put("v23-distinct-same", new String[] {"group-count-distinct"});
        CASES.put("v23-distinct-alias-changed", new String[] {"group-count-distinct", "COUNT(DISTINCT order_id) AS cnt", "COUNT(DISTINCT order_id) AS n"});
        CASES.put("v23-distinct-removed", new String[] {"group-count-distinct", "COUNT(DISTINCT order_id) AS cnt", "COUNT(*) AS cnt"});
        CASES.put("v23-distinct-added", new String[] {"group-count-distinct", "SUM(amount) AS total", "SUM(DISTINCT amount) AS total"});
        CASES.put("v23-distinct-column-retyped", new String[] {"group-count-distinct", "COUNT(DISTINCT order_id) AS cnt", "COUNT(DISTINCT amount) AS cnt"});
        CASES.put("v23-two-phase-alias-changed", new String[] {"group-two-phase", "SUM(amount) AS total", "SUM(amount) AS amount_sum"});
        CASES.put("v23-two-phase-sum-to-max", new String[] {"group-two-phase", "SUM(amount) AS total", "MAX(amount) AS total"});
        CASES.put("v23-retract-alias-changed", new String[] {"dedup-then-aggregate", "SUM(amount) AS total", "SUM(amount) AS amount_sum"});
        CASES.put("v23-retract-sum-to-max", new String[] {"dedup-then-aggregate", "SUM(amount) AS total", "MAX(amount) AS total"});
        CASES.put("v23-retract-count-added", new String[] {"dedup-then-aggregate", "SUM(amount) AS total", "SUM(amount) + CAST(COUNT(amount) AS INT) AS total"});
        // The built-in aggregate functions' bases and cases.
        TypeCatalogueAggs.register();
        TypeCatalogueRanks.register();
    }

    /**
     * Runs the cases matching only (all when empty) and returns how many failed. A base is taken
     * when a selected case needs it and, in a run of a subset, it does not exist yet.
     */
    static int run(Path out, Path v120, String only) {
        Path bases = out.getParent().resolve("types-savepoints");
        Map<String, Boolean> made = new LinkedHashMap<>();
        int failed = 0;
        for (Map.Entry<String, String[]> c : CASES.entrySet()) {
            String name = c.getKey();
            if (!only.isEmpty() && !name.matches(only)) {
                continue;
            }
            String base = c.getValue()[0];
            try {
                if (!made.containsKey(base)) {
                    boolean reuse = !only.isEmpty() && Files.exists(bases.resolve(base).resolve("_metadata"));
                    made.put(base, reuse || takeBase(bases, v120, base));
                }
                if (!made.get(base) || runCase(out.resolve(name), bases, v120, name, c.getValue()) != 0) {
                    failed++;
                }
            } catch (Exception e) {
                System.err.println("type-catalogue: " + name + ": failed: " + e);
                failed++;
            }
        }
        return failed;
    }

    private static String program(String base) {
        return BASES.get(base)[0];
    }

    /** The base's spec: its own under OUTDIR/../types-specs when its rows differ from its program's. */
    static Path spec(Path bases, Path v120, String base) {
        Path own = bases.resolveSibling("types-specs").resolve(base + ".json");
        return Files.exists(own) ? own : v120.resolve("upgrades/specs/" + program(base) + ".json");
    }

    private static String[] baseSql(Path v120, String base) throws Exception {
        String[] b = BASES.get(base);
        String sql = Files.readString(v120.resolve("upgrades/new/runnable-" + b[0] + ".sql"), StandardCharsets.UTF_8);
        return TypeCatalogue.change(base, "runnable-" + b[0] + ".sql", sql, b, 1);
    }

    private static boolean takeBase(Path bases, Path v120, String base) throws Exception {
        String[] sql = baseSql(v120, base);
        if (sql == null) {
            return false;
        }
        Files.createDirectories(bases);
        Path plan = bases.resolve(base + ".plan.json");
        TypeCatalogue.compile(sql[0], plan);
        Files.writeString(bases.resolve(base + ".sql"), "-- type-catalogue savepoint " + base + ": runnable-" + program(base) + ".sql"
                + (sql[1].isEmpty() ? "" : " with " + sql[1]) + "\n" + sql[0], StandardCharsets.UTF_8);
        Path sp = bases.resolve(base);
        if (Files.exists(sp)) {
            try (var walk = Files.walk(sp)) {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        int rc;
        try {
            rc = SqlSavepoint.run(new String[] {bases.toString(), base, plan.toString(), spec(bases, v120, base).toString()});
        } finally {
            // sql-savepoint holds the sources open for its barrier; judge-plan needs them to end.
            Script.holdOpen(false);
        }
        if (rc != 0) {
            System.err.println("type-catalogue: savepoint " + base + ": sql-savepoint exit " + rc);
            return false;
        }
        return true;
    }

    private static int runCase(Path dir, Path bases, Path v120, String name, String[] v) throws Exception {
        String base = v[0];
        String[] baseSql = baseSql(v120, base);
        String[] changed = baseSql == null ? null : TypeCatalogue.change(name, base + ".sql", baseSql[0], v, 1);
        if (changed == null) {
            return 1;
        }
        Files.createDirectories(dir);
        Path plan = dir.resolve("new.plan.json");
        TypeCatalogue.compile(changed[0], plan);
        Files.writeString(dir.resolve("new.sql"), "-- type-catalogue case " + name + ": savepoint " + base + "'s program"
                + (changed[1].isEmpty() ? " unchanged" : " with " + changed[1]) + "\n" + changed[0], StandardCharsets.UTF_8);
        String[] verdict = TypeCatalogue.judgePlan(name, plan, spec(bases, v120, base), bases.resolve(base));
        if (verdict == null) {
            return 1;
        }
        ObjectNode rec = Json.obj();
        rec.put("case", name);
        rec.put("flinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
        rec.put("oldFlinkVersion", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
        rec.put("oldPlan", "upgrades/types-savepoints/" + base + ".plan.json");
        rec.put("savepoint", "upgrades/types-savepoints/" + base);
        rec.put("spec", bases.getParent().getParent().relativize(spec(bases, v120, base)).toString());
        rec.put("flink", verdict[0]);
        rec.put("message", verdict[1]);
        Json.write(dir.resolve("flink.json"), rec);
        System.err.println("type-catalogue: " + name + ": " + verdict[0] + ": " + verdict[1]);
        return 0;
    }
}
