-- Judge plan: deduplication by id into a sink keyed by k (ON CONFLICT DO DEDUPLICATE materializes).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE src (
  id BIGINT,
  k BIGINT,
  v BIGINT,
  pt AS PROCTIME()
) WITH ('connector' = 'statecraft-source');

CREATE TABLE by_k (
  k BIGINT,
  v BIGINT,
  PRIMARY KEY (k) NOT ENFORCED
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'upsert');

INSERT INTO by_k
SELECT k, v FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY pt DESC) AS rn
  FROM src)
WHERE rn = 1
ON CONFLICT DO DEDUPLICATE;
