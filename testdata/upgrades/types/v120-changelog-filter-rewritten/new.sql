-- type-catalogue case v120-changelog-filter-rewritten: runnable-changelog-normalize.sql with "WHERE balance > 0" -> "WHERE balance >= 1"
-- Upsert source with a primary key read by a sink that needs update-before rows.
-- Runnable twin: datagen -> statecraft-source, blackhole -> statecraft-sink (no-update-before).
-- Compiled by the statecraft oracle (PlanCatalog) with Flink's COMPILE PLAN in
-- streaming mode and default configuration (table.exec.state.ttl = 0 ms).

CREATE TABLE accounts (
  account_id BIGINT,
  balance BIGINT,
  PRIMARY KEY (account_id) NOT ENFORCED
) WITH ('connector' = 'statecraft-source', 'changelog-mode' = 'upsert');

CREATE TABLE accounts_out (
  account_id BIGINT,
  balance BIGINT
) WITH ('connector' = 'statecraft-sink', 'changelog-mode' = 'all');

INSERT INTO accounts_out
SELECT account_id, balance FROM accounts WHERE balance >= 1;
