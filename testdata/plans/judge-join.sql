-- Judge plan: inner join of two scripted sources into a collecting sink.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE l (
  k BIGINT,
  lv STRING
) WITH ('connector' = 'statecraft-source');

CREATE TABLE r (
  k BIGINT,
  rv STRING
) WITH ('connector' = 'statecraft-source');

CREATE TABLE joined (
  k BIGINT,
  lv STRING,
  rv STRING
) WITH ('connector' = 'statecraft-sink');

INSERT INTO joined
SELECT l.k, l.lv, r.rv
FROM l
JOIN r ON l.k = r.k;
