-- MAX over retractions of a CHAR(3) column: the upsert source's ChangelogNormalize retracts
-- replaced and deleted rows, so MAX(c) keeps every value's count in the map state agg0$map,
-- keyed by StringData (CHAR(3) NOT NULL), and the maximum in a MaxWithRetractAccumulator whose
-- `max` is a CHAR(3). testdata/specs/sql-retract-minmax-char.yaml declares it by this compiled
-- plan; TestOracleWrite has Flink carry bootstrapped views on.

CREATE TABLE src (
  id BIGINT,
  k BIGINT,
  c CHAR(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'statecraft-source', 'changelog-mode' = 'upsert');

CREATE TABLE agg_out (
  k BIGINT,
  mc CHAR(3),
  n BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO agg_out
SELECT k, MAX(c) AS mc, COUNT(*) AS n
FROM src
GROUP BY k;
