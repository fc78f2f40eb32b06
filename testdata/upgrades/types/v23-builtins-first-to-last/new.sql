-- type-catalogue case v23-builtins-first-to-last: savepoint group-builtins's program with "FIRST_VALUE(amount) AS first_a" -> "LAST_VALUE(amount) AS first_a"
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
  total INT,
  avg_i INT,
  avg_b BIGINT,
  avg_d DOUBLE,
  avg_m DECIMAL(38, 6),
  lo VARCHAR(5),
  hi INT,
  first_a INT,
  last_a INT,
  names STRING
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total, AVG(amount) AS avg_i, AVG(order_id) AS avg_b,
  AVG(CAST(amount AS DOUBLE)) AS avg_d, AVG(CAST(amount AS DECIMAL(10, 2))) AS avg_m,
  MIN(CAST(order_id AS VARCHAR(5))) AS lo, MAX(amount) AS hi, LAST_VALUE(amount) AS first_a,
  LAST_VALUE(amount) AS last_a, LISTAGG(CAST(amount AS STRING)) AS names
FROM orders
GROUP BY user_id;
