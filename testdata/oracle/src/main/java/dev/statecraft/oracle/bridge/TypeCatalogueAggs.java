package dev.statecraft.oracle.bridge;

/**
 * The built-in aggregate functions' cases of {@code type-catalogue} (issue 18), run like {@link
 * TypeCatalogueV23}'s (which registers them): each base is a catalogue program's runnable twin
 * whose aggregate computes many built-in functions at once (one savepoint holds every accumulator
 * layout: AVG over each numeric type, MIN over a short VARCHAR, MAX, FIRST_VALUE, LAST_VALUE,
 * LISTAGG, and over an updating input the same functions with retraction), or that splits a
 * DISTINCT aggregate (table.optimizer.distinct-agg.split.enabled), or that runs a two-phase
 * aggregate over an updating input. Each case changes one function or one option.
 */
final class TypeCatalogueAggs {
    private TypeCatalogueAggs() {}

    private static final String MINIBATCH = "SET 'table.exec.mini-batch.enabled' = 'true';\nSET 'table.exec.mini-batch.allow-latency' = '100 ms';\nSET 'table.exec.mini-batch.size' = '10';\nSET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';\n";

    private static final String SPLIT = "SET 'table.optimizer.distinct-agg.split.enabled' = 'true';\n";

    private static final String SINK = "  cnt BIGINT,\n  total INT\n) WITH";

