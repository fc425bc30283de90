package deadlock

// Locking says which partition locks a Walker's caller holds while it walks.
type Locking uint8

const (
	// Unlocked: the caller holds no partition lock. The Walker must take each
	// partition lock itself, one at a time and briefly (the default strategy).
	Unlocked Locking = iota
	// LockedShared: the caller holds every partition lock in shared mode
	// (shared-first's first pass). Nothing in the graph can change.
	LockedShared
	// LockedExclusive: the caller holds every partition lock exclusively
	// (classic, single-checker, single-memo, shared-first's re-check).
	LockedExclusive
	// UnlockedNoWait: as Unlocked, but the caller must not block (a waiter
	// helping the default strategy's goroutine): the Walker takes a
	// partition lock only if it gets it after a short spin; otherwise it
	// stops the enumeration (Successors returns false) and Incomplete
	// reports it until the next Begin. The search is then inconclusive and
	// the check is left to someone else.
	UnlockedNoWait
)

// Unlocked reports whether a Walker with this Locking takes partition locks
// itself (Unlocked or UnlockedNoWait).
func (l Locking) Unlocked() bool { return l == Unlocked || l == UnlockedNoWait }

// Graph is the lock manager seen by the detector: it can enumerate the
// out-edges of a wait and stop the world.
//
// Edges (README.md, "The wait-for graph"): a tuple-lock wait points to the
// current waits of the holders of conflicting modes and to the earlier waiters
// of its queue whose requests conflict with it; a transaction wait points to the
// current wait of every awaited transaction that is itself waiting.
//
// The contract that makes lock-free checking sound: an edge can appear only
// when a wait is published (Detector.Publish). Granting a lock to a running
// transaction never adds an edge (a grant must not conflict with any waiter's
// request), and a waiting transaction can neither end nor release anything.
type Graph interface {
	// NewWalker returns a Walker for one checking goroutine. Walkers are not
	// safe for concurrent use; a Walker may be reused for many checks.
	NewWalker(l Locking) Walker
	// LockAll takes every partition lock, in partition order.
	LockAll(exclusive bool)
	// UnlockAll releases what LockAll took, in reverse order.
	UnlockAll(exclusive bool)
}

// Expansion is how a Walker enumerates the edges of a search.
type Expansion uint8

const (
	// Naive: PostgreSQL's FindLockCycle cost model. Every expanded queue
	// waiter scans its queue from the front, so a check of a waiter behind n
	// others costs O(n²). The classic family uses it: their point is to
	// reproduce PostgreSQL's stop-the-world checks, cost included.
	Naive Expansion = iota
	// Exact: the same edges, but each queue prefix is scanned at most once per
	// (lock, requested mode) and search, and queue prefixes settled at this
	// epoch are skipped: O(n) per search.
	Exact
	// Summary: Successors may report a superset of what is reachable through
	// each node, skipping intermediate nodes, as long as start is reported
	// whenever it is reachable. Such a search can only prove "no cycle
	// through start"; a cycle it reports is confirmed by an Exact search
	// (every reported edge real, so the path can be validated).
	Summary
)

// Walker enumerates edges for one check at a time.
type Walker interface {
	// Begin starts a search from start. epoch is the detector's publication
	// epoch read just before; an Unlocked walker may keep snapshots taken at
	// the same epoch from earlier searches (they are missing no edge), and must
	// drop them otherwise. x says how edges may be enumerated.
	Begin(epoch uint64, start *Wait, x Expansion)
	// Successors calls visit for each wait that w waits for, stopping early
	// (and returning false) when visit returns false. It may call visit with
	// waits that are no longer Waiting; the search filters them. It must not
	// call visit for w itself.
	Successors(w *Wait, visit func(*Wait) bool) bool
	// Release drops everything cached (called when the detector goes idle).
	Release()
	// Incomplete reports whether the search begun last was cut short
	// because an UnlockedNoWait walker could not take a lock without
	// waiting. Always false for the other Lockings.
	Incomplete() bool
}

// Rearranger is implemented by a Graph that can break soft deadlocks
// (PostgreSQL's DS_SOFT_DEADLOCK): a cycle through start that runs through
// "waits behind an earlier waiter" edges can be broken by reordering wait
// queues. The detector calls Rearrange when a check found, and validated, a
// cycle through start, before making start the victim. Rearrange reports
// whether start is on no cycle any more (queues reordered and the waiters
// they let in woken, or no cycle on the live graph); false leaves the graph
// as it was and start becomes the victim. locked says the caller already
// holds every partition lock exclusively; otherwise Rearrange takes them
// itself (LockAll), so it is called holding no partition lock.
type Rearranger interface {
	Rearrange(start *Wait, locked bool) bool
}
