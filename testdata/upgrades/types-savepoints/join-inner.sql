-- type-catalogue savepoint join-inner: runnable-join-inner.sql
-- Regular inner join: two keyed states, leftState and rightState.
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE users (
  user_id BIGINT,
  name STRING,
  region STRING
) WITH ('connector' = 'statecraft-source');

CREATE TABLE join_out (
  order_id BIGINT,
  amount INT,
  name STRING
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO join_out
SELECT o.order_id, o.amount, u.name
FROM orders AS o
JOIN users AS u ON o.user_id = u.user_id;
