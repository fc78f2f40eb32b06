-- type-catalogue case v120-over-range-same: runnable-over-range.sql with 
-- type-catalogue savepoint over-range: runnable-over-aggregate.sql with "ROWS BETWEEN 2 PRECEDING AND CURRENT ROW" -> "RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW"
-- Processing-time OVER aggregate (ROWS frame).
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE over_out (
  order_id BIGINT,
  user_id BIGINT,
  last3 INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO over_out
SELECT order_id, user_id,
  SUM(amount) OVER (PARTITION BY user_id ORDER BY pt
    RANGE BETWEEN INTERVAL '1' HOUR PRECEDING AND CURRENT ROW) AS last3
FROM orders;
