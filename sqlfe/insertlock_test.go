package sqlfe

import "testing"

// INSERT ... SELECT ... FOR <strength> locks the rows the SELECT read, as
// PostgreSQL's does (the corpus, testdata/sql/insert_select_lock.test,
// checks the rows inserted against PostgreSQL 15; the locks need a second
// session).
func TestInsertSelectLocking(t *testing.T) {
	eng, s := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	defer s2.Close()
	mustRun(t, s, "CREATE TABLE src (a int PRIMARY KEY, b text)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE dst (a int PRIMARY KEY, b text)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO src VALUES (1, 'x'), (2, 'y'), (3, 'z')", "INSERT 0 3")

	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "INSERT INTO dst SELECT a, b FROM src WHERE a >= 2 FOR UPDATE", "INSERT 0 2")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('src') ORDER BY 1", "2|{\"For Update\"}\n3|{\"For Update\"}\nSELECT 2")
	mustFail(t, s2, "SELECT a FROM src WHERE a = 2 FOR SHARE NOWAIT", "55P03", "")
	mustRun(t, s2, "SELECT a FROM src WHERE a = 1 FOR SHARE NOWAIT", "1\nSELECT 1")
	mustRun(t, s, "COMMIT", "COMMIT")

	// over a join, FOR SHARE OF one table locks only its rows; INSERT
	// into the table read locks the old rows, not the new
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "INSERT INTO src SELECT src.a + 10, dst.b FROM src JOIN dst ON dst.a = src.a FOR SHARE OF dst", "INSERT 0 2")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('dst') ORDER BY 1", "2|{\"For Share\"}\n3|{\"For Share\"}\nSELECT 2")
	mustRun(t, s2, "SELECT count(*) FROM pgrowlocks('src')", "0\nSELECT 1")
	mustRun(t, s, "INSERT INTO src SELECT a + 100, b FROM src FOR UPDATE", "INSERT 0 5")
	mustFail(t, s2, "SELECT a FROM src WHERE a = 1 FOR KEY SHARE NOWAIT", "55P03", "")
	mustRun(t, s, "SELECT count(*) FROM src", "10\nSELECT 1")
	mustRun(t, s, "COMMIT", "COMMIT")
}
