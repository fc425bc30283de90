package sqlfe

import "testing"

// TestSQLPrepare: PREPARE, EXECUTE and DEALLOCATE as SQL statements, with
// PostgreSQL 15's results and errors for the same statements.
func TestSQLPrepare(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE pt (id int PRIMARY KEY, v text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO pt VALUES (1, 'a'), (2, 'b')", "INSERT 0 2")
	mustRun(t, s, "PREPARE q AS SELECT id FROM pt WHERE id > 0 FOR UPDATE NOWAIT", "PREPARE")
	mustRun(t, s, "EXECUTE q", "1\n2\nSELECT 2")
	mustFail(t, s, "PREPARE q AS SELECT 1", "42P05", `prepared statement "q" already exists`)
	mustRun(t, s, "PREPARE r (int, text) AS UPDATE pt SET v = $2 WHERE id = $1 RETURNING *", "PREPARE")
	mustRun(t, s, "EXECUTE r (2, 'zz')", "2|zz\nUPDATE 1")
	mustRun(t, s, "EXECUTE r ('1', 'yy')", "1|yy\nUPDATE 1")
	mustFail(t, s, "EXECUTE r (1)", "42601", `wrong number of parameters for prepared statement "r"`)
	mustFail(t, s, "EXECUTE r (true, 'x')", "42804", "parameter $1 of type boolean cannot be coerced to the expected type integer")
	mustFail(t, s, "EXECUTE nope", "26000", `prepared statement "nope" does not exist`)
	mustRun(t, s, "BEGIN; EXECUTE q; COMMIT", "BEGIN\n1\n2\nSELECT 2\nCOMMIT")
	mustRun(t, s, "DEALLOCATE q", "DEALLOCATE")
	mustFail(t, s, "EXECUTE q", "26000", `prepared statement "q" does not exist`)
	mustRun(t, s, "DEALLOCATE PREPARE r", "DEALLOCATE")
	mustFail(t, s, "DEALLOCATE nope", "26000", `prepared statement "nope" does not exist`)
	mustRun(t, s, "PREPARE s AS SELECT * FROM pt ORDER BY id", "PREPARE")
	mustRun(t, s, "DEALLOCATE ALL", "DEALLOCATE ALL")
	mustFail(t, s, "EXECUTE s", "26000", `prepared statement "s" does not exist`)
	mustFail(t, s, "PREPARE bad AS SELECT nocol FROM pt", "42703", `column "nocol" does not exist`)
	// a prepared statement follows the catalog: re-analysed after DDL
	mustRun(t, s, "PREPARE c AS SELECT * FROM pt ORDER BY id", "PREPARE")
	mustRun(t, s, "DROP TABLE pt", "DROP TABLE")
	mustFail(t, s, "EXECUTE c", "42P01", "")
}
