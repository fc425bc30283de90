-- fk: one child inserted per transaction; the RI trigger locks its parent
-- FOR KEY SHARE (pgbench -D parents=N, as tupled bench fk's --hot-rows).
\set p random(1, :parents)
INSERT INTO child (parent_id, payload) VALUES (:p, 'child payload, 32 bytes of text.');
