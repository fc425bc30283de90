package lockmgr

import (
	"context"
	"errors"
	"sort"
	"sync/atomic"
	"testing"
	"time"
)

type xact struct {
	p    *Proc
	done chan struct{}
}

func newXact(m *Manager, xid uint64) *xact {
	return &xact{p: m.NewProc(xid), done: make(chan struct{})}
}

func (x *xact) X() AwaitedXact { return AwaitedXact{Xid: x.p.Xid(), Done: x.done} }

func TestWaitXacts(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	w := newXact(m, 10)
	a, b, c := newXact(m, 1), newXact(m, 2), newXact(m, 3)
	close(c.done) // already ended

	// Fast path: all ended (and own xid ignored).
	if err := m.WaitXacts(ctx, w.p, []AwaitedXact{c.X(), w.X()}, Wait{}); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitXacts(ctx, w.p, []AwaitedXact{a.X(), c.X()}, Wait{NoWait: true}); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("got %v, want ErrWouldBlock", err)
	}
	if got := m.Stats().LockWaits; got != 0 {
		t.Fatalf("LockWaits = %d after non-blocking calls", got)
	}

	res := async(func() error { return m.WaitXacts(ctx, w.p, []AwaitedXact{a.X(), b.X(), c.X()}, Wait{}) })
	eventually(t, "two xact-wait entries", func() bool {
		return waiting(m, 10, Tag{Kind: TagTransaction, Xid: 1}) && waiting(m, 10, Tag{Kind: TagTransaction, Xid: 2})
	})
	var entries []LockInfo
	for _, li := range m.Locks() {
		if li.Xid == 10 {
			entries = append(entries, li)
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Tag.Xid < entries[j].Tag.Xid })
	if len(entries) != 2 {
		t.Fatalf("entries %+v, want one per running awaited xact", entries)
	}
	for i, li := range entries {
		if li.Tag != (Tag{Kind: TagTransaction, Xid: uint64(i + 1)}) || li.Mode != ShareLock || li.Granted || li.WaitStart.IsZero() {
			t.Fatalf("bad entry %+v", li)
		}
		if li.Tag.String() != "transaction "+string(rune('1'+i)) {
			t.Fatalf("tag string %q", li.Tag)
		}
	}
	close(b.done) // the later one ends first
	eventually(t, "entry for xact 2 gone", func() bool { return !waiting(m, 10, Tag{Kind: TagTransaction, Xid: 2}) })
	noResult(t, res, "WaitXacts")
	if !waiting(m, 10, Tag{Kind: TagTransaction, Xid: 1}) {
		t.Fatal("entry for xact 1 vanished")
	}
	close(a.done)
	if err := result(t, res, "WaitXacts"); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitingAny(m, 10); ok {
		t.Fatal("waiter still listed")
	}
	if got := m.Stats().LockWaits; got != 1 {
		t.Fatalf("LockWaits = %d, want 1", got)
	}
	empty(t, m)
}

