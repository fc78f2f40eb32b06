-- Event-time temporal join against a versioned (upsert) table.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE payments (
  payment_id BIGINT,
  currency STRING,
  amount BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
) WITH ('connector' = 'datagen');

CREATE TABLE rates (
  currency STRING,
  rate BIGINT,
  ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '1' SECOND,
  PRIMARY KEY (currency) NOT ENFORCED
) WITH ('connector' = 'statecraft-source', 'changelog-mode' = 'upsert');

CREATE TABLE converted (
  payment_id BIGINT,
  converted BIGINT
) WITH ('connector' = 'blackhole');

INSERT INTO converted
SELECT p.payment_id, p.amount * r.rate
FROM payments AS p
JOIN rates FOR SYSTEM_TIME AS OF p.ts AS r ON p.currency = r.currency;
