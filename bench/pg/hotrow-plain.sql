-- hotrow/plain: the foreign-key parent pattern (bench/hotrow.go, variant "plain").
-- Every client's transaction touches the same parent row (client i uses
-- row 1 + i % :hot_rows, as tupled's hotrow does; -D hot_rows=1 by default)
-- and reads it without a lock: the baseline.
-- Table: hotrow_parent (hotrow-setup.sql).
\set id 1 + :client_id % :hot_rows
BEGIN;
SELECT v FROM hotrow_parent WHERE id = :id;
COMMIT;
