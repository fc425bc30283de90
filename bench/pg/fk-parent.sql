-- fk: the one client updating the parents' non-key column (a no-key
-- update: no conflict with the children's FOR KEY SHARE locks).
\set p random(1, :parents)
UPDATE parent SET v = v + 1 WHERE id = :p;
