package lockmgr

import (
	"context"
	"errors"
	"testing"
	"time"
)

func advHeld(m *Manager, tag Tag, mode LockMode) int {
	n := 0
	for _, li := range m.Locks() {
		if li.Tag == tag && li.Mode == mode && li.Granted {
			n++
		}
	}
	return n
}

func sessWaiting(m *Manager, sess uint64, tag Tag) bool {
	for _, li := range m.Locks() {
		if li.Session == sess && !li.Granted && li.Tag == tag {
			return true
		}
	}
	return false
}

func TestAdvisoryTags(t *testing.T) {
	// pg_locks: a bigint key is classid = high 32 bits, objid = low 32 bits,
	// objsubid 1; a pair is classid = key1, objid = key2, objsubid 2.
	cases := []struct {
		tag       Tag
		c, o      uint32
		sub       uint16
		str       string
		different Tag
	}{
		{AdvisoryKeyTag(1), 0, 1, 1, "advisory 1", AdvisoryPairTag(0, 1)},
		{AdvisoryKeyTag(-1), 4294967295, 4294967295, 1, "advisory -1", AdvisoryPairTag(-1, -1)},
		{AdvisoryKeyTag(4294967297), 1, 1, 1, "advisory 4294967297", AdvisoryPairTag(1, 1)},
		{AdvisoryPairTag(-5, 7), 4294967291, 7, 2, "advisory -5,7", AdvisoryKeyTag(-5<<32 | 7)},
	}
	for _, c := range cases {
		cl, o, sub := c.tag.Advisory()
		if cl != c.c || o != c.o || sub != c.sub || c.tag.String() != c.str {
			t.Errorf("%v: got %d/%d/%d %q, want %d/%d/%d %q", c.tag, cl, o, sub, c.tag.String(), c.c, c.o, c.sub, c.str)
		}
		if c.tag == c.different {
			t.Errorf("%s and %s are the same lock", c.tag, c.different)
		}
	}
}

