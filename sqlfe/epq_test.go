package sqlfe

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
)

// The EvalPlanQual schedules of a locking SELECT, an UPDATE and a DELETE,
// each checked on PostgreSQL 15 with isolationtester: table t (k int
// PRIMARY KEY, v int) holds (1,10), (2,10), (3,10); s1 updates row 1 and
// holds it; s2's statement (WHERE v > 5) waits for s1 — observed as s2's
// ungranted entry in DB.Locks() — and s1 commits. Under READ COMMITTED s2
// then rechecks the WHERE clause on row 1's new version: s1's "keep" (v =
// 7) still qualifies and s2 works on the new version, s1's "break" (v = 3)
// does not and row 1 is left out — but stays locked by s2, as pgrowlocks
// shows on PostgreSQL. Under REPEATABLE READ the concurrent update is
// 40001 either way.
func TestEvalPlanQual(t *testing.T) {
	const (
		keep  = "UPDATE t SET v = 7 WHERE k = 1"
		brk   = "UPDATE t SET v = 3 WHERE k = 1"
		begin = "BEGIN"
		rr    = "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1"
	)
	cases := []struct {
		name, begin, s1, s2 string
		want                string // s2's output, or the SQLSTATE it fails with
		locks               string // s2's row locks once its statement is done (READ COMMITTED)
		after               string // the table once s2 committed
	}{
		{"select keep", begin, keep, "SELECT k, v FROM t WHERE v > 5 ORDER BY k FOR UPDATE",
			"1|7\n2|10\n3|10\nSELECT 3", "1:for update 2:for update 3:for update", "1|7\n2|10\n3|10"},
		{"select break", begin, brk, "SELECT k, v FROM t WHERE v > 5 ORDER BY k FOR UPDATE",
			"2|10\n3|10\nSELECT 2", "1:for update 2:for update 3:for update", "1|3\n2|10\n3|10"},
		{"select break limit", begin, brk, "SELECT k, v FROM t WHERE v > 5 ORDER BY k LIMIT 1 FOR UPDATE",
			"2|10\nSELECT 1", "1:for update 2:for update", "1|3\n2|10\n3|10"},
		{"select break sorted", begin, brk, "SELECT k, v FROM t WHERE v > 5 ORDER BY v DESC, k LIMIT 1 FOR UPDATE",
			"2|10\nSELECT 1", "1:for update 2:for update", "1|3\n2|10\n3|10"},
		{"select break reverse", begin, brk, "SELECT k, v FROM t WHERE v > 5 AND k < 3 ORDER BY k DESC FOR UPDATE",
			"2|10\nSELECT 1", "1:for update 2:for update", "1|3\n2|10\n3|10"},
		{"select point keep", begin, keep, "SELECT k, v FROM t WHERE k = 1 AND v > 5 FOR UPDATE",
			"1|7\nSELECT 1", "1:for update", "1|7\n2|10\n3|10"},
		{"select point break", begin, brk, "SELECT k, v FROM t WHERE k = 1 AND v > 5 FOR UPDATE",
			"SELECT 0", "1:for update", "1|3\n2|10\n3|10"},
		{"update keep", begin, keep, "UPDATE t SET v = v + 100 WHERE v > 5 RETURNING k, v",
			"1|107\n2|110\n3|110\nUPDATE 3", "1:for no key update 2:for no key update 3:for no key update", "1|107\n2|110\n3|110"},
		{"update break", begin, brk, "UPDATE t SET v = v + 100 WHERE v > 5 RETURNING k, v",
			"2|110\n3|110\nUPDATE 2", "1:for no key update 2:for no key update 3:for no key update", "1|3\n2|110\n3|110"},
		{"update point break", begin, brk, "UPDATE t SET v = v + 100 WHERE k = 1 AND v > 5",
			"UPDATE 0", "1:for no key update", "1|3\n2|10\n3|10"},
		// PostgreSQL locks row 1 FOR UPDATE here (ExecUpdateLockMode: SET
		// names the key); the API's scan takes one strength for all rows,
		// and FOR NO KEY UPDATE keeps SET k = k from waiting for FOR KEY
		// SHARE lockers, as heap_update does.
		{"update key break", begin, brk, "UPDATE t SET k = k + 10 WHERE v > 5 RETURNING k, v",
			"12|10\n13|10\nUPDATE 2", "1:for no key update 2:for update 3:for update", "1|3\n12|10\n13|10"},
		{"delete keep", begin, keep, "DELETE FROM t WHERE v > 5 RETURNING k, v",
			"1|7\n2|10\n3|10\nDELETE 3", "1:for update 2:for update 3:for update", ""},
		{"delete break", begin, brk, "DELETE FROM t WHERE v > 5 RETURNING k, v",
			"2|10\n3|10\nDELETE 2", "1:for update 2:for update 3:for update", "1|3"},
		{"delete point keep", begin, keep, "DELETE FROM t WHERE k = 1 AND v > 5",
			"DELETE 1", "1:for update", "2|10\n3|10"},
		// UPDATE ... FROM and DELETE ... USING (dmljoin.go): only rows
		// that join are locked, and the join is rechecked on the version
		// locked (outputs and tables as PostgreSQL 15's isolationtester
		// printed them)
		{"update from keep", begin, keep, "UPDATE t SET v = v + s.d FROM (VALUES (1, 100), (2, 100), (3, 100)) AS s(k, d) WHERE s.k = t.k AND t.v > 5 RETURNING t.k, t.v",
			"1|107\n2|110\n3|110\nUPDATE 3", "1:for no key update 2:for no key update 3:for no key update", "1|107\n2|110\n3|110"},
		{"update from break", begin, brk, "UPDATE t SET v = v + s.d FROM (VALUES (1, 100), (2, 100), (3, 100)) AS s(k, d) WHERE s.k = t.k AND t.v > 5 RETURNING t.k, t.v",
			"2|110\n3|110\nUPDATE 2", "1:for no key update 2:for no key update 3:for no key update", "1|3\n2|110\n3|110"},
		{"update from join break", begin, brk, "UPDATE t SET v = v + 1 FROM (VALUES (10)) AS s(w) WHERE t.v = s.w RETURNING t.k, t.v",
			"2|11\n3|11\nUPDATE 2", "1:for no key update 2:for no key update 3:for no key update", "1|3\n2|11\n3|11"},
		{"update from joined only", begin, keep, "UPDATE t SET v = v + s.d FROM (VALUES (1, 100), (2, 100)) AS s(k, d) WHERE s.k = t.k AND t.v > 5 RETURNING t.k, t.v",
			"1|107\n2|110\nUPDATE 2", "1:for no key update 2:for no key update", "1|107\n2|110\n3|10"},
		{"delete using break", begin, brk, "DELETE FROM t USING (VALUES (1), (2)) AS s(k) WHERE s.k = t.k AND t.v > 5 RETURNING t.k",
			"2\nDELETE 1", "1:for update 2:for update", "1|3\n3|10"},
		{"rr update from", rr, keep, "UPDATE t SET v = 0 FROM (VALUES (1)) AS s(k) WHERE s.k = t.k", "40001", "", ""},
		{"rr select", rr, brk, "SELECT k, v FROM t WHERE v > 5 ORDER BY k FOR UPDATE", "40001", "", ""},
		{"rr select point", rr, keep, "SELECT k, v FROM t WHERE k = 1 FOR SHARE", "40001", "", ""},
		{"rr update", rr, keep, "UPDATE t SET v = v + 100 WHERE v > 5", "40001", "", ""},
		{"rr update break", rr, brk, "UPDATE t SET v = v + 100 WHERE v > 5", "40001", "", ""},
		{"rr delete", rr, brk, "DELETE FROM t WHERE v > 5", "40001", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, s1 := newTestSession(t)
			s2 := eng.NewSession(2, "test", nil)
			t.Cleanup(s2.Close)
			mustRun(t, s1, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10), (2, 10), (3, 10)", "CREATE TABLE\nINSERT 0 3")
			run(t, s2, tc.begin)
			mustRun(t, s1, "BEGIN; "+tc.s1, "BEGIN\nUPDATE 1")
			res := startAsync(t, s2, tc.s2)
			waitForLockWait(t, eng, s2)
			mustRun(t, s1, "COMMIT", "COMMIT")
			out, err := res()
			if tc.want == "40001" {
				if err == nil || err.Code != "40001" {
					t.Fatalf("got %q %v, want 40001", out, err)
				}
				mustRun(t, s2, "ROLLBACK", "ROLLBACK")
				return
			}
			if err != nil {
				t.Fatalf("%s: %s %s", tc.s2, err.Code, err.Message)
			}
			if out != tc.want {
				t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", tc.s2, out, tc.want)
			}
			if got := rowLocksOf(t, eng, s2); got != tc.locks {
				t.Fatalf("row locks of s2: got %q, want %q", got, tc.locks)
			}
			mustRun(t, s2, "COMMIT", "COMMIT")
			want := tc.after
			if want != "" {
				want += "\n"
			}
			mustRun(t, s1, "SELECT k, v FROM t ORDER BY k", fmt.Sprintf("%sSELECT %d", want, strings.Count(want, "\n")))
		})
	}
}

