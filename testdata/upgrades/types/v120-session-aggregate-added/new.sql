-- type-catalogue case v120-session-aggregate-added: runnable-window-session.sql with "SUM(amount) AS total" -> "SUM(amount) + MAX(amount) AS total"
-- type-catalogue savepoint window-session: runnable-window-aggregate.sql with "TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND)" -> "SESSION(TABLE orders_rt PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '10' SECOND)"
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
SELECT window_start, window_end, user_id, SUM(amount) + MAX(amount) AS total
FROM TABLE(SESSION(TABLE orders_rt PARTITION BY user_id, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, user_id;
