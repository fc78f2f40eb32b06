-- type-catalogue savepoint dedup-rowtime: runnable-window-aggregate.sql with "SELECT window_start, window_end, user_id, SUM(amount) AS total FROM TABLE(TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end, user_id;" -> "SELECT CAST(ts AS TIMESTAMP(3)), CAST(ts AS TIMESTAMP(3)), user_id, amount FROM (   SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn   FROM orders_rt) WHERE rn = 1;"
-- Tumbling window TVF aggregate (event time).
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders_rt (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
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
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY ts ASC) AS rn
  FROM orders_rt)
WHERE rn = 1;
