package lockmgr

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// relLocks is what Locks() lists for relation rel: "xid:mode:fast" for
// granted entries, "xid:mode:wait" for waiters.
func relLocks(m *Manager, rel string) map[string]bool {
	out := map[string]bool{}
	for _, li := range m.Locks() {
		if li.Tag != RelationTag(rel) {
			continue
		}
		k := fmt.Sprintf("%d:%s:", li.Xid, li.Mode)
		switch {
		case !li.Granted:
			k += "wait"
		case li.FastPath:
			k += "fast"
		default:
			k += "shared"
		}
		out[k] = true
	}
	return out
}

// TestRelationConflictTable: every pair of the eight modes, held by one
// transaction and requested NOWAIT by another, fails exactly when
// PostgreSQL's conflict table says so — whichever path (fast or shared)
// each took.
func TestRelationConflictTable(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	xid := uint64(0)
	for held := AccessShareLock; held <= AccessExclusiveLock; held++ {
		for req := AccessShareLock; req <= AccessExclusiveLock; req++ {
			xid += 2
			p1, p2 := m.NewProc(xid), m.NewProc(xid+1)
			if err := m.LockRelation(ctx, p1, "r", held, Wait{}); err != nil {
				t.Fatalf("%s: %v", held, err)
			}
			err := m.LockRelation(ctx, p2, "r", req, Wait{NoWait: true})
			want := Conflicts(held, req)
			if got := errors.Is(err, ErrWouldBlock); got != want || (!want && err != nil) {
				t.Fatalf("held %s, requested %s NOWAIT: %v, want conflict=%v", held, req, err, want)
			}
			m.ReleaseAll(p2)
			m.ReleaseAll(p1)
			// the same transaction never conflicts with itself
			if err := m.LockRelation(ctx, p1, "r", held, Wait{}); err != nil {
				t.Fatal(err)
			}
			if err := m.LockRelation(ctx, p1, "r", req, Wait{NoWait: true}); err != nil {
				t.Fatalf("own %s then %s: %v", held, req, err)
			}
			m.ReleaseAll(p1)
		}
	}
	empty(t, m)
	for i := range m.rels.strong {
		if n := m.rels.strong[i].Load(); n != 0 {
			t.Fatalf("strong counter %d = %d after every lock was released", i, n)
		}
	}
}

