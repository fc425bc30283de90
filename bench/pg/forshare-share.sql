-- forshare/share: the 2012 seed (bench/forshare.go, variant "share").
-- Three random rows of pgbench_accounts (pgbench -i -s 10: 1M rows)
-- locked FOR SHARE in one transaction.
-- Run with -s SCALE so that :scale matches the initialized table.
BEGIN;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR SHARE;
COMMIT;
