package lockmgr

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// PostgreSQL's conflict table (lock.c), spelled out independently of conflictTab.
var pgConflicts = map[LockMode][]LockMode{
	AccessShareLock:          {AccessExclusiveLock},
	RowShareLock:             {ExclusiveLock, AccessExclusiveLock},
	RowExclusiveLock:         {ShareLock, ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock},
	ShareUpdateExclusiveLock: {ShareUpdateExclusiveLock, ShareLock, ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock},
	ShareLock:                {RowExclusiveLock, ShareUpdateExclusiveLock, ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock},
	ShareRowExclusiveLock:    {RowExclusiveLock, ShareUpdateExclusiveLock, ShareLock, ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock},
	ExclusiveLock:            {RowShareLock, RowExclusiveLock, ShareUpdateExclusiveLock, ShareLock, ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock},
	AccessExclusiveLock:      {AccessShareLock, RowShareLock, RowExclusiveLock, ShareUpdateExclusiveLock, ShareLock, ShareRowExclusiveLock, ExclusiveLock, AccessExclusiveLock},
}

func TestConflictTable(t *testing.T) {
	m := newManager(t, "default", time.Second)
	ctx := context.Background()
	for a := AccessShareLock; a <= AccessExclusiveLock; a++ {
		for b := AccessShareLock; b <= AccessExclusiveLock; b++ {
			want := false
			for _, c := range pgConflicts[a] {
				want = want || c == b
			}
			if got := Conflicts(a, b); got != want {
				t.Errorf("Conflicts(%s, %s) = %v, want %v", a, b, got, want)
			}
			if Conflicts(a, b) != Conflicts(b, a) {
				t.Errorf("table not symmetric at %s/%s", a, b)
			}
			// Behaviour: p1 holds a, p2 asks b without waiting.
			p1, p2 := m.NewProc(1), m.NewProc(2)
			tag := tup("k")
			mustLock(t, m, p1, tag, a)
			err := m.Lock(ctx, p2, tag, b, Wait{NoWait: true})
			switch {
			case want && !errors.Is(err, ErrWouldBlock):
				t.Errorf("held %s, requested %s: got %v, want ErrWouldBlock", a, b, err)
			case !want && err != nil:
				t.Errorf("held %s, requested %s: got %v, want grant", a, b, err)
			case !want:
				m.Unlock(p2, tag, b)
			}
			m.Unlock(p1, tag, a)
			// A proc never conflicts with itself.
			mustLock(t, m, p1, tag, a)
			if err := m.Lock(ctx, p1, tag, b, Wait{NoWait: true}); err != nil {
				t.Errorf("self: held %s, requested %s: %v", a, b, err)
			}
			m.Unlock(p1, tag, b)
			m.Unlock(p1, tag, a)
		}
	}
	if Conflicts(NoLock, AccessExclusiveLock) || Conflicts(AccessExclusiveLock, LockMode(9)) {
		t.Error("NoLock / invalid modes must conflict with nothing")
	}
	if err := m.Lock(ctx, m.NewProc(1), tup("k"), NoLock, Wait{}); err == nil {
		t.Error("Lock(NoLock) accepted")
	}
	empty(t, m)
}

func TestFIFOWakeOrder(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := tup("row")
	h := m.NewProc(100)
	mustLock(t, m, h, tag, AccessExclusiveLock)
	var mu sync.Mutex
	var order []uint64
	var results []<-chan error
	for i := uint64(1); i <= 6; i++ {
		p := m.NewProc(i)
		results = append(results, async(func() error {
			if err := m.Lock(ctx, p, tag, AccessExclusiveLock, Wait{}); err != nil {
				return err
			}
			mu.Lock()
			order = append(order, p.Xid())
			mu.Unlock()
			m.Unlock(p, tag, AccessExclusiveLock)
			return nil
		}))
		eventually(t, "waiter queued", func() bool { return waiting(m, i, tag) })
	}
	m.Unlock(h, tag, AccessExclusiveLock)
	for i, c := range results {
		if err := result(t, c, "waiter"); err != nil {
			t.Fatalf("waiter %d: %v", i+1, err)
		}
	}
	for i, x := range order {
		if x != uint64(i+1) {
			t.Fatalf("wake order %v, want 1..6", order)
		}
	}
	if got := m.Stats().LockWaits; got != 6 {
		t.Errorf("LockWaits = %d, want 6", got)
	}
	empty(t, m)
}

