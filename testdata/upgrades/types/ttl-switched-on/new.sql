-- NEW of type-catalogue case ttl-switched-on (OLD: upgrades/agg-filter-added/old.sql).
-- Compiled by the statecraft oracle (upgrade-fixture).

SET 'table.exec.state.ttl' = '1 h';

CREATE TABLE src (
  k BIGINT,
  v BIGINT
) WITH ('connector' = 'statecraft-source', 'after-script' = 'idle');

CREATE TABLE counts (
  k BIGINT,
  c BIGINT,
  s BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO counts
SELECT k, COUNT(*) AS c, SUM(v) AS s
FROM src
GROUP BY k;
