package deadlock

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tupled/tupled/internal/invariants"
)

// Strategy names accepted by New.
const (
	StrategyDefault       = "default"
	StrategyClassic       = "classic"
	StrategySharedFirst   = "shared-first"
	StrategySingleChecker = "single-checker"
	StrategySingleMemo    = "single-memo"
	StrategyOff           = "off"
)

// Strategies lists every strategy name New accepts.
func Strategies() []string {
	return []string{StrategyDefault, StrategyClassic, StrategySharedFirst, StrategySingleChecker, StrategySingleMemo, StrategyOff}
}

// Stats are detector counters since New.
type Stats struct {
	Checks       uint64        // checks that searched the graph
	Found        uint64        // checks that made their waiter a victim
	MemoPrunes   uint64        // nodes a search skipped because a memo stamp proved them on no cycle
	Deferred     uint64        // timer re-arms (single-checker busy, single-memo recently visited)
	Retries      uint64        // cycles found on stale observations that failed validation
	LeftToPeer   uint64        // per-waiter checks that found a cycle but left it to an earlier member's pending check
	Helped       uint64        // default: checks run by an arming waiter because the detector goroutine was late
	Yielded      uint64        // default: helpers' checks put back in the queue because a partition lock was busy
	Rearranged   uint64        // cycles that were soft deadlocks, broken by reordering wait queues (Rearranger)
	MaxCheck     time.Duration // longest single check (search time, plus lock wait for stop-the-world strategies)
	MaxLateness  time.Duration // default: longest delay between a check's deadline and its start
	TotalCheckNs uint64        // sum of check durations
}

// Detector schedules and runs deadlock checks with one strategy.
//
// The victim rule is PostgreSQL's: each wait is checked once, Timeout after it
// began; the first check that finds a cycle through its own waiter makes that
// waiter the victim (Resolve(Victim)), and no other waiter is touched. The
// strategies differ only in how and when the checks run (README.md).
//
// Concurrency: Publish, Arm and Disarm may be called from any goroutine;
// Publish must be called while holding the lock that makes the wait visible to
// the Graph, Arm and Disarm without holding any partition lock. Under the
// default strategy Arm may run overdue checks in the caller's goroutine (at
// most 32, see central.help) before it returns.
type Detector struct {
	kind    string
	timeout time.Duration
	g       Graph

	epoch atomic.Uint64 // publication counter; an edge appears only with a publication

	checks, found, memo, deferred, retries, deferredTo, helped, yielded atomic.Uint64
	rearranged                                                          atomic.Uint64
	maxCheck, maxLate, totalNs                                          atomic.Int64

	// per-waiter strategies
	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
	busy    atomic.Bool  // single-checker / single-memo: a check is running
	pools   [3]sync.Pool // *searcher per Locking

	c *central // default strategy
}

// New returns a detector running strategy ("" = default) with the given
// deadlock timeout over g.
func New(strategy string, timeout time.Duration, g Graph) (*Detector, error) {
	return newDetector(strategy, timeout, g, nil)
}

// newDetector is New; stall (tests) holds the default strategy's goroutine.
func newDetector(strategy string, timeout time.Duration, g Graph, stall chan struct{}) (*Detector, error) {
	if strategy == "" {
		strategy = StrategyDefault
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("deadlock: timeout must be positive, got %v", timeout)
	}
	d := &Detector{kind: strategy, timeout: timeout, g: g}
	switch strategy {
	case StrategyDefault:
		d.c = newCentral(d, stall)
	case StrategyClassic, StrategySharedFirst, StrategySingleChecker, StrategySingleMemo, StrategyOff:
	default:
		return nil, fmt.Errorf("deadlock: unknown strategy %q (want one of %v)", strategy, Strategies())
	}
	return d, nil
}

// Strategy returns the strategy name.
func (d *Detector) Strategy() string { return d.kind }

// Timeout returns the deadlock timeout.
func (d *Detector) Timeout() time.Duration { return d.timeout }

