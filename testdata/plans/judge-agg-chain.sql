-- Judge plan: deduplication (keep last per id) followed by a group aggregate per k.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE src (
  id BIGINT,
  k BIGINT,
  v BIGINT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE counts (
  k BIGINT,
  c BIGINT,
  s BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO counts
SELECT k, COUNT(*) AS c, SUM(v) AS s FROM (
  SELECT id, k, v FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt DESC) AS rn
    FROM src)
  WHERE rn = 1)
GROUP BY k;
