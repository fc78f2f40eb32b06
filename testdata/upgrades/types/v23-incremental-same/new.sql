-- type-catalogue case v23-incremental-same: savepoint group-split-incremental's program unchanged
-- Group aggregate: one keyed state per group key.
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

SET 'table.optimizer.distinct-agg.split.enabled' = 'true';
SET 'table.exec.mini-batch.enabled' = 'true';
SET 'table.exec.mini-batch.allow-latency' = '100 ms';
SET 'table.exec.mini-batch.size' = '10';
SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE';
CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE agg_out (
  user_id BIGINT,
  cnt BIGINT,
  total INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COUNT(DISTINCT order_id) AS cnt, SUM(amount) AS total
FROM orders
GROUP BY user_id;