func TestWaitXactsTimeoutAndCancel(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	w, a := newXact(m, 10), newXact(m, 1)
	err := m.WaitXacts(context.Background(), w.p, []AwaitedXact{a.X()}, Wait{Timeout: 30 * time.Millisecond})
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("got %v, want ErrLockTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := async(func() error { return m.WaitXacts(ctx, w.p, []AwaitedXact{a.X()}, Wait{}) })
	eventually(t, "waiting", func() bool { _, ok := waitingAny(m, 10); return ok })
	cancel()
	if err := result(t, res, "WaitXacts"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := m.WaitXacts(ctx, w.p, []AwaitedXact{a.X()}, Wait{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: got %v", err)
	}
	close(a.done)
	empty(t, m)
}

// Locks() is a consistent pg_locks-like listing of holders, tuple-lock
// waiters and transaction waiters.
func TestLocksListing(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := Tag{Kind: TagTuple, Rel: "accounts", Key: "\x00\x2a"}
	h1, h2 := newXact(m, 1), newXact(m, 2)
	mustLock(t, m, h1.p, tag, AccessShareLock)
	mustLock(t, m, h1.p, tag, AccessShareLock) // re-entrant: still one entry
	mustLock(t, m, h2.p, tag, RowShareLock)
	tw := newXact(m, 3)
	xw := newXact(m, 4)
	c1 := async(func() error { return m.Lock(ctx, tw.p, tag, AccessExclusiveLock, Wait{}) })
	c2 := async(func() error { return m.WaitXacts(ctx, xw.p, []AwaitedXact{h1.X(), h2.X()}, Wait{}) })
	eventually(t, "both waiters", func() bool { return countWaiters(m) == 3 })
	type key struct {
		tag     string
		mode    string
		xid     uint64
		granted bool
	}
	got := map[key]bool{}
	for _, li := range m.Locks() {
		if li.Granted != li.WaitStart.IsZero() {
			t.Fatalf("WaitStart must be set exactly for waiters: %+v", li)
		}
		got[key{li.Tag.String(), li.Mode.String(), li.Xid, li.Granted}] = true
	}
	want := map[key]bool{
		{"tuple accounts/002a", "AccessShareLock", 1, true}:      true,
		{"tuple accounts/002a", "RowShareLock", 2, true}:         true,
		{"tuple accounts/002a", "AccessExclusiveLock", 3, false}: true,
		{"transaction 1", "ShareLock", 4, false}:                 true,
		{"transaction 2", "ShareLock", 4, false}:                 true,
	}
	if len(got) != len(want) || len(m.Locks()) != 5 {
		t.Fatalf("Locks() = %v, want %v", m.Locks(), want)
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("missing %+v in %v", k, got)
		}
	}
	m.Unlock(h1.p, tag, AccessShareLock)
	m.Unlock(h1.p, tag, AccessShareLock)
	m.Unlock(h2.p, tag, RowShareLock)
	close(h1.done)
	close(h2.done)
	if err := result(t, c1, "tuple waiter"); err != nil {
		t.Fatal(err)
	}
	if err := result(t, c2, "xact waiter"); err != nil {
		t.Fatal(err)
	}
	ls := m.Locks()
	if len(ls) != 1 || !ls[0].Granted || ls[0].Xid != 3 {
		t.Fatalf("after release: %v", ls)
	}
	m.Unlock(tw.p, tag, AccessExclusiveLock)
	if ls := m.Locks(); len(ls) != 0 {
		t.Fatalf("after all released: %v", ls)
	}
	empty(t, m)
}

// A granted waiter that at once waits again (for a transaction, as
// heap_lock_tuple does after taking the tuple lock) must be registered once.
// The releaser used to remove the grantee's registry entry after waking it;
// when the grantee had registered its next wait in between, the entry was
// linked to itself and a concurrent walk of the registry (the detector,
// Locks()) never ended. The hook holds the releaser right after the wake-up
// until the grantee is waiting again.
func TestRegistryAfterGrantAndWaitAgain(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := tup("row")
	// An awaited xid whose partition is not tag's: the grantee must be able
	// to publish its next wait while the releaser holds tag's partition.
	var awaited *xact
	for xid := uint64(1000); ; xid++ {
		if m.partOf(m.hash(Tag{Kind: TagTransaction, Xid: xid})) != m.partOf(m.hash(tag)) {
			awaited = newXact(m, xid)
			break
		}
	}
	holder, p := m.NewProc(1), m.NewProc(2)
	chain := func() int { // length of p's registry chain, bounded
		s := m.regOf(p.xid)
		s.mu.RLock()
		defer s.mu.RUnlock()
		n := 0
		for q := s.procs[p.xid]; q != nil && n < 3; q = q.regNext {
			n++
		}
		return n
	}
	var seen atomic.Int64
	m.testAfterGrant = func(q *Proc) {
		if q != p {
			return
		}
		for !waitsForXact(m, p, awaited.p.Xid()) {
			time.Sleep(20 * time.Microsecond)
		}
		seen.Store(int64(chain()))
	}
	mustLock(t, m, holder, tag, ExclusiveLock)
	second := async(func() error {
		if err := m.Lock(ctx, p, tag, ExclusiveLock, Wait{}); err != nil {
			return err
		}
		return m.WaitXacts(ctx, p, []AwaitedXact{awaited.X()}, Wait{})
	})
	eventually(t, "p queues behind the holder", func() bool { return waiting(m, p.Xid(), tag) })
	m.Unlock(holder, tag, ExclusiveLock) // wakes p; the hook runs here
	if n := seen.Load(); n != 1 {
		t.Fatalf("p's registry chain had length %d (>= 3: linked to itself) while it waited again, want 1", n)
	}
	close(awaited.done)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	m.Unlock(p, tag, ExclusiveLock)
	empty(t, m)
}

// waitsForXact reports whether p's current wait is one for transaction xid,
// read from p itself (Locks() walks the registry this test inspects).
func waitsForXact(m *Manager, p *Proc, xid uint64) bool {
	w := p.cur.Load()
	if w == nil || w.lock != nil {
		return false
	}
	for _, x := range w.xacts {
		if x.Xid == xid {
			return true
		}
	}
	return false
}
