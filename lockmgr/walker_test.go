package lockmgr

import (
	"context"
	"testing"
	"time"

	"github.com/tupled/tupled/deadlock"
)

// An UnlockedNoWait walker (a waiter helping the detector) never blocks on a
// busy partition or registry shard: it stops the enumeration and reports the
// search incomplete, and the next search, with the lock free, completes. An
// Unlocked walker of the same graph enumerates the same edges.
func TestWalkerNoWaitGivesUp(t *testing.T) {
	m := newManager(t, "off", time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	holder := newXact(m, 1)
	tupleWaiter, xactWaiter := newXact(m, 2), newXact(m, 3)
	inner := newXact(m, 4) // waits for holder, and holds L: tupleWaiter's hard edge
	L := tup("L")
	mustLock(t, m, inner.p, L, ExclusiveLock)
	innerDone := async(func() error { return m.WaitXacts(ctx, inner.p, []AwaitedXact{holder.X()}, Wait{}) })
	tupDone := async(func() error { return m.Lock(ctx, tupleWaiter.p, L, ExclusiveLock, Wait{}) })
	xactDone := async(func() error { return m.WaitXacts(ctx, xactWaiter.p, []AwaitedXact{inner.X()}, Wait{}) })
	eventually(t, "three waiters", func() bool { return countWaiters(m) == 3 })

	succ := func(wk deadlock.Walker, w *waiter) (ok bool, got []*deadlock.Wait) {
		wk.Begin(m.det.Epoch(), &w.dw, deadlock.Exact)
		ok = wk.Successors(&w.dw, func(y *deadlock.Wait) bool { got = append(got, y); return true })
		return ok, got
	}
	innerWait := inner.p.cur.Load()
	g := graph{m}
	for _, c := range []struct {
		what string
		w    *waiter
		mu   interface {
			Lock()
			Unlock()
		}
	}{
		{"tuple wait, partition busy", tupleWaiter.p.cur.Load(), &m.partOf(m.hash(L)).mu},
		{"transaction wait, registry shard busy", xactWaiter.p.cur.Load(), &m.regOf(inner.p.Xid()).mu},
	} {
		nw := g.NewWalker(deadlock.UnlockedNoWait)
		c.mu.Lock()
		ok, got := succ(nw, c.w)
		c.mu.Unlock()
		if ok || !nw.Incomplete() || len(got) != 0 {
			t.Errorf("%s: Successors %v, incomplete %v, visited %d; want a stop, incomplete, nothing visited", c.what, ok, nw.Incomplete(), len(got))
		}
		ok, got = succ(nw, c.w)
		if !ok || nw.Incomplete() || len(got) != 1 || got[0] != &innerWait.dw {
			t.Errorf("%s, lock free: Successors %v, incomplete %v, visited %v; want inner's wait", c.what, ok, nw.Incomplete(), got)
		}
		ok, got = succ(g.NewWalker(deadlock.Unlocked), c.w)
		if !ok || len(got) != 1 || got[0] != &innerWait.dw {
			t.Errorf("%s, Unlocked walker: visited %v, want inner's wait", c.what, got)
		}
	}
	cancel()
	for _, c := range []<-chan error{innerDone, tupDone, xactDone} {
		if err := result(t, c, "waiter"); err == nil {
			t.Error("a waiter was granted; all were cancelled")
		}
	}
	m.Unlock(inner.p, L, ExclusiveLock)
}
