-- type-catalogue savepoint group-collect: runnable-group-aggregate.sql with "  cnt BIGINT, " -> "  cnt MULTISET<INT>, ", "COUNT(*) AS cnt" -> "COLLECT(amount) AS cnt"
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
  cnt MULTISET<INT>,
  total INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COLLECT(amount) AS cnt, SUM(amount) AS total
FROM orders
GROUP BY user_id;
