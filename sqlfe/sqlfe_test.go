package sqlfe

import (
	"context"
	"strings"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/pgerror"
)

func newTestSession(t testing.TB) (*Executor, *Session) {
	t.Helper()
	db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	eng, err := NewExecutor(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	s := eng.NewSession(1, "test", nil)
	t.Cleanup(s.Close)
	return eng, s
}

// newDiskSession opens (or reopens) the disk database in dir, with its
// catalog loaded by a new Executor, and returns it with a session of its
// own; the test closes both, to reopen dir and see what survived.
// reopenDisk closes s and db and opens dir again: the database a test's
// writes left on disk, in a new session (closed at the test's end).
func reopenDisk(t testing.TB, dir string, db *tupled.DB, s *Session) (*tupled.DB, *Session) {
	t.Helper()
	s.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = newDiskSession(t, dir)
	t.Cleanup(func() { s.Close(); db.Close() })
	return db, s
}

func newDiskSession(t testing.TB, dir string) (*tupled.DB, *Session) {
	t.Helper()
	db, err := tupled.Open(dir, &tupled.Options{VacuumInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewExecutor(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	return db, eng.NewSession(1, "test", nil)
}

// reopenDiskSession ends session s and closes db, then opens dir again
// (newDiskSession), closing the new pair when the test ends.
func reopenDiskSession(t *testing.T, dir string, db *tupled.DB, s *Session) (*tupled.DB, *Session) {
	t.Helper()
	s.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, s = newDiskSession(t, dir)
	t.Cleanup(func() { s.Close(); db.Close() })
	return db, s
}

// run executes a simple query and renders the results as text.
func run(t testing.TB, s *Session, sql string) (string, *pgerror.Error) {
	t.Helper()
	sts, err := Parse(sql)
	if err != nil {
		s.Abort() // as pgwire does
		return "", ToError(err)
	}
	var out []string
	for _, st := range sts {
		res, err := s.Execute(context.Background(), st, nil)
		if err != nil {
			s.EndGroup()
			return strings.Join(out, "\n"), ToError(err)
		}
		if res.Cols != nil {
			for _, r := range res.Rows {
				var vs []string
				for _, v := range r {
					if v.Null {
						vs = append(vs, "NULL")
					} else {
						vs = append(vs, v.String())
					}
				}
				out = append(out, strings.Join(vs, "|"))
			}
		}
		out = append(out, res.Tag)
	}
	if err := s.EndGroup(); err != nil {
		return strings.Join(out, "\n"), ToError(err)
	}
	return strings.Join(out, "\n"), nil
}

func mustRun(t *testing.T, s *Session, sql, want string) {
	t.Helper()
	got, err := run(t, s, sql)
	if err != nil {
		t.Fatalf("%s: %s %s", sql, err.Code, err.Message)
	}
	if got != want {
		t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", sql, got, want)
	}
}

func mustFail(t *testing.T, s *Session, sql, code, msg string) {
	t.Helper()
	_, err := run(t, s, sql)
	if err == nil {
		t.Fatalf("%s: no error, want %s", sql, code)
	}
	if err.Code != code || (msg != "" && err.Message != msg) {
		t.Fatalf("%s: got %s %q, want %s %q", sql, err.Code, err.Message, code, msg)
	}
}

func TestBasicSQL(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "SELECT 1", "1\nSELECT 1")
	mustRun(t, s, "SELECT 1 + 2 * 3 AS x, 'a' || 'b', true, NULL::int", "7|ab|t|NULL\nSELECT 1")
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int NOT NULL, s text, b boolean)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1, 10, 'one', true), (2, 20, 'two', false), (3, 30, NULL, NULL) RETURNING k, v*2", "1|20\n2|40\n3|60\nINSERT 0 3")
	mustRun(t, s, "SELECT * FROM t", "1|10|one|t\n2|20|two|f\n3|30|NULL|NULL\nSELECT 3")
	mustRun(t, s, "SELECT k FROM t WHERE k = 2", "2\nSELECT 1")
	mustRun(t, s, "SELECT k FROM t WHERE k IN (3, 1, 7)", "1\n3\nSELECT 2")
	mustRun(t, s, "SELECT k FROM t WHERE k BETWEEN 2 AND 3", "2\n3\nSELECT 2")
	mustRun(t, s, "SELECT k FROM t WHERE k > 1 AND k < 3", "2\nSELECT 1")
	mustRun(t, s, "SELECT k FROM t WHERE v > 10 OR s = 'one' ORDER BY k DESC", "3\n2\n1\nSELECT 3")
	mustRun(t, s, "SELECT k, s FROM t ORDER BY s NULLS FIRST LIMIT 2", "3|NULL\n1|one\nSELECT 2")
	mustRun(t, s, "SELECT k FROM t ORDER BY v DESC LIMIT 1 OFFSET 1", "2\nSELECT 1")
	mustRun(t, s, "UPDATE t SET v = v + 1 WHERE k = 1", "UPDATE 1")
	mustRun(t, s, "UPDATE t SET v = v * 2 WHERE s IS NULL RETURNING v", "60\nUPDATE 1")
	mustRun(t, s, "UPDATE t SET k = 10 WHERE k = 3", "UPDATE 1")
	mustRun(t, s, "SELECT k, v FROM t", "1|11\n2|20\n10|60\nSELECT 3")
	mustRun(t, s, "DELETE FROM t WHERE k = 2", "DELETE 1")
	mustRun(t, s, "DELETE FROM t WHERE v > 50 RETURNING k", "10\nDELETE 1")
	mustRun(t, s, "SELECT k FROM t FOR UPDATE", "1\nSELECT 1")
	mustFail(t, s, "INSERT INTO t VALUES (1, 1)", "23505", `duplicate key value violates unique constraint "t_pkey"`)
	mustFail(t, s, "INSERT INTO t VALUES (5, NULL)", "23502", `null value in column "v" of relation "t" violates not-null constraint`)
	mustFail(t, s, "SELECT * FROM nope", "42P01", `relation "nope" does not exist`)
	mustFail(t, s, "SELECT nope FROM t", "42703", `column "nope" does not exist`)
	mustFail(t, s, "SELEC 1", "42601", `syntax error at or near "SELEC"`)
	mustRun(t, s, "SELECT count(*) FROM t", "1\nSELECT 1")
	mustRun(t, s, "SELECT a.k, b.v FROM t a JOIN t b ON a.k = b.k ORDER BY a.k", "1|11\nSELECT 1")
	mustFail(t, s, "CREATE INDEX ON t USING hash (v)", "0A000", `access method "hash" is not supported`)
	mustFail(t, s, "SELECT 1/0", "22012", "division by zero")
	mustFail(t, s, "SELECT 2147483647 + 1", "22003", "integer out of range")
	mustRun(t, s, "DROP TABLE t", "DROP TABLE")
	mustFail(t, s, "DROP TABLE t", "42P01", `table "t" does not exist`)
	mustRun(t, s, "DROP TABLE IF EXISTS t", "DROP TABLE")
	mustRun(t, s, "CREATE TABLE t (k text PRIMARY KEY, n bigint)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t (n, k) VALUES (5000000000, 'b'), (-1, 'a')", "INSERT 0 2")
	mustRun(t, s, "SELECT * FROM t WHERE k >= 'a' AND k < 'b'", "a|-1\nSELECT 1")
	mustRun(t, s, "SELECT n FROM t ORDER BY n", "-1\n5000000000\nSELECT 2")
}

func TestTransactions(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE")
	mustRun(t, s, "BEGIN", "BEGIN")
	if s.TxStatus() != 'T' {
		t.Fatal("want T")
	}
	mustRun(t, s, "INSERT INTO t VALUES (1, 1)", "INSERT 0 1")
	mustFail(t, s, "INSERT INTO t VALUES (1, 1)", "23505", "")
	if s.TxStatus() != 'E' {
		t.Fatal("want E")
	}
	mustFail(t, s, "SELECT 1", "25P02", "current transaction is aborted, commands ignored until end of transaction block")
	mustRun(t, s, "COMMIT", "ROLLBACK")
	mustRun(t, s, "SELECT * FROM t", "SELECT 0")
	// a multi-statement query is one transaction
	mustFail(t, s, "INSERT INTO t VALUES (2, 2); INSERT INTO t VALUES (2, 2)", "23505", "")
	mustRun(t, s, "SELECT * FROM t", "SELECT 0")
	mustRun(t, s, "BEGIN ISOLATION LEVEL REPEATABLE READ; SHOW transaction_isolation; COMMIT", "BEGIN\nrepeatable read\nSHOW\nCOMMIT")
	mustRun(t, s, "SET lock_timeout = '100ms'; SHOW lock_timeout", "SET\n100ms\nSHOW")
	mustRun(t, s, "SHOW deadlock_timeout", "1s\nSHOW")
	// deadlock_timeout is per session, as in PostgreSQL
	mustRun(t, s, "SET deadlock_timeout = '5s'; SHOW deadlock_timeout", "SET\n5s\nSHOW")
	mustRun(t, s, "BEGIN; SET LOCAL deadlock_timeout = '10ms'; SHOW deadlock_timeout; COMMIT; SHOW deadlock_timeout", "BEGIN\nSET\n10ms\nSHOW\nCOMMIT\n5s\nSHOW")
	mustRun(t, s, "RESET deadlock_timeout; SHOW deadlock_timeout", "RESET\n1s\nSHOW")
	mustRun(t, s, "SELECT pg_backend_pid()", "1\nSELECT 1")
	mustRun(t, s, "SELECT set_config('application_name', current_setting('application_name') || '/' || 'x', false)", "/x\nSELECT 1")
	mustRun(t, s, "SELECT pg_catalog.pg_isolation_test_session_is_blocked(1, '{2,3}')", "f\nSELECT 1")
	// DDL is transactional
	mustRun(t, s, "BEGIN; CREATE TABLE u (k int PRIMARY KEY); INSERT INTO u VALUES (1); ROLLBACK", "BEGIN\nCREATE TABLE\nINSERT 0 1\nROLLBACK")
	mustFail(t, s, "SELECT * FROM u", "42P01", "")
}

func TestLocking(t *testing.T) {
	eng, s1 := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	defer s2.Close()
	mustRun(t, s1, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)", "CREATE TABLE\nINSERT 0 3")
	mustRun(t, s1, "BEGIN; SELECT k FROM t WHERE k = 1 FOR UPDATE", "BEGIN\n1\nSELECT 1")
	mustRun(t, s2, "BEGIN", "BEGIN")
	mustFail(t, s2, "SELECT k FROM t WHERE k = 1 FOR UPDATE NOWAIT", "55P03", `could not obtain lock on row in relation "t"`)
	mustRun(t, s2, "ROLLBACK; BEGIN; SELECT k FROM t ORDER BY k FOR UPDATE SKIP LOCKED LIMIT 1", "ROLLBACK\nBEGIN\n2\nSELECT 1")
	mustFail(t, s2, "SELECT k FROM t WHERE k = 1 FOR KEY SHARE NOWAIT", "55P03", "")
	mustRun(t, s1, "UPDATE t SET v = 5 WHERE k = 2", "UPDATE 1") // s2 rolled back with its failure
	mustRun(t, s1, "COMMIT", "COMMIT")
}
