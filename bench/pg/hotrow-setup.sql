-- Table of the hotrow workload (hotrow-*.sql). Portable SQL: it also runs on
-- `tupled serve`. run.sh appends its rows (1..hot_rows, v = 0).
DROP TABLE IF EXISTS hotrow_parent;
CREATE TABLE hotrow_parent (id int PRIMARY KEY, v int NOT NULL);
