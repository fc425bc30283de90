package sqlfe

import (
	"context"
	"strings"
	"testing"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/pgerror"
)

// engineTemps lists the engine tables of temporary tables in db.
func engineTemps(t *testing.T, db *tupled.DB) []string {
	t.Helper()
	names, err := db.ListTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasPrefix(n, tempPrefix) {
			out = append(out, n)
		}
	}
	return out
}

// A temporary table is its session's: another session does not see it
// (and sees the permanent table it shadows), and it goes when its session
// ends. (What each statement answers is in testdata/sql/temp_table.test,
// checked against PostgreSQL.)
func TestTempTableIsTheSessions(t *testing.T) {
	eng, s := newTestSession(t)
	other := eng.NewSession(2, "test", nil)
	defer other.Close()
	mustRun(t, s, "CREATE TABLE p (a int); INSERT INTO p VALUES (1)", "CREATE TABLE\nINSERT 0 1")
	mustRun(t, s, "CREATE TEMP TABLE p (a int); INSERT INTO p VALUES (2); CREATE TEMP TABLE only_mine (x int)", "CREATE TABLE\nINSERT 0 1\nCREATE TABLE")
	mustRun(t, s, "SELECT a FROM p", "2\nSELECT 1")
	mustRun(t, other, "SELECT a FROM p", "1\nSELECT 1")
	mustFail(t, other, "SELECT * FROM only_mine", pgerror.CodeUndefinedTable, `relation "only_mine" does not exist`)
	// the other session may make one of the same name
	mustRun(t, other, "CREATE TEMP TABLE only_mine (y text); INSERT INTO only_mine VALUES ('theirs')", "CREATE TABLE\nINSERT 0 1")
	mustRun(t, s, "SELECT count(*) FROM only_mine", "0\nSELECT 1")
	if n := len(engineTemps(t, eng.db)); n != 3 {
		t.Fatalf("%d engine tables of temporary tables, want 3", n)
	}
	s.Close()
	if got := engineTemps(t, eng.db); len(got) != 1 {
		t.Fatalf("after the session's end: %v, want the other session's only", got)
	}
	mustRun(t, other, "SELECT a FROM p", "1\nSELECT 1")
}

// A prepared statement planned over the permanent table is planned again
// once a temporary table shadows it, and again when that is dropped.
func TestTempTableReplans(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE q (a int); INSERT INTO q VALUES (1)", "CREATE TABLE\nINSERT 0 1")
	st, err := s.Prepare("SELECT a FROM q", nil)
	if err != nil {
		t.Fatal(err)
	}
	exec := func(want string) {
		t.Helper()
		res, err := s.Execute(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.EndGroup(); err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 1 || res.Rows[0][0].String() != want {
			t.Fatalf("rows %v, want %s", res.Rows, want)
		}
	}
	exec("1")
	mustRun(t, s, "CREATE TEMP TABLE q (a int); INSERT INTO q VALUES (2)", "CREATE TABLE\nINSERT 0 1")
	exec("2")
	mustRun(t, s, "DROP TABLE q", "DROP TABLE")
	exec("1")
}

// A temporary table never survives a reopen, not even when its session
// did not end (a crash).
func TestTempTableGoneAfterReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TEMP TABLE gone (a int PRIMARY KEY); INSERT INTO gone VALUES (1)", "CREATE TABLE\nINSERT 0 1")
	if n := len(engineTemps(t, db)); n != 1 {
		t.Fatalf("%d engine tables of temporary tables, want 1", n)
	}
	if err := db.Close(); err != nil { // the session never ends
		t.Fatal(err)
	}
	db, s = newDiskSession(t, dir)
	defer db.Close()
	defer s.Close()
	if got := engineTemps(t, db); len(got) != 0 {
		t.Fatalf("after the reopen: %v", got)
	}
	mustFail(t, s, "SELECT * FROM gone", pgerror.CodeUndefinedTable, `relation "gone" does not exist`)
	mustRun(t, s, "CREATE TEMP TABLE gone (a int PRIMARY KEY); INSERT INTO gone VALUES (1)", "CREATE TABLE\nINSERT 0 1")
}

// What temporary tables do not support yet is 0A000, and leaves them
// working.
func TestTempTableRefused(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE perm (id int PRIMARY KEY); CREATE TEMP TABLE tt (id int PRIMARY KEY, a int)", "CREATE TABLE\nCREATE TABLE")
	for _, sql := range []string{
		"ALTER TABLE tt ADD COLUMN b int",
		"ALTER TABLE tt ALTER COLUMN a TYPE bigint",
		"ALTER TABLE tt RENAME COLUMN a TO b",
		"ALTER TABLE tt ADD CONSTRAINT c CHECK (a > 0)",
		"ALTER TABLE tt ADD FOREIGN KEY (a) REFERENCES perm (id)",
		"CREATE INDEX ON tt (a)",
		"COMMENT ON TABLE tt IS 'x'",
		"CREATE VIEW v AS SELECT a FROM tt",
		"CREATE TEMP TABLE ts (id serial)",
		"CREATE TEMP TABLE tf (a int REFERENCES perm (id))",
		"BEGIN; SAVEPOINT s; CREATE TEMP TABLE tsp (a int)",
	} {
		if _, err := run(t, s, sql); err == nil || err.Code != pgerror.CodeFeatureNotSupp {
			t.Errorf("%s: got %v, want 0A000", sql, err)
		}
		run(t, s, "ROLLBACK")
	}
	mustRun(t, s, "INSERT INTO tt VALUES (1, 2) RETURNING a", "2\nINSERT 0 1")
	mustRun(t, s, "INSERT INTO tt VALUES (2, 3)", "INSERT 0 1")
	mustFail(t, s, "INSERT INTO tt VALUES (1, 0)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "tt_pkey"`)
}
