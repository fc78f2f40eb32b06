package dev.statecraft.oracle.bridge;

/**
 * The Top-1, first-N and row-number ranks, the aggregate functions and the row-count window of
 * the catalogue's second set (issue 18), run like {@link TypeCatalogueV23}'s cases (which registers them). To keep the
 * oracle's time small, each base is ONE job computing many of them at once, and a case changes
 * one of them:
 *
 * <ul>
 *   <li>{@code ranks}: the Top-N program as a statement set of six ranks over the same orders:
 *       the Top-3 it had (AppendOnlyTopNFunction), a Top-1 (FastTop1Function, state
 *       Top1-Rank-State), a Top-1 and a Top-2 emitting their row number, a first-2 by processing
 *       time (AppendOnlyFirstNFunction, state counterState), a Top-1 over an updating input whose
 *       sort key grows (UpdateFast: FastTop1Function) and one over a retracting input
 *       (RetractableTopNFunction). Its own spec, types-specs/ranks.json.
 *   <li>{@code retract-more}: the dedup-then-aggregate program's aggregate (over retractions)
 *       with LISTAGG with a separator (ListAggWsWithRetractAggFunction), JSON_OBJECTAGG,
 *       JSON_ARRAYAGG, MAX over DECIMAL and TIMESTAMP (map views keyed by DecimalData and
 *       TimestampData) and COUNT(DISTINCT) over DECIMAL and TIMESTAMP (distinct views keyed by
 *       them). Its own spec, types-specs/retract-more.json.
 *   <li>{@code count-window}: the group aggregate program's aggregate in tumbling windows of two
 *       rows per user (the legacy group window over a row count: CountWindow namespaces, the
 *       trigger's and the assigner's counters), which only the Table API writes ({@link
 *       dev.statecraft.oracle.plans.PlanCatalog#countWindowView}). Its own spec,
 *       types-specs/count-window.json; {@code count-window-slide}, the same over sliding windows.
 * </ul>
 */
final class TypeCatalogueRanks {
    private TypeCatalogueRanks() {}

    private static final String RANK_SINKS = "CREATE TABLE top1_out (\n  order_id BIGINT,\n  user_id BIGINT,\n  amount INT\n)"
            + " WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');\n\n"
            + "CREATE TABLE top1_rn_out (\n  order_id BIGINT,\n  user_id BIGINT,\n  amount INT,\n  rn BIGINT\n)"
            + " WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');\n\n"
            + "CREATE TABLE top2_rn_out (\n  order_id BIGINT,\n  user_id BIGINT,\n  amount INT,\n  rn BIGINT\n)"
            + " WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');\n\n"
            + "CREATE TABLE first2_out (\n  order_id BIGINT,\n  user_id BIGINT,\n  amount INT\n)"
            + " WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');\n\n"
            + "CREATE TABLE top1_update_out (\n  order_id BIGINT,\n  user_id BIGINT,\n  cnt BIGINT\n)"
            + " WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');\n\n"
            + "CREATE TABLE top1_retract_out (\n  order_id BIGINT,\n  user_id BIGINT,\n  amount INT\n)"
            + " WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');\n\n"
            + "EXECUTE STATEMENT SET BEGIN\nINSERT INTO order_out\n";

