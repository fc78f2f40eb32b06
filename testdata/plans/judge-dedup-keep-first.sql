-- Judge plan: deduplication keeping the first row per id.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE src (
  id BIGINT,
  v STRING,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE firsts (
  id BIGINT,
  v STRING
) WITH ('connector' = 'statecraft-sink');

INSERT INTO firsts
SELECT id, v FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt ASC) AS rn
  FROM src)
WHERE rn = 1;