// A request compatible with every granted mode still waits behind an earlier
// conflicting waiter; releases wake exactly the compatible prefix.
func TestCompatibleBehindConflictingWaiter(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := tup("row")
	p1, p2, p3, p4, p5 := m.NewProc(1), m.NewProc(2), m.NewProc(3), m.NewProc(4), m.NewProc(5)
	mustLock(t, m, p1, tag, ExclusiveLock) // FOR NO KEY UPDATE
	// p2, p3: FOR SHARE (RowShare; conflicts with p1's Exclusive, not with
	// each other); p4: FOR UPDATE; p5: FOR KEY SHARE (AccessShare), which is
	// compatible with p1's Exclusive.
	c2 := async(func() error { return m.Lock(ctx, p2, tag, RowShareLock, Wait{}) })
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	c3 := async(func() error { return m.Lock(ctx, p3, tag, RowShareLock, Wait{}) })
	eventually(t, "p3 waits", func() bool { return waiting(m, 3, tag) })
	c4 := async(func() error { return m.Lock(ctx, p4, tag, AccessExclusiveLock, Wait{}) })
	eventually(t, "p4 waits", func() bool { return waiting(m, 4, tag) })
	// AccessShare is compatible with p1's Exclusive, but conflicts with p4's
	// queued AccessExclusive request: it must wait.
	c5 := async(func() error { return m.Lock(ctx, p5, tag, AccessShareLock, Wait{}) })
	eventually(t, "p5 waits", func() bool { return waiting(m, 5, tag) })
	noResult(t, c5, "p5")

	m.Unlock(p1, tag, ExclusiveLock)
	// p2 and p3 are granted together; p4 (conflicts with them) and p5 (behind p4) wait.
	for _, c := range []<-chan error{c2, c3} {
		if err := result(t, c, "share waiter"); err != nil {
			t.Fatal(err)
		}
	}
	noResult(t, c4, "p4")
	noResult(t, c5, "p5")
	if !waiting(m, 4, tag) || !waiting(m, 5, tag) {
		t.Fatal("p4 and p5 should still be waiting")
	}
	m.Unlock(p2, tag, RowShareLock)
	noResult(t, c4, "p4")
	m.Unlock(p3, tag, RowShareLock)
	if err := result(t, c4, "p4"); err != nil {
		t.Fatal(err)
	}
	noResult(t, c5, "p5")
	m.Unlock(p4, tag, AccessExclusiveLock)
	if err := result(t, c5, "p5"); err != nil {
		t.Fatal(err)
	}
	m.Unlock(p5, tag, AccessShareLock)
	empty(t, m)
}

func TestNoWait(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := tup("row")
	p1, p2 := m.NewProc(1), m.NewProc(2)
	mustLock(t, m, p1, tag, AccessExclusiveLock)
	if err := m.Lock(ctx, p2, tag, AccessShareLock, Wait{NoWait: true}); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("got %v, want ErrWouldBlock", err)
	}
	if n := len(m.Locks()); n != 1 {
		t.Fatalf("Locks() has %d entries after a failed NOWAIT, want 1", n)
	}
	// NOWAIT also fails behind a conflicting waiter.
	p3 := m.NewProc(3)
	c3 := async(func() error { return m.Lock(ctx, p3, tag, ExclusiveLock, Wait{}) })
	eventually(t, "p3 waits", func() bool { return waiting(m, 3, tag) })
	m.Unlock(p1, tag, AccessExclusiveLock)
	if err := result(t, c3, "p3"); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx, p2, tag, RowShareLock, Wait{NoWait: true}); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("got %v, want ErrWouldBlock", err)
	}
	m.Unlock(p3, tag, ExclusiveLock)
	if err := m.Lock(ctx, p2, tag, RowShareLock, Wait{NoWait: true}); err != nil {
		t.Fatal(err)
	}
	m.Unlock(p2, tag, RowShareLock)
	if got := m.Stats().LockWaits; got != 1 {
		t.Errorf("LockWaits = %d, want 1", got)
	}
	empty(t, m)
}

