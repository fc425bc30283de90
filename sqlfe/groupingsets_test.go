package sqlfe

import "testing"

// Grouping sets' errors in PostgreSQL's words (testdata/sql/
// grouping_sets.test checks the answers and SQLSTATEs against PostgreSQL
// 15), and the aggregation's plan line.
func TestGroupingSets(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE g (a int PRIMARY KEY, b text, c int)", "CREATE TABLE")
	mustRun(t, s, "INSERT INTO g VALUES (1, 'x', 10), (2, 'y', 20), (3, 'x', 30)", "INSERT 0 3")
	mustRun(t, s, "SELECT b, grouping(b), sum(c) FROM g GROUP BY ROLLUP (b) ORDER BY 2, 1", "x|0|40\ny|0|20\nNULL|1|60\nSELECT 3")
	mustRun(t, s, "EXPLAIN SELECT b, sum(c) FROM g GROUP BY CUBE (b)", "MixedAggregate\n  ->  Seq Scan on g\nEXPLAIN")
	mustFail(t, s, "SELECT grouping(c) FROM g GROUP BY ROLLUP (b)", "42803", "arguments to GROUPING must be grouping expressions of the associated query level")
	mustFail(t, s, "SELECT b FROM g WHERE grouping(b) = 0 GROUP BY ROLLUP (b)", "42803", "grouping operations are not allowed in WHERE")
	mustFail(t, s, "SELECT b, sum(c) FILTER (WHERE grouping(b) = 0) FROM g GROUP BY ROLLUP (b)", "42803", "grouping operations are not allowed in FILTER")
	mustFail(t, s, "SELECT b, sum(grouping(b)) FROM g GROUP BY ROLLUP (b)", "42803", "aggregate function calls cannot be nested")
	mustFail(t, s, "SELECT sum(count(*)) FROM g", "42803", "aggregate function calls cannot be nested")
	mustFail(t, s, "SELECT sum(c) FILTER (WHERE count(*) > 0) FROM g", "42803", "aggregate functions are not allowed in FILTER")
	mustFail(t, s, "SELECT a, b FROM g GROUP BY ROLLUP (a)", "42803", `column "g.b" must appear in the GROUP BY clause or be used in an aggregate function`)
	mustFail(t, s, "SELECT 1 FROM g GROUP BY CUBE (a, a, a, a, a, a, a, a, a, a, a, a, a)", "54011", "CUBE is limited to 12 elements")
	mustFail(t, s, "SELECT 1 FROM g GROUP BY CUBE (a, b, c, a, b, c, a, b, c, a, b, c), CUBE (a)", "54001", "too many grouping sets present (maximum 4096)")
}
