-- A group aggregate taking MIN and MAX over retractions of strings, decimals and timestamps: the
-- upsert source's ChangelogNormalize retracts replaced and deleted rows, so MIN(s) over a STRING,
-- MAX(c) over a VARCHAR(20), MIN(d) over a DECIMAL(10, 2) and MAX(t) over a TIMESTAMP(3) column
-- each keep every value's count in a map state agg<i>$map and the current extreme in a
-- MinWithRetractAccumulator or MaxWithRetractAccumulator. testdata/specs/sql-retract-minmax.yaml
-- declares it by this compiled plan; TestOracleWrite has Flink carry bootstrapped views on.

CREATE TABLE src (
  id BIGINT,
  k BIGINT,
  s STRING,
  c VARCHAR(20),
  d DECIMAL(10, 2),
  t TIMESTAMP(3),
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'statecraft-source', 'changelog-mode' = 'upsert');

CREATE TABLE agg_out (
  k BIGINT,
  ms STRING,
  mc VARCHAR(20),
  md DECIMAL(10, 2),
  mt TIMESTAMP(3),
  n BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO agg_out
SELECT k, MIN(s) AS ms, MAX(c) AS mc, MIN(d) AS md, MAX(t) AS mt, COUNT(*) AS n
FROM src
GROUP BY k;
