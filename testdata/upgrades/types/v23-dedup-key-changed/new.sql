-- type-catalogue case v23-dedup-key-changed: savepoint dedup-keep-last's program with "PARTITION BY order_id" -> "PARTITION BY user_id"
-- ROW_NUMBER deduplication keeping the last row (proctime).
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
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY pt DESC) AS rn
  FROM orders)
WHERE rn = 1;