    /** Adds the bases and cases to TypeCatalogueV23's (its static block calls this). */
    static void register() {
        // Append-only input: declarative AVG (sum, count) over INT, BIGINT, DOUBLE, DECIMAL; MIN
        // over a VARCHAR(5) (its accumulator is a STRING); MAX; FIRST_VALUE and LAST_VALUE (a ROW
        // accumulator); LISTAGG. Its own spec: types-specs/group-builtins.json.
        TypeCatalogueV23.BASES.put("group-builtins", new String[] {"group-aggregate",
            SINK, "  cnt BIGINT,\n  total INT,\n  avg_i INT,\n  avg_b BIGINT,\n  avg_d DOUBLE,\n  avg_m DECIMAL(38, 6),\n  lo VARCHAR(5),\n"
                + "  hi INT,\n  first_a INT,\n  last_a INT,\n  names STRING\n) WITH",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total\n",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total, AVG(amount) AS avg_i, AVG(order_id) AS avg_b,\n"
                + "  AVG(CAST(amount AS DOUBLE)) AS avg_d, AVG(CAST(amount AS DECIMAL(10, 2))) AS avg_m,\n"
                + "  MIN(CAST(order_id AS VARCHAR(5))) AS lo, MAX(amount) AS hi, FIRST_VALUE(amount) AS first_a,\n"
                + "  LAST_VALUE(amount) AS last_a, LISTAGG(CAST(amount AS STRING)) AS names\n"});
        // Updating input (keep-last dedup in front): every call consumes retractions: SUM (sum,
        // count), AVG, MIN and MAX (a structured accumulator and a map view), FIRST_VALUE,
        // LAST_VALUE and LISTAGG with retraction. Its own spec: types-specs/retract-builtins.json.
        TypeCatalogueV23.BASES.put("retract-builtins", new String[] {"dedup-then-aggregate",
            SINK, "  cnt BIGINT,\n  total INT,\n  avg_i INT,\n  lo INT,\n  hi INT,\n  first_a INT,\n  last_a INT,\n  names STRING\n) WITH",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total FROM (",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total, AVG(amount) AS avg_i, MIN(amount) AS lo,\n"
                + "  MAX(amount) AS hi, FIRST_VALUE(amount) AS first_a, LAST_VALUE(amount) AS last_a,\n"
                + "  LISTAGG(CAST(amount AS STRING)) AS names FROM ("});
        // A DISTINCT aggregate split into a partial and a final aggregate; the spec's order ids
        // are unique, so it emits the group aggregate's rows.
        TypeCatalogueV23.BASES.put("group-split-distinct", new String[] {"group-aggregate", "COUNT(*) AS cnt", "COUNT(DISTINCT order_id) AS cnt",
            "CREATE TABLE orders (", SPLIT + "CREATE TABLE orders ("});
        // A two-phase (local/global) aggregate over an updating input; and one without a
        // COUNT(*), where the global half inserts its own at the end (its own spec:
        // types-specs/retract-two-phase-no-count.json).
        TypeCatalogueV23.BASES.put("retract-two-phase", new String[] {"dedup-then-aggregate", "CREATE TABLE orders (", MINIBATCH + "CREATE TABLE orders ("});
        TypeCatalogueV23.BASES.put("retract-two-phase-no-count", new String[] {"dedup-then-aggregate", "CREATE TABLE orders (", MINIBATCH + "CREATE TABLE orders (",
            "COUNT(*) AS cnt", "SUM(order_id) AS cnt"});
        // A split DISTINCT aggregate under mini-batch: local, incremental and global aggregates.
        TypeCatalogueV23.BASES.put("group-split-incremental", new String[] {"group-aggregate", "COUNT(*) AS cnt", "COUNT(DISTINCT order_id) AS cnt",
            "CREATE TABLE orders (", SPLIT + MINIBATCH + "CREATE TABLE orders ("});

        // An over aggregate (ROWS 2 PRECEDING: every call retracts the row leaving the window)
        // and a tumbling window aggregate computing the built-ins; their own specs
        // (types-specs/over-builtins.json, window-builtins.json).
        TypeCatalogueV23.BASES.put("over-builtins", new String[] {"over-aggregate",
            "  last3 INT\n) WITH", "  last3 INT,\n  avg3 INT,\n  lo INT,\n  hi INT,\n  first3 INT,\n  last_a INT\n) WITH",
            "    ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS last3\n",
            "    ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS last3,\n  AVG(amount) OVER w AS avg3, MIN(amount) OVER w AS lo, MAX(amount) OVER w AS hi,\n"
                + "  FIRST_VALUE(amount) OVER w AS first3, LAST_VALUE(amount) OVER w AS last_a\n",
            "FROM orders;", "FROM orders\nWINDOW w AS (PARTITION BY user_id ORDER BY pt ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);"});
        TypeCatalogueV23.BASES.put("window-builtins", new String[] {"window-aggregate",
            "  total INT\n) WITH", "  total INT,\n  avg_i INT,\n  lo INT,\n  hi INT,\n  first_a INT,\n  last_a INT,\n  names STRING\n) WITH",
            "SUM(amount) AS total\n", "SUM(amount) AS total, AVG(amount) AS avg_i, MIN(amount) AS lo, MAX(amount) AS hi,\n"
                + "  FIRST_VALUE(amount) AS first_a, LAST_VALUE(amount) AS last_a, LISTAGG(CAST(amount AS STRING)) AS names\n"});
        // COLLECT (a structured accumulator with a map view, with or without retraction) in
        // place of COUNT(*): its own spec, types-specs/group-collect.json.
        TypeCatalogueV23.BASES.put("group-collect", new String[] {"group-aggregate", "  cnt BIGINT,\n", "  cnt MULTISET<INT>,\n",
            "COUNT(*) AS cnt", "COLLECT(amount) AS cnt"});
        TypeCatalogueV23.CASES.put("v23-collect-same", new String[] {"group-collect"});
        TypeCatalogueV23.CASES.put("v23-collect-retyped", new String[] {"group-collect", "COLLECT(amount)", "COLLECT(CAST(amount AS BIGINT))", "  cnt MULTISET<INT>,\n", "  cnt MULTISET<BIGINT>,\n"});
        TypeCatalogueV23.CASES.put("v23-over-builtins-same", new String[] {"over-builtins"});
        TypeCatalogueV23.CASES.put("v23-over-builtins-max-retyped", new String[] {"over-builtins", "MAX(amount) OVER w AS hi",
            "CAST(MAX(CAST(amount AS BIGINT)) OVER w AS INT) AS hi"});
        TypeCatalogueV23.CASES.put("v23-window-builtins-same", new String[] {"window-builtins"});
        TypeCatalogueV23.CASES.put("v23-window-builtins-avg-to-double", new String[] {"window-builtins", "AVG(amount) AS avg_i",
            "CAST(AVG(CAST(amount AS DOUBLE)) AS INT) AS avg_i"});

        // Built-ins over an append-only input.
        TypeCatalogueV23.CASES.put("v23-builtins-same", new String[] {"group-builtins"});
        TypeCatalogueV23.CASES.put("v23-builtins-alias-changed", new String[] {"group-builtins", "AS avg_i, AVG(order_id) AS avg_b", "AS mean_i, AVG(order_id) AS mean_b"});
        TypeCatalogueV23.CASES.put("v23-builtins-avg-int-to-bigint", new String[] {"group-builtins", "AVG(amount) AS avg_i", "CAST(AVG(CAST(amount AS BIGINT)) AS INT) AS avg_i"});
        TypeCatalogueV23.CASES.put("v23-builtins-avg-int-to-double", new String[] {"group-builtins", "AVG(amount) AS avg_i", "CAST(AVG(CAST(amount AS DOUBLE)) AS INT) AS avg_i"});
        TypeCatalogueV23.CASES.put("v23-builtins-avg-decimal-scale", new String[] {"group-builtins", "DECIMAL(10, 2)", "DECIMAL(10, 3)"});
        TypeCatalogueV23.CASES.put("v23-builtins-sum-added", new String[] {"group-builtins", "MAX(amount) AS hi", "MAX(amount) + CAST(SUM(order_id) AS INT) AS hi"});
        TypeCatalogueV23.CASES.put("v23-builtins-max-retyped", new String[] {"group-builtins", "MAX(amount) AS hi", "CAST(MAX(CAST(amount AS BIGINT)) AS INT) AS hi"});
        TypeCatalogueV23.CASES.put("v23-builtins-first-retyped", new String[] {"group-builtins", "FIRST_VALUE(amount) AS first_a",
            "CAST(FIRST_VALUE(CAST(amount AS BIGINT)) AS INT) AS first_a"});
        TypeCatalogueV23.CASES.put("v23-builtins-first-to-last", new String[] {"group-builtins", "FIRST_VALUE(amount) AS first_a", "LAST_VALUE(amount) AS first_a"});
        // Built-ins over retractions.
        TypeCatalogueV23.CASES.put("v23-retract-builtins-same", new String[] {"retract-builtins"});
        TypeCatalogueV23.CASES.put("v23-retract-builtins-max-retyped", new String[] {"retract-builtins", "MAX(amount) AS hi", "CAST(MAX(CAST(amount AS BIGINT)) AS INT) AS hi"});
        TypeCatalogueV23.CASES.put("v23-retract-builtins-min-to-max", new String[] {"retract-builtins", "MIN(amount) AS lo", "MAX(amount) AS lo"});
        TypeCatalogueV23.CASES.put("v23-retract-builtins-first-retyped", new String[] {"retract-builtins", "FIRST_VALUE(amount) AS first_a",
            "CAST(FIRST_VALUE(CAST(amount AS BIGINT)) AS INT) AS first_a"});
        TypeCatalogueV23.CASES.put("v23-retract-builtins-avg-to-sum", new String[] {"retract-builtins", "AVG(amount) AS avg_i", "SUM(amount) AS avg_i"});
        // Split distinct aggregates switched on and off.
        TypeCatalogueV23.CASES.put("v23-split-same", new String[] {"group-split-distinct"});
        TypeCatalogueV23.CASES.put("v23-split-off", new String[] {"group-split-distinct", SPLIT, ""});
        TypeCatalogueV23.CASES.put("v23-split-on", new String[] {"group-count-distinct", "CREATE TABLE orders (", SPLIT + "CREATE TABLE orders ("});
        TypeCatalogueV23.CASES.put("v23-split-sum-to-max", new String[] {"group-split-distinct", "SUM(amount) AS total", "MAX(amount) AS total"});
        // Two-phase over retractions.
        TypeCatalogueV23.CASES.put("v23-retract-two-phase-same", new String[] {"retract-two-phase"});
        TypeCatalogueV23.CASES.put("v23-retract-two-phase-sum-to-max", new String[] {"retract-two-phase", "SUM(amount) AS total", "MAX(amount) AS total"});
        TypeCatalogueV23.CASES.put("v23-retract-two-phase-no-count-same", new String[] {"retract-two-phase-no-count"});
        TypeCatalogueV23.CASES.put("v23-retract-two-phase-no-count-max-added", new String[] {"retract-two-phase-no-count", "SUM(amount) AS total",
            "SUM(amount) + MAX(amount) AS total"});
        // Split DISTINCT aggregates under mini-batch (an incremental aggregate).
        TypeCatalogueV23.CASES.put("v23-incremental-same", new String[] {"group-split-incremental"});
        TypeCatalogueV23.CASES.put("v23-incremental-alias-changed", new String[] {"group-split-incremental", "COUNT(DISTINCT order_id) AS cnt",
            "COUNT(DISTINCT order_id) AS n"});
        TypeCatalogueV23.CASES.put("v23-incremental-distinct-retyped", new String[] {"group-split-incremental", "COUNT(DISTINCT order_id) AS cnt",
            "COUNT(DISTINCT CAST(order_id AS INT)) AS cnt"});
        TypeCatalogueV23.CASES.put("v23-incremental-split-off", new String[] {"group-split-incremental", SPLIT, ""});
        TypeCatalogueV23.CASES.put("v23-retract-two-phase-count-added", new String[] {"retract-two-phase", "SUM(amount) AS total",
            "SUM(amount) + CAST(COUNT(amount) AS INT) AS total"});
    }
}
