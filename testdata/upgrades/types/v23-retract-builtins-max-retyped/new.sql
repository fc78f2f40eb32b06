-- type-catalogue case v23-retract-builtins-max-retyped: savepoint retract-builtins's program with "MAX(amount) AS hi" -> "CAST(MAX(CAST(amount AS BIGINT)) AS INT) AS hi"
-- Deduplication followed by a group aggregate: two stateful operators in a chain.
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
  lo INT,
  hi INT,
  first_a INT,
  last_a INT,
  names STRING
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total, AVG(amount) AS avg_i, MIN(amount) AS lo,
  CAST(MAX(CAST(amount AS BIGINT)) AS INT) AS hi, FIRST_VALUE(amount) AS first_a, LAST_VALUE(amount) AS last_a,
  LISTAGG(CAST(amount AS STRING)) AS names FROM (
  SELECT order_id, user_id, amount FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn
    FROM orders)
  WHERE rn = 1)
GROUP BY user_id;
