-- type-catalogue case v23-dedup-rowtime-last-amount-retyped: savepoint dedup-rowtime-last's program with "  amount INT, " -> "  amount SMALLINT, "
-- Tumbling window TVF aggregate (event time).
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders_rt (
  order_id BIGINT,
  user_id BIGINT,
  amount SMALLINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'statecraft-source');

CREATE TABLE window_out (
  window_start TIMESTAMP(3),
  window_end TIMESTAMP(3),
  user_id BIGINT,
  total INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO window_out
SELECT CAST(ts AS TIMESTAMP(3)), CAST(ts AS TIMESTAMP(3)), user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts DESC) AS rn
  FROM orders_rt)
WHERE rn = 1;