// timeoutOf is w's deadlock timeout: its own, or the detector's.
func (d *Detector) timeoutOf(w *Wait) time.Duration {
	if w.Timeout > 0 {
		return w.Timeout
	}
	return d.timeout
}

// deadlineOf is when w's check is due: Start + its timeout.
func (d *Detector) deadlineOf(w *Wait) time.Time { return w.Start.Add(d.timeoutOf(w)) }

// Epoch returns the publication counter: the number of waits published so far.
func (d *Detector) Epoch() uint64 { return d.epoch.Load() }

// Publish records that w has just become visible (its owner holds the lock
// under which it was made visible). It stamps w.Start and w's epoch.
func (d *Detector) Publish(w *Wait) {
	w.Start = time.Now()
	w.epoch = d.epoch.Add(1)
}

// Arm schedules w's check at w.Start + w's timeout (w.Timeout, or the
// detector's). Under the default strategy,
// if the detector's next check is more than a granule overdue, Arm first runs
// up to 32 due checks of other waits itself: its caller is about to sleep on
// w and holds no partition lock, and runs on a P that is making progress,
// which the detector goroutine, one runnable goroutine among thousands, may
// not (README.md, "The tail under the storm").
func (d *Detector) Arm(w *Wait) {
	deadline := d.deadlineOf(w)
	switch d.kind {
	case StrategyOff:
		return
	case StrategyDefault:
		d.c.arm(w, deadline)
		return
	}
	w.tmu.Lock()
	w.deadline = deadline
	if !w.disarmed {
		w.timer = time.AfterFunc(time.Until(deadline), func() { d.fire(w) })
	}
	w.tmu.Unlock()
}

// Disarm cancels w's pending check (w's wait is over).
func (d *Detector) Disarm(w *Wait) {
	switch d.kind {
	case StrategyOff, StrategyDefault:
		return // the central detector drops finished waits lazily
	}
	w.tmu.Lock()
	w.disarmed = true
	if w.timer != nil {
		w.timer.Stop()
	}
	w.tmu.Unlock()
}

// Close stops the detector's goroutine and waits for running checks. Checks
// still pending are dropped. Idempotent.
func (d *Detector) Close() {
	d.mu.Lock()
	already := d.closed
	d.closed = true
	d.mu.Unlock()
	if !already && d.c != nil {
		d.c.stop()
	}
	d.running.Wait()
}

// Stats returns the counters.
func (d *Detector) Stats() Stats {
	return Stats{
		Checks:       d.checks.Load(),
		Found:        d.found.Load(),
		MemoPrunes:   d.memo.Load(),
		Deferred:     d.deferred.Load(),
		Retries:      d.retries.Load(),
		LeftToPeer:   d.deferredTo.Load(),
		Helped:       d.helped.Load(),
		Yielded:      d.yielded.Load(),
		Rearranged:   d.rearranged.Load(),
		MaxCheck:     time.Duration(d.maxCheck.Load()),
		MaxLateness:  time.Duration(d.maxLate.Load()),
		TotalCheckNs: uint64(d.totalNs.Load()),
	}
}

func (d *Detector) noteCheck(dur time.Duration) {
	d.checks.Add(1)
	d.totalNs.Add(int64(dur))
	atomicMax(&d.maxCheck, int64(dur))
}

func atomicMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// decide runs one check of start as of asOf with searcher s (whose walker's
// locking the caller has arranged) and resolves start as Victim if a validated cycle goes
// through it. memo enables tupled's shortcuts (stamp pruning and stamping,
// summary and memoised expansion); without it the search costs what
// PostgreSQL's does. It reports whether start became the victim.
//
// Two searches: first over the whole current graph (cheap to prove "no cycle",
// and only such a proof may be stamped, because a stamp must hold for any later
// check of the same epoch, whatever its asOf); only when that finds a cycle, a
// second search over the waits that had begun by asOf decides this check's
// verdict as PostgreSQL's check at that instant would have.
//
// deference (per-waiter strategies): checks run when their goroutines win the
// partition locks, not strictly in deadline order, so a check that finds a
// cycle first asks whether PostgreSQL's rule names someone else: a member of
// the cycle whose deadline is earlier, by which every wait of the cycle had
// already begun, and whose own check has not completed. That member's check
// will find the cycle (it is evaluated as of its deadline, when the cycle was
// complete, and cycles of waiting transactions do not dissolve), so this check
// leaves the cycle to it. The default strategy runs checks in deadline order
// and never needs to defer.
func (d *Detector) decide(s *searcher, start *Wait, asOf time.Time, memo, deference bool) bool {
	first, second := Naive, Naive
	if memo { // the default strategy and single-memo: all of tupled's shortcuts
		first, second = Summary, Exact
	}
	defer func() {
		if s.pruned != 0 {
			d.memo.Add(s.pruned)
			s.pruned = 0
		}
	}()
	e0 := d.epoch.Load()
	pe := uint64(0)
	if memo {
		pe = e0
	}
	s.w.Begin(e0, start, first)
	if s.find(start, false, asOf, pe) == nil {
		if s.incomplete {
			return false // inconclusive: the caller sees s.incomplete
		}
		if memo && d.epoch.Load() == e0 {
			start.stamp.Store(e0)
		}
		return false
	}
	for try := 0; try < 4; try++ {
		e := d.epoch.Load()
		if e != e0 {
			pe = 0 // stamps of e0 no longer prove anything
		}
		s.w.Begin(e, start, second)
		path := s.find(start, true, asOf, pe)
		if path == nil {
			return false // no cycle as of asOf, or inconclusive (s.incomplete)
		}
		if stillWaiting(path) {
			if deference && d.leaveTo(path) {
				d.deferredTo.Add(1)
				return false
			}
			if r, ok := d.g.(Rearranger); ok {
				// Rearranging, validating again and resolving the victim
				// happen under every partition lock: another check's
				// rearrangement may have reordered a queue of this cycle
				// since it was validated (soft edges persist only while no
				// queue is rearranged) and granted a member; under the
				// locks nothing is granted until the victim is resolved.
				if !s.locked {
					d.g.LockAll(true)
				}
				d.rearranged.Add(1) // before a waiter the reordering wakes can look at Stats
				if r.Rearrange(start, true) {
					if !s.locked {
						d.g.UnlockAll(true)
					}
					// Reordering a queue changes edges without a
					// publication: move the epoch so that no cached
					// snapshot or memo stamp outlives it.
					d.epoch.Add(1)
					return false // a soft deadlock, broken by reordering wait queues
				}
				d.rearranged.Add(^uint64(0))
				valid, resolved := stillWaiting(path), false
				if valid {
					if invariants.Enabled {
						checkVictim(start, path, asOf)
					}
					d.found.Add(1) // before the victim can wake up and look at Stats
					if resolved = start.Resolve(Victim); !resolved {
						d.found.Add(^uint64(0))
					}
				}
				if !s.locked {
					d.g.UnlockAll(true)
				}
				if !valid {
					d.retries.Add(1)
					continue
				}
				return resolved
			}
			if invariants.Enabled {
				checkVictim(start, path, asOf)
			}
			d.found.Add(1) // before the victim can wake up and look at Stats
			if start.Resolve(Victim) {
				return true
			}
			d.found.Add(^uint64(0))
			return false
		}
		d.retries.Add(1)
	}
	return false
}

// leaveTo reports whether the cycle path (path[0] is the checking waiter)
// belongs, by PostgreSQL's rule, to an earlier member whose check is pending:
// one whose deadline (its Start + its own timeout) comes before start's, by
// which the whole cycle had formed.
func (d *Detector) leaveTo(path []*Wait) bool {
	start := path[0]
	closed := start.Start
	for _, w := range path[1:] {
		if w.Start.After(closed) {
			closed = w.Start
		}
	}
	sd := d.deadlineOf(start)
	for _, w := range path[1:] {
		wd := d.deadlineOf(w)
		earlier := wd.Before(sd) || (wd.Equal(sd) && w.epoch < start.epoch)
		if earlier && !closed.After(wd) && !w.checked.Load() && w.State() == Waiting {
			return true
		}
	}
	return false
}
