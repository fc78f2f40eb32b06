-- type-catalogue savepoint top-n-retract: runnable-top-n.sql with "  FROM orders)" -> "  FROM (SELECT order_id, user_id, amount, pt FROM (     SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rk FROM orders)     WHERE rk = 1))"
-- Top-3 per user by amount (Rank).
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE order_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO order_out
SELECT order_id, user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn
  FROM (SELECT order_id, user_id, amount, pt FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rk FROM orders)
    WHERE rk = 1))
WHERE rn <= 3;
