package sqlfe

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// planScans plans sql and returns its table scans by alias, and its joins.
func planScans(t *testing.T, s *Session, sql string) (map[string]*tableScan, []*nestedLoop) {
	t.Helper()
	sts, err := Parse(sql)
	require.NoError(t, err)
	p, err := s.planFor(sts[0])
	require.NoError(t, err)
	scans := map[string]*tableScan{}
	var joins []*nestedLoop
	var walk func(n relNode)
	walk = func(n relNode) {
		switch n := n.(type) {
		case *tableScan:
			scans[n.alias] = n
		case *pinScan:
			walk(n.ts)
		case *nestedLoop:
			joins = append(joins, n)
			walk(n.left)
			walk(n.right)
		case *projectNode:
			walk(n.in)
		case *aggNode:
			walk(n.in)
		case *filterNode:
			walk(n.in)
		case *sortNode:
			walk(n.in)
		case *limitNode:
			walk(n.in)
		case *truncNode:
			walk(n.in)
		case *lockRowsNode:
			walk(n.in)
		default:
			t.Fatalf("planScans: a %T in the plan of %s", n, sql)
		}
	}
	require.NotNil(t, p.root, sql)
	walk(p.root)
	return scans, joins
}

// TestColumnPruning: the general path's table scans decode the columns
// their query names and no other, and a join keeps only those of its inner
// rows; a locking query's scans decode whole rows (LockRows compares
// them). testdata/sql/join_columns.test checks the answers against
// PostgreSQL's.
func TestColumnPruning(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE ja (id int PRIMARY KEY, v int, pad text)", "CREATE TABLE")
	mustRun(t, s, "CREATE TABLE jb (id int PRIMARY KEY, a_id int, w int)", "CREATE TABLE")
	read := func(ts *tableScan) string {
		if ts.use == nil {
			return "all"
		}
		return fmt.Sprint(ts.use.read)
	}
	for _, c := range []struct {
		sql, ja, jb, right string
	}{
		{"SELECT count(*), sum(ja.v + jb.w) FROM ja JOIN jb ON ja.id = jb.a_id", "[true true false]", "[false true true]", "[1 2]"},
		{"SELECT ja.id, ja.v, jb.w FROM ja JOIN jb ON ja.id = jb.a_id", "[true true false]", "[false true true]", "[1 2]"},
		{"SELECT pad FROM ja JOIN jb ON ja.id = a_id WHERE w > 3", "[true false true]", "[false true true]", "[1 2]"},
		{"SELECT count(*) FROM ja, jb WHERE ja.id = jb.a_id ORDER BY 1", "[true false false]", "[false true false]", "[1]"},
		{"SELECT jb.* FROM ja JOIN jb ON ja.id = jb.a_id", "[true false false]", "[true true true]", "[]"},
		{"SELECT * FROM ja JOIN jb ON ja.id = jb.a_id", "[true true true]", "[true true true]", "[]"},
		{"SELECT ja.id FROM ja JOIN jb ON ja.id = jb.a_id WHERE EXISTS (SELECT 1 FROM ja x WHERE x.v = jb.w)", "[true false false]", "[false true true]", "[1 2]"},
		{"SELECT ja.v FROM ja JOIN jb ON ja.id = jb.a_id FOR UPDATE", "all", "all", "[]"},
	} {
		scans, joins := planScans(t, s, c.sql)
		require.Equal(t, c.ja, read(scans["ja"]), "ja in %s", c.sql)
		require.Equal(t, c.jb, read(scans["jb"]), "jb in %s", c.sql)
		require.Len(t, joins, 1, c.sql)
		require.Equal(t, c.right, fmt.Sprint(joins[0].rightCols()), "the join's inner columns in %s", c.sql)
	}
}
