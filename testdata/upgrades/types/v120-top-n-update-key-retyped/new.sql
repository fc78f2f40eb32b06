-- type-catalogue case v120-top-n-update-key-retyped: runnable-top-n-update.sql with "  user_id BIGINT,   amount INT,   pt AS PROCTIME()" -> "  user_id INT,   amount INT,   pt AS PROCTIME()"
-- type-catalogue savepoint top-n-update: runnable-top-n.sql with "ORDER BY amount DESC" -> "ORDER BY cnt DESC", "  FROM orders)" -> "  FROM (SELECT order_id, user_id, MAX(amount) AS amount, COUNT(*) AS cnt FROM orders GROUP BY order_id, user_id))"
-- Top-3 per user by amount (Rank).
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders (
  order_id BIGINT,
  user_id INT,
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
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY cnt DESC) AS rn
  FROM (SELECT order_id, user_id, MAX(amount) AS amount, COUNT(*) AS cnt FROM orders GROUP BY order_id, user_id))
WHERE rn <= 3;
