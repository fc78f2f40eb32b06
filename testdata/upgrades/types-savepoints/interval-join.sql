-- type-catalogue savepoint interval-join: runnable-interval-join.sql
-- Event-time interval join.
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE orders_rt (
  order_id BIGINT,
  user_id BIGINT,
  amount INT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'statecraft-source');

CREATE TABLE shipments_rt (
  order_id BIGINT,
  carrier STRING,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'statecraft-source');

CREATE TABLE shipped (
  order_id BIGINT,
  amount INT,
  carrier STRING
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'no-update-before');

INSERT INTO shipped
SELECT o.order_id, o.amount, s.carrier
FROM orders_rt AS o, shipments_rt AS s
WHERE o.order_id = s.order_id
  AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '1' HOUR;
