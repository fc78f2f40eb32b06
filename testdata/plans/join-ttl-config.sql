-- The join-inner query compiled with table.exec.state.ttl = 36 h; a STATE_TTL hint overrides it for one side.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode with this configuration:

SET 'table.exec.state.ttl' = '36 h';

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'datagen');

CREATE TABLE users (
  user_id BIGINT,
  name STRING,
  region STRING
) WITH ('connector' = 'datagen');

CREATE TABLE join_out (
  order_id BIGINT,
  amount INT,
  name STRING
) WITH ('connector' = 'blackhole');

INSERT INTO join_out
SELECT /*+ STATE_TTL('u' = '1500 ms') */ o.order_id, o.amount, u.name
FROM orders AS o
JOIN users AS u ON o.user_id = u.user_id;
