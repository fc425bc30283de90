-- storm, first half (the 2018 seed; bench/storm.go): update one of
-- :hot_rows hot rows (-D hot_rows=10). With 1000 clients every hot row has
-- about a hundred waiters queued behind it, each committing with an fsync,
-- so a waiter routinely waits far longer than deadlock_timeout: every one of
-- them runs the deadlock check on its timer, although there is no deadlock.
-- Table: storm_hot (storm-setup.sql). No statement can fail: the only waits
-- are on one row (no cycles), so a run shows 0 failures unless something is
-- wrong.
\set id random(1, :hot_rows)
BEGIN;
UPDATE storm_hot SET v = v + 1 WHERE id = :id;
COMMIT;
