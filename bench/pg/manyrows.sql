-- manyrows (bench/manyrows.go): one transaction locks :rows rows FOR SHARE.
-- Table: pgbench_accounts of pgbench -i -s SCALE (100,000 rows per scale
-- unit; the seed-sized run is -s 100, 10M rows, about 1.3 GB) and
-- -D rows=N (run.sh passes 100000 * SCALE: the whole table). PostgreSQL keeps
-- row locks in the tuple headers, so the lock manager does not grow; every
-- locked row is still a dirtied page and a WAL record. Run it once
-- (pgbench -t 1 -c 1): rows/s = rows / latency.
BEGIN;
SELECT count(*) FROM (SELECT 1 FROM pgbench_accounts WHERE aid <= :rows FOR SHARE) s;
COMMIT;
