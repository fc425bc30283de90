package pgwire

import (
	"context"
	"testing"
)

// TRUNCATE takes ACCESS EXCLUSIVE, as DROP TABLE: it waits for a
// transaction that read the table, and, until it commits, readers wait for
// it; PostgreSQL's 0A000 for a referenced table names the referencing one.
func TestTruncateLocks(t *testing.T) {
	ts := startServer(t, nil)
	c1, c2 := ts.connect(t), ts.connect(t)
	ctx := context.Background()
	exec(t, c1, "CREATE TABLE t (k int PRIMARY KEY)")
	exec(t, c1, "INSERT INTO t VALUES (1), (2)")
	exec(t, c1, "BEGIN")
	if n := count(t, c1, "t"); n != 2 {
		t.Fatalf("%d", n)
	}
	errc := ts.execBlocked(t, c2, "TRUNCATE t")
	exec(t, c1, "COMMIT")
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	exec(t, c2, "INSERT INTO t VALUES (3)")
	exec(t, c2, "BEGIN")
	exec(t, c2, "TRUNCATE t")
	errc = ts.execBlocked(t, c1, "SELECT * FROM t")
	exec(t, c2, "ROLLBACK")
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := count(t, c1, "t"); n != 1 {
		t.Fatalf("%d rows after the rolled-back TRUNCATE", n)
	}
	exec(t, c1, "CREATE TABLE c (k int PRIMARY KEY, tk int REFERENCES t)")
	_, err := c1.Exec(ctx, "TRUNCATE t")
	pe := pgErr(t, err, "0A000")
	if pe.Message != "cannot truncate a table referenced in a foreign key constraint" || pe.Detail != `Table "c" references "t".` ||
		pe.Hint != `Truncate table "c" at the same time, or use TRUNCATE ... CASCADE.` {
		t.Fatalf("%q %q %q", pe.Message, pe.Detail, pe.Hint)
	}
}
