-- NEW of type-catalogue case key-meaning-changed (OLD: upgrades/agg-filter-added/old.sql).
-- Compiled by the statecraft oracle (upgrade-fixture).

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
SELECT v AS k, COUNT(*) AS c, SUM(v) AS s
FROM src
GROUP BY v;