// TestEvalPlanQualRollback: when the concurrent updater rolls back, the
// waiting statement goes on with the version it saw.
func TestEvalPlanQualRollback(t *testing.T) {
	eng, s1 := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s1, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10), (2, 10)", "CREATE TABLE\nINSERT 0 2")
	mustRun(t, s1, "BEGIN; UPDATE t SET v = 3 WHERE k = 1", "BEGIN\nUPDATE 1")
	res := startAsync(t, s2, "UPDATE t SET v = v + 1 WHERE v > 5 RETURNING k, v")
	waitForLockWait(t, eng, s2)
	mustRun(t, s1, "ROLLBACK", "ROLLBACK")
	if out, err := res(); err != nil || out != "1|11\n2|11\nUPDATE 2" {
		t.Fatalf("got %q %v", out, err)
	}
}

// TestWhereErrorInLockingScan: an error of the WHERE clause in a locking
// scan (here division by zero on the second row) is the statement's error
// (it rolls back what the statement did), and the session goes on after
// ROLLBACK.
func TestWhereErrorInLockingScan(t *testing.T) {
	_, s := newTestSession(t)
	mustRun(t, s, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 1), (2, 0), (3, 1)", "CREATE TABLE\nINSERT 0 3")
	for _, q := range []string{
		"SELECT k FROM t WHERE 1 / v = 1 FOR UPDATE",
		"SELECT k FROM t WHERE k IN (1, 2, 3) AND 1 / v = 1 FOR UPDATE",
		"UPDATE t SET v = 5 WHERE 1 / v = 1",
		"DELETE FROM t WHERE 1 / v = 1",
	} {
		mustRun(t, s, "BEGIN", "BEGIN")
		mustFail(t, s, q, "22012", "division by zero")
		mustRun(t, s, "ROLLBACK", "ROLLBACK")
	}
	mustRun(t, s, "SELECT k, v FROM t", "1|1\n2|0\n3|1\nSELECT 3")
}

