-- SQL that PostgreSQL 15 runs and tupled still refuses (issue 24's "list
-- of the SQL still refused"). tests/sqllogic's TestRefused runs every case
-- against tupled, where each must fail with SQLSTATE 0A000 and a message
-- in SQL words (never a parser node's name), and, with -pg, against
-- PostgreSQL 15, where each must succeed. A case tupled starts to run
-- fails the test: move it into a .test file (with PostgreSQL's answer)
-- and delete it here. REFUSED.md is generated from this file and
-- tupled's answers (go test ./tests/sqllogic -run TestRefused -refused-doc).
--
-- Format: the lines up to "-- cases" are setup, run first on both; after
-- it, one case per line. Comments start with "--".
CREATE TABLE t (a int PRIMARY KEY, b text, c int);
INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30);
CREATE TABLE u (a int PRIMARY KEY, t_a int REFERENCES t (a));
INSERT INTO u VALUES (1, 1), (2, 2);
CREATE VIEW vt AS SELECT a, b FROM t;
-- cases
-- types
SELECT '12:00+02'::timetz;
CREATE TABLE jk (j jsonb PRIMARY KEY);
-- queries
SELECT * FROM t TABLESAMPLE SYSTEM (50);
SELECT ROW(a, b) FROM t;
SELECT t FROM t;
SELECT count(*) FROM t GROUP BY generate_series(1, 2);
SELECT generate_series(1, generate_series(1, 2));
INSERT INTO u VALUES (generate_series(3, 4), 1);
SELECT (SELECT sum(t.c) FROM u LIMIT 1) FROM t;
-- DDL and other statements
CREATE TEMP TABLE tt (id serial, a int);
CREATE TEMP TABLE ti (a int); CREATE INDEX ON ti (a);
CREATE SCHEMA s;
ALTER TABLE t ALTER COLUMN c TYPE bigint;
CREATE TEMP VIEW tv AS SELECT 1;
SELECT * FROM vt FOR UPDATE;
INSERT INTO vt VALUES (9, 'z');
COMMENT ON FUNCTION now() IS 'the time';
GRANT SELECT ON t TO PUBLIC;
CREATE EXTENSION IF NOT EXISTS pgcrypto;
BEGIN ISOLATION LEVEL SERIALIZABLE;