// A session lock is re-entrant (counted): locked twice, it needs two
// unlocks; a third returns false. Transaction-level counts of the same owner
// are released by UnlockAll(XactLevel) only; Unlock never touches them.
func TestAdvisoryCounts(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	s := m.NewSession(1)
	k := AdvisoryKeyTag(7)
	for range 2 {
		if err := s.Lock(ctx, k, ExclusiveLock, SessionLevel, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Lock(ctx, k, ExclusiveLock, XactLevel, Wait{}); err != nil {
		t.Fatal(err)
	}
	if n := advHeld(m, k, ExclusiveLock); n != 1 {
		t.Fatalf("lock table entries = %d, want 1 (counts are local)", n)
	}
	other := m.TxOwner(m.NewProc(50))
	try := func() error { return other.Lock(ctx, k, ShareLock, XactLevel, Wait{NoWait: true}) }
	if !s.Unlock(k, ExclusiveLock) || !s.Unlock(k, ExclusiveLock) {
		t.Fatal("unlock of a lock held twice failed")
	}
	if s.Unlock(k, ExclusiveLock) {
		t.Fatal("a third unlock released the transaction-level count")
	}
	if err := try(); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("other owner got %v while the xact-level lock is held", err)
	}
	s.UnlockAll(XactLevel)
	if err := try(); err != nil {
		t.Fatalf("after transaction end: %v", err)
	}
	other.UnlockAll(XactLevel)
	if s.Unlock(k, ShareLock) {
		t.Fatal("unlock of a mode never held returned true")
	}
	empty(t, m)
}

// Session locks survive transaction end; UnlockAll(SessionLevel) (session
// end, pg_advisory_unlock_all) releases them and leaves xact-level ones.
func TestAdvisorySessionVsXact(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	s := m.NewSession(1)
	a, b := AdvisoryKeyTag(1), AdvisoryPairTag(0, 1)
	mustAdv := func(o *Owner, tag Tag, mode LockMode, lvl Level) {
		t.Helper()
		if err := o.Lock(ctx, tag, mode, lvl, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	mustAdv(&s.Owner, a, ExclusiveLock, SessionLevel)
	mustAdv(&s.Owner, b, ShareLock, XactLevel)
	s.UnlockAll(XactLevel) // commit or abort
	if advHeld(m, a, ExclusiveLock) != 1 || advHeld(m, b, ShareLock) != 0 {
		t.Fatalf("after transaction end: %v", m.Locks())
	}
	mustAdv(&s.Owner, b, ShareLock, XactLevel)
	s.UnlockAll(SessionLevel)
	if advHeld(m, a, ExclusiveLock) != 0 || advHeld(m, b, ShareLock) != 1 {
		t.Fatalf("after unlock_all: %v", m.Locks())
	}
	if !s.Holds() {
		t.Fatal("Holds false with an xact lock held")
	}
	s.UnlockAll(XactLevel)
	empty(t, m)
}

// Shared locks share, exclusive waits in FIFO order behind them, and a later
// shared request queues behind the exclusive waiter (PostgreSQL's grant
// rule); the waits show in Locks() with the session id.
func TestAdvisorySharedExclusiveQueue(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	k := AdvisoryKeyTag(42)
	s1, s2, s3, s4 := m.NewSession(1), m.NewSession(2), m.NewSession(3), m.NewSession(4)
	for _, s := range []*SessionOwner{s1, s2} {
		if err := s.Lock(ctx, k, ShareLock, SessionLevel, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	ex := async(func() error { return s3.Lock(ctx, k, ExclusiveLock, SessionLevel, Wait{}) })
	eventually(t, "s3 waits", func() bool { return sessWaiting(m, 3, k) })
	sh := async(func() error { return s4.Lock(ctx, k, ShareLock, SessionLevel, Wait{}) })
	eventually(t, "s4 waits behind s3", func() bool { return sessWaiting(m, 4, k) })
	if !s1.Unlock(k, ShareLock) {
		t.Fatal("unlock")
	}
	noResult(t, ex, "exclusive request with a sharer left")
	s2.UnlockAll(SessionLevel)
	if err := result(t, ex, "exclusive request"); err != nil {
		t.Fatal(err)
	}
	noResult(t, sh, "shared request behind the exclusive holder")
	s3.UnlockAll(SessionLevel)
	if err := result(t, sh, "shared request"); err != nil {
		t.Fatal(err)
	}
	s4.UnlockAll(SessionLevel)
	empty(t, m)
}

func TestAdvisoryTryTimeoutCancel(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	k := AdvisoryPairTag(1, 2)
	s1, s2 := m.NewSession(1), m.NewSession(2)
	if err := s1.Lock(context.Background(), k, ExclusiveLock, SessionLevel, Wait{}); err != nil {
		t.Fatal(err)
	}
	if err := s2.Lock(context.Background(), k, ShareLock, SessionLevel, Wait{NoWait: true}); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("try: %v", err)
	}
	if err := s2.Lock(context.Background(), k, ShareLock, SessionLevel, Wait{Timeout: time.Millisecond}); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("lock timeout: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := async(func() error { return s2.Lock(ctx, k, ShareLock, SessionLevel, Wait{}) })
	eventually(t, "s2 waits", func() bool { return sessWaiting(m, 2, k) })
	cancel()
	if err := result(t, c, "cancelled wait"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancel: %v", err)
	}
	if s2.Holds() {
		t.Fatal("a failed request left a count")
	}
	if err := s1.Lock(context.Background(), AdvisoryKeyTag(1), AccessExclusiveLock, SessionLevel, Wait{}); err == nil {
		t.Fatal("a mode other than Exclusive/Share was accepted")
	}
	s1.UnlockAll(SessionLevel)
	empty(t, m)
}

// The same session's session-level and transaction-level locks never
// conflict (one PGPROC holds both), and its transaction's wait is seen by a
// waiter on its session lock.
func TestAdvisorySessionOwnsBoth(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	s := m.NewSession(1)
	k := AdvisoryKeyTag(3)
	if err := s.Lock(ctx, k, ShareLock, SessionLevel, Wait{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Lock(ctx, k, ExclusiveLock, XactLevel, Wait{NoWait: true}); err != nil {
		t.Fatalf("exclusive on top of own shared: %v", err)
	}
	s.UnlockAll(XactLevel)
	s.UnlockAll(SessionLevel)
	empty(t, m)
}

// A deadlock through an advisory lock and a row (transaction) wait: session
// S1 holds advisory lock A and its transaction T1 waits for transaction T2
// (a row T2 locked); T2's session S2 requests A. The detector must find the
// cycle from either wait: S2's advisory wait reaches S1 as A's holder, S1
// through its transaction to T1's wait, and that to T2, registered as
// waiting on S2's behalf. The wait that closes the cycle is the victim
// (the other's check ran before and found nothing): PostgreSQL's rule.
func TestAdvisoryDeadlockWithRowWait(t *testing.T) {
	for _, strategy := range detecting {
		for _, victim := range []string{"advisory", "row"} {
			t.Run(strategy+"/"+victim, func(t *testing.T) {
				m := newManager(t, strategy, 20*time.Millisecond)
				ctx := context.Background()
				a := AdvisoryKeyTag(1)
				s1, s2 := m.NewSession(1), m.NewSession(2)
				t1, t2 := newXact(m, 101), newXact(m, 102)
				s1.SetXact(t1.p)
				s2.SetXact(t2.p)
				if err := s1.Lock(ctx, a, ExclusiveLock, SessionLevel, Wait{}); err != nil {
					t.Fatal(err)
				}
				startRow := func() <-chan error {
					c := async(func() error { return m.WaitXacts(ctx, t1.p, []AwaitedXact{t2.X()}, Wait{}) })
					eventually(t, "T1 waits for T2", func() bool { return waiting(m, 101, Tag{Kind: TagTransaction, Xid: 102}) })
					return c
				}
				startAdv := func() <-chan error {
					c := async(func() error { return s2.Lock(ctx, a, ExclusiveLock, XactLevel, Wait{}) })
					eventually(t, "S2 waits for A", func() bool { return waiting(m, 102, a) && sessWaiting(m, 2, a) })
					return c
				}
				var rowWait, advWait <-chan error
				checks := m.Stats().DeadlockChecks
				if victim == "advisory" {
					rowWait = startRow()
				} else {
					advWait = startAdv()
				}
				eventually(t, "the first wait's check ran", func() bool { return m.Stats().DeadlockChecks > checks })
				if victim == "advisory" {
					advWait = startAdv()
					if err := result(t, advWait, "S2's advisory wait"); !isDeadlock(err) {
						t.Fatalf("advisory wait: %v, want deadlock", err)
					}
					noResult(t, rowWait, "T1's row wait")
					close(t2.done)
					if err := result(t, rowWait, "T1's row wait"); err != nil {
						t.Fatal(err)
					}
				} else {
					rowWait = startRow()
					if err := result(t, rowWait, "T1's row wait"); !isDeadlock(err) {
						t.Fatalf("row wait: %v, want deadlock", err)
					}
					noResult(t, advWait, "S2's advisory wait")
					s1.SetXact(nil)
					s1.UnlockAll(SessionLevel)
					if err := result(t, advWait, "S2's advisory wait"); err != nil {
						t.Fatal(err)
					}
					s2.UnlockAll(XactLevel)
				}
				s1.UnlockAll(SessionLevel)
				if t1.p.cur.Load() != nil || t2.p.cur.Load() != nil {
					t.Fatal("a transaction still points at a wait")
				}
				empty(t, m)
			})
		}
	}
}

// A transaction-owned advisory lock (an embedded Tx outside a session) in a
// cycle with a tuple lock: T1 holds A and waits for tuple L; T2 holds L and
// waits for A.
func TestAdvisoryDeadlockTxOwnerTuple(t *testing.T) {
	m := newManager(t, "default", 20*time.Millisecond)
	ctx := context.Background()
	a, l := AdvisoryKeyTag(9), tup("r")
	t1, t2 := newXact(m, 1), newXact(m, 2)
	o1, o2 := m.TxOwner(t1.p), m.TxOwner(t2.p)
	if err := o1.Lock(ctx, a, ExclusiveLock, XactLevel, Wait{}); err != nil {
		t.Fatal(err)
	}
	mustLock(t, m, t2.p, l, ExclusiveLock)
	checks := m.Stats().DeadlockChecks
	w1 := async(func() error { return m.Lock(ctx, t1.p, l, ExclusiveLock, Wait{}) })
	eventually(t, "T1 waits for L", func() bool { return waiting(m, 1, l) })
	eventually(t, "T1's check ran", func() bool { return m.Stats().DeadlockChecks > checks })
	w2 := async(func() error { return o2.Lock(ctx, a, ShareLock, XactLevel, Wait{}) })
	if err := result(t, w2, "T2"); !isDeadlock(err) {
		t.Fatalf("T2: %v, want deadlock", err)
	}
	m.Unlock(t2.p, l, ExclusiveLock)
	if err := result(t, w1, "T1"); err != nil {
		t.Fatal(err)
	}
	m.Unlock(t1.p, l, ExclusiveLock)
	o1.UnlockAll(XactLevel)
	empty(t, m)
}

// No cycle: a session holding a lock while its transaction waits for an
// unrelated transaction is not a deadlock for a waiter on the session lock.
func TestAdvisoryNoFalseDeadlock(t *testing.T) {
	m := newManager(t, "default", 5*time.Millisecond)
	ctx := context.Background()
	a := AdvisoryKeyTag(5)
	s1, s2 := m.NewSession(1), m.NewSession(2)
	t1, t3 := newXact(m, 11), newXact(m, 13)
	s1.SetXact(t1.p)
	if err := s1.Lock(ctx, a, ExclusiveLock, SessionLevel, Wait{}); err != nil {
		t.Fatal(err)
	}
	rowWait := async(func() error { return m.WaitXacts(ctx, t1.p, []AwaitedXact{t3.X()}, Wait{}) })
	eventually(t, "T1 waits", func() bool { return waiting(m, 11, Tag{Kind: TagTransaction, Xid: 13}) })
	// Each wait is checked once. T1's check may run before or after the
	// line above sees it wait (5 ms): wait for it first, so the count that
	// follows is S2's alone.
	eventually(t, "T1's check ran", func() bool { return m.Stats().DeadlockChecks >= 1 })
	checks := m.Stats().DeadlockChecks
	advWait := async(func() error { return s2.Lock(ctx, a, ExclusiveLock, SessionLevel, Wait{}) })
	eventually(t, "S2 waits", func() bool { return sessWaiting(m, 2, a) })
	eventually(t, "S2's check ran", func() bool { return m.Stats().DeadlockChecks >= checks+1 })
	noResult(t, advWait, "S2 (no cycle)")
	close(t3.done)
	if err := result(t, rowWait, "T1"); err != nil {
		t.Fatal(err)
	}
	s1.SetXact(nil)
	s1.UnlockAll(SessionLevel)
	if err := result(t, advWait, "S2"); err != nil {
		t.Fatal(err)
	}
	s2.UnlockAll(SessionLevel)
	empty(t, m)
}

// Two sessions that hold advisory locks outside any transaction and want
// each other's: the detector follows session procs' own waits.
func TestAdvisoryDeadlockSessionsOnly(t *testing.T) {
	m := newManager(t, "default", 20*time.Millisecond)
	ctx := context.Background()
	a, b := AdvisoryKeyTag(1), AdvisoryPairTag(1, 1)
	s1, s2 := m.NewSession(1), m.NewSession(2)
	for _, x := range []struct {
		s   *SessionOwner
		tag Tag
	}{{s1, a}, {s2, b}} {
		if err := x.s.Lock(ctx, x.tag, ShareLock, SessionLevel, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	checks := m.Stats().DeadlockChecks
	w1 := async(func() error { return s1.Lock(ctx, b, ExclusiveLock, SessionLevel, Wait{}) })
	eventually(t, "s1 waits", func() bool { return sessWaiting(m, 1, b) })
	eventually(t, "s1's check ran", func() bool { return m.Stats().DeadlockChecks > checks })
	w2 := async(func() error { return s2.Lock(ctx, a, ExclusiveLock, SessionLevel, Wait{}) })
	if err := result(t, w2, "s2"); !isDeadlock(err) {
		t.Fatalf("s2: %v, want deadlock", err)
	}
	s2.UnlockAll(SessionLevel)
	if err := result(t, w1, "s1"); err != nil {
		t.Fatal(err)
	}
	s1.UnlockAll(SessionLevel)
	empty(t, m)
}