// Lock timeout and ctx cancellation remove the waiter and wake those behind it.
func TestTimeoutAndCancel(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	tag := tup("row")
	p1, p2, p3 := m.NewProc(1), m.NewProc(2), m.NewProc(3)
	mustLock(t, m, p1, tag, RowShareLock)

	// p2 wants FOR UPDATE with a lock timeout; p3 (FOR SHARE, compatible with
	// p1) queues behind p2 and must be woken when p2 gives up.
	c2 := async(func() error {
		return m.Lock(context.Background(), p2, tag, AccessExclusiveLock, Wait{Timeout: 50 * time.Millisecond})
	})
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	c3 := async(func() error { return m.Lock(context.Background(), p3, tag, RowShareLock, Wait{}) })
	if err := result(t, c2, "p2"); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("p2: got %v, want ErrLockTimeout", err)
	}
	if err := result(t, c3, "p3"); err != nil {
		t.Fatalf("p3 not woken after p2's timeout: %v", err)
	}
	m.Unlock(p3, tag, RowShareLock)

	// ctx cancellation.
	ctx, cancel := context.WithCancel(context.Background())
	c2 = async(func() error { return m.Lock(ctx, p2, tag, AccessExclusiveLock, Wait{}) })
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	c3 = async(func() error { return m.Lock(context.Background(), p3, tag, AccessShareLock, Wait{}) })
	eventually(t, "p3 waits", func() bool { return waiting(m, 3, tag) })
	cancel()
	err := result(t, c2, "p2")
	if !errors.Is(err, context.Canceled) || !errors.Is(err, ctx.Err()) {
		t.Fatalf("p2: got %v, want context.Canceled", err)
	}
	if err := result(t, c3, "p3"); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitingAny(m, 2); ok {
		t.Fatal("p2 still shows as waiting")
	}
	m.Unlock(p3, tag, AccessShareLock)

	// Deadline exceeded through ctx, and an already-cancelled ctx.
	dctx, dcancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer dcancel()
	if err := m.Lock(dctx, p2, tag, AccessExclusiveLock, Wait{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want DeadlineExceeded", err)
	}
	if err := m.Lock(ctx, p2, tag, AccessExclusiveLock, Wait{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want Canceled", err)
	}
	m.Unlock(p1, tag, RowShareLock)
	empty(t, m)
}

func TestReentrant(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := tup("row")
	p1, p2 := m.NewProc(1), m.NewProc(2)
	mustLock(t, m, p1, tag, AccessShareLock)
	mustLock(t, m, p1, tag, AccessShareLock)
	mustLock(t, m, p1, tag, AccessExclusiveLock) // no self-conflict
	c2 := async(func() error { return m.Lock(ctx, p2, tag, AccessShareLock, Wait{}) })
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	m.Unlock(p1, tag, AccessExclusiveLock)
	if err := result(t, c2, "p2"); err != nil {
		t.Fatal(err)
	}
	m.Unlock(p2, tag, AccessShareLock)
	// p1 still holds AccessShare twice.
	c2 = async(func() error { return m.Lock(ctx, p2, tag, AccessExclusiveLock, Wait{}) })
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	m.Unlock(p1, tag, AccessShareLock)
	noResult(t, c2, "p2")
	m.Unlock(p1, tag, AccessShareLock)
	if err := result(t, c2, "p2"); err != nil {
		t.Fatal(err)
	}
	m.Unlock(p2, tag, AccessExclusiveLock)
	m.Unlock(p2, tag, AccessExclusiveLock) // not held: no-op
	m.Unlock(p1, tag, RowShareLock)        // never held: no-op
	empty(t, m)
}

// PostgreSQL's JoinWaitQueue: a holder whose held modes conflict with an
// earlier waiter's request goes ahead of it (granted at once if possible), and
// gets an immediate deadlock error if that waiter also holds a mode
// conflicting with its request.
func TestUpgradeAheadOfWaiters(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	ctx := context.Background()
	tag := tup("row")
	p1, p2, p3 := m.NewProc(1), m.NewProc(2), m.NewProc(3)
	mustLock(t, m, p1, tag, AccessShareLock)
	c2 := async(func() error { return m.Lock(ctx, p2, tag, AccessExclusiveLock, Wait{}) })
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	// With NOWAIT the conflict with p2's request fails at once, before the
	// queue-jumping rule (LockAcquireExtended; PostgreSQL's lock-nowait spec).
	if err := m.Lock(ctx, p1, tag, ExclusiveLock, Wait{NoWait: true}); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("NOWAIT upgrade ahead of a waiter: %v, want ErrWouldBlock", err)
	}
	// p1 upgrades: its AccessShare blocks p2, so it goes first and is granted.
	if err := m.Lock(ctx, p1, tag, ExclusiveLock, Wait{}); err != nil {
		t.Fatalf("upgrade ahead of a waiter: %v", err)
	}
	m.Unlock(p1, tag, ExclusiveLock)
	m.Unlock(p1, tag, AccessShareLock)
	if err := result(t, c2, "p2"); err != nil {
		t.Fatal(err)
	}
	m.Unlock(p2, tag, AccessExclusiveLock)

	// Both hold AccessShare; p2 waits for AccessExclusive (blocked by p1);
	// p1 asks AccessExclusive too: p2 holds AccessShare, which conflicts.
	mustLock(t, m, p1, tag, AccessShareLock)
	mustLock(t, m, p2, tag, AccessShareLock)
	mustLock(t, m, p3, tag, RowShareLock)
	c2 = async(func() error { return m.Lock(ctx, p2, tag, AccessExclusiveLock, Wait{}) })
	eventually(t, "p2 waits", func() bool { return waiting(m, 2, tag) })
	if err := m.Lock(ctx, p1, tag, AccessExclusiveLock, Wait{}); !isDeadlock(err) {
		t.Fatalf("got %v, want immediate ErrDeadlock", err)
	}
	if got := m.Stats().DeadlocksFound; got != 1 {
		t.Errorf("DeadlocksFound = %d, want 1", got)
	}
	m.Unlock(p1, tag, AccessShareLock)
	m.Unlock(p3, tag, RowShareLock)
	if err := result(t, c2, "p2"); err != nil {
		t.Fatal(err)
	}
	m.Unlock(p2, tag, AccessExclusiveLock)
	m.Unlock(p2, tag, AccessShareLock)
	empty(t, m)
}

