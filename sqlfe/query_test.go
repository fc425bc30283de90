package sqlfe

import "testing"

// The general query path's plans, through EXPLAIN: which join each query
// gets and where WHERE's conjuncts went. (Results are tested against
// PostgreSQL's in testdata/sql; plans are this layer's own.)
func TestExplainPlans(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE a (id int PRIMARY KEY, g int)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE b (id int PRIMARY KEY, a_id int)", "CREATE TABLE")
	for _, c := range []struct{ sql, want string }{
		{"EXPLAIN SELECT * FROM a JOIN b ON a.id = b.a_id",
			"Hash Inner Join\n  ->  Seq Scan on a\n  ->  Seq Scan on b\nEXPLAIN"},
		// a key condition of one side goes into its scan; the comma join's
		// equality becomes the join's hash key
		{"EXPLAIN SELECT * FROM a, b WHERE a.id = b.a_id AND a.id = 1",
			"Hash Inner Join\n  ->  Index Scan using a_pkey on a\n  ->  Seq Scan on b\nEXPLAIN"},
		// no equality of the two sides: a nested loop
		{"EXPLAIN SELECT * FROM a JOIN b ON a.id < b.a_id",
			"Nested Loop Inner Join\n  ->  Seq Scan on a\n  ->  Seq Scan on b\nEXPLAIN"},
		// a condition on the NULL-extended side of a LEFT JOIN stays above it
		{"EXPLAIN SELECT * FROM a LEFT JOIN b ON a.id = b.a_id WHERE b.id = 3",
			"Filter\n  ->  Hash Left Join\n        ->  Seq Scan on a\n        ->  Seq Scan on b\nEXPLAIN"},
		{"EXPLAIN SELECT g, count(*) FROM a WHERE id > 2 GROUP BY g ORDER BY 2 LIMIT 3",
			"Limit\n  ->  Sort\n        ->  HashAggregate\n              ->  Index Scan using a_pkey on a\nEXPLAIN"},
		{"EXPLAIN SELECT id FROM a WHERE id = 1 FOR UPDATE",
			"LockRows\n  ->  Index Scan using a_pkey on a\nEXPLAIN"},
		{"EXPLAIN SELECT id FROM a UNION SELECT a_id FROM b",
			"SetOp UNION\n  ->  Seq Scan on a\n  ->  Seq Scan on b\nEXPLAIN"},
	} {
		mustRun(t, s, c.sql, c.want)
	}
	mustFail(t, s, "EXPLAIN DELETE FROM a", "0A000", "EXPLAIN is supported only for SELECT")
	mustFail(t, s, "SELECT * FROM a LEFT JOIN b ON true FOR UPDATE", "0A000", "FOR UPDATE cannot be applied to the nullable side of an outer join")
}
