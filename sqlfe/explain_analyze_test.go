package sqlfe

import (
	"regexp"
	"strings"
	"testing"
)

// EXPLAIN ANALYZE runs the SELECT and draws its plan with each node's
// actual rows and loops (times vary, so their shape is what is checked),
// then the summary; the options change what is drawn as PostgreSQL's do.
func TestExplainAnalyze(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE ea (id int PRIMARY KEY, g int)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE eb (id int PRIMARY KEY, ea_id int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO ea VALUES (1, 1), (2, 1), (3, 2), (4, 3)", "INSERT 0 4")
	mustRun(t, s, "INSERT INTO eb VALUES (10, 1), (11, 1), (12, 3)", "INSERT 0 3")

	got, err := run(t, s, "EXPLAIN ANALYZE SELECT * FROM ea")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^Seq Scan on ea \(actual time=\d+\.\d{3}\.\.\d+\.\d{3} rows=4 loops=1\)
Planning Time: \d+\.\d{3} ms
Execution Time: \d+\.\d{3} ms
EXPLAIN$`)
	if !want.MatchString(got) {
		t.Fatalf("EXPLAIN ANALYZE:\n%s", got)
	}

	// without timing, the counts alone: a lateral subquery runs once per
	// left row (loops), its rows the average per loop; a hash join's sides
	// run once
	for _, c := range []struct{ sql, want string }{
		{"EXPLAIN (ANALYZE, TIMING off, SUMMARY off) SELECT g, count(*) FROM ea WHERE id > 1 GROUP BY g ORDER BY 2 LIMIT 1",
			"Limit (actual rows=1 loops=1)\n  ->  Sort (actual rows=1 loops=1)\n        ->  HashAggregate (actual rows=3 loops=1)\n              ->  Index Scan using ea_pkey on ea (actual rows=3 loops=1)\nEXPLAIN"},
		{"EXPLAIN (ANALYZE, TIMING off, SUMMARY off) SELECT * FROM ea JOIN eb ON ea.id = eb.ea_id",
			"Hash Inner Join (actual rows=3 loops=1)\n  ->  Seq Scan on ea (actual rows=4 loops=1)\n  ->  Seq Scan on eb (actual rows=3 loops=1)\nEXPLAIN"},
		{"EXPLAIN (ANALYZE, TIMING off, SUMMARY off, COSTS off, BUFFERS off) SELECT * FROM ea, LATERAL (SELECT id FROM eb WHERE eb.ea_id = ea.id) s",
			"Nested Loop Inner Join (actual rows=3 loops=1)\n  ->  Seq Scan on ea (actual rows=4 loops=1)\n  ->  Subquery Scan on s (actual rows=1 loops=4)\n        ->  Seq Scan on eb (actual rows=1 loops=4)\nEXPLAIN"},
		{"EXPLAIN (ANALYZE, TIMING off, SUMMARY off) SELECT * FROM ea LEFT JOIN LATERAL (SELECT id FROM eb WHERE eb.ea_id = ea.id) s ON true WHERE ea.id > 9",
			"Nested Loop Left Join (actual rows=0 loops=1)\n  ->  Index Scan using ea_pkey on ea (actual rows=0 loops=1)\n  ->  Subquery Scan on s (never executed)\n        ->  Seq Scan on eb (never executed)\nEXPLAIN"},
		{"EXPLAIN (ANALYZE 1, TIMING 0, SUMMARY false) SELECT 1", "Result (actual rows=1 loops=1)\nEXPLAIN"},
		{"EXPLAIN (ANALYZE off) SELECT * FROM ea", "Seq Scan on ea\nEXPLAIN"},
	} {
		mustRun(t, s, c.sql, c.want)
	}
	// SUMMARY without ANALYZE: the planning time alone
	if got, _ := run(t, s, "EXPLAIN (SUMMARY) SELECT 1"); !regexp.MustCompile(`^Result\nPlanning Time: \d+\.\d{3} ms\nEXPLAIN$`).MatchString(got) {
		t.Fatalf("EXPLAIN (SUMMARY):\n%s", got)
	}
	// the statement runs: its row locks are taken
	mustRun(t, s, "BEGIN", "BEGIN")
	if got, _ := run(t, s, "EXPLAIN (ANALYZE, TIMING off, SUMMARY off) SELECT * FROM ea WHERE id = 2 FOR UPDATE"); !strings.Contains(got, "LockRows (actual rows=1 loops=1)") {
		t.Fatalf("EXPLAIN ANALYZE ... FOR UPDATE:\n%s", got)
	}
	mustRun(t, s, "SELECT locked_row, modes FROM pgrowlocks('ea')", "2|{\"For Update\"}\nSELECT 1")
	mustRun(t, s, "COMMIT", "COMMIT")

	mustFail(t, s, "EXPLAIN (nosuch) SELECT 1", "42601", `unrecognized EXPLAIN option "nosuch"`)
	mustFail(t, s, "EXPLAIN (ANALYZE 'yes') SELECT 1", "42601", "analyze requires a Boolean value")
	mustFail(t, s, "EXPLAIN (TIMING) SELECT 1", "22023", "EXPLAIN option TIMING requires ANALYZE")
	mustFail(t, s, "EXPLAIN (WAL) SELECT 1", "22023", "EXPLAIN option WAL requires ANALYZE")
	mustFail(t, s, "EXPLAIN (ANALYZE, BUFFERS) SELECT 1", "0A000", "EXPLAIN option BUFFERS is not supported")
	mustFail(t, s, "EXPLAIN (FORMAT json) SELECT 1", "0A000", "EXPLAIN (FORMAT JSON) is not supported")
	mustFail(t, s, "EXPLAIN ANALYZE DELETE FROM ea", "0A000", "EXPLAIN is supported only for SELECT")
}
