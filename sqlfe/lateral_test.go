package sqlfe

import "testing"

// LATERAL's errors are PostgreSQL's words (the corpus, testdata/sql/
// lateral.test, checks their SQLSTATEs against PostgreSQL 15), and a
// locking clause inside a lateral subquery locks the rows it returned for
// each left row, and only those.
func TestLateral(t *testing.T) {
	eng, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (a int PRIMARY KEY, n int)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE u (id int PRIMARY KEY, t_a int, score int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO t VALUES (1, 2), (2, 0), (3, 1)", "INSERT 0 3")
	mustRun(t, s, "INSERT INTO u VALUES (1, 1, 5), (2, 1, 7), (3, 3, 9), (4, 3, 1)", "INSERT 0 4")

	mustFail(t, s, "SELECT * FROM t, (SELECT * FROM u WHERE u.t_a = t.a) s", "42P01", `invalid reference to FROM-clause entry for table "t"`)
	mustFail(t, s, "SELECT * FROM LATERAL (SELECT * FROM u WHERE u.t_a = t.a) s, t", "42P01", `missing FROM-clause entry for table "t"`)
	mustFail(t, s, "SELECT * FROM t RIGHT JOIN LATERAL (SELECT * FROM u WHERE u.t_a = t.a) s ON true", "42P10", `invalid reference to FROM-clause entry for table "t"`)
	mustFail(t, s, "SELECT * FROM t FULL JOIN generate_series(1, t.n) g ON true", "42P10", `invalid reference to FROM-clause entry for table "t"`)
	// PostgreSQL lets a LATERAL item in a JOIN read the FROM list's items
	// before the JOIN; tupled's join of the JOIN does not have their row
	mustFail(t, s, "SELECT * FROM t, u JOIN LATERAL (SELECT t.a + u.id AS z) s ON true", "0A000", `a LATERAL reference to "t", outside the JOIN the LATERAL item is in, is not supported`)

	// an aggregate of only the left item's columns is the outer query's:
	// not allowed in FROM (PostgreSQL); in a scalar subquery, where
	// PostgreSQL evaluates it in the outer query, tupled refuses it
	mustFail(t, s, "SELECT * FROM t, LATERAL (SELECT sum(t.a) FROM u) s", "42803", "aggregate functions are not allowed in FROM clause of their own query level")
	mustFail(t, s, "SELECT (SELECT sum(t.a) FROM u LIMIT 1) FROM t", "0A000", "an aggregate over only the columns of an enclosing query is not supported")
	mustRun(t, s, "SELECT (SELECT sum(t.a + u.id) FROM u) FROM t ORDER BY 1", "14\n18\n22\nSELECT 3")

	// the plan: a nested loop that runs the lateral item per left row
	mustRun(t, s, "EXPLAIN SELECT * FROM t, LATERAL (SELECT id FROM u WHERE u.t_a = t.a) s",
		"Nested Loop Inner Join\n  ->  Seq Scan on t\n  ->  Subquery Scan on s\n        ->  Seq Scan on u\nEXPLAIN")
	// a left column read only by the lateral subquery is read by the scan
	// (column pruning keeps it)
	mustRun(t, s, "SELECT s.id FROM t, LATERAL (SELECT id FROM u WHERE u.t_a = t.a AND u.score > t.n) s ORDER BY 1", "1\n2\n3\nSELECT 3")

	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "SELECT t.a, s.id FROM t, LATERAL (SELECT id FROM u WHERE u.t_a = t.a ORDER BY score LIMIT 1 FOR UPDATE) s ORDER BY 1",
		"1|1\n3|4\nSELECT 2")
	s2 := eng.NewSession(2, "test", nil)
	defer s2.Close()
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('u') ORDER BY 1", "1|{\"For Update\"}\n4|{\"For Update\"}\nSELECT 2")
	mustRun(t, s, "COMMIT", "COMMIT")

	// FOR UPDATE OF the left table locks its rows that joined; FOR UPDATE
	// of a subquery in FROM is refused, lateral or not
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "SELECT t.a, s.id FROM t, LATERAL (SELECT id FROM u WHERE u.t_a = t.a AND u.score > 6) s ORDER BY t.a FOR UPDATE OF t",
		"1|2\n3|3\nSELECT 2")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('t') ORDER BY 1", "1|{\"For Update\"}\n3|{\"For Update\"}\nSELECT 2")
	mustRun(t, s, "COMMIT", "COMMIT")

	// a locking clause over a subquery in FROM that PostgreSQL does not
	// pull up into the join (here the top N per group) is pushed into it,
	// as PostgreSQL's is: FOR UPDATE locks the left table's rows and those
	// the subquery returns, FOR SHARE OF s only the subquery's
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "SELECT t.a, s.id FROM t, LATERAL (SELECT id FROM u WHERE u.t_a = t.a ORDER BY score DESC LIMIT 1) s ORDER BY t.a FOR UPDATE",
		"1|2\n3|3\nSELECT 2")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('t') ORDER BY 1", "1|{\"For Update\"}\n3|{\"For Update\"}\nSELECT 2")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('u') ORDER BY 1", "2|{\"For Update\"}\n3|{\"For Update\"}\nSELECT 2")
	mustRun(t, s, "COMMIT", "COMMIT")
	mustRun(t, s, "BEGIN", "BEGIN")
	mustRun(t, s, "SELECT t.a, s.id FROM t, LATERAL (SELECT id FROM u WHERE u.t_a = t.a ORDER BY id LIMIT 1) s ORDER BY t.a FOR SHARE OF s",
		"1|1\n3|3\nSELECT 2")
	mustRun(t, s2, "SELECT count(*) FROM pgrowlocks('t')", "0\nSELECT 1")
	mustRun(t, s2, "SELECT locked_row, modes FROM pgrowlocks('u') ORDER BY 1", "1|{\"For Share\"}\n3|{\"For Share\"}\nSELECT 2")
	mustRun(t, s, "COMMIT", "COMMIT")
	// a simple subquery PostgreSQL flattens, locking only its rows that
	// join: tupled refuses
	mustFail(t, s, "SELECT * FROM t, LATERAL (SELECT * FROM u WHERE u.t_a = t.a) s FOR UPDATE", "0A000", "FOR UPDATE on a view, subquery, function or virtual relation in FROM is not supported")
	mustFail(t, s, "SELECT * FROM t JOIN (SELECT id, t_a FROM u) s ON s.t_a = t.a FOR SHARE OF s", "0A000", "FOR SHARE on a view, subquery, function or virtual relation in FROM is not supported")
	mustFail(t, s, "SELECT * FROM t, (SELECT count(*) FROM u) s FOR UPDATE", "0A000", "FOR UPDATE is not allowed with aggregate functions")
}
