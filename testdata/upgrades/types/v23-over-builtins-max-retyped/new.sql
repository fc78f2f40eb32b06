-- type-catalogue case v23-over-builtins-max-retyped: savepoint over-builtins's program with "MAX(amount) OVER w AS hi" -> "CAST(MAX(CAST(amount AS BIGINT)) OVER w AS INT) AS hi"
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
  last3 INT,
  avg3 INT,
  lo INT,
  hi INT,
  first3 INT,
  last_a INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO over_out
SELECT order_id, user_id,
  SUM(amount) OVER (PARTITION BY user_id ORDER BY pt
    ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS last3,
  AVG(amount) OVER w AS avg3, MIN(amount) OVER w AS lo, CAST(MAX(CAST(amount AS BIGINT)) OVER w AS INT) AS hi,
  FIRST_VALUE(amount) OVER w AS first3, LAST_VALUE(amount) OVER w AS last_a
FROM orders
WINDOW w AS (PARTITION BY user_id ORDER BY pt ROWS BETWEEN 2 PRECEDING AND CURRENT ROW);
