-- Top-3 per user by amount (Rank).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'datagen');

CREATE TABLE order_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT
) WITH ('connector' = 'blackhole');

INSERT INTO order_out
SELECT order_id, user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn
  FROM orders)
WHERE rn <= 3;
