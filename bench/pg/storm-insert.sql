-- storm, second half (the 2018 seed's "parallel insert" part; bench/storm.go):
-- contended unique inserts. Clients insert one of :ins_keys keys
-- (-D ins_keys=10) into storm_ins, whose primary key is unique; a second
-- inserter of a key waits (on the first inserter's transaction, like a row
-- lock wait) until the first commits. The first deletes its row before
-- committing, so the waiter's insert then succeeds: the workload stays
-- contended forever without unique violations (pgbench 15 would abort a
-- client on 23505) and without the table growing.
-- Table: storm_ins (storm-setup.sql).
\set k random(1, :ins_keys)
BEGIN;
INSERT INTO storm_ins (k, v) VALUES (:k, :client_id);
DELETE FROM storm_ins WHERE k = :k;
COMMIT;
