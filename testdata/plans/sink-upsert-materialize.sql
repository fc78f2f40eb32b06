-- Left join (retractions, no upsert key) into a sink with a primary key: upsert materialize
-- (Flink 2.3 requires an ON CONFLICT clause here; DO DEDUPLICATE is the materializer of 1.x).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

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

CREATE TABLE user_names (
  user_id BIGINT,
  name STRING,
  PRIMARY KEY (user_id) NOT ENFORCED
) WITH ('connector' = 'blackhole');

INSERT INTO user_names
SELECT o.user_id, u.name
FROM orders AS o
LEFT JOIN users AS u ON o.user_id = u.user_id
ON CONFLICT DO DEDUPLICATE;
