-- A group aggregate counting distinct DECIMAL and TIMESTAMP values: COUNT(DISTINCT d) over a
-- DECIMAL(10, 2) and COUNT(DISTINCT t) over a TIMESTAMP(3) column keep each distinct value in the
-- map states distinctAcc_0 and distinctAcc_1 (a NULL value in distinctAcc_<n>_null_state), keyed
-- by DecimalData and TimestampData. testdata/specs/sql-distinct-decimal.yaml declares it by this
-- compiled plan; TestOracleWrite has Flink carry bootstrapped views on.

CREATE TABLE src (
  k BIGINT,
  d DECIMAL(10, 2),
  t TIMESTAMP(3)
) WITH ('connector' = 'statecraft-source');

CREATE TABLE agg_out (
  k BIGINT,
  dd BIGINT,
  dt BIGINT,
  n BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO agg_out
SELECT k, COUNT(DISTINCT d) AS dd, COUNT(DISTINCT t) AS dt, COUNT(*) AS n
FROM src
GROUP BY k;
