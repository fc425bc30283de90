-- forshare/nokeyupdate: the 2012 seed (bench/forshare.go, variant "nokeyupdate").
-- Three random rows of pgbench_accounts (pgbench -i -s 10: 1M rows)
-- locked FOR NO KEY UPDATE in one transaction.
-- Run with -s SCALE so that :scale matches the initialized table.
BEGIN;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR NO KEY UPDATE;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR NO KEY UPDATE;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR NO KEY UPDATE;
COMMIT;
