package sqlfe

import (
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
)

// Outcomes checked on PostgreSQL 15.
func TestAdvisoryFunctions(t *testing.T) {
	eng, s := newTestSession(t)
	var notices []string
	s.Notice = func(e *pgerror.Error) { notices = append(notices, e.Severity+" "+e.Code+" "+e.Message) }
	s2 := eng.NewSession(2, "test", nil)
	defer s2.Close()

	mustRun(t, s, "SELECT pg_advisory_unlock(1)", "f\nSELECT 1")
	mustRun(t, s, "SELECT pg_advisory_unlock_shared(1, 2)", "f\nSELECT 1")
	if strings.Join(notices, ";") != "WARNING 01000 you don't own a lock of type ExclusiveLock;WARNING 01000 you don't own a lock of type ShareLock" {
		t.Fatalf("notices: %q", notices)
	}
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "SELECT pg_advisory_xact_lock(1)", "\nSELECT 1")
	mustRun(t, s, "SELECT pg_advisory_unlock(1)", "f\nSELECT 1") // a transaction lock is not unlocked
	mustRun(t, s, "SELECT pg_advisory_lock(1), pg_advisory_lock(1), pg_advisory_lock_shared(1)", "||\nSELECT 1")
	mustRun(t, s, "SELECT pg_advisory_lock(0, 1), pg_advisory_lock(-1), pg_advisory_lock(-5, 7), 1 + 1", "|||2\nSELECT 1")
	mustRun(t, s, "SELECT locktype, classid, objid, objsubid, mode, granted FROM pg_locks WHERE locktype = 'advisory' ORDER BY classid, objid, objsubid, mode",
		`advisory|0|1|1|ExclusiveLock|t
advisory|0|1|1|ShareLock|t
advisory|0|1|2|ExclusiveLock|t
advisory|4294967291|7|2|ExclusiveLock|t
advisory|4294967295|4294967295|1|ExclusiveLock|t
SELECT 5`)
	mustRun(t, s, "SELECT pid = pg_backend_pid() FROM pg_locks WHERE locktype = 'advisory' AND (pid IS NULL OR pid <> pg_backend_pid())", "SELECT 0")
	// the other session sees them as not available
	mustRun(t, s2, "SELECT pg_try_advisory_lock(1), pg_try_advisory_lock_shared(0, 1), pg_try_advisory_xact_lock(2)", "f|f|t\nSELECT 1")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	// session locks survive the rollback, counted: two unlocks, then false
	mustRun(t, s, "SELECT pg_advisory_unlock(1), pg_advisory_unlock(1), pg_advisory_unlock(1)", "t|t|f\nSELECT 1")
	mustRun(t, s, "SELECT pg_advisory_unlock_all()", "\nSELECT 1")
	mustRun(t, s, "SELECT mode FROM pg_locks WHERE locktype = 'advisory'", "SELECT 0")
	// strict: NULL takes no lock
	mustRun(t, s, "SELECT pg_advisory_lock(NULL), pg_try_advisory_lock(NULL::bigint)", "NULL|NULL\nSELECT 1")
	mustRun(t, s, "SELECT pg_advisory_lock('7')", "\nSELECT 1")
	mustRun(t, s2, "SELECT pg_try_advisory_lock(7)", "f\nSELECT 1")
	s.Close() // the connection's end releases its session locks
	mustRun(t, s2, "SELECT pg_try_advisory_lock(7)", "t\nSELECT 1")

	mustFail(t, s2, "SELECT pg_advisory_lock(2147483648, 1)", "42883", "function pg_advisory_lock(bigint, integer) does not exist")
	mustFail(t, s2, "SELECT pg_advisory_unlock(true)", "42883", "function pg_advisory_unlock(boolean) does not exist")
	mustFail(t, s2, "SELECT pg_advisory_lock()", "42883", "function pg_advisory_lock() does not exist")
	mustFail(t, s2, "SELECT pg_advisory_lock('x')", "22P02", `invalid input syntax for type bigint: "x"`)
	mustFail(t, s2, "SELECT pg_advisory_unlock_all(1)", "42883", "function pg_advisory_unlock_all(integer) does not exist")
}

// A blocked pg_advisory_lock shows in pg_locks and makes
// pg_isolation_test_session_is_blocked true even when the holder's session
// is idle (no transaction); lock_timeout ends it with 55P03.
func TestAdvisoryBlocking(t *testing.T) {
	eng, s1 := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	defer s2.Close()
	mustRun(t, s1, "SELECT pg_advisory_lock(5)", "\nSELECT 1")
	done := make(chan *pgerror.Error, 1)
	go func() {
		_, err := run(t, s2, "SELECT pg_advisory_lock_shared(5)")
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := run(t, s1, "SELECT pid, mode, granted FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
		if err != nil {
			t.Fatal(err.Message)
		}
		if out == "2|ShareLock|f\nSELECT 1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("s2 never showed waiting: %q", out)
		}
		time.Sleep(time.Millisecond)
	}
	if !eng.isBlocked(2, []int64{1}) {
		t.Fatal("isBlocked false for a session waiting on an idle session's advisory lock")
	}
	mustRun(t, s1, "SELECT pg_advisory_unlock(5)", "t\nSELECT 1")
	if err := <-done; err != nil {
		t.Fatal(err.Message)
	}
	mustRun(t, s1, "SET lock_timeout = '1ms'", "SET")
	mustFail(t, s1, "SELECT pg_advisory_xact_lock(5)", "55P03", "canceling statement due to lock timeout")
}
