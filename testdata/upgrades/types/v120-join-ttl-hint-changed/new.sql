-- type-catalogue case v120-join-ttl-hint-changed: runnable-join-state-ttl-hint.sql with "'a' = '1d', 'b' = '12h'" -> "'a' = '3650d', 'b' = '3650d'"
-- Inner join with a STATE_TTL hint per input.
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
SELECT /*+ STATE_TTL('a' = '3650d', 'b' = '3650d') */ a.order_id, a.amount, b.name
FROM orders AS a
JOIN users AS b ON a.user_id = b.user_id;
