package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// A recursive query that never ends (PostgreSQL's does not either) is
// stopped by statement_timeout, as any statement is, and the session goes
// on.
func TestRecursiveStopsAtStatementTimeout(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "SET statement_timeout = '100ms'", "SET")
	mustFail(t, s, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
		pgerror.CodeQueryCanceled, "canceling statement due to statement timeout")
	mustRun(t, s, "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 3) SELECT sum(n) FROM t", "6\nSELECT 1")
}
