package deadlock

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeGraph is an explicit wait-for graph. Edges are set before a node is
// published (edges appear only with publications, as Graph requires).
type fakeGraph struct {
	mu       sync.RWMutex
	edges    map[*Wait][]*Wait
	lockAlls atomic.Int64
	busy     atomic.Bool // UnlockedNoWait walkers find every lock busy
}

func newFake() *fakeGraph { return &fakeGraph{edges: map[*Wait][]*Wait{}} }

func (g *fakeGraph) NewWalker(l Locking) Walker { return &fakeWalker{g: g, l: l} }
func (g *fakeGraph) LockAll(excl bool) {
	g.lockAlls.Add(1)
	if excl {
		g.mu.Lock()
	} else {
		g.mu.RLock()
	}
}
func (g *fakeGraph) UnlockAll(excl bool) {
	if excl {
		g.mu.Unlock()
	} else {
		g.mu.RUnlock()
	}
}

func (g *fakeGraph) node(name string, to ...*Wait) *Wait {
	w := &Wait{}
	w.Init(name)
	g.edges[w] = to
	return w
}

type fakeWalker struct {
	g          *fakeGraph
	l          Locking
	incomplete bool
}

func (w *fakeWalker) Begin(uint64, *Wait, Expansion) { w.incomplete = false }
func (*fakeWalker) Release()                         {}
func (w *fakeWalker) Incomplete() bool               { return w.incomplete }
func (w *fakeWalker) Successors(n *Wait, visit func(*Wait) bool) bool {
	if w.l.Unlocked() { // like lockmgr: one brief read lock per lookup
		if w.l == UnlockedNoWait && w.g.busy.Load() {
			w.incomplete = true // lockmgr's walker when a partition is busy
			return false
		}
		w.g.mu.RLock()
		defer w.g.mu.RUnlock()
	}
	for _, s := range w.g.edges[n] {
		if !visit(s) {
			return false
		}
	}
	return true
}

func names(p []*Wait) []string {
	var out []string
	for _, w := range p {
		out = append(out, w.Owner.(string))
	}
	return out
}

func TestSearchCycleThroughStartOnly(t *testing.T) {
	g := newFake()
	a := g.node("a")
	b := g.node("b")
	c := g.node("c")
	d := g.node("d", a)
	g.edges[a] = []*Wait{b}
	g.edges[b] = []*Wait{d, c}
	g.edges[c] = []*Wait{a}
	s := newSearcher(&fakeWalker{g: g, l: LockedExclusive})
	p := s.find(a, false, time.Time{}, 0)
	if len(p) < 3 || p[0] != a {
		t.Fatalf("path %v", names(p))
	}
	for i := range p {
		next := p[(i+1)%len(p)]
		found := false
		for _, e := range g.edges[p[i]] {
			found = found || e == next
		}
		if !found {
			t.Fatalf("path %v is not a cycle of the graph", names(p))
		}
	}
	// e waits into the cycle but is not on it: no cycle through e.
	e := g.node("e", a)
	if p := s.find(e, false, time.Time{}, 0); p != nil {
		t.Fatalf("cycle through e reported: %v", names(p))
	}
	// Filters: a node that is no longer waiting breaks the cycle.
	c.Resolve(Aborted)
	d.Resolve(Aborted)
	if p := s.find(a, false, time.Time{}, 0); p != nil {
		t.Fatalf("cycle through ended waits: %v", names(p))
	}
}

