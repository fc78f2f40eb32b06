-- type-catalogue case v120-dedup-aggregate-sum-to-avg: runnable-dedup-then-aggregate.sql with "SUM(amount) AS total" -> "CAST(AVG(amount) AS INT) AS total"
-- Deduplication followed by a group aggregate: two stateful operators in a chain.
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
  cnt BIGINT,
  total INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COUNT(*) AS cnt, CAST(AVG(amount) AS INT) AS total FROM (
  SELECT order_id, user_id, amount FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn
    FROM orders)
  WHERE rn = 1)
GROUP BY user_id;
