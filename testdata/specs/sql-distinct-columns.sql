-- A group aggregate with a DISTINCT call over several columns: LISTAGG(DISTINCT s, '-') keeps
-- each distinct (s, '-') pair (the separator literal is the call's second argument column) in
-- the map state distinctAcc_0, keyed by a row of the two arguments; COUNT(*) beside it. Flink
-- 2.3.0 does not plan COUNT(DISTINCT a, b) ("We now only support the count of one field"), so
-- this is how a DISTINCT view keyed by a row comes about. testdata/specs/sql-distinct-columns.yaml
-- declares it by this compiled plan; TestOracleWrite has Flink carry bootstrapped views on.

CREATE TABLE src (
  k BIGINT,
  s STRING
) WITH ('connector' = 'statecraft-source');

CREATE TABLE agg_out (
  k BIGINT,
  l STRING,
  n BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO agg_out
SELECT k, LISTAGG(DISTINCT s, '-') AS l, COUNT(*) AS n
FROM src
GROUP BY k;