// TestFastPathTransfer: weak locks are taken by the fast path (listed with
// FastPath) until a strong request, which moves them into the shared table
// and waits for them; after it is released weak locks take the fast path
// again.
func TestFastPathTransfer(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	p1, p2, p3 := m.NewProc(1), m.NewProc(2), m.NewProc(3)
	if err := m.LockRelation(ctx, p1, "r", AccessShareLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	if err := m.LockRelation(ctx, p2, "r", RowExclusiveLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	if got := relLocks(m, "r"); !got["1:AccessShareLock:fast"] || !got["2:RowExclusiveLock:fast"] || len(got) != 2 {
		t.Fatalf("weak locks: %v, want both by fast path", got)
	}
	c3 := async(func() error { return m.LockRelation(ctx, p3, "r", ShareLock, Wait{}) })
	eventually(t, "p3 waits for ShareLock", func() bool { return relLocks(m, "r")["3:ShareLock:wait"] })
	if got := relLocks(m, "r"); !got["1:AccessShareLock:shared"] || !got["2:RowExclusiveLock:shared"] {
		t.Fatalf("after a strong request: %v, want the weak locks in the shared table", got)
	}
	// AccessShare does not conflict with ShareLock: a new one is granted,
	// through the shared table (the strong counter is up).
	p4 := m.NewProc(4)
	if err := m.LockRelation(ctx, p4, "r", AccessShareLock, Wait{NoWait: true}); err != nil {
		t.Fatal(err)
	}
	if got := relLocks(m, "r"); !got["4:AccessShareLock:shared"] {
		t.Fatalf("weak lock while a strong one is requested: %v", got)
	}
	m.ReleaseAll(p2) // RowExclusive was what p3 waited for
	if err := result(t, c3, "p3"); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAll(p1)
	m.ReleaseAll(p4)
	m.ReleaseAll(p3)
	empty(t, m)
	p5 := m.NewProc(5)
	if err := m.LockRelation(ctx, p5, "r", RowShareLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	if got := relLocks(m, "r"); !got["5:RowShareLock:fast"] {
		t.Fatalf("after the strong lock went: %v, want the fast path again", got)
	}
	m.ReleaseAll(p5)
	if got := relLocks(m, "r"); len(got) != 0 {
		t.Fatalf("after ReleaseAll: %v", got)
	}
}

// TestFastPathRace: many transactions take weak locks by the fast path
// while others take AccessExclusive; an AccessExclusive holder must never
// coexist with a weak holder (checked with a counter each side updates
// while it holds its lock). Run with -race.
func TestFastPathRace(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	var mu sync.Mutex
	weak, strong := 0, 0
	var wg sync.WaitGroup
	var xid sync.Mutex
	next := uint64(0)
	newProc := func() *Proc {
		xid.Lock()
		defer xid.Unlock()
		next++
		return m.NewProc(next)
	}
	errc := make(chan error, 8)
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				p := newProc()
				mode := AccessShareLock + LockMode(i%3)
				isStrong := g == 0 && i%10 == 0
				if isStrong {
					mode = AccessExclusiveLock
				}
				if err := m.LockRelation(ctx, p, "hot", mode, Wait{}); err != nil {
					errc <- err
					return
				}
				mu.Lock()
				if isStrong {
					strong++
				} else {
					weak++
				}
				if strong > 0 && (weak > 0 || strong > 1) {
					mu.Unlock()
					errc <- fmt.Errorf("AccessExclusive held together with another lock (weak %d, strong %d)", weak, strong)
					return
				}
				mu.Unlock()
				mu.Lock()
				if isStrong {
					strong--
				} else {
					weak--
				}
				mu.Unlock()
				m.ReleaseAll(p)
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	empty(t, m)
}

// TestRelationDeadlockTimeoutPerWaiter: two transactions deadlock on two
// tables; the one whose own deadlock timeout is short is the victim even
// though it began waiting last, and the other is granted.
func TestRelationDeadlockTimeoutPerWaiter(t *testing.T) {
	m := newManager(t, "default", time.Hour)
	ctx := context.Background()
	p1, p2 := m.NewProc(1), m.NewProc(2)
	p2.SetDeadlockTimeout(time.Millisecond)
	for _, l := range []struct {
		p   *Proc
		rel string
	}{{p1, "a"}, {p2, "b"}} {
		if err := m.LockRelation(ctx, l.p, l.rel, AccessExclusiveLock, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	c1 := async(func() error { return m.LockRelation(ctx, p1, "b", AccessExclusiveLock, Wait{}) })
	eventually(t, "p1 waits", func() bool { return relLocks(m, "b")["1:AccessExclusiveLock:wait"] })
	// p2's wait begins later but its check is due first (1ms, not 1h).
	err := m.LockRelation(ctx, p2, "a", AccessExclusiveLock, Wait{})
	if !errors.Is(err, ErrDeadlock) {
		t.Fatalf("p2: %v, want ErrDeadlock", err)
	}
	m.ReleaseAll(p2)
	if err := result(t, c1, "p1"); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAll(p1)
	empty(t, m)
}

// TestSoftDeadlockRearranged is PostgreSQL's deadlock-soft: a cycle made of
// "waits behind a waiter" edges is broken by reordering a queue, so nobody
// is a victim: d1 is moved ahead of e2 on b and granted.
func TestSoftDeadlockRearranged(t *testing.T) {
	m := newManager(t, "default", time.Hour)
	ctx := context.Background()
	d1, d2, e1, e2 := m.NewProc(1), m.NewProc(2), m.NewProc(3), m.NewProc(4)
	d2.SetDeadlockTimeout(time.Millisecond)
	lock := func(p *Proc, rel string, mode LockMode) {
		t.Helper()
		if err := m.LockRelation(ctx, p, rel, mode, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	lock(d1, "a", AccessShareLock)
	lock(d2, "b", AccessShareLock)
	ce1 := async(func() error { return m.LockRelation(ctx, e1, "a", AccessExclusiveLock, Wait{}) })
	eventually(t, "e1 waits", func() bool { return relLocks(m, "a")["3:AccessExclusiveLock:wait"] })
	ce2 := async(func() error { return m.LockRelation(ctx, e2, "b", AccessExclusiveLock, Wait{}) })
	eventually(t, "e2 waits", func() bool { return relLocks(m, "b")["4:AccessExclusiveLock:wait"] })
	cd1 := async(func() error { return m.LockRelation(ctx, d1, "b", AccessShareLock, Wait{}) })
	eventually(t, "d1 waits", func() bool { return relLocks(m, "b")["1:AccessShareLock:wait"] })
	cd2 := async(func() error { return m.LockRelation(ctx, d2, "a", AccessShareLock, Wait{}) })
	if err := result(t, cd1, "d1"); err != nil { // d2's check rearranged b's queue
		t.Fatal(err)
	}
	if got := m.DetectorStats().Rearranged; got != 1 {
		t.Fatalf("Rearranged = %d, want 1", got)
	}
	m.ReleaseAll(d1)
	if err := result(t, ce1, "e1"); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAll(e1)
	if err := result(t, cd2, "d2"); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAll(d2)
	if err := result(t, ce2, "e2"); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAll(e2)
	empty(t, m)
}

// TestReleaseSince: a savepoint's rollback releases the relation locks
// taken since its mark — fast-path ones, ones a strong request moved into
// the shared table, and strong ones (whose waiters then proceed) — and
// keeps those held at the mark, even when taken again since.
func TestReleaseSince(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	p1, p2 := m.NewProc(1), m.NewProc(2)
	lock := func(p *Proc, rel string, mode LockMode) {
		t.Helper()
		if err := m.LockRelation(ctx, p, rel, mode, Wait{}); err != nil {
			t.Fatal(err)
		}
	}
	lock(p1, "kept", ShareLock)
	mark := p1.RelationMark()
	lock(p1, "kept", ShareLock) // again: still the mark's
	lock(p1, "kept", AccessShareLock)
	lock(p1, "fast", RowExclusiveLock)
	lock(p1, "moved", AccessShareLock)
	lock(p1, "strong", ExclusiveLock)
	c2 := async(func() error { return m.LockRelation(ctx, p2, "moved", AccessExclusiveLock, Wait{}) })
	eventually(t, "p2 waits for AccessExclusive", func() bool { return relLocks(m, "moved")["2:AccessExclusiveLock:wait"] })
	if !relLocks(m, "moved")["1:AccessShareLock:shared"] {
		t.Fatalf("the strong request did not move p1's lock: %v", relLocks(m, "moved"))
	}
	m.ReleaseSince(p1, mark)
	if err := result(t, c2, "p2"); err != nil {
		t.Fatal(err)
	}
	if got := relLocks(m, "kept"); len(got) != 1 || !got["1:ShareLock:shared"] {
		t.Fatalf("kept: %v, want only the ShareLock held at the mark", got)
	}
	for _, rel := range []string{"fast", "strong"} {
		if got := relLocks(m, rel); len(got) != 0 {
			t.Fatalf("%s: %v, want released", rel, got)
		}
	}
	if !p1.HoldsRelation("kept", ShareLock) || p1.HoldsRelation("kept", AccessShareLock) || p1.HoldsRelation("strong", ExclusiveLock) {
		t.Fatal("p1's own view of its locks is wrong after ReleaseSince")
	}
	// The strong counter went down with ExclusiveLock: a weak lock on
	// "strong" takes the fast path again.
	lock(p2, "strong", RowShareLock)
	if got := relLocks(m, "strong"); !got["2:RowShareLock:fast"] {
		t.Fatalf("strong: %v, want the fast path", got)
	}
	m.ReleaseAll(p1)
	m.ReleaseAll(p2)
	empty(t, m)
}

// TestInitProcReusesAnEndedProc: InitProc on the Proc of a transaction
// that released everything makes it the proc of a new xid, holding
// nothing; on one that still holds a lock it refuses (a panic: the
// engine reuses a Proc only after ReleaseAll).
func TestInitProcReusesAnEndedProc(t *testing.T) {
	m, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx := context.Background()
	var p Proc
	m.InitProc(&p, 1)
	if err := m.LockRelation(ctx, &p, "r", RowExclusiveLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("InitProc reused a Proc that holds a relation lock")
			}
		}()
		m.InitProc(&p, 2)
	}()
	m.ReleaseAll(&p)
	m.InitProc(&p, 2)
	if p.Xid() != 2 || p.HoldsRelation("r", RowExclusiveLock) {
		t.Fatalf("reused proc: xid %d, holds r: %v", p.Xid(), p.HoldsRelation("r", RowExclusiveLock))
	}
	// The reused proc locks as a new one: a strong lock of another
	// transaction now conflicts with it.
	if err := m.LockRelation(ctx, &p, "r", RowExclusiveLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	q := m.NewProc(3)
	if err := m.LockRelation(ctx, q, "r", AccessExclusiveLock, Wait{NoWait: true}); err != ErrWouldBlock {
		t.Fatalf("AccessExclusiveLock beside the reused proc's lock: %v, want ErrWouldBlock", err)
	}
	m.ReleaseAll(&p)
	if err := m.LockRelation(ctx, q, "r", AccessExclusiveLock, Wait{NoWait: true}); err != nil {
		t.Fatal(err)
	}
	m.ReleaseAll(q)
}
