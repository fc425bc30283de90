package lockmgr

import (
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tupled/tupled/deadlock"
)

// Manager is the heavyweight lock manager: PostgreSQL's lock table, reduced to
// what row locking needs, plus the wait-for bookkeeping of the deadlock
// detector.
//
// # Layout
//
// The lock table is split into Partitions partitions by a hash of the Tag.
// Each partition has its own RWMutex (PostgreSQL's lock-partition LWLocks) and
// a map from Tag to *lock holding only the objects that are currently held or
// awaited: a lock object is created by the first request and deleted (put on
// a small per-partition free list) as soon as it has neither holders nor
// waiters, so memory follows the number of locks in use, never the number of
// rows ever locked. Lock, Unlock and the removal of a waiter take one
// partition mutex exclusively; Locks() and the default deadlock detector take
// one partition read lock at a time, briefly; only the classic family of
// strategies takes them all (that is their point).
//
// # Transaction locks are implicit
//
// A transaction "holds" its own xid until its Done channel closes; nothing is
// recorded for it. Only waiters are: a transaction that blocks (on a tuple lock
// or on other transactions) is entered in the waiting registry, a sharded map
// xid -> *Proc, for exactly as long as it waits. The registry is what lets the
// detector follow "T waits for xid X" to "X's transaction is itself waiting for
// ...", and what Locks() reads to list transaction waits. Registry shards have
// their own mutexes, which are leaves (nothing is acquired while one is held);
// they are only modified while some partition mutex is also held, so taking
// every partition lock freezes the registry too.
//
// # Waiting
//
// A blocked request is a *waiter whose embedded deadlock.Wait moves out of the
// Waiting state exactly once (compare-and-swap): Granted by the releaser that
// grants it (under the partition mutex), Victim by the deadlock detector,
// Aborted by its own goroutine on ctx, lock timeout or Shutdown. The goroutine
// sleeps in a select on the Wait's Done channel, ctx.Done, Shutdown and its lock-timeout
// timer — never polling. Whatever ends the wait removes it from the queue, from
// the registry, and wakes the waiters that may now proceed, under the
// partition mutex, before the call returns.
type Manager struct {
	parts []partition
	reg   []regShard
	mask  uint64
	seed  maphash.Seed
	det   *deadlock.Detector
	rels  relations // relation locks' fast path (relation.go)

	lockWaits       atomic.Uint64
	simpleDeadlocks atomic.Uint64
	locksHint       atomic.Int64 // capacity for the next Locks() result
	closeOnce       sync.Once
	shutdownOnce    sync.Once
	shutdown        chan struct{} // closed by Shutdown: every wait ends with ErrShutdown

	// testAfterGrant, when set (by tests, before any use), runs in wakeup
	// right after a waiter's wait was resolved Granted, with the partition
	// mutex held.
	testAfterGrant func(*Proc)
}

type partition struct {
	mu    sync.RWMutex
	locks map[uint64]*lock // by tag hash; colliding tags chained through lock.next
	free  []*lock
	_     [40]byte // keep hot mutexes of neighbouring partitions off one cache line
}

// maxFreeLocks bounds each partition's free list of lock objects.
const maxFreeLocks = 64

type regShard struct {
	mu    sync.RWMutex
	procs map[uint64]*Proc // waiting procs by xid; chained through Proc.regNext
	_     [40]byte
}

// Proc is one transaction's presence in the lock manager (PostgreSQL's
// PGPROC): its xid and what it is waiting for right now. A Proc is used by one
// goroutine at a time (the transaction's); it may wait for one thing at a time.
// Creating one registers nothing: it costs one allocation (NewProc), or none
// when the caller provides the memory (InitProc).
type Proc struct {
	xid uint64
	// sess is the SessionOwner whose proc this is, nil for a transaction's
	// Proc. It replaces a back pointer to the Manager nobody read.
	sess *SessionOwner
	// cur is the wait in progress, or nil. Stored when the wait is published
	// (under a partition mutex), cleared by whoever ends it. Read lock-free by
	// the detector and by Locks().
	cur     atomic.Pointer[waiter]
	regNext *Proc // registry chain (guarded by the registry shard mutex)
	relProc       // relation locks (relation.go)
}

// Xid returns the transaction id the Proc was created with.
func (p *Proc) Xid() uint64 { return p.xid }

// New returns a Manager. It fails for an unknown deadlock strategy or a
// partition count that is not a power of two.
func New(opts Options) (*Manager, error) {
	n := opts.Partitions
	if n == 0 {
		n = 16
	}
	if n < 0 || n&(n-1) != 0 {
		return nil, fmt.Errorf("lockmgr: Partitions must be a power of two, got %d", opts.Partitions)
	}
	timeout := opts.DeadlockTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	m := &Manager{
		parts: make([]partition, n),
		reg:   make([]regShard, n),
		mask:  uint64(n - 1),
		seed:  maphash.MakeSeed(),

		shutdown: make(chan struct{}),
	}
	for i := range m.parts {
		m.parts[i].locks = make(map[uint64]*lock)
		m.reg[i].procs = make(map[uint64]*Proc)
	}
	det, err := deadlock.New(opts.Strategy, timeout, graph{m})
	if err != nil {
		return nil, fmt.Errorf("lockmgr: %w", err)
	}
	m.det = det
	return m, nil
}

