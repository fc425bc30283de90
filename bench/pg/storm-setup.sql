-- Tables of the storm workload (storm-update.sql, storm-insert.sql). Portable
-- SQL: it also runs on `tupled serve`. run.sh appends the rows of storm_hot
-- (1..hot_rows, v = 0); storm_ins starts empty.
DROP TABLE IF EXISTS storm_hot;
DROP TABLE IF EXISTS storm_ins;
CREATE TABLE storm_hot (id int PRIMARY KEY, v int NOT NULL);
CREATE TABLE storm_ins (k int PRIMARY KEY, v int NOT NULL);
