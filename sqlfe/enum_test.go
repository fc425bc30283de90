package sqlfe

import (
	"testing"
	"time"

	"github.com/tupled/tupled/sql/pgerror"
	"github.com/tupled/tupled/sql/types"
)

// TestEnumRestart: enum types, their values added and renamed, the tables
// and views using them, keys and indexes on them, survive a restart of an
// on-disk database; a rolled-back CREATE TYPE does not.
func TestEnumRestart(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); CREATE TABLE p (m mood PRIMARY KEY, prev mood, n int, hist mood[])", "CREATE TYPE\nCREATE TABLE")
	mustRun(t, s, "CREATE INDEX p_prev ON p (prev); INSERT INTO p VALUES ('happy', 'sad', 1, '{sad,happy}'), ('sad', NULL, 2, NULL), ('ok', 'happy', 3, '{}')", "CREATE INDEX\nINSERT 0 3")
	mustRun(t, s, "ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'; ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'", "ALTER TYPE\nALTER TYPE")
	mustRun(t, s, "INSERT INTO p VALUES ('meh', 'meh', 4); CREATE VIEW pv AS SELECT m, n FROM p; COMMENT ON TYPE mood IS 'feelings'", "INSERT 0 1\nCREATE VIEW\nCOMMENT")
	mustRun(t, s, "BEGIN; CREATE TYPE gone AS ENUM ('x'); ROLLBACK", "BEGIN\nCREATE TYPE\nROLLBACK")
	mustRun(t, s, "BEGIN; ALTER TYPE mood RENAME VALUE 'happy' TO 'glad'; ROLLBACK", "BEGIN\nALTER TYPE\nROLLBACK")
	// other types made in this process must not be confused with them
	mustRun(t, s, "CREATE TYPE other AS ENUM ('a', 'b')", "CREATE TYPE")
	_, s = reopenDiskSession(t, dir, db, s)
	// the columns have the reloaded type's number, not the one the type
	// had before (which this process still knows; a new process would not)
	mood, p := s.lookupEnum("mood"), s.lookupTable("p")
	if at, _ := types.ArrayOf(mood.Type); p.Cols[0].Type != mood.Type || p.Cols[1].Type != mood.Type || p.Cols[3].Type != at {
		t.Fatalf("reloaded columns: %+v, mood is %d", p.Cols, mood.Type)
	}
	if v := s.lookupView("pv"); v == nil || v.Cols[0].Type != mood.Type {
		t.Fatalf("reloaded view: %+v", v)
	}
	mustRun(t, s, "SELECT m, prev, n FROM p ORDER BY m", "blue|NULL|2\nmeh|meh|4\nok|happy|3\nhappy|blue|1\nSELECT 4")
	mustRun(t, s, "SELECT n, hist FROM p WHERE m = 'happy'", "1|{blue,happy}\nSELECT 1")
	mustRun(t, s, "SELECT n FROM p WHERE prev = 'meh'", "4\nSELECT 1")
	mustRun(t, s, "SELECT m FROM pv WHERE n = 2", "blue\nSELECT 1")
	mustRun(t, s, "SELECT obj_description('mood'::regtype, 'pg_type')", "feelings\nSELECT 1")
	mustRun(t, s, "SELECT enum_range(NULL::mood), enum_range(NULL::other)", "{blue,meh,ok,happy}|{a,b}\nSELECT 1")
	mustFail(t, s, "SELECT 'x'::gone", pgerror.CodeUndefinedObject, `type "gone" does not exist`)
	mustFail(t, s, "INSERT INTO p VALUES ('sad', NULL, 5)", pgerror.CodeInvalidText, `invalid input value for enum mood: "sad"`)
	mustRun(t, s, "ALTER TYPE mood ADD VALUE 'ecstatic'", "ALTER TYPE")
	mustRun(t, s, "INSERT INTO p VALUES ('ecstatic', 'ok', 5)", "INSERT 0 1")
	mustRun(t, s, "SELECT max(m), min(prev) FROM p", "ecstatic|blue\nSELECT 1")
}