// startAsync runs sql on s in a goroutine; the returned function waits for
// its output.
func startAsync(t *testing.T, s *Session, sql string) func() (string, *pgerror.Error) {
	type result struct {
		out string
		err *pgerror.Error
	}
	ch := make(chan result, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		out, err := run(t, s, sql)
		ch <- result{out, err}
	}()
	// A test that fails early must not close s (its cleanup, registered
	// before this one, runs after it) while the statement still runs on it.
	t.Cleanup(func() {
		select {
		case <-finished:
		case <-time.After(30 * time.Second):
		}
	})
	return func() (string, *pgerror.Error) {
		select {
		case r := <-ch:
			return r.out, r.err
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not finish", sql)
			return "", nil
		}
	}
}

// waitForLockWait waits until s's transaction shows as waiting in
// DB.Locks() (an ungranted entry), failing the test after a bound.
func waitForLockWait(t *testing.T, eng *Executor, s *Session) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if id := s.txID.Load(); id != 0 {
			for _, l := range eng.db.Locks() {
				if l.TxID == id && !l.Granted {
					return
				}
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("the session never waited for a lock")
}

// rowLocksOf lists the rows of t that s's transaction locks, as
// "k:Mode ...", in key order (DB.RowLocks, the pgrowlocks of the API).
func rowLocksOf(t *testing.T, eng *Executor, s *Session) string {
	t.Helper()
	return rowLocksIn(t, eng, s, "t")
}

// rowLocksIn is rowLocksOf for the table named table.
func rowLocksIn(t *testing.T, eng *Executor, s *Session, table string) string {
	t.Helper()
	tbl, _ := eng.cat.Get(table)
	rls, err := eng.db.RowLocks(context.Background(), tbl.Engine)
	if err != nil {
		t.Fatal(err)
	}
	id := s.txID.Load()
	var out []string
	for _, rl := range rls {
		for i, l := range rl.Lockers {
			if l != id {
				continue
			}
			k, err := catalog.DecodeKey(tbl, rl.Key)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%d:%s", k.I, rl.Modes[i]))
		}
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
