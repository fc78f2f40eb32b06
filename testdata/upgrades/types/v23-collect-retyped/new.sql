-- type-catalogue case v23-collect-retyped: savepoint group-collect's program with "COLLECT(amount)" -> "COLLECT(CAST(amount AS BIGINT))", "  cnt MULTISET<INT>, " -> "  cnt MULTISET<BIGINT>, "
-- Group aggregate: one keyed state per group key.
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE agg_out (
  user_id BIGINT,
  cnt MULTISET<BIGINT>,
  total INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COLLECT(CAST(amount AS BIGINT)) AS cnt, SUM(amount) AS total
FROM orders
GROUP BY user_id;
