-- Judge plan: an upsert source normalized for a sink that needs update-before rows.
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE accounts (
  id BIGINT,
  bal BIGINT,
  PRIMARY KEY (id) NOT ENFORCED
) WITH ('connector' = 'statecraft-source', 'changelog-mode' = 'upsert');

CREATE TABLE balances (
  id BIGINT,
  bal BIGINT
) WITH ('connector' = 'statecraft-sink');

INSERT INTO balances
SELECT id, bal FROM accounts;
