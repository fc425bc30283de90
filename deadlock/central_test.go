package deadlock

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// When the detector goroutine does not run (stall stands for the Go scheduler
// leaving it runnable behind a busy P), an overdue check is run by the next
// waiter that arms a wait, inside Arm, with PostgreSQL's victim rule intact;
// a check that is not yet overdue is never run early.
func TestDefaultHelpWhenGoroutineStalled(t *testing.T) {
	const timeout = 100 * time.Millisecond
	g := newFake()
	stall := make(chan struct{})
	d, err := newDetector(StrategyDefault, timeout, g, stall)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	// a and b wait for each other; b began half a timeout after a, before
	// a's deadline, so a's check (due first) finds the cycle: a is the victim.
	// Both deadlines are long past.
	a, b := g.node("a"), g.node("b")
	g.mu.Lock()
	g.edges[a], g.edges[b] = []*Wait{b}, []*Wait{a}
	d.Publish(a)
	d.Publish(b)
	g.mu.Unlock()
	now := time.Now()
	a.Start = now.Add(-3 * timeout)
	b.Start = now.Add(-5 * timeout / 2)
	d.Arm(a)
	d.Arm(b)
	// Their own Arm calls ran nothing: as of their Start, nothing was due.
	if s := d.Stats(); s.Checks != 0 || s.Helped != 0 {
		t.Fatalf("checks ran before any waiter found the detector late: %+v", s)
	}

	// A bystander waiting on nothing arms now: the goroutine is overdue by
	// two timeouts, so this Arm runs the due checks, in deadline order.
	g.mu.Lock()
	x := g.node("x")
	d.Publish(x)
	g.mu.Unlock()
	d.Arm(x)
	if a.State() != Victim || b.State() != Waiting {
		t.Fatalf("after the helping Arm: a %v, b %v; want a the victim, b waiting", a.State(), b.State())
	}
	s := d.Stats()
	if s.Checks != 2 || s.Helped != 2 || s.Found != 1 {
		t.Fatalf("stats %+v: want 2 checks (a's and b's), both by the helper, 1 found", s)
	}
	// x's own check is not due for a timeout: nobody ran it.
	if x.checked.Load() {
		t.Fatal("x was checked before its deadline")
	}
	if s.MaxLateness < timeout {
		t.Fatalf("lateness %v not reported", s.MaxLateness)
	}

	// Waits arming while nothing is overdue never help.
	for i := range 100 {
		g.mu.Lock()
		y := g.node(fmt.Sprint("y", i))
		d.Publish(y)
		g.mu.Unlock()
		d.Arm(y)
	}
	if s2 := d.Stats(); s2.Checks != s.Checks || s2.Helped != s.Helped {
		t.Fatalf("checks ran early: before %+v, after %+v", s, s2)
	}
	b.Resolve(Aborted)
	x.Resolve(Aborted)
}

// A helper whose walker finds a lock busy does not wait: the check goes back
// to the queue, unchecked and first in line, the helper stops, and the next
// helper (or the goroutine) runs it with the same verdict.
func TestDefaultHelperYieldsOnBusyLock(t *testing.T) {
	const timeout = 100 * time.Millisecond
	g := newFake()
	stall := make(chan struct{})
	d, err := newDetector(StrategyDefault, timeout, g, stall)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	g.mu.Lock()
	a, b := g.node("a"), g.node("b")
	g.edges[a], g.edges[b] = []*Wait{b}, []*Wait{a}
	d.Publish(a)
	d.Publish(b)
	g.mu.Unlock()
	now := time.Now()
	a.Start = now.Add(-3 * timeout)
	b.Start = now.Add(-5 * timeout / 2)
	d.Arm(a)
	d.Arm(b)
	bystander := func(name string) *Wait {
		g.mu.Lock()
		x := g.node(name)
		d.Publish(x)
		g.mu.Unlock()
		d.Arm(x)
		return x
	}

	g.busy.Store(true)
	x := bystander("x")
	if s := d.Stats(); s.Yielded != 1 || s.Helped != 0 || s.Checks != 0 || a.State() != Waiting || a.checked.Load() {
		t.Fatalf("busy lock: stats %+v, a %v (checked %v); want one yield, a unchecked and waiting", s, a.State(), a.checked.Load())
	}
	g.busy.Store(false)
	y := bystander("y")
	if s := d.Stats(); s.Helped != 2 || s.Found != 1 || a.State() != Victim || b.State() != Waiting {
		t.Fatalf("lock free: stats %+v, a %v, b %v; want a the victim, found by the next helper", s, a.State(), b.State())
	}
	for _, w := range []*Wait{b, x, y} {
		w.Resolve(Aborted)
	}
}

// Helpers and the goroutine share one queue under one token: with waiters
// arming all the time (so helping happens whenever the goroutine is late),
// every injected 2-cycle gets exactly one victim, the one PostgreSQL's rule
// names. Run under -race, this also checks that the token orders every
// access to the queue and the searcher.
func TestDefaultHelpersAndGoroutineAgree(t *testing.T) {
	const timeout = 2 * time.Millisecond
	const cycles = 40
	g := newFake()
	d, err := New(StrategyDefault, timeout, g)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()

	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				y := &Wait{}
				y.Init("bystander")
				g.mu.Lock()
				d.Publish(y)
				g.mu.Unlock()
				d.Arm(y)
				y.Resolve(Granted)
			}
		}()
	}
	type pair struct{ a, b *Wait }
	var pairs []pair
	for i := range cycles {
		g.mu.Lock() // node writes the graph's map, which checks read
		a, b := g.node(fmt.Sprint("a", i)), g.node(fmt.Sprint("b", i))
		g.edges[a], g.edges[b] = []*Wait{b}, []*Wait{a}
		d.Publish(a)
		d.Publish(b)
		g.mu.Unlock()
		// b began 0.2 ms before a's deadline: a's check finds the cycle.
		b.Start = a.Start.Add(timeout - 200*time.Microsecond)
		d.Arm(a)
		d.Arm(b)
		pairs = append(pairs, pair{a, b})
	}
	waitFor(t, func() bool { return d.Stats().Found == cycles })
	stop.Store(true)
	wg.Wait()
	for i, p := range pairs {
		if p.a.State() != Victim || p.b.State() != Waiting {
			t.Errorf("cycle %d: a %v, b %v; want a the only victim", i, p.a.State(), p.b.State())
		}
		p.b.Resolve(Aborted)
	}
	t.Logf("stats %+v", d.Stats())
}