func TestSearchAsOfAndStamps(t *testing.T) {
	g := newFake()
	d := &Detector{}
	a, b := g.node("a"), g.node("b")
	g.edges[a], g.edges[b] = []*Wait{b}, []*Wait{a}
	d.Publish(a)
	d.Publish(b)
	b.Start = a.Start.Add(time.Second)
	s := newSearcher(&fakeWalker{g: g, l: LockedExclusive})
	if p := s.find(a, true, a.Start.Add(500*time.Millisecond), 0); p != nil {
		t.Fatal("b began after the check's instant and must be ignored")
	}
	if p := s.find(a, true, a.Start.Add(time.Second), 0); len(p) != 2 {
		t.Fatalf("path %v", names(p))
	}
	b.stamp.Store(d.Epoch())
	if p := s.find(a, false, time.Time{}, d.Epoch()); p != nil || s.pruned != 1 {
		t.Fatalf("stamped node not pruned (path %v, pruned %d)", names(p), s.pruned)
	}
	if p := s.find(a, false, time.Time{}, d.Epoch()+1); p == nil {
		t.Fatal("a stamp of another epoch must not prune")
	}
	if !stillWaiting([]*Wait{a, b}) {
		t.Fatal("validation")
	}
	a.Resolve(Granted)
	if stillWaiting([]*Wait{a, b}) || !a.Settled(0) || b.Settled(0) || !b.Settled(d.Epoch()) {
		t.Fatal("states")
	}
}

func TestResolveOnce(t *testing.T) {
	w := &Wait{}
	w.Init(nil)
	var wins atomic.Int32
	var wg sync.WaitGroup
	for _, s := range []State{Granted, Victim, Aborted, Granted, Victim} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if w.Resolve(s) {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	<-w.Done()
	if wins.Load() != 1 || w.State() == Waiting || w.Resolve(Waiting) {
		t.Fatalf("wins %d state %v", wins.Load(), w.State())
	}
	for _, s := range []State{Waiting, Granted, Victim, Aborted, State(9)} {
		_ = s.String()
	}
}

func TestNew(t *testing.T) {
	if _, err := New("bogus", time.Second, newFake()); err == nil {
		t.Fatal("unknown strategy accepted")
	}
	if _, err := New("", 0, newFake()); err == nil {
		t.Fatal("zero timeout accepted")
	}
	for _, s := range Strategies() {
		d, err := New(s, time.Second, newFake())
		if err != nil {
			t.Fatal(err)
		}
		if d.Strategy() != s || d.Timeout() != time.Second {
			t.Fatal("accessors")
		}
		d.Close()
		d.Close()
	}
}

// ring publishes n waits forming a cycle, spaced as asked, and arms them.
func ring(g *fakeGraph, d *Detector, n int, gap func(i int)) []*Wait {
	ws := make([]*Wait, n)
	for i := range ws {
		ws[i] = g.node(string(rune('a' + i)))
	}
	for i := range ws {
		if i > 0 {
			gap(i)
		}
		g.mu.Lock()
		g.edges[ws[i]] = []*Wait{ws[(i+1)%n]}
		d.Publish(ws[i])
		g.mu.Unlock()
		d.Arm(ws[i])
	}
	return ws
}

func victims(ws []*Wait) []int {
	var v []int
	for i, w := range ws {
		if w.State() == Victim {
			v = append(v, i)
		}
	}
	return v
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timeout")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestVictimRuleEveryStrategy(t *testing.T) {
	const timeout = 150 * time.Millisecond
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, s := range Strategies() {
		if s == StrategyOff {
			continue
		}
		for _, far := range []bool{false, true} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.Run(s+map[bool]string{false: "/close", true: "/far"}[far], func(t *testing.T) {
					g := newFake()
					d, err := New(s, timeout, g)
					if err != nil {
						t.Fatal(err)
					}
					defer d.Close()
					checks := uint64(0)
					ws := ring(g, d, 3, func(i int) {
						if far {
							checks++
							waitFor(t, func() bool { return d.Stats().Checks >= checks })
						} else {
							time.Sleep(timeout / 3)
						}
					})
					// Found is counted just before the victim is resolved.
					waitFor(t, func() bool { return d.Stats().Found == 1 && len(victims(ws)) > 0 })
					// PostgreSQL's rule from the actual start times (a loaded
					// machine can stretch "close" waits apart): the first
					// member whose deadline comes after the cycle closed.
					closed := ws[len(ws)-1].Start
					want := len(ws) - 1
					for i := len(ws) - 2; i >= 0; i-- {
						due := ws[i].Start.Add(timeout)
						if gap := due.Sub(closed); gap > -5*time.Millisecond && gap < 5*time.Millisecond {
							t.Skipf("member %d's check is due %v from the cycle's closing: too close to call", i, gap)
						}
						if !closed.After(due) {
							want = i
						}
					}
					if far && want != 2 {
						t.Fatalf("far waits began within the timeout")
					}
					if v := victims(ws); len(v) != 1 || v[0] != want {
						t.Fatalf("victims %v, want [%d]", v, want)
					}
					// The others were checked once and stay waiting.
					waitFor(t, func() bool { return d.Stats().Checks >= 3 })
					for _, w := range ws {
						if w.State() == Waiting {
							w.Resolve(Aborted)
						}
						d.Disarm(w)
					}
					if s == StrategyClassic && g.lockAlls.Load() < 3 {
						t.Fatalf("classic took all locks %d times, want one per check", g.lockAlls.Load())
					}
				})
			}()
		}
	}
}

