-- type-catalogue case v120-statement-set-insert-dropped: runnable-statement-set.sql with "INSERT INTO order_out SELECT order_id, user_id, amount FROM (   SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rn   FROM orders) WHERE rn = 1; " -> ""
-- Two INSERTs in one plan: a group aggregate and a deduplication.
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
  total INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

CREATE TABLE order_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

EXECUTE STATEMENT SET BEGIN
INSERT INTO agg_out
SELECT user_id, COUNT(*) AS cnt, SUM(amount) AS total
FROM orders
GROUP BY user_id;
END;
