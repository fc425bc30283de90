package sqlfe

import (
	"context"
	"reflect"
	"runtime"
	"testing"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
)

func engineTables(t *testing.T, eng *Executor) []string {
	t.Helper()
	names, err := eng.db.ListTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestDropTableReclaims: DROP TABLE drops the engine table (its data with
// it) once the transaction commits, a table re-created under the same name
// is empty and reuses the engine name, and the engine tables of a rolled
// back CREATE, a CREATE dropped in its own transaction, and a DROP rolled
// back are handled as the catalog says.
func TestDropTableReclaims(t *testing.T) {
	eng, s := newTestSession(t)
	want := func(names ...string) {
		t.Helper()
		if got := engineTables(t, eng); !reflect.DeepEqual(got, append([]string{catalog.CatalogTable}, names...)) {
			t.Fatalf("engine tables %q, want %q and the catalog", got, names)
		}
	}
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1, 10), (2, 20)", "INSERT 0 2")
	want("t")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "DROP TABLE t", "DROP TABLE")
	want("t") // not before the commit
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	mustRun(t, s, "SELECT k FROM t", "1\n2\nSELECT 2")
	mustRun(t, s, "DROP TABLE t", "DROP TABLE")
	want()
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int)", "CREATE TABLE")
	want("t")
	mustRun(t, s, "SELECT * FROM t", "SELECT 0")
	mustRun(t, s, "DROP TABLE IF EXISTS t, nope", "DROP TABLE")
	want()

	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "CREATE TABLE u (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, s, "ROLLBACK", "ROLLBACK")
	want()
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "CREATE TABLE u (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, s, "DROP TABLE u", "DROP TABLE")
	mustRun(t, s, "COMMIT", "COMMIT")
	want()
}

// TestDropTableWaitsForUsers: DROP TABLE takes AccessExclusiveLock, so, as
// in PostgreSQL, it waits for a session that has used the table (here a row
// lock, which took RowShareLock on it) to end; then the SQL table is gone at
// once and its engine table is dropped at the next DDL. A table created
// through the embedded API is never touched.
func TestDropTableWaitsForUsers(t *testing.T) {
	eng, s := newTestSession(t)
	if err := eng.db.CreateTable(context.Background(), "api_table"); err != nil {
		t.Fatal(err)
	}
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1)", "INSERT 0 1")
	mustRun(t, s2, "BEGIN", "BEGIN")
	mustRun(t, s2, "SELECT k FROM t FOR SHARE", "1\nSELECT 1")
	type res struct {
		out string
		err *pgerror.Error
	}
	done := make(chan res, 1)
	go func() {
		out, err := run(t, s, "DROP TABLE t")
		done <- res{out, err}
	}()
	for waiting := false; !waiting; {
		for _, l := range eng.db.Locks() {
			if !l.Granted && l.Tag == "relation t" && l.Mode == "AccessExclusiveLock" {
				waiting = true
			}
		}
		select {
		case r := <-done:
			t.Fatalf("DROP TABLE did not wait for the session using t: %q %v", r.out, r.err)
		default:
		}
		runtime.Gosched()
	}
	mustRun(t, s2, "COMMIT", "COMMIT")
	if r := <-done; r.err != nil || r.out != "DROP TABLE" {
		t.Fatalf("DROP TABLE: %q %v", r.out, r.err)
	}
	mustFail(t, s, "SELECT * FROM t", "42P01", "")
	mustRun(t, s, "CREATE TABLE w (k int PRIMARY KEY)", "CREATE TABLE")
	if got := engineTables(t, eng); !reflect.DeepEqual(got, []string{catalog.CatalogTable, "api_table", "w"}) {
		t.Fatalf("engine tables %q", got)
	}
}
