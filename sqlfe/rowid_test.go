package sqlfe

import (
	"context"
	"testing"
	"time"
)

// TestTableWithoutPrimaryKey: a table without a PRIMARY KEY works as in
// PostgreSQL 15 (outputs checked there): its hidden rowid shows nowhere,
// rows come back in insertion order, NOT NULL's detail lists only the
// visible columns, and a zero-column table takes rows.
func TestTableWithoutPrimaryKey(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE nk (a int, b text NOT NULL)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO nk VALUES (2, 'y'), (1, 'x')", "INSERT 0 2")
	mustRun(t, s, "INSERT INTO nk (b) VALUES ('z') RETURNING *", "NULL|z\nINSERT 0 1")
	mustFail(t, s, "INSERT INTO nk VALUES (3, 'w', 4)", "42601", "INSERT has more expressions than target columns")
	_, err := run(t, s, "INSERT INTO nk VALUES (3)")
	if err == nil || err.Code != "23502" || err.Detail != "Failing row contains (3, null)." {
		t.Fatalf("NOT NULL violation: %+v", err)
	}
	mustRun(t, s, "SELECT * FROM nk", "2|y\n1|x\nNULL|z\nSELECT 3")
	mustRun(t, s, "UPDATE nk SET a = 10 WHERE b = 'x' RETURNING *", "10|x\nUPDATE 1")
	mustRun(t, s, "DELETE FROM nk WHERE a IS NULL RETURNING *", "NULL|z\nDELETE 1")
	mustRun(t, s, "SELECT b FROM nk FOR UPDATE", "y\nx\nSELECT 2")
	mustFail(t, s, `SELECT "" FROM nk`, "42601", "zero-length delimited identifier at or near \"\"\"\"")
	mustRun(t, s, "CREATE TABLE z ()", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO z DEFAULT VALUES", "INSERT 0 1")
	mustRun(t, s, "SELECT * FROM z", "\nSELECT 1")
	mustRun(t, s, "DROP TABLE nk, z", "DROP TABLE")
}

// TestRowidSeededFromTable: an Executor started over a database that already
// holds rows of a table without a PRIMARY KEY (a restart) numbers new rows
// after them, so none collides and insertion order holds.
func TestRowidSeededFromTable(t *testing.T) {
	eng, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE nk (a int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO nk VALUES (1), (2), (3)", "INSERT 0 3")
	eng2, err := NewExecutor(context.Background(), eng.DB(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s2 := eng2.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s2, "INSERT INTO nk VALUES (4), (5)", "INSERT 0 2")
	mustRun(t, s2, "SELECT a FROM nk", "1\n2\n3\n4\n5\nSELECT 5")
}

// TRUNCATE (or LOCK TABLE) of a table without a primary key, then an
// INSERT in the same transaction: the rowid counter is read before the
// table is locked, so the INSERT does not wait for its own transaction's
// lock (pgbench -i hung so). The table is one the Executor has not
// inserted into since it started.
func TestRowidAfterTruncateInOneTransaction(t *testing.T) {
	dir := t.TempDir()
	for round := 0; round < 2; round++ {
		db, s := newDiskSession(t, dir)
		if round == 0 {
			mustRun(t, s, "CREATE TABLE h (a int); INSERT INTO h VALUES (1), (2)", "CREATE TABLE\nINSERT 0 2")
		} else {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			sts, err := Parse("BEGIN; TRUNCATE h; INSERT INTO h VALUES (3); LOCK TABLE h IN ACCESS EXCLUSIVE MODE; INSERT INTO h VALUES (4); COMMIT")
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range sts {
				if _, err := s.Execute(ctx, st, nil); err != nil {
					t.Fatalf("%s: %v", st.SQL, err)
				}
			}
			cancel()
			mustRun(t, s, "SELECT a FROM h ORDER BY a", "3\n4\nSELECT 2")
		}
		s.Close()
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
