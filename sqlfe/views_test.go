package sqlfe

import (
	"context"
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// TestViewsSurviveReopen: views are catalog entries, persisted with the
// tables; a view created and one dropped in a rolled-back transaction
// leave no trace, and the committed ones, their columns and their
// dependencies are back after a reopen. No engine table is made for a
// view.
func TestViewsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	db, s := newDiskSession(t, dir)
	mustRun(t, s, "CREATE TABLE t (a int PRIMARY KEY, b text); INSERT INTO t VALUES (1, 'x'), (2, 'y')", "CREATE TABLE\nINSERT 0 2")
	mustRun(t, s, "CREATE VIEW v (aa, bb) AS SELECT a, b FROM t WHERE a > 1", "CREATE VIEW")
	mustRun(t, s, "CREATE VIEW w AS SELECT count(*) AS n FROM v", "CREATE VIEW")
	mustRun(t, s, "BEGIN; CREATE VIEW gone AS SELECT 1 AS one; DROP VIEW w; ROLLBACK", "BEGIN\nCREATE VIEW\nDROP VIEW\nROLLBACK")
	tables, err := db.ListTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tables {
		if name == "v" || name == "w" || name == "gone" {
			t.Fatalf("engine table %q made for a view", name)
		}
	}
	db, s = reopenDisk(t, dir, db, s)
	mustRun(t, s, "SELECT aa, bb FROM v", "2|y\nSELECT 1")
	mustRun(t, s, "SELECT n FROM w", "1\nSELECT 1")
	mustRun(t, s, "SELECT relname, relkind FROM pg_class WHERE relname IN ('t', 'v', 'w', 'gone') ORDER BY 1", "t|r\nv|v\nw|v\nSELECT 3")
	mustFail(t, s, "DROP TABLE t", "2BP01", "cannot drop table t because other objects depend on it")
	mustFail(t, s, "INSERT INTO v VALUES (3, 'z')", pgerror.CodeFeatureNotSupp, "")
	mustFail(t, s, "ALTER TABLE t RENAME COLUMN b TO c", pgerror.CodeFeatureNotSupp, "")
	mustRun(t, s, "DROP TABLE t CASCADE", "DROP TABLE")
	mustFail(t, s, "SELECT * FROM w", pgerror.CodeUndefinedTable, "")
}

// TestViewCycle: CREATE OR REPLACE can make two views read each other;
// planning one is then 42P17, as PostgreSQL's rewriter reports it,
// never an endless expansion.
func TestViewCycle(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE VIEW a AS SELECT 1 AS x", "CREATE VIEW")
	mustRun(t, s, "CREATE VIEW b AS SELECT x FROM a", "CREATE VIEW")
	mustFail(t, s, "CREATE OR REPLACE VIEW a AS SELECT x FROM a", "42P17", "")
	mustRun(t, s, "CREATE OR REPLACE VIEW a AS SELECT x FROM b", "CREATE VIEW")
	mustFail(t, s, "SELECT * FROM b", "42P17", "")
}
