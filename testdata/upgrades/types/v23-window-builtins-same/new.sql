-- type-catalogue case v23-window-builtins-same: savepoint window-builtins's program unchanged
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
  total INT,
  avg_i INT,
  lo INT,
  hi INT,
  first_a INT,
  last_a INT,
  names STRING
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO window_out
SELECT window_start, window_end, user_id, SUM(amount) AS total, AVG(amount) AS avg_i, MIN(amount) AS lo, MAX(amount) AS hi,
  FIRST_VALUE(amount) AS first_a, LAST_VALUE(amount) AS last_a, LISTAGG(CAST(amount AS STRING)) AS names
FROM TABLE(TUMBLE(TABLE orders_rt, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, user_id;
