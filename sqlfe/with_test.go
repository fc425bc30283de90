package sqlfe

import "testing"

// TestWithDataModifying: a data-modifying WITH beside a main SELECT that
// does not read it; the main SELECT sees the statement's snapshot, not the
// sub-statements' changes (messages checked with psql on PostgreSQL 15).
func TestWithDataModifying(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1, 'a')", "INSERT 0 1")
	mustRun(t, s, "WITH i AS (INSERT INTO t VALUES (2, 'b')), u AS (UPDATE t SET v = 'z' WHERE k = 1) SELECT * FROM t", "1|a\nSELECT 1")
	mustRun(t, s, "SELECT * FROM t", "1|z\n2|b\nSELECT 2")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "WITH d AS (DELETE FROM t WHERE k = 2) SELECT k FROM t", "1\n2\nSELECT 2")
	mustRun(t, s, "SELECT k FROM t", "1\nSELECT 1")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustFail(t, s, "WITH i AS (INSERT INTO t VALUES (1, 'dup')) SELECT 1", "23505", `duplicate key value violates unique constraint "t_pkey"`)
	mustRun(t, s, "SELECT * FROM t", "1|z\n2|b\nSELECT 2")
	mustFail(t, s, "WITH i AS (INSERT INTO t VALUES (3, 'c') RETURNING k) SELECT * FROM i", "0A000", "")
	mustRun(t, s, "WITH q AS (SELECT 1) SELECT 2", "2\nSELECT 1") // recursive.go's
	mustFail(t, s, "WITH q AS (SELECT 1), d AS (DELETE FROM t WHERE false) SELECT 2", "0A000", "")
	mustFail(t, s, "WITH RECURSIVE q AS (DELETE FROM t) SELECT 2", "0A000", "")
	mustFail(t, s, "WITH q AS (DELETE FROM t), q AS (DELETE FROM t) SELECT 2", "42712", `WITH query name "q" specified more than once`)
	mustRun(t, s, "SELECT k FROM t", "1\n2\nSELECT 2")
}
