-- Judge plan: top-1 row per k by v (Rank).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE src (
  id BIGINT,
  k BIGINT,
  v BIGINT
) WITH ('connector' = 'statecraft-source');

CREATE TABLE tops (
  id BIGINT,
  k BIGINT,
  v BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO tops
SELECT id, k, v FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC) AS rn
  FROM src)
WHERE rn = 1;
