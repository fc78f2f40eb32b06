-- type-catalogue case v23-ranks-same: savepoint ranks's program unchanged
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

CREATE TABLE top1_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

CREATE TABLE top1_rn_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  rn BIGINT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

CREATE TABLE top2_rn_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  rn BIGINT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

CREATE TABLE first2_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

CREATE TABLE top1_update_out (
  order_id BIGINT,
  user_id BIGINT,
  cnt BIGINT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

CREATE TABLE top1_retract_out (
  order_id BIGINT,
  user_id BIGINT,
  amount INT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

EXECUTE STATEMENT SET BEGIN
INSERT INTO order_out
SELECT order_id, user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn
  FROM orders)
WHERE rn <= 3;
INSERT INTO top1_out
SELECT order_id, user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn
  FROM orders)
WHERE rn = 1;
INSERT INTO top1_rn_out
SELECT order_id, user_id, amount, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount ASC) AS rn
  FROM orders)
WHERE rn = 1;
INSERT INTO top2_rn_out
SELECT order_id, user_id, amount, rn FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY order_id DESC) AS rn
  FROM orders)
WHERE rn <= 2;
INSERT INTO first2_out
SELECT order_id, user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY pt ASC) AS rn
  FROM orders)
WHERE rn <= 2;
INSERT INTO top1_update_out
SELECT order_id, user_id, cnt FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY cnt DESC) AS rn
  FROM (SELECT order_id, user_id, COUNT(*) AS cnt FROM orders GROUP BY order_id, user_id))
WHERE rn = 1;
INSERT INTO top1_retract_out
SELECT order_id, user_id, amount FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY user_id ORDER BY amount DESC) AS rn
  FROM (SELECT order_id, user_id, amount FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY order_id ORDER BY pt DESC) AS rk FROM orders)
    WHERE rk = 1))
WHERE rn = 1;
END;