// Hammer: random modes on a few tags from many goroutines; every grant must
// be compatible with every other proc's concurrent grant.
func TestConcurrentInvariants(t *testing.T) {
	m := newManager(t, "default", 20*time.Millisecond)
	const tags, workers, ops = 4, 16, 300
	type held struct {
		mu    sync.Mutex
		modes map[uint64][]LockMode
	}
	hs := make([]*held, tags)
	for i := range hs {
		hs[i] = &held{modes: map[uint64][]LockMode{}}
	}
	var violations atomic.Int64
	stop := make(chan struct{})
	var snapWG sync.WaitGroup
	snapWG.Add(1)
	go func() { // Locks() concurrently with everything else
		defer snapWG.Done()
		for {
			select {
			case <-stop:
				return
			default:
				_ = m.Locks()
				time.Sleep(100 * time.Microsecond)
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			p := m.NewProc(uint64(w + 1))
			modes := []LockMode{AccessShareLock, RowShareLock, ExclusiveLock, AccessExclusiveLock}
			for i := 0; i < ops; i++ {
				k := r.IntN(tags)
				mode := modes[r.IntN(len(modes))]
				tag := tup(string(rune('a' + k)))
				err := m.Lock(context.Background(), p, tag, mode, Wait{Timeout: 200 * time.Millisecond})
				if err != nil {
					if !errors.Is(err, ErrLockTimeout) && !isDeadlock(err) {
						t.Error(err)
					}
					continue
				}
				h := hs[k]
				h.mu.Lock()
				for x, ms := range h.modes {
					for _, hm := range ms {
						if x != p.Xid() && Conflicts(hm, mode) {
							violations.Add(1)
						}
					}
				}
				h.modes[p.Xid()] = append(h.modes[p.Xid()], mode)
				h.mu.Unlock()
				if r.IntN(4) == 0 {
					time.Sleep(time.Duration(r.IntN(200)) * time.Microsecond)
				}
				h.mu.Lock()
				ms := h.modes[p.Xid()]
				h.modes[p.Xid()] = ms[:len(ms)-1]
				if len(ms) == 1 {
					delete(h.modes, p.Xid())
				}
				h.mu.Unlock()
				m.Unlock(p, tag, mode)
			}
		}()
	}
	wg.Wait()
	close(stop)
	snapWG.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d conflicting grants", v)
	}
	empty(t, m)
}

