-- type-catalogue savepoint count-window-slide: runnable-group-aggregate.sql with "INSERT INTO agg_out SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total FROM orders GROUP BY user_id;" -> "CREATE TEMPORARY VIEW cw AS COUNT WINDOW 2 SLIDE 1 ON pt OF orders GROUP BY user_id SELECT COUNT(order_id) AS cnt, SUM(amount) AS total;  INSERT INTO agg_out SELECT user_id, cnt, total FROM cw;"
-- Group aggregate: one keyed state per group key.
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

CREATE TEMPORARY VIEW cw AS COUNT WINDOW 2 SLIDE 1 ON pt OF orders GROUP BY user_id SELECT COUNT(order_id) AS cnt, SUM(amount) AS total;

INSERT INTO agg_out
SELECT user_id, cnt, total FROM cw;