// Close stops the deadlock detector's goroutines and waits for running checks.
// It is idempotent. Locks keep working afterwards, without deadlock detection;
// waiters still blocked are not woken (they still honour ctx and Timeout).
func (m *Manager) Close() { m.closeOnce.Do(m.det.Close) }

// Shutdown ends every wait, now and later, with ErrShutdown: blocked Lock
// and WaitXacts calls return (leaving their queues as on a cancellation) and
// later requests that would block fail at once. Requests that can be
// granted at once still are. The database calls it from Close before it
// waits for running calls, so that none of them sleeps for ever. Idempotent.
func (m *Manager) Shutdown() { m.shutdownOnce.Do(func() { close(m.shutdown) }) }

// NewProc returns the Proc of transaction xid. Xids of live procs should be
// distinct (two waiting procs with one xid are both found, but a transaction
// waiting for that xid is then taken to wait for both).
func (m *Manager) NewProc(xid uint64) *Proc { return &Proc{xid: xid} }

// InitProc is NewProc in memory the caller provides (the engine embeds a
// transaction's Proc in its transaction record, so that beginning costs
// no allocation): p, a zero Proc never used, becomes the proc of xid. p
// must stay where it is.
//
// p may also be the Proc of a transaction that has ended — ReleaseAll
// returned, it waits for nothing and holds no tuple lock — which InitProc
// reuses for the new transaction xid, as PostgreSQL reuses a backend's
// PGPROC. Its generation is its xid. A late holder cannot mistake the new
// transaction for the old: the registry of waiting procs is keyed by the
// xid a wait was published under, a lock object lists only current
// holders, and the deadlock detector follows a holder's wait only if it
// was published before the detector saw that holder (walker's comment),
// which a wait of the reused proc's new transaction never is.
//
// Nothing but xid is written on reuse: the fields a late reader may load
// without a lock (the detector reads a stale holder's cur and sess, in
// wait) are already what a new Proc has — cur nil, sess nil (a
// transaction's Proc never has one), regNext nil — and are only checked.
func (m *Manager) InitProc(p *Proc, xid uint64) {
	if p.xid != 0 && (p.cur.Load() != nil || len(p.held) != 0 || p.fpRegistered || p.sess != nil || p.regNext != nil) {
		panic("lockmgr: InitProc reusing a Proc that still waits, holds locks or is a session's")
	}
	p.xid = xid
}

// Stats returns the counters.
func (m *Manager) Stats() Stats {
	ds := m.det.Stats()
	return Stats{
		LockWaits:      m.lockWaits.Load(),
		DeadlockChecks: ds.Checks,
		DeadlocksFound: ds.Found + m.simpleDeadlocks.Load(),
	}
}

// DetectorStats returns the deadlock detector's own counters (memo hits,
// re-arms, longest check, lateness...).
func (m *Manager) DetectorStats() deadlock.Stats { return m.det.Stats() }

// Strategy returns the name of the deadlock strategy in use.
func (m *Manager) Strategy() string { return m.det.Strategy() }

func mix(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

// hash is the tag's 64-bit hash: it picks the partition and keys the
// partition's map (hashing the Tag once instead of once per map operation).
func (m *Manager) hash(t Tag) uint64 {
	if t.Kind == TagTransaction {
		return mix(t.Xid)
	}
	return maphash.String(m.seed, t.Key) ^ mix(maphash.String(m.seed, t.Rel)+uint64(t.Kind)) ^ mix(t.Xid)
}

func (m *Manager) partOf(h uint64) *partition { return &m.parts[(h^h>>32)&m.mask] }

func (m *Manager) regOf(xid uint64) *regShard { return &m.reg[mix(xid)&m.mask] }

// regAdd enters p in the waiting registry.
//
// Only p's own goroutine adds and removes p (regAdd when it publishes a wait,
// regRemove before the blocked call returns), so p is registered at most once
// at any time. Nobody else may remove it: a releaser that grants p's wait
// wakes p first, and p may be registered for its next wait before a late
// removal by the releaser would run.
func (m *Manager) regAdd(p *Proc) {
	s := m.regOf(p.xid)
	s.mu.Lock()
	s.add(p)
	s.mu.Unlock()
}

// add enters p in the shard (caller holds s.mu).
func (s *regShard) add(p *Proc) {
	p.regNext = s.procs[p.xid]
	s.procs[p.xid] = p
}

// regRemove removes p from the waiting registry (a no-op if it is not there).
func (m *Manager) regRemove(p *Proc) {
	s := m.regOf(p.xid)
	s.mu.Lock()
	s.remove(p)
	s.mu.Unlock()
}

// remove takes p out of the shard (caller holds s.mu; a no-op if p is not
// there).
func (s *regShard) remove(p *Proc) {
	head := s.procs[p.xid]
	if head == p {
		if p.regNext == nil {
			delete(s.procs, p.xid)
		} else {
			s.procs[p.xid] = p.regNext
		}
	} else {
		for q := head; q != nil; q = q.regNext {
			if q.regNext == p {
				q.regNext = p.regNext
				break
			}
		}
	}
	p.regNext = nil
}