// The default detector evaluates each check as of its deadline, so a check
// that runs late does not see waits that began after its deadline.
func TestDefaultLateCheckKeepsVictimRule(t *testing.T) {
	const timeout = 100 * time.Millisecond
	g := newFake()
	d, err := New(StrategyDefault, timeout, g)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	a, b := g.node("a"), g.node("b")
	g.edges[a], g.edges[b] = []*Wait{b}, []*Wait{a}
	d.Publish(a)
	d.Publish(b)
	// Both deadlines are already past, so both checks run in one late batch:
	// a began 3 timeouts ago, b 1 timeout ago (after a's deadline).
	now := time.Now()
	a.Start = now.Add(-3 * timeout)
	b.Start = now.Add(-timeout)
	d.Arm(b)
	d.Arm(a)
	waitFor(t, func() bool { return d.Stats().Checks == 2 })
	if a.State() != Waiting || b.State() != Victim {
		t.Fatalf("a %v b %v: want b (which closed the cycle) as the only victim", a.State(), b.State())
	}
	if s := d.Stats(); s.MaxLateness < timeout/2 {
		t.Fatalf("lateness not reported: %+v", s)
	}
}

// Off never checks anything.
func TestOff(t *testing.T) {
	g := newFake()
	d, _ := New(StrategyOff, time.Millisecond, g)
	defer d.Close()
	ws := ring(g, d, 2, func(int) {})
	time.Sleep(20 * time.Millisecond)
	if v := victims(ws); len(v) != 0 || d.Stats().Checks != 0 {
		t.Fatal("off checked")
	}
}

// single-checker: a timer firing while another check runs re-arms.
func TestSingleCheckerDefers(t *testing.T) {
	g := newFake()
	d, _ := New(StrategySingleChecker, 20*time.Millisecond, g)
	defer d.Close()
	d.busy.Store(true) // another check "runs"
	a := g.node("a")
	d.Publish(a)
	d.Arm(a)
	waitFor(t, func() bool { return d.Stats().Deferred >= 1 })
	if d.Stats().Checks != 0 {
		t.Fatal("checked while busy")
	}
	d.busy.Store(false)
	waitFor(t, func() bool { return d.Stats().Checks == 1 })
	a.Resolve(Aborted)
	d.Disarm(a)
}

// Memo: with no publication in between, a waiter proved on no cycle is pruned
// by later searches, so a pile of waiters costs O(1) per check.
func TestDefaultMemoPrunes(t *testing.T) {
	g := newFake()
	d, _ := New(StrategyDefault, 30*time.Millisecond, g)
	defer d.Close()
	root := g.node("root") // waits for nothing
	const n = 200
	ws := make([]*Wait, n)
	prev := root
	d.Publish(root)
	for i := range ws {
		ws[i] = g.node("w", prev) // w_i waits for w_{i-1}
		d.Publish(ws[i])
		prev = ws[i]
	}
	// All begin "at once" (same epoch for every check).
	for _, w := range ws {
		d.Arm(w)
	}
	waitFor(t, func() bool { return d.Stats().Checks == n })
	s := d.Stats()
	if s.Found != 0 {
		t.Fatal("false deadlock")
	}
	if s.MemoPrunes < n-1 {
		t.Fatalf("memo prunes %d, want >= %d: %+v", s.MemoPrunes, n-1, s)
	}
	for _, w := range append(ws, root) {
		w.Resolve(Aborted)
	}
}
