package sqlfe

import (
	"context"
	"testing"
	"time"
)

// FuzzSQL runs arbitrary SQL on a session with a table: every outcome is a
// result or an *Error with a SQLSTATE; never a panic.
func FuzzSQL(f *testing.F) {
	for _, s := range []string{
		"SELECT 1", "SELECT k, v FROM t WHERE k BETWEEN 1 AND 3 ORDER BY v DESC LIMIT 2",
		"SELECT * FROM t WHERE k IN (1, 2, NULL) FOR UPDATE SKIP LOCKED",
		"UPDATE t SET v = v * 2 + k WHERE s = 'x' OR b RETURNING *", "UPDATE t SET k = k + 10 WHERE k = 1",
		"DELETE FROM t WHERE k > 2 RETURNING k", "INSERT INTO t VALUES (9, 9, 'z', NULL)",
		"BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT * FROM t; COMMIT", "SET lock_timeout = '1s'; SHOW lock_timeout",
		"SELECT * FROM pg_locks", "SELECT * FROM pgrowlocks('t')", "SELECT 2147483647 + 1", "SELECT -9223372036854775807 - 2",
		"CREATE TABLE u (a text PRIMARY KEY, b bigint NOT NULL); DROP TABLE u", "SELECT $1", "SELECT 'a' || 1 || true",
		"SELECT k FROM t WHERE k > 'x'", "SELECT * FROM t ORDER BY 5", "SELECT * FROM t LIMIT -1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		_, s := newTestSession(t)
		if _, err := run(t, s, "CREATE TABLE t (k int PRIMARY KEY, v bigint, s text, b boolean); INSERT INTO t VALUES (1, 1, 'x', true), (2, 4, NULL, false), (3, 9, 'y', NULL)"); err != nil {
			t.Fatal(err)
		}
		sts, err := Parse(sql)
		if err != nil {
			if e := ToError(err); len(e.Code) != 5 {
				t.Fatalf("error without SQLSTATE: %v", err)
			}
			return
		}
		for _, st := range sts {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, err := s.Execute(ctx, st, nil)
			cancel()
			if err != nil {
				e := ToError(err)
				if len(e.Code) != 5 || e.Code == CodeInternal {
					t.Fatalf("%q: internal or code-less error: %v", st.SQL, err)
				}
				break
			}
		}
		s.EndGroup()
	})
}