// TestEnumErrors: the messages of PostgreSQL 15 (the corpus checks the
// SQLSTATEs against PostgreSQL; these are its texts).
func TestEnumErrors(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TYPE mood AS ENUM ('sad', 'happy'); CREATE TABLE p (id int, m mood)", "CREATE TYPE\nCREATE TABLE")
	mustFail(t, s, "CREATE TYPE mood AS ENUM ('x')", "42710", `type "mood" already exists`)
	mustFail(t, s, "CREATE TYPE p AS ENUM ('x')", "42710", `type "p" already exists`)
	mustFail(t, s, "SELECT 'angry'::mood", pgerror.CodeInvalidText, `invalid input value for enum mood: "angry"`)
	mustFail(t, s, "SELECT 'x'::nosuch", pgerror.CodeUndefinedObject, `type "nosuch" does not exist`)
	mustFail(t, s, "DROP TYPE nosuch", pgerror.CodeUndefinedObject, `type "nosuch" does not exist`)
	mustFail(t, s, "ALTER TYPE nosuch ADD VALUE 'x'", pgerror.CodeUndefinedObject, `type "nosuch" does not exist`)
	mustFail(t, s, "ALTER TYPE mood ADD VALUE 'sad'", "42710", `enum label "sad" already exists`)
	mustFail(t, s, "ALTER TYPE mood ADD VALUE 'x' AFTER 'nosuch'", pgerror.CodeInvalidParamValue, `"nosuch" is not an existing enum label`)
	mustFail(t, s, "ALTER TYPE mood RENAME VALUE 'nosuch' TO 'x'", pgerror.CodeInvalidParamValue, `"nosuch" is not an existing enum label`)
	mustFail(t, s, "ALTER TYPE mood RENAME VALUE 'sad' TO 'happy'", "42710", `enum label "happy" already exists`)
	mustFail(t, s, "DROP TYPE mood", "2BP01", "cannot drop type mood because other objects depend on it")
	mustFail(t, s, "CREATE VIEW pv AS SELECT m FROM p; DROP TYPE mood CASCADE", pgerror.CodeFeatureNotSupp, "DROP TYPE ... CASCADE of a type a view's column has (column m of view pv) is not supported")
	mustFail(t, s, "SELECT * FROM p WHERE m = id", pgerror.CodeUndefinedFunction, "")
	// a value added in the open transaction is not usable before the commit
	mustRun(t, s, "BEGIN; ALTER TYPE mood ADD VALUE 'new'", "BEGIN\nALTER TYPE")
	mustFail(t, s, "SELECT 'new'::mood", "55P04", `unsafe use of new value "new" of enum type mood`)
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustFail(t, s, "SELECT 'new'::mood", pgerror.CodeInvalidText, `invalid input value for enum mood: "new"`)
	mustRun(t, s, "DROP TABLE p; DROP TYPE mood", "DROP TABLE\nDROP TYPE")
}

// TestEnumSavepoint: ROLLBACK TO SAVEPOINT undoes enum DDL after it, in
// the catalog and in the values' registry.
func TestEnumSavepoint(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TYPE mood AS ENUM ('sad', 'happy')", "CREATE TYPE")
	mustRun(t, s, "BEGIN; SAVEPOINT a; ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'; CREATE TYPE c AS ENUM ('r'); ROLLBACK TO SAVEPOINT a",
		"BEGIN\nSAVEPOINT\nALTER TYPE\nCREATE TYPE\nROLLBACK")
	mustRun(t, s, "SELECT 'sad'::mood", "sad\nSELECT 1")
	mustFail(t, s, "SELECT 'r'::c", pgerror.CodeUndefinedObject, `type "c" does not exist`)
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustRun(t, s, "SELECT enum_range(NULL::mood)", "{sad,happy}\nSELECT 1")
}

// TestEnumRollbackOthers: a rollback puts back only the enum types its
// own transaction changed; another session's uncommitted ALTER TYPE
// stays, and a rolled-back rename gives the type its old name back.
func TestEnumRollbackOthers(t *testing.T) {
	eng, a := newTestSession(t)
	b := eng.NewSession(2, "test", nil)
	defer b.Close()
	mustRun(t, a, "CREATE TYPE mood AS ENUM ('sad', 'happy'); CREATE TYPE lvl AS ENUM ('lo', 'hi'); CREATE TABLE p (m mood)", "CREATE TYPE\nCREATE TYPE\nCREATE TABLE")
	mustRun(t, a, "BEGIN; ALTER TYPE mood ADD VALUE 'meh'", "BEGIN\nALTER TYPE")
	mustRun(t, b, "BEGIN; ALTER TYPE lvl RENAME TO level; CREATE TYPE c AS ENUM ('r'); ROLLBACK", "BEGIN\nALTER TYPE\nCREATE TYPE\nROLLBACK")
	mustRun(t, a, "COMMIT", "COMMIT")
	mustRun(t, a, "INSERT INTO p VALUES ('meh'), ('meh'); SELECT count(*) FROM p WHERE m = 'meh'", "INSERT 0 2\n2\nSELECT 1")
	mustRun(t, b, "SELECT enum_range(NULL::mood), enum_range(NULL::lvl)", "{sad,happy,meh}|{lo,hi}\nSELECT 1")
	mustFail(t, b, "SELECT 'lo'::level", pgerror.CodeUndefinedObject, `type "level" does not exist`)
}

// TestEnumConcurrentAlter: two sessions' ALTER TYPE ADD VALUE of one
// type: the second waits for the first's transaction and adds to its
// result, so neither value is lost.
func TestEnumConcurrentAlter(t *testing.T) {
	eng, a := newTestSession(t)
	b := eng.NewSession(2, "test", nil)
	defer b.Close()
	mustRun(t, a, "CREATE TYPE mood AS ENUM ('sad', 'happy')", "CREATE TYPE")
	mustRun(t, a, "BEGIN; ALTER TYPE mood ADD VALUE 'a1'", "BEGIN\nALTER TYPE")
	done := make(chan string)
	go func() {
		out, err := run(t, b, "ALTER TYPE mood ADD VALUE 'b1' BEFORE 'happy'")
		if err != nil {
			out = err.Code + " " + err.Message
		}
		done <- out
	}()
	select {
	case out := <-done:
		t.Fatalf("the second ALTER TYPE did not wait: %s", out)
	case <-time.After(100 * time.Millisecond):
	}
	mustRun(t, a, "COMMIT", "COMMIT")
	if out := <-done; out != "ALTER TYPE" {
		t.Fatal(out)
	}
	mustRun(t, a, "SELECT enum_range(NULL::mood)", "{sad,b1,happy,a1}\nSELECT 1")
}
