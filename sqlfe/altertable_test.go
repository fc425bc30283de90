package sqlfe

import (
	"context"
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// A rewritten table (ALTER TABLE … ADD PRIMARY KEY, ADD COLUMN) is what
// the database holds after a reopen: the catalog names the new engine
// table, the old one is gone, the serial sequence goes on where it was.
// (What each form answers is in testdata/sql/alter_table.test, checked
// against PostgreSQL.)
func TestAlterTableRewriteSurvivesReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE acc (aid int NOT NULL, bal int) WITH (fillfactor=100); INSERT INTO acc VALUES (2, 20), (1, 10)", "CREATE TABLE\nINSERT 0 2")
	mustRun(t, s, "ALTER TABLE acc ADD PRIMARY KEY (aid)", "ALTER TABLE")
	mustRun(t, s, "CREATE TABLE w (id serial PRIMARY KEY, x int); INSERT INTO w (x) VALUES (1), (2)", "CREATE TABLE\nINSERT 0 2")
	mustRun(t, s, "ALTER TABLE w ADD COLUMN y text DEFAULT 'd'", "ALTER TABLE")
	tables, err := db.ListTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tb := range tables {
		names[tb] = true
	}
	if names["acc"] || !names["acc#2"] || names["w"] || !names["w#2"] {
		t.Fatalf("engine tables after the rewrites: %v (want acc#2 and w#2 only)", names)
	}
	db, s = reopenDisk(t, dir, db, s)
	mustRun(t, s, "SELECT * FROM acc WHERE aid = 1", "1|10\nSELECT 1")
	mustFail(t, s, "INSERT INTO acc VALUES (2, 0)", pgerror.CodeUniqueViolation, `duplicate key value violates unique constraint "acc_pkey"`)
	mustRun(t, s, "INSERT INTO w (x) VALUES (3) RETURNING id, y", "3|d\nINSERT 0 1")
}
