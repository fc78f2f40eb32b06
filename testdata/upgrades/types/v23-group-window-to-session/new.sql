-- type-catalogue case v23-group-window-to-session: savepoint group-window's program with "TUMBLE" -> "SESSION"
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
SELECT SESSION_START(ts, INTERVAL '10' SECOND), SESSION_END(ts, INTERVAL '10' SECOND), user_id, SUM(amount) AS total
FROM orders_rt
GROUP BY SESSION(ts, INTERVAL '10' SECOND), user_id;
