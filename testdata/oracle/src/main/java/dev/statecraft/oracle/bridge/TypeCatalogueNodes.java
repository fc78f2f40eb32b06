package dev.statecraft.oracle.bridge;

import java.util.Map;

/**
 * The 2.3 -> 2.3 cases of {@code type-catalogue} for exec nodes whose state types statecraft
 * derives beyond the first set (issue 18): session windows (window TVF), the legacy group window
 * aggregate (GROUP BY TUMBLE / SESSION), event-time keep-last deduplication and the UpdateFast
 * Top-N. Bases and cases as in {@link TypeCatalogueV23}, which registers them.
 */
final class TypeCatalogueNodes {
    private TypeCatalogueNodes() {}

    private static final String TVF = "SELECT window_start, window_end, user_id, SUM(amount) AS total\n"
            + "FROM TABLE(TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND))\nGROUP BY window_start, window_end, user_id;";

    static void register(Map<String, String[]> bases, Map<String, String[]> cases) {
        // Session window TVF (its own spec, types-specs/window-session.json: the session open at the
        // savepoint grows by the rows after it).
        bases.put("window-session", new String[] {"window-aggregate", "TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND)",
            "SESSION(TABLE orders_rt PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '10' SECOND)"});
        // The legacy group window aggregate: the same windows and rows as the TVF program.
        bases.put("group-window", new String[] {"window-aggregate", TVF,
            "SELECT TUMBLE_START(ts, INTERVAL '10' SECOND), TUMBLE_END(ts, INTERVAL '10' SECOND), user_id, SUM(amount) AS total\n"
                + "FROM orders_rt\nGROUP BY TUMBLE(ts, INTERVAL '10' SECOND), user_id;"});
        // Event-time deduplication keeping the last row per user (its own spec).
        bases.put("dedup-rowtime-last", new String[] {"window-aggregate", TVF,
            "SELECT CAST(ts AS TIMESTAMP(3)), CAST(ts AS TIMESTAMP(3)), user_id, amount FROM (\n"
                + "  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rn\n  FROM orders_rt)\nWHERE rn = 1;"});
        // Top-N over an updating input whose sort key only grows (COUNT(*), descending): the
        // UpdateFast strategy (its own spec).
        bases.put("top-n-update", new String[] {"top-n", "ORDER BY amount DESC", "ORDER BY cnt DESC", "  FROM orders)",
            "  FROM (SELECT order_id, user_id, MAX(amount) AS amount, COUNT(*) AS cnt FROM orders GROUP BY order_id, user_id))"});

        cases.put("v23-session-same", new String[] {"window-session"});
        cases.put("v23-session-aggregate-added", new String[] {"window-session", "SUM(amount) AS total", "SUM(amount) + MAX(amount) AS total"});
        cases.put("v23-session-gap-changed", new String[] {"window-session", "INTERVAL '10' SECOND", "INTERVAL '5' SECOND"});
        cases.put("v23-group-window-same", new String[] {"group-window"});
        cases.put("v23-group-window-aggregate-added", new String[] {"group-window", "SUM(amount) AS total", "SUM(amount) + MAX(amount) AS total"});
        cases.put("v23-group-window-to-session", new String[] {"group-window", "TUMBLE", "SESSION"});
        cases.put("v23-dedup-rowtime-last-same", new String[] {"dedup-rowtime-last"});
        cases.put("v23-dedup-rowtime-last-to-first", new String[] {"dedup-rowtime-last", "ORDER BY ts DESC", "ORDER BY ts ASC"});
        cases.put("v23-dedup-rowtime-last-key-retyped", new String[] {"dedup-rowtime-last", "  user_id BIGINT,\n", "  user_id INT,\n"});
        cases.put("v23-dedup-rowtime-last-amount-retyped", new String[] {"dedup-rowtime-last", "  amount INT,\n", "  amount SMALLINT,\n"});
        cases.put("v23-top-n-update-same", new String[] {"top-n-update"});
        cases.put("v23-top-n-update-key-retyped", new String[] {"top-n-update", "  user_id BIGINT,\n  amount INT,\n  pt AS PROCTIME()",
            "  user_id INT,\n  amount INT,\n  pt AS PROCTIME()"});
        cases.put("v23-top-n-update-order-reversed", new String[] {"top-n-update", "ORDER BY cnt DESC", "ORDER BY cnt ASC"});
    }

    /**
     * 1.20 -> 2.3 cases over twins of 2.3 bases: the base's SQL compiled by Flink 1.20
     * (upgrades/old/runnable-<base>.json, {@code plans --sql}) and stopped with a savepoint by
     * Flink 1.20 (savepoints/upgrade-<base>, {@code sql-savepoint} with the base's spec), both
     * made by {@code make fixtures} (TYPE_TWINS); the same SQL compiled by 2.3 is
     * upgrades/new/runnable-<base>.sql, which the cases change. No twin of dedup-rowtime-last:
     * Flink 1.20 keeps its row with RowKind UPDATE_AFTER in the BinaryRowData header, which
     * statecraft's dump and encoder do not carry (keyed TestRecordEncoderRoundTrip would fail);
     * none of group-count-distinct: the encoder does not write its accumulator's RAW view field.
     */
    static void registerTwins(Map<String, String[]> v120) {
        v120.put("v120-session-same", new String[] {"window-session"});
        v120.put("v120-session-aggregate-added", new String[] {"window-session", "SUM(amount) AS total", "SUM(amount) + MAX(amount) AS total"});
        v120.put("v120-group-window-same", new String[] {"group-window"});
        v120.put("v120-group-window-aggregate-added", new String[] {"group-window", "SUM(amount) AS total", "SUM(amount) + MAX(amount) AS total"});
        v120.put("v120-top-n-update-same", new String[] {"top-n-update"});
        v120.put("v120-top-n-update-key-retyped", new String[] {"top-n-update", "  user_id BIGINT,\n  amount INT,\n  pt AS PROCTIME()",
            "  user_id INT,\n  amount INT,\n  pt AS PROCTIME()"});
        // Twins of the bases of the first 2.3 set.
        v120.put("v120-dedup-rowtime-same", new String[] {"dedup-rowtime"});
        v120.put("v120-dedup-rowtime-first-to-last", new String[] {"dedup-rowtime", "ORDER BY ts ASC", "ORDER BY ts DESC"});
        v120.put("v120-top-n-retract-same", new String[] {"top-n-retract"});
        v120.put("v120-top-n-retract-order-reversed", new String[] {"top-n-retract", "ORDER BY amount DESC", "ORDER BY amount ASC"});
        v120.put("v120-over-range-same", new String[] {"over-range"});
        v120.put("v120-over-range-sum-to-max", new String[] {"over-range", "SUM(amount) OVER", "MAX(amount) OVER"});
    }
}
