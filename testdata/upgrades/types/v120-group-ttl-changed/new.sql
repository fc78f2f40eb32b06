-- type-catalogue case v120-group-ttl-changed: runnable-group-aggregate-ttl-config.sql with "'5400 s'" -> "'3650 d'"
-- The group-aggregate query compiled with table.exec.state.ttl = 5400 s (how Flink writes a TTL).
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode with this configuration:

SET 'table.exec.state.ttl' = '3650 d';

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
SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total
FROM orders
GROUP BY user_id;
