package deadlock

import (
	"sync"
	"sync/atomic"
	"time"
)

// State is where a Wait stands. A Wait starts Waiting and leaves that state
// exactly once, by Resolve; whoever wins that compare-and-swap closes Done.
type State uint32

const (
	Waiting State = iota // blocked; a node of the wait-for graph
	Granted              // the lock was granted / every awaited transaction ended
	Victim               // this waiter's own check found a cycle through it
	Aborted              // ctx, lock timeout, or the owner gave up for another reason
)

func (s State) String() string {
	switch s {
	case Waiting:
		return "waiting"
	case Granted:
		return "granted"
	case Victim:
		return "victim"
	case Aborted:
		return "aborted"
	}
	return "unknown"
}

// Wait is one blocking wait of one transaction: a node of the wait-for graph.
//
// The identity of a Wait is the "wait sequence number" of the design: a
// transaction that stops waiting and blocks again gets a new Wait, so a
// detector that observed Wait w and later finds w still Waiting knows the
// transaction has been blocked on the same thing, without interruption, for
// the whole interval in between. That is what makes validation of a cycle
// found on stale observations sound (README.md, "Validation").
//
// Life cycle, driven by the lock manager (the owner):
//
//	Init(owner)                    owner allocates; nothing is visible yet
//	Detector.Publish(w)            under the lock that makes the wait visible
//	                               (a partition mutex): stamps Start and the
//	                               publication epoch
//	Detector.Arm(w)                after that lock is released: schedules the check
//	... Resolve(Granted|Aborted) by the owner or a releaser, or
//	    Resolve(Victim) by the detector ...
//	Detector.Disarm(w)             by the owner once the wait is over
//
// Start and epoch are written once, by Publish, before the wait can be
// reached by any reader (readers find a Wait through a partition-locked queue
// or an atomic pointer stored after Publish), and are immutable afterwards.
type Wait struct {
	// Owner is the lock manager's own record for this wait; the Graph uses it
	// to enumerate edges. The detector never looks inside.
	Owner any
	// Start is when the wait blocked (set by Publish).
	Start time.Time
	// Timeout is this wait's own deadlock timeout, set by the owner before
	// Publish; 0 means the Detector's. PostgreSQL's deadlock_timeout is a
	// per-backend setting: each waiter is checked at ITS timeout after its
	// wait began, which is how PostgreSQL's isolation specs pick a victim
	// (deadlock-hard: every session but one waits 100s).
	Timeout time.Duration

	epoch uint64 // value of the detector's publication counter for this wait
	state atomic.Uint32
	done  chan struct{}

	// stamp: a check at publication epoch E proved this wait lies on no cycle
	// of the whole graph; valid while the epoch is still E (no wait has been
	// published since, hence no edge has appeared since). 0 = no proof.
	stamp atomic.Uint64
	// visitedAt (single-memo only): unix nanos when a completed check that
	// found no cycle last reached this wait.
	visitedAt atomic.Int64

	// checked: this wait's own check has completed (set while the checker
	// still holds whatever locks it took). A per-waiter check that finds a
	// cycle defers to an unchecked member with an earlier deadline.
	checked atomic.Bool

	// deadline: the default strategy's check deadline (set by Arm), or for
	// per-waiter strategies when the timer fires next (guarded by tmu). Either
	// way the check is evaluated as of Start + timeout, not as of a re-armed
	// firing time.
	deadline time.Time
	// default strategy: the deadline as the central queue keeps it, and the
	// link of its incoming stack (written by Arm before the CAS that
	// publishes the wait, then owned by the detector goroutine).
	dueAt   int64
	armNext *Wait

	// Per-waiter strategies: the wait's own timer. Guarded by tmu.
	tmu      sync.Mutex
	timer    *time.Timer
	disarmed bool
	defers   int // single-checker / single-memo re-arms so far
}

// Init prepares a Wait owned by owner. It must be called before Publish.
func (w *Wait) Init(owner any) {
	w.Owner = owner
	w.done = make(chan struct{})
}

// State reports the current state.
func (w *Wait) State() State { return State(w.state.Load()) }

// Done is closed when the wait leaves the Waiting state.
func (w *Wait) Done() <-chan struct{} { return w.done }

// Resolve moves the wait from Waiting to s and closes Done. It reports
// whether this call made the move; at most one call ever does.
func (w *Wait) Resolve(s State) bool {
	if s == Waiting || !w.state.CompareAndSwap(uint32(Waiting), uint32(s)) {
		return false
	}
	close(w.done)
	return true
}

// Epoch is the publication epoch of the wait (see Detector.Publish).
func (w *Wait) Epoch() uint64 { return w.epoch }

// Settled reports whether the wait can be skipped by any search run at
// publication epoch e: it is no longer waiting, or it was proved to lie on no
// cycle at epoch e. Both facts stay true for as long as the epoch stays e, so a
// Graph may cache "this prefix of a queue is settled" across checks of one
// epoch.
func (w *Wait) Settled(e uint64) bool {
	return w.State() != Waiting || (e != 0 && w.stamp.Load() == e)
}
