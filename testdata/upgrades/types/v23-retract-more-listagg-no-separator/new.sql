-- type-catalogue case v23-retract-more-listagg-no-separator: savepoint retract-more's program with "LISTAGG(CAST(amount AS STRING), ';')" -> "LISTAGG(CAST(amount AS STRING))"
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
  names STRING,
  obj STRING,
  arr STRING,
  hi_dec DECIMAL(10, 2),
  hi_ts TIMESTAMP(3),
  n_dec BIGINT,
  n_ts BIGINT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO agg_out
SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total, LISTAGG(CAST(amount AS STRING)) AS names,
  JSON_OBJECTAGG(KEY CAST(order_id AS STRING) VALUE amount) AS obj, JSON_ARRAYAGG(amount) AS arr,
  MAX(CAST(amount AS DECIMAL(10, 2))) AS hi_dec, MAX(CAST(TIMESTAMPADD(SECOND, amount, TIMESTAMP '2024-01-01 00:00:00') AS TIMESTAMP(3))) AS hi_ts,
  COUNT(DISTINCT CAST(amount AS DECIMAL(12, 2))) AS n_dec, COUNT(DISTINCT CAST(TIMESTAMPADD(SECOND, amount, TIMESTAMP '2024-01-01 00:00:00') AS TIMESTAMP(6))) AS n_ts FROM (
  SELECT order_id, user_id, amount FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn
    FROM orders)
  WHERE rn = 1)
GROUP BY user_id;
