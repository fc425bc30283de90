-- Schema of the fk workload (bench/fk.go, `tupled bench fk`): a few hot
-- parents and their children through a declared foreign key. :parents is
-- replaced by the number of hot parents.
DROP TABLE IF EXISTS child, parent;
CREATE TABLE parent (id int PRIMARY KEY, v bigint NOT NULL);
CREATE TABLE child (id bigserial PRIMARY KEY, parent_id int NOT NULL REFERENCES parent, payload text NOT NULL);
INSERT INTO parent SELECT g, 0 FROM generate_series(1, :parents) g;
