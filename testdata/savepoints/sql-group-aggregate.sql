-- Group aggregate executed from its compiled plan and stopped with a canonical savepoint.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

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
