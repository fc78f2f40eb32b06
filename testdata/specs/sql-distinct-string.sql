-- A group aggregate counting distinct strings: COUNT(DISTINCT s) over a STRING column
-- (VARCHAR(2147483647)), COUNT(DISTINCT u) over VARCHAR(20) and COUNT(DISTINCT c) over CHAR(3)
-- keep each distinct value's row count in the map states distinctAcc_0, distinctAcc_1 and
-- distinctAcc_2 (a NULL value's in distinctAcc_<n>_null_state), keyed by the strings.
-- testdata/specs/sql-distinct-string.yaml declares it by this compiled plan; TestOracleWrite has
-- Flink carry bootstrapped views on.

CREATE TABLE src (
  k BIGINT,
  s STRING,
  u VARCHAR(20),
  c CHAR(3)
) WITH ('connector' = 'statecraft-source');

CREATE TABLE agg_out (
  k BIGINT,
  ds BIGINT,
  du BIGINT,
  dc BIGINT,
  n BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO agg_out
SELECT k, COUNT(DISTINCT s) AS ds, COUNT(DISTINCT u) AS du, COUNT(DISTINCT c) AS dc, COUNT(*) AS n
FROM src
GROUP BY k;
