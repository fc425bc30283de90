-- forshare/plain: the 2012 seed (bench/forshare.go, variant "plain").
-- Three random rows of pgbench_accounts (pgbench -i -s 10: 1M rows)
-- read without a lock: the baseline.
-- Run with -s SCALE so that :scale matches the initialized table.
BEGIN;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
COMMIT;
