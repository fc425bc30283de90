package sqlfe

import (
	"runtime"
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// TestLockTable pins LOCK TABLE's syntax and errors as PostgreSQL 15 gives
// them (checked with psql): 25P01 outside a transaction block (a
// multi-statement query is not one), 42P01 for an unknown table, the mode
// names, several tables at once, and the relation rows of pg_locks.
func TestLockTable(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE u ()", "CREATE TABLE")
	mustFail(t, s, "LOCK TABLE t", pgerror.CodeNoActiveTx, "LOCK TABLE can only be used in transaction blocks")
	mustFail(t, s, "LOCK t IN SHARE MODE", pgerror.CodeNoActiveTx, "LOCK TABLE can only be used in transaction blocks")
	mustFail(t, s, "LOCK TABLE t; SELECT 1", pgerror.CodeNoActiveTx, "LOCK TABLE can only be used in transaction blocks")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustFail(t, s, "LOCK TABLE nosuch", pgerror.CodeUndefinedTable, `relation "nosuch" does not exist`)
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustFail(t, s, "LOCK t, nosuch IN SHARE MODE", pgerror.CodeUndefinedTable, `relation "nosuch" does not exist`)
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "LOCK TABLE t IN ACCESS SHARE MODE", "LOCK TABLE")
	mustRun(t, s, "SELECT locktype, relation, mode, granted FROM pg_locks WHERE locktype = 'relation' AND relation = 't'", "relation|t|AccessShareLock|t\nSELECT 1")
	mustRun(t, s, "LOCK t, public.u IN ROW SHARE MODE", "LOCK TABLE")
	mustRun(t, s, "LOCK TABLE ONLY u IN ROW EXCLUSIVE MODE NOWAIT", "LOCK TABLE")
	for _, m := range []string{"SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"} {
		mustRun(t, s, "LOCK TABLE t IN "+m+" MODE", "LOCK TABLE")
	}
	mustRun(t, s, "SELECT mode FROM pg_locks WHERE locktype = 'relation' AND relation = 't' ORDER BY mode",
		"AccessExclusiveLock\nAccessShareLock\nExclusiveLock\nRowShareLock\nShareLock\nShareRowExclusiveLock\nShareUpdateExclusiveLock\nSELECT 7")
	mustRun(t, s, "COMMIT", "COMMIT")
	mustRun(t, s, "SELECT mode FROM pg_locks WHERE locktype = 'relation'", "SELECT 0")
	// allowed in a read-only transaction, in every mode
	mustRun(t, s, "BEGIN READ ONLY", "BEGIN")
	mustRun(t, s, "LOCK TABLE t IN ACCESS EXCLUSIVE MODE", "LOCK TABLE")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
}

// TestLockTableConflicts: a session's ACCESS EXCLUSIVE lock makes another
// session's SELECT on the table wait (its implicit AccessShareLock), and
// NOWAIT fails with PostgreSQL's 55P03 wording.
func TestLockTableConflicts(t *testing.T) {
	eng, s := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1)", "INSERT 0 1")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "LOCK TABLE t", "LOCK TABLE")
	mustRun(t, s2, "BEGIN", "BEGIN")
	mustFail(t, s2, "LOCK TABLE t IN ACCESS SHARE MODE NOWAIT", "55P03", `could not obtain lock on relation "t"`)
	mustRun(t, s2, "ROLLBACK", "ROLLBACK")
	done := make(chan string, 1)
	go func() {
		out, err := run(t, s2, "SELECT k FROM t")
		if err != nil {
			out = err.Code + " " + err.Message
		}
		done <- out
	}()
	for waiting := false; !waiting; {
		for _, l := range eng.db.Locks() {
			waiting = waiting || (!l.Granted && l.Tag == "relation t" && l.Mode == "AccessShareLock")
		}
		select {
		case out := <-done:
			t.Fatalf("SELECT did not wait for ACCESS EXCLUSIVE: %q", out)
		default:
		}
		runtime.Gosched()
	}
	mustRun(t, s, "COMMIT", "COMMIT")
	if out := <-done; out != "1\nSELECT 1" {
		t.Fatalf("SELECT after the lock went: %q", out)
	}
}
