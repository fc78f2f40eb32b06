-- type-catalogue savepoint retract-two-phase-no-count: runnable-dedup-then-aggregate.sql with "CREATE TABLE orders (" -> "SET 'table.exec.mini-batch.enabled' = 'true'; SET 'table.exec.mini-batch.allow-latency' = '100 ms'; SET 'table.exec.mini-batch.size' = '10'; SET 'table.optimizer.agg-phase-strategy' = 'TWO_PHASE'; CREATE TABLE orders (", "COUNT(*) AS cnt" -> "SUM(order_id) AS cnt"
-- Deduplication followed by a group aggregate: two stateful operators in a chain.
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

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
SELECT user_id, SUM(order_id) AS cnt, SUM(amount) AS total FROM (
  SELECT order_id, user_id, amount FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn
    FROM orders)
  WHERE rn = 1)
GROUP BY user_id;
