-- NEW: the same aggregate with a filter before it (a Calc node: later node ids shift by one).
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
SELECT k, COUNT(*) AS c, SUM(v) AS s
FROM src
WHERE v >= 0
GROUP BY k;
