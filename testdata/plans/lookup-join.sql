-- Processing-time lookup join against a lookup source.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'datagen');

CREATE TABLE users_dim (
  user_id BIGINT,
  name STRING,
  region STRING
) WITH ('connector' = 'statecraft-source');

CREATE TABLE join_out (
  order_id BIGINT,
  amount INT,
  name STRING
) WITH ('connector' = 'blackhole');

INSERT INTO join_out
SELECT o.order_id, o.amount, u.name
FROM orders AS o
JOIN users_dim FOR SYSTEM_TIME AS OF o.pt AS u ON o.user_id = u.user_id;
