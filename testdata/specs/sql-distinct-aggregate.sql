-- A group aggregate whose accumulator holds state-backed data views: COUNT(DISTINCT v) keeps
-- each distinct v's row count in the map state distinctAcc_0, and MIN over retractions (the
-- upsert source's ChangelogNormalize retracts replaced and deleted rows) keeps every v's count in
-- agg2$map. testdata/specs/sql-distinct-aggregate.yaml declares it by this compiled plan;
-- TestOracleWrite has Flink carry bootstrapped views on.

CREATE TABLE src (
  id BIGINT,
  k BIGINT,
  v INT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'statecraft-source', 'changelog-mode' = 'upsert');

CREATE TABLE agg_out (
  k BIGINT,
  d BIGINT,
  s INT,
  m INT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO agg_out
SELECT k, COUNT(DISTINCT v) AS d, SUM(v) AS s, MIN(v) AS m
FROM src
GROUP BY k;
