-- hotrow/keyshare: the foreign-key parent pattern (bench/hotrow.go, variant "keyshare").
-- Every client's transaction touches the same parent row (client i uses
-- row 1 + i % :hot_rows, as tupled's hotrow does; -D hot_rows=1 by default)
-- and locks it FOR KEY SHARE: with many clients the row always has other live
-- lockers, so every lock creates a multixact.
-- Table: hotrow_parent (hotrow-setup.sql).
\set id 1 + :client_id % :hot_rows
BEGIN;
SELECT v FROM hotrow_parent WHERE id = :id FOR KEY SHARE;
COMMIT;
