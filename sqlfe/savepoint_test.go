package sqlfe

import "testing"

// SAVEPOINT, RELEASE and ROLLBACK TO as PostgreSQL 15 answers them (each
// outcome checked with psql on PostgreSQL 15), DDL under a savepoint
// included.
func TestSavepoints(t *testing.T) {
	_, s := newTestSession(t)
	mustFail(t, s, "SAVEPOINT a", "25P01", "SAVEPOINT can only be used in transaction blocks")
	mustFail(t, s, "RELEASE a", "25P01", "RELEASE SAVEPOINT can only be used in transaction blocks")
	mustFail(t, s, "ROLLBACK TO a", "25P01", "ROLLBACK TO SAVEPOINT can only be used in transaction blocks")
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1, 10), (2, 20)", "INSERT 0 2")

	mustRun(t, s, "BEGIN; INSERT INTO t VALUES (3, 30); SAVEPOINT s1; INSERT INTO t VALUES (4, 40); UPDATE t SET v = 11 WHERE k = 1", "BEGIN\nINSERT 0 1\nSAVEPOINT\nINSERT 0 1\nUPDATE 1")
	mustRun(t, s, "SAVEPOINT s2; INSERT INTO t VALUES (5, 50); RELEASE s2", "SAVEPOINT\nINSERT 0 1\nRELEASE")
	mustRun(t, s, "SELECT k, v FROM t ORDER BY k", "1|11\n2|20\n3|30\n4|40\n5|50\nSELECT 5")
	mustRun(t, s, "ROLLBACK TO s1", "ROLLBACK")
	mustRun(t, s, "SELECT k, v FROM t ORDER BY k", "1|10\n2|20\n3|30\nSELECT 3")
	// An error aborts down to s1; only ROLLBACK TO (or ROLLBACK) helps.
	mustFail(t, s, "INSERT INTO t VALUES (1, 0)", "23505", "")
	if s.TxStatus() != 'E' {
		t.Fatal("want E after an error under a savepoint")
	}
	mustFail(t, s, "RELEASE s1", "25P02", "")
	mustFail(t, s, "ROLLBACK TO nosuch", "3B001", `savepoint "nosuch" does not exist`)
	mustRun(t, s, "ROLLBACK TO SAVEPOINT s1", "ROLLBACK")
	if s.TxStatus() != 'T' {
		t.Fatal("want T after ROLLBACK TO")
	}
	mustFail(t, s, "RELEASE s2", "3B001", `savepoint "s2" does not exist`)
	mustRun(t, s, "ROLLBACK TO s1; INSERT INTO t VALUES (6, 60); COMMIT", "ROLLBACK\nINSERT 0 1\nCOMMIT")
	mustRun(t, s, "SELECT k, v FROM t ORDER BY k", "1|10\n2|20\n3|30\n6|60\nSELECT 4")

	// Without a savepoint an error aborts the block for good.
	mustRun(t, s, "BEGIN", "BEGIN")
	mustFail(t, s, "SELECT 1/0", "22012", "")
	mustFail(t, s, "ROLLBACK TO a", "3B001", `savepoint "a" does not exist`)
	mustRun(t, s, "COMMIT", "ROLLBACK")

	// DDL under a savepoint rolls back with it.
	mustRun(t, s, "BEGIN; CREATE TABLE u (k int PRIMARY KEY); SAVEPOINT x; CREATE TABLE w (k int PRIMARY KEY); INSERT INTO w VALUES (1)", "BEGIN\nCREATE TABLE\nSAVEPOINT\nCREATE TABLE\nINSERT 0 1")
	mustRun(t, s, "ROLLBACK TO x", "ROLLBACK")
	mustFail(t, s, "SELECT * FROM w", "42P01", `relation "w" does not exist`)
	mustRun(t, s, "ROLLBACK TO x; INSERT INTO u VALUES (1); COMMIT", "ROLLBACK\nINSERT 0 1\nCOMMIT")
	mustRun(t, s, "SELECT * FROM u", "1\nSELECT 1")
	mustFail(t, s, "SELECT * FROM w", "42P01", "")
}

// A SET inside a transaction that aborts is undone, as PostgreSQL's
// settings are transactional; one inside a transaction that commits stays.
func TestSetUndoneByAbort(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "BEGIN; SET statement_timeout = 2000; SHOW statement_timeout; ABORT", "BEGIN\nSET\n2s\nSHOW\nROLLBACK")
	mustRun(t, s, "SHOW statement_timeout", "0\nSHOW")
	mustRun(t, s, "BEGIN; SET lock_timeout = 2000", "BEGIN\nSET")
	mustFail(t, s, "SELECT 1/0", "22012", "")
	mustRun(t, s, "ROLLBACK; SHOW lock_timeout", "ROLLBACK\n0\nSHOW")
	mustRun(t, s, "BEGIN; SET lock_timeout = 2000; COMMIT; SHOW lock_timeout", "BEGIN\nSET\nCOMMIT\n2s\nSHOW")
	mustFail(t, s, "SET statement_timeout = 5000; SELECT 1/0", "22012", "")
	mustRun(t, s, "SHOW statement_timeout", "0\nSHOW")
}

// ROLLBACK TO undoes the SETs (and SET LOCALs) made since the savepoint,
// RELEASE keeps them, as PostgreSQL 15 answered the same statements in psql.
func TestSetUndoneByRollbackTo(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "BEGIN; SET lock_timeout = 2000; SAVEPOINT a; SET lock_timeout = 3000; SET LOCAL statement_timeout = 5000; SHOW lock_timeout", "BEGIN\nSET\nSAVEPOINT\nSET\nSET\n3s\nSHOW")
	mustRun(t, s, "ROLLBACK TO a; SHOW lock_timeout; SHOW statement_timeout", "ROLLBACK\n2s\nSHOW\n0\nSHOW")
	mustRun(t, s, "SAVEPOINT b; SET lock_timeout = 4000; SAVEPOINT c; SET lock_timeout = 6000; RELEASE c; ROLLBACK TO b; SHOW lock_timeout", "SAVEPOINT\nSET\nSAVEPOINT\nSET\nRELEASE\nROLLBACK\n2s\nSHOW")
	mustRun(t, s, "SAVEPOINT d; SET lock_timeout = 7000; RELEASE d; SHOW lock_timeout", "SAVEPOINT\nSET\nRELEASE\n7s\nSHOW")
	mustRun(t, s, "SAVEPOINT e; SET lock_timeout = 8000", "SAVEPOINT\nSET")
	mustFail(t, s, "SELECT 1/0", "22012", "")
	mustRun(t, s, "ROLLBACK TO e; SHOW lock_timeout; COMMIT; SHOW lock_timeout", "ROLLBACK\n7s\nSHOW\nCOMMIT\n7s\nSHOW")
}