    private static final String RANK_INSERTS = "WHERE rn <= 3;\n"
            + "INSERT INTO top1_out\nSELECT order_id, user_id, amount FROM (\n"
            + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn\n  FROM orders)\nWHERE rn = 1;\n"
            + "INSERT INTO top1_rn_out\nSELECT order_id, user_id, amount, rn FROM (\n"
            + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount ASC) AS rn\n  FROM orders)\nWHERE rn = 1;\n"
            + "INSERT INTO top2_rn_out\nSELECT order_id, user_id, amount, rn FROM (\n"
            + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY order_id DESC) AS rn\n  FROM orders)\nWHERE rn <= 2;\n"
            + "INSERT INTO first2_out\nSELECT order_id, user_id, amount FROM (\n"
            + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY pt ASC) AS rn\n  FROM orders)\nWHERE rn <= 2;\n"
            + "INSERT INTO top1_update_out\nSELECT order_id, user_id, cnt FROM (\n"
            + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY cnt DESC) AS rn\n"
            + "  FROM (SELECT order_id, user_id, COUNT(*) AS cnt FROM orders GROUP BY order_id, user_id))\nWHERE rn = 1;\n"
            + "INSERT INTO top1_retract_out\nSELECT order_id, user_id, amount FROM (\n"
            + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn\n"
            + "  FROM (SELECT order_id, user_id, amount FROM (\n"
            + "    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rk FROM orders)\n    WHERE rk = 1))\n"
            + "WHERE rn = 1;\nEND;";

    private static final String SINK = "  cnt BIGINT,\n  total INT\n) WITH";

    private static final String TS = "TIMESTAMPADD(SECOND, amount, TIMESTAMP '2024-01-01 00:00:00')";

    /** Adds the bases and cases to TypeCatalogueV23's (its static block calls this). */
    static void register() {
        TypeCatalogueV23.BASES.put("ranks", new String[] {"top-n", "INSERT INTO order_out\n", RANK_SINKS, "WHERE rn <= 3;", RANK_INSERTS});
        TypeCatalogueV23.BASES.put("retract-more", new String[] {"dedup-then-aggregate",
            SINK, "  cnt BIGINT,\n  total INT,\n  names STRING,\n  obj STRING,\n  arr STRING,\n  hi_dec DECIMAL(10, 2),\n"
                + "  hi_ts TIMESTAMP(3),\n  n_dec BIGINT,\n  n_ts BIGINT\n) WITH",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total FROM (",
            "SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total, LISTAGG(CAST(amount AS STRING), ';') AS names,\n"
                + "  JSON_OBJECTAGG(KEY CAST(order_id AS STRING) VALUE amount) AS obj, JSON_ARRAYAGG(amount) AS arr,\n"
                + "  MAX(CAST(amount AS DECIMAL(10, 2))) AS hi_dec, MAX(CAST(" + TS + " AS TIMESTAMP(3))) AS hi_ts,\n"
                + "  COUNT(DISTINCT CAST(amount AS DECIMAL(12, 2))) AS n_dec, COUNT(DISTINCT CAST(" + TS + " AS TIMESTAMP(6))) AS n_ts FROM ("});

        // A row-count window (the legacy group window, CountWindow namespaces; Table API only:
        // PlanCatalog.countWindowView): tumbling windows of 2 orders per user. Its own spec,
        // types-specs/count-window.json.
        TypeCatalogueV23.BASES.put("count-window", new String[] {"group-aggregate",
            "INSERT INTO agg_out\nSELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total\nFROM orders\nGROUP BY user_id;",
            "CREATE TEMPORARY VIEW cw AS COUNT WINDOW 2 ON pt OF orders GROUP BY user_id SELECT COUNT(order_id) AS cnt, SUM(amount) AS total;\n\n"
                + "INSERT INTO agg_out\nSELECT user_id, cnt, total FROM cw;"});
        // The same over sliding windows of 2 rows every row (slide-count-assigner,
        // trigger-count-1). Its own spec, types-specs/count-window-slide.json.
        TypeCatalogueV23.BASES.put("count-window-slide", new String[] {"group-aggregate",
            "INSERT INTO agg_out\nSELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total\nFROM orders\nGROUP BY user_id;",
            "CREATE TEMPORARY VIEW cw AS COUNT WINDOW 2 SLIDE 1 ON pt OF orders GROUP BY user_id SELECT COUNT(order_id) AS cnt, SUM(amount) AS total;\n\n"
                + "INSERT INTO agg_out\nSELECT user_id, cnt, total FROM cw;"});
        TypeCatalogueV23.CASES.put("v23-count-window-slide-same", new String[] {"count-window-slide"});
        TypeCatalogueV23.CASES.put("v23-count-window-slide-sum-retyped", new String[] {"count-window-slide", "SUM(amount) AS total", "SUM(order_id) AS total",
            "SELECT user_id, cnt, total FROM cw", "SELECT user_id, cnt, CAST(total AS INT) AS total FROM cw"});
        TypeCatalogueV23.CASES.put("v23-count-window-same", new String[] {"count-window"});
        TypeCatalogueV23.CASES.put("v23-count-window-sum-retyped", new String[] {"count-window", "SUM(amount) AS total", "SUM(order_id) AS total",
            "SELECT user_id, cnt, total FROM cw", "SELECT user_id, cnt, CAST(total AS INT) AS total FROM cw"});
        TypeCatalogueV23.CASES.put("v23-count-window-key-retyped", new String[] {"count-window", "  user_id BIGINT,\n  amount INT,\n  pt AS PROCTIME()",
            "  user_id INT,\n  amount INT,\n  pt AS PROCTIME()"});

        TypeCatalogueV23.CASES.put("v23-ranks-same", new String[] {"ranks"});
        // Every rank's rows change type (not the first-N's counter); the sinks' amount columns too.
        TypeCatalogueV23.CASES.put("v23-ranks-amount-retyped", new String[] {"ranks", "  amount INT,\n", "  amount BIGINT,\n",
            "  amount INT\n)", "  amount BIGINT\n)"});
        // The Top-1 becomes a Top-2: AppendOnlyTopNFunction's map state where FastTop1Function kept a row.
        TypeCatalogueV23.CASES.put("v23-ranks-top1-to-top2", new String[] {"ranks", "ORDER BY amount DESC) AS rn\n  FROM orders)\nWHERE rn = 1;",
            "ORDER BY amount DESC) AS rn\n  FROM orders)\nWHERE rn <= 2;"});
        TypeCatalogueV23.CASES.put("v23-retract-more-same", new String[] {"retract-more"});
        TypeCatalogueV23.CASES.put("v23-retract-more-listagg-no-separator", new String[] {"retract-more", "LISTAGG(CAST(amount AS STRING), ';')",
            "LISTAGG(CAST(amount AS STRING))"});
        // Only the DISTINCT views' keys change (the accumulator row holds a RAW view field either way).
        TypeCatalogueV23.CASES.put("v23-retract-more-distinct-decimal-scale", new String[] {"retract-more", "DECIMAL(12, 2)", "DECIMAL(12, 3)"});
        TypeCatalogueV23.CASES.put("v23-retract-more-distinct-timestamp-precision", new String[] {"retract-more", "TIMESTAMP(6)", "TIMESTAMP(9)"});
    }
}
