package lockmgr

import (
	"context"
	"errors"
	"sort"
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

func (x *xact) X() Xact { return Xact{Xid: x.p.Xid(), Done: x.done} }

func TestWaitXacts(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	w := newXact(m, 10)
	a, b, c := newXact(m, 1), newXact(m, 2), newXact(m, 3)
	close(c.done) // already ended

	// Fast path: all ended (and own xid ignored).
	if err := m.WaitXacts(ctx, w.p, []Xact{c.X(), w.X()}, Wait{}); err != nil {
		t.Fatal(err)
	}
	if err := m.WaitXacts(ctx, w.p, []Xact{a.X(), c.X()}, Wait{NoWait: true}); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("got %v, want ErrWouldBlock", err)
	}
	if got := m.Stats().LockWaits; got != 0 {
		t.Fatalf("LockWaits = %d after non-blocking calls", got)
	}

	res := async(func() error { return m.WaitXacts(ctx, w.p, []Xact{a.X(), b.X(), c.X()}, Wait{}) })
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
	err := m.WaitXacts(context.Background(), w.p, []Xact{a.X()}, Wait{Timeout: 30 * time.Millisecond})
	if !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("got %v, want ErrLockTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	res := async(func() error { return m.WaitXacts(ctx, w.p, []Xact{a.X()}, Wait{}) })
	eventually(t, "waiting", func() bool { _, ok := waitingAny(m, 10); return ok })
	cancel()
	if err := result(t, res, "WaitXacts"); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if err := m.WaitXacts(ctx, w.p, []Xact{a.X()}, Wait{}); !errors.Is(err, context.Canceled) {
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
	c2 := async(func() error { return m.WaitXacts(ctx, xw.p, []Xact{h1.X(), h2.X()}, Wait{}) })
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