// Tags whose hashes collide share a map slot, chained.
func TestHashCollisionChain(t *testing.T) {
	m := newManager(t, "default", time.Minute)
	pt := &m.parts[0]
	pt.mu.Lock()
	defer pt.mu.Unlock()
	a, b, c := pt.get(tup("a"), 42), pt.get(tup("b"), 42), pt.get(tup("c"), 42)
	if a == b || b == c || pt.lookup(tup("a"), 42) != a || pt.lookup(tup("b"), 42) != b || pt.lookup(tup("c"), 42) != c {
		t.Fatal("chain lookup")
	}
	if pt.lookup(tup("a"), 43) != nil || pt.lookup(tup("d"), 42) != nil {
		t.Fatal("phantom lock")
	}
	pt.release(b) // middle of the chain
	if pt.lookup(tup("b"), 42) != nil || pt.lookup(tup("a"), 42) != a || pt.lookup(tup("c"), 42) != c {
		t.Fatal("unlink middle")
	}
	pt.release(c) // head
	pt.release(a)
	if len(pt.locks) != 0 {
		t.Fatalf("%d map entries left", len(pt.locks))
	}
}

// TestShutdownEndsWaits: Shutdown wakes a blocked Lock and a blocked
// WaitXacts with ErrShutdown, leaves no waiter behind, and later requests
// that would block fail at once (those that can be granted still are).
func TestShutdownEndsWaits(t *testing.T) {
	m := newManager(t, "default", time.Second)
	ctx := context.Background()
	holder, w1, w2 := m.NewProc(1), m.NewProc(2), m.NewProc(3)
	if err := m.Lock(ctx, holder, tup("a"), AccessExclusiveLock, Wait{}); err != nil {
		t.Fatal(err)
	}
	running := make(chan struct{}) // transaction 1 never ends
	e1 := make(chan error, 1)
	go func() { e1 <- m.Lock(ctx, w1, tup("a"), AccessExclusiveLock, Wait{}) }()
	e2 := make(chan error, 1)
	go func() { e2 <- m.WaitXacts(ctx, w2, []AwaitedXact{{Xid: 1, Done: running}}, Wait{}) }()
	eventually(t, "both wait", func() bool {
		_, ok1 := waitingAny(m, 2)
		_, ok2 := waitingAny(m, 3)
		return ok1 && ok2
	})
	m.Shutdown()
	for i, ch := range []chan error{e1, e2} {
		if err := <-ch; !errors.Is(err, ErrShutdown) {
			t.Fatalf("waiter %d: got %v, want ErrShutdown", i, err)
		}
	}
	if n := countWaiters(m); n != 0 {
		t.Fatalf("%d waiters left after Shutdown", n)
	}
	if err := m.Lock(ctx, w1, tup("a"), AccessExclusiveLock, Wait{}); !errors.Is(err, ErrShutdown) {
		t.Fatalf("a later blocking Lock: got %v, want ErrShutdown", err)
	}
	if err := m.WaitXacts(ctx, w2, []AwaitedXact{{Xid: 1, Done: running}}, Wait{}); !errors.Is(err, ErrShutdown) {
		t.Fatalf("a later WaitXacts: got %v, want ErrShutdown", err)
	}
	if err := m.Lock(ctx, w1, tup("b"), AccessExclusiveLock, Wait{}); err != nil {
		t.Fatalf("a grantable Lock after Shutdown: %v", err)
	}
	m.Shutdown() // idempotent
}
