package sqlfe

import (
	"testing"

	"github.com/tupled/tupled/sql/pgerror"
)

// TestEvalPlanQualJoin: locking SELECTs over a join (lockjoin.go), each
// schedule's output as PostgreSQL 15's isolationtester printed it. Tables
// t (k, v) = (1,10), (2,10), (3,10) and u (k, tk, w) = (1,1,100),
// (2,2,200), (3,3,300), joined on u.tk = t.k. s1 runs its statement in an
// open transaction; s2's locking join then either waits for s1 (observed as
// its ungranted entry in DB.Locks()) and finishes once s1 commits, or
// finishes at once. locksT and locksU are s2's row locks of t and u after
// its statement.
func TestEvalPlanQualJoin(t *testing.T) {
	const (
		onT   = "SELECT t.k, t.v, u.w FROM t JOIN u ON u.tk = t.k ORDER BY t.k FOR UPDATE OF t"
		share = "for share"
	)
	cases := []struct {
		name, s1, s2   string
		waits          bool
		want           string
		locksT, locksU string
	}{
		// the side not named in OF is neither waited for nor locked
		{"of t, u updated", "UPDATE u SET w = 999 WHERE k = 1", onT, false,
			"1|10|100\n2|10|200\n3|10|300\nSELECT 3", "1:for update 2:for update 3:for update", ""},
		// the locked side's new version is returned
		{"of t, t updated", "UPDATE t SET v = 7 WHERE k = 1", onT, true,
			"1|7|100\n2|10|200\n3|10|300\nSELECT 3", "1:for update 2:for update 3:for update", ""},
		// u's row 1 no longer joins t's row 1: the recheck drops the row
		// (t's row 1, locked before u's, stays locked, as in PostgreSQL)
		{"recheck drops unjoined", "UPDATE u SET tk = 9 WHERE k = 1",
			"SELECT t.k, u.k FROM t JOIN u ON u.tk = t.k ORDER BY t.k FOR UPDATE", true,
			"2|2\n3|3\nSELECT 2", "1:for update 2:for update 3:for update", "1:for update 2:for update 3:for update"},
		{"recheck drops by where", "UPDATE t SET v = 3 WHERE k = 1",
			"SELECT t.k, u.w FROM t JOIN u ON u.tk = t.k WHERE t.v > 5 ORDER BY t.k FOR UPDATE OF t", true,
			"2|200\n3|300\nSELECT 2", "1:for update 2:for update 3:for update", ""},
		{"skip locked", "SELECT k FROM t WHERE k = 1 FOR UPDATE",
			"SELECT t.k, u.w FROM t JOIN u ON u.tk = t.k ORDER BY t.k LIMIT 1 FOR UPDATE SKIP LOCKED", false,
			"2|200\nSELECT 1", "2:for update", "2:for update"},
		{"nowait", "SELECT k FROM t WHERE k = 1 FOR UPDATE",
			"SELECT t.k, u.w FROM t JOIN u ON u.tk = t.k ORDER BY t.k FOR UPDATE OF t NOWAIT", false,
			"55P03", "", ""},
		{"share both", "UPDATE u SET w = 1 WHERE k = 2",
			"SELECT t.k, u.w FROM t JOIN u ON u.tk = t.k ORDER BY t.k FOR SHARE", true,
			"1|100\n2|1\n3|300\nSELECT 3", "1:" + share + " 2:" + share + " 3:" + share, "1:" + share + " 2:" + share + " 3:" + share},
		{"two strengths", "UPDATE u SET w = 1 WHERE k = 2",
			"SELECT t.k, u.w FROM t JOIN u ON u.tk = t.k WHERE t.k < 3 ORDER BY t.k FOR KEY SHARE OF t FOR NO KEY UPDATE OF u", true,
			"1|100\n2|1\nSELECT 2", "1:for key share 2:for key share", "1:for no key update 2:for no key update"},
		{"subquery in from", "UPDATE t SET v = 3 WHERE k = 1",
			"SELECT s.k, u.w FROM (SELECT k, v FROM t WHERE v > 5 FOR UPDATE) s JOIN u ON u.tk = s.k ORDER BY s.k", true,
			"2|200\n3|300\nSELECT 2", "1:for update 2:for update 3:for update", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eng, s1 := newTestSession(t)
			s2 := eng.NewSession(2, "test", nil)
			t.Cleanup(s2.Close)
			mustRun(t, s1, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10), (2, 10), (3, 10)", "CREATE TABLE\nINSERT 0 3")
			mustRun(t, s1, "CREATE TABLE u (k int PRIMARY KEY, tk int, w int); INSERT INTO u VALUES (1, 1, 100), (2, 2, 200), (3, 3, 300)", "CREATE TABLE\nINSERT 0 3")
			mustRun(t, s1, "BEGIN", "BEGIN")
			if _, err := run(t, s1, tc.s1); err != nil {
				t.Fatal(err)
			}
			run(t, s2, "BEGIN")
			res := startAsync(t, s2, tc.s2)
			var out string
			var err *pgerror.Error
			if tc.waits {
				waitForLockWait(t, eng, s2)
				mustRun(t, s1, "COMMIT", "COMMIT")
				out, err = res()
			} else {
				out, err = res()
				mustRun(t, s1, "COMMIT", "COMMIT")
			}
			if tc.want == "55P03" {
				if err == nil || err.Code != "55P03" {
					t.Fatalf("got %q %v, want 55P03", out, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %s %s", tc.s2, err.Code, err.Message)
			}
			if out != tc.want {
				t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", tc.s2, out, tc.want)
			}
			if got := rowLocksIn(t, eng, s2, "t"); got != tc.locksT {
				t.Errorf("row locks of t: got %q, want %q", got, tc.locksT)
			}
			if got := rowLocksIn(t, eng, s2, "u"); got != tc.locksU {
				t.Errorf("row locks of u: got %q, want %q", got, tc.locksU)
			}
			mustRun(t, s2, "COMMIT", "COMMIT")
		})
	}
}

// TestJoinLockDeadlock: two locking joins that each wait for a row the
// other holds; one is 40P01 and the other then gets its row (on
// PostgreSQL 15 the one whose deadlock_timeout ran out first fails).
func TestJoinLockDeadlock(t *testing.T) {
	eng, s1 := newTestSession(t)
	s2 := eng.NewSession(2, "test", nil)
	t.Cleanup(s2.Close)
	mustRun(t, s1, "CREATE TABLE t (k int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 10), (2, 10), (3, 10)", "CREATE TABLE\nINSERT 0 3")
	mustRun(t, s1, "CREATE TABLE u (k int PRIMARY KEY, tk int, w int); INSERT INTO u VALUES (1, 1, 100), (2, 2, 200), (3, 3, 300)", "CREATE TABLE\nINSERT 0 3")
	mustRun(t, s1, "BEGIN; SELECT k FROM t WHERE k = 1 FOR UPDATE", "BEGIN\n1\nSELECT 1")
	mustRun(t, s2, "BEGIN; SELECT k FROM u WHERE k = 2 FOR UPDATE", "BEGIN\n2\nSELECT 1")
	r1 := startAsync(t, s1, "SELECT t.k FROM t JOIN u ON u.tk = t.k WHERE t.k = 2 FOR UPDATE")
	waitForLockWait(t, eng, s1)
	r2 := startAsync(t, s2, "SELECT t.k FROM t JOIN u ON u.tk = t.k WHERE t.k = 1 FOR UPDATE")
	// The victim fails with 40P01 and its locks go at once (as on
	// PostgreSQL, before its ROLLBACK), so the survivor may finish at the
	// same moment: collect both, in whatever order they come.
	type done struct {
		out string
		err *pgerror.Error
	}
	c1, c2 := make(chan done, 1), make(chan done, 1)
	go func() { o, e := r1(); c1 <- done{o, e} }()
	go func() { o, e := r2(); c2 <- done{o, e} }()
	var d1, d2 done
	for got := 0; got < 2; got++ {
		select {
		case d1 = <-c1:
			c1 = nil
		case d2 = <-c2:
			c2 = nil
		}
	}
	victim, other, survivor, want := s1, s2, d2, "1\nSELECT 1"
	if d1.err == nil {
		victim, other, survivor, want = s2, s1, d1, "2\nSELECT 1"
		if d2.err == nil || d2.err.Code != "40P01" {
			t.Fatalf("s1 got its row, s2: got %q %v, want 40P01", d2.out, d2.err)
		}
	} else if d1.err.Code != "40P01" {
		t.Fatalf("s1: got %q %v, want 40P01 or its row", d1.out, d1.err)
	}
	if survivor.err != nil || survivor.out != want {
		t.Fatalf("survivor: got %q %v, want %q", survivor.out, survivor.err, want)
	}
	mustRun(t, victim, "ROLLBACK", "ROLLBACK")
	mustRun(t, other, "COMMIT", "COMMIT")
}

// TestQueueClaimStopsEarly: the queue claim, alone and through a join,
// locks the first ready job nobody holds and reads no further: the job
// past it has kind 0, which makes the WHERE clause divide by zero if it is
// ever evaluated. s1 holds job 2, so s2 skips it and claims job 3.
func TestQueueClaimStopsEarly(t *testing.T) {
	for _, claim := range []string{
		"SELECT id FROM jobs WHERE state = 'ready' AND 10 / kind > 0 ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
		"SELECT j.id FROM jobs j JOIN kinds k ON k.id = j.kind WHERE j.state = 'ready' AND 10 / j.kind > 0 ORDER BY j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED",
		"SELECT j.id FROM jobs j, kinds k WHERE k.id = j.kind AND j.state = 'ready' AND 10 / j.kind > 0 ORDER BY j.id LIMIT 1 FOR UPDATE SKIP LOCKED",
	} {
		t.Run(claim, func(t *testing.T) {
			eng, s1 := newTestSession(t)
			s2 := eng.NewSession(2, "test", nil)
			t.Cleanup(s2.Close)
			mustRun(t, s1, "CREATE TABLE kinds (id int PRIMARY KEY, name text); INSERT INTO kinds VALUES (1, 'mail'), (2, 'sms')", "CREATE TABLE\nINSERT 0 2")
			mustRun(t, s1, "CREATE TABLE jobs (id int PRIMARY KEY, state text, kind int); INSERT INTO jobs SELECT g, 'ready', 1 + g % 2 FROM generate_series(1, 1000) g", "CREATE TABLE\nINSERT 0 1000")
			mustRun(t, s1, "UPDATE jobs SET state = 'done' WHERE id = 1; UPDATE jobs SET kind = 0 WHERE id = 4", "UPDATE 1\nUPDATE 1")
			mustRun(t, s1, "BEGIN; SELECT id FROM jobs WHERE id = 2 FOR UPDATE", "BEGIN\n2\nSELECT 1")
			mustRun(t, s2, "BEGIN", "BEGIN")
			mustRun(t, s2, claim, "3\nSELECT 1")
			// the claim locked job 3 alone; the join's other table is
			// unlocked when OF names jobs
			if got := rowLocksIn(t, eng, s2, "jobs"); got != "3:for update" {
				t.Fatalf("s2's locks of jobs: %q", got)
			}
			mustRun(t, s2, "COMMIT", "COMMIT")
			mustRun(t, s1, "COMMIT", "COMMIT")
			// without the early stop the claim reads job 4
			mustFail(t, s2, "SELECT j.id FROM jobs j JOIN kinds k ON k.id = j.kind WHERE j.state = 'ready' AND 10 / j.kind > 0 ORDER BY k.id, j.id LIMIT 1 FOR UPDATE OF j", "22012", "division by zero")
		})
	}
}
