package lockmgr

import (
	"context"
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Relation locks: LOCK TABLE and the locks statements take on the tables
// they touch (PostgreSQL's LockRelationOid), held until the transaction ends
// (ReleaseAll), with PostgreSQL's fast path for the weak modes.
//
// # The fast path (lock.c's FastPathStrongRelationLocks)
//
// Nearly every statement takes a relation lock — AccessShareLock to read,
// RowShareLock for SELECT ... FOR ..., RowExclusiveLock to write — and
// those three "weak" modes conflict with none of each other. Entering them
// in the shared lock table would put a partition mutex, shared by every
// transaction touching the table, on the path of every statement: the hot
// row benchmark would convoy on it. So, as PostgreSQL does:
//
//   - A weak request (mode ≤ RowExclusiveLock) first looks in the
//     transaction's own record (relProc.held, owner-only, PostgreSQL's
//     LOCALLOCK): a mode already held costs nothing more.
//   - Otherwise it takes its proc's fpMu (uncontended: only strong lockers
//     transferring ever take another proc's), loads the strong-lock counter
//     of the table's bucket (Manager.strong, 1024 buckets by hash of the
//     table name), and if it is zero records the mode in the proc's fast
//     path array (Proc.fp) and is done: one atomic load and a short array
//     append, no shared lock table, no shared mutex.
//   - If the counter is not zero, a strong lock on the table (or on one
//     that shares the bucket) is held or requested: the request goes to the
//     shared lock table like any other (Manager.Lock), and waits there if it
//     must.
//   - A strong request (mode ≥ ShareLock, PostgreSQL's
//     ConflictsWithRelationFastPath: the modes that conflict with a weak
//     one) first increments the bucket's counter, then transfers every
//     fast-path entry for the table, of every proc, into the shared table
//     (FastPathTransferRelationLocks) — each under the owning proc's fpMu
//     and the lock's partition mutex — and only then requests its mode in
//     the shared table, where it queues behind the weak holders properly
//     and the deadlock detector sees them as holders. The counter is
//     decremented when the strong lock is released (ReleaseAll) or the
//     request fails.
//   - ShareUpdateExclusiveLock is neither: it conflicts with no weak mode,
//     so it needs no transfer, and it is never taken by the fast path; it
//     goes to the shared table directly.
//
// Why no fast-path holder is missed: a proc enters the fast-path registry
// (Manager.fpReg, which strong lockers scan) before its first counter check,
// and checks the counter under its fpMu. A strong locker increments the
// counter, then reads each registry shard under its mutex, then takes each
// registered proc's fpMu. If the strong locker's shard read missed the
// proc, the proc registered after it, hence after the increment, and its
// counter check sees the increment; if it found the proc, then under fpMu
// either the proc's fast-path entry was already there (transferred) or the
// proc checks the counter after the transfer (and sees it). Mutexes give
// the happens-before edges, as PostgreSQL's fpInfoLock and the counter's
// spinlock do.
//
// Why the deadlock detector's publication invariant holds (an edge appears
// only when a wait is published): the transfer adds holders to a lock, but
// the only requests that conflict with weak modes are strong ones, whose
// lockers transfer before they queue; while the counter is non-zero no new
// fast-path entry can appear for the table, so a transfer never adds a
// holder behind an already-queued conflicting waiter.
//
// Fast-path locks are listed by Locks() (FastPath: true), as pg_locks shows
// them with fastpath = true.

// strongBuckets is the size of Manager.strong (PostgreSQL's
// FAST_PATH_STRONG_LOCK_HASH_PARTITIONS).
const strongBuckets = 1024

// fastPathEligible reports whether mode can be taken by the fast path
// (EligibleForRelationFastPath).
func fastPathEligible(mode LockMode) bool { return mode <= RowExclusiveLock }

// strongMode reports whether mode conflicts with a weak mode and must
// transfer the fast-path entries first (ConflictsWithRelationFastPath).
func strongMode(mode LockMode) bool { return mode >= ShareLock }

// relHeld is what a proc holds on one table: every mode (owner-only).
type relHeld struct {
	rel  string
	mask uint16 // modes held, by fast path or in the shared table
	fast uint16 // scratch of ReleaseAll: the modes still in the fast path
}

// fpEntry is one table's fast-path modes of a proc (guarded by Proc.fpMu).
type fpEntry struct {
	rel  string
	mask uint16
}

// relProc is the relation-lock state of a Proc, embedded in it.
type relProc struct {
	// held: every relation lock the proc holds (PostgreSQL's LOCALLOCK
	// table). Read and written by the proc's own goroutine only.
	held []relHeld
	// heldBuf and fpBuf are held's and fp's first entries, inside the
	// proc: a transaction touching one or two tables (nearly all of
	// them) records its relation locks without an allocation. held and
	// fp start on them at the first lock (noteHeld, fpAdd).
	heldBuf [2]relHeld
	fpBuf   [2]fpEntry
	// deadlockTimeout: this transaction's deadlock_timeout (0 = the
	// Manager's). Set before the proc is used.
	deadlockTimeout time.Duration

	fpMu sync.Mutex
	fp   []fpEntry // weak modes held by fast path; entries with mask 0 are free
	// fpRegistered: the proc is in the Manager's fast-path registry
	// (owner-only flag; the links are guarded by the registry shard).
	fpRegistered   bool
	fpShard        *fpShard
	fpPrev, fpNext *Proc
}

// fpShard is one shard of the registry of procs that hold (or may hold)
// fast-path relation locks: a doubly linked list, O(1) in and out.
type fpShard struct {
	mu   sync.Mutex
	head *Proc
	_    [40]byte
}

// relations is the Manager's relation-lock state, embedded in it.
type relations struct {
	strong [strongBuckets]atomic.Int32
	fpReg  [16]fpShard
}

// SetDeadlockTimeout sets the deadlock timeout of every wait p starts from
// now on (PostgreSQL's per-session deadlock_timeout): its check runs d after
// the wait began. 0 means the Manager's Options.DeadlockTimeout. Called by
// the proc's own goroutine, before or between its waits.
func (p *Proc) SetDeadlockTimeout(d time.Duration) { p.deadlockTimeout = d }

// RelationTag is the Tag of table rel's relation lock.
func RelationTag(rel string) Tag { return Tag{Kind: TagRelation, Rel: rel} }

func (m *Manager) strongOf(rel string) *atomic.Int32 {
	return &m.rels.strong[maphash.String(m.seed, rel)%strongBuckets]
}

// LockRelation acquires mode on table rel for p, held until ReleaseAll
// (PostgreSQL's LockRelationOid; LOCK TABLE). Weak modes (AccessShareLock,
// RowShareLock, RowExclusiveLock) take the fast path when no strong lock on
// the table is held or requested (see the design comment above); every other
// request goes through the shared lock table with Lock's grant rule, FIFO
// queue and deadlock detection. A mode p already holds on rel returns nil at
// once. Errors are Lock's: ErrWouldBlock (w.NoWait), ErrDeadlock,
// ErrLockTimeout, ctx's, ErrShutdown; on error the mode is not held.
//
// A Proc's relation locks are used by its own goroutine only.
func (m *Manager) LockRelation(ctx context.Context, p *Proc, rel string, mode LockMode, w Wait) error {
	hi := -1
	for i := range p.held {
		if p.held[i].rel == rel {
			if p.held[i].mask&bit(mode) != 0 {
				return nil
			}
			hi = i
			break
		}
	}
	if !mode.valid() {
		return m.Lock(ctx, p, RelationTag(rel), mode, w) // refuses it
	}
	if fastPathEligible(mode) {
		if !p.fpRegistered {
			m.fpRegister(p)
		}
		ctr := m.strongOf(rel)
		p.fpMu.Lock()
		if ctr.Load() == 0 {
			p.fpAdd(rel, mode)
			p.fpMu.Unlock()
			p.noteHeld(hi, rel, mode)
			return nil
		}
		p.fpMu.Unlock()
	}
	var ctr *atomic.Int32
	if strongMode(mode) {
		ctr = m.strongOf(rel)
		ctr.Add(1)
		m.transferFastPath(rel)
	}
	if err := m.Lock(ctx, p, RelationTag(rel), mode, w); err != nil {
		if ctr != nil {
			ctr.Add(-1)
		}
		return err
	}
	p.noteHeld(hi, rel, mode)
	return nil
}

// HoldsRelation reports whether p holds mode on rel (its own goroutine).
func (p *Proc) HoldsRelation(rel string, mode LockMode) bool {
	for i := range p.held {
		if p.held[i].rel == rel {
			return p.held[i].mask&bit(mode) != 0
		}
	}
	return false
}

func (p *Proc) noteHeld(hi int, rel string, mode LockMode) {
	if hi < 0 {
		if cap(p.held) == 0 {
			p.held = p.heldBuf[:0]
		}
		p.held = append(p.held, relHeld{rel: rel})
		hi = len(p.held) - 1
	}
	p.held[hi].mask |= bit(mode)
}

// fpAdd records mode on rel in the fast-path array (fpMu held).
func (p *Proc) fpAdd(rel string, mode LockMode) {
	free := -1
	for i := range p.fp {
		e := &p.fp[i]
		if e.mask == 0 {
			if free < 0 {
				free = i
			}
			continue
		}
		if e.rel == rel {
			e.mask |= bit(mode)
			return
		}
	}
	if free >= 0 {
		p.fp[free] = fpEntry{rel: rel, mask: bit(mode)}
		return
	}
	if cap(p.fp) == 0 {
		p.fp = p.fpBuf[:0]
	}
	p.fp = append(p.fp, fpEntry{rel: rel, mask: bit(mode)})
}

// fpRegister enters p in the fast-path registry (before its first counter
// check: see the design comment).
func (m *Manager) fpRegister(p *Proc) {
	s := &m.rels.fpReg[mix(p.xid)&uint64(len(m.rels.fpReg)-1)]
	s.mu.Lock()
	p.fpNext = s.head
	if s.head != nil {
		s.head.fpPrev = p
	}
	s.head = p
	s.mu.Unlock()
	p.fpShard = s
	p.fpRegistered = true
}

func (m *Manager) fpUnregister(p *Proc) {
	s := p.fpShard
	s.mu.Lock()
	if p.fpPrev != nil {
		p.fpPrev.fpNext = p.fpNext
	} else {
		s.head = p.fpNext
	}
	if p.fpNext != nil {
		p.fpNext.fpPrev = p.fpPrev
	}
	p.fpPrev, p.fpNext = nil, nil
	s.mu.Unlock()
	p.fpRegistered = false
	p.fpShard = nil
}

// transferFastPath moves every proc's fast-path modes on rel into the shared
// lock table (FastPathTransferRelationLocks). The caller has incremented
// rel's strong counter.
func (m *Manager) transferFastPath(rel string) {
	var procs []*Proc
	for i := range m.rels.fpReg {
		s := &m.rels.fpReg[i]
		s.mu.Lock()
		for q := s.head; q != nil; q = q.fpNext {
			procs = append(procs, q)
		}
		s.mu.Unlock()
	}
	if len(procs) == 0 {
		return
	}
	tag := RelationTag(rel)
	h := m.hash(tag)
	pt := m.partOf(h)
	for _, q := range procs {
		q.fpMu.Lock()
		for i := range q.fp {
			e := &q.fp[i]
			if e.mask == 0 || e.rel != rel {
				continue
			}
			pt.mu.Lock()
			l := pt.get(tag, h)
			hi := l.holderIndex(q)
			for mode := AccessShareLock; mode <= RowExclusiveLock; mode++ {
				if e.mask&bit(mode) != 0 {
					l.grant(q, hi, mode)
					hi = l.holderIndex(q)
				}
			}
			pt.mu.Unlock()
			e.mask = 0
		}
		q.fpMu.Unlock()
	}
}

// ReleaseAll releases every relation lock p holds (transaction end:
// LockReleaseAll), waking the waiters that can now be granted. Called by p's
// own goroutine, never while p waits. Idempotent.
func (m *Manager) ReleaseAll(p *Proc) {
	if len(p.held) == 0 {
		if p.fpRegistered {
			m.fpUnregister(p)
		}
		return
	}
	p.fpMu.Lock()
	for i := range p.held {
		r := &p.held[i]
		r.fast = 0
		for j := range p.fp {
			if e := &p.fp[j]; e.mask != 0 && e.rel == r.rel {
				r.fast = e.mask
			}
		}
	}
	clear(p.fp)
	p.fp = p.fp[:0]
	p.fpMu.Unlock()
	if p.fpRegistered {
		m.fpUnregister(p)
	}
	for _, r := range p.held {
		shared := r.mask &^ r.fast
		if shared == 0 {
			continue
		}
		tag := RelationTag(r.rel)
		for mode := AccessShareLock; mode <= AccessExclusiveLock; mode++ {
			if shared&bit(mode) != 0 {
				m.Unlock(p, tag, mode)
			}
		}
		if r.mask&^(bit(ShareLock)-1) != 0 {
			ctr := m.strongOf(r.rel)
			for mode := ShareLock; mode <= AccessExclusiveLock; mode++ {
				if r.mask&bit(mode) != 0 {
					ctr.Add(-1)
				}
			}
		}
	}
	clear(p.held)
	p.held = p.held[:0]
}

// RelMark is a point in a Proc's relation-lock history: what it held then
// (a savepoint's; ReleaseSince).
type RelMark []relHeld

// RelationMark returns what p holds now, for a later ReleaseSince (p's own
// goroutine).
func (p *Proc) RelationMark() RelMark {
	if len(p.held) == 0 {
		return nil
	}
	return RelMark(slices.Clone(p.held))
}

// ReleaseSince releases the relation locks p acquired after mark was
// taken, keeping those it held then: a subtransaction's abort (ROLLBACK TO
// SAVEPOINT) releases the locks the subtransaction took, as PostgreSQL's
// resource owners do, waking the waiters that can now be granted. A mode
// held at the mark stays held even if taken again since. Called by p's own
// goroutine, never while p waits.
func (m *Manager) ReleaseSince(p *Proc, mark RelMark) {
	kept := p.held[:0]
	for _, r := range p.held {
		var before uint16
		for _, h := range mark {
			if h.rel == r.rel {
				before = h.mask
				break
			}
		}
		if taken := r.mask &^ before; taken != 0 {
			m.releaseModes(p, r.rel, taken)
			r.mask = before
		}
		if r.mask != 0 {
			kept = append(kept, r)
		}
	}
	clear(p.held[len(kept):])
	p.held = kept
}

// releaseModes releases the modes in mask that p holds on rel: from its
// fast-path array where they still are, else from the shared table (a
// strong request moved them there, under fpMu).
func (m *Manager) releaseModes(p *Proc, rel string, mask uint16) {
	shared := mask
	p.fpMu.Lock()
	for i := range p.fp {
		if e := &p.fp[i]; e.mask != 0 && e.rel == rel {
			shared &^= e.mask & mask
			e.mask &^= mask
		}
	}
	p.fpMu.Unlock()
	tag := RelationTag(rel)
	for mode := AccessShareLock; mode <= AccessExclusiveLock; mode++ {
		if shared&bit(mode) != 0 {
			m.Unlock(p, tag, mode)
		}
		if mask&bit(mode) != 0 && strongMode(mode) {
			m.strongOf(rel).Add(-1)
		}
	}
}

// fastPathLocks appends the fast-path relation locks of every registered
// proc to out (Locks).
func (m *Manager) fastPathLocks(out []LockInfo) []LockInfo {
	for i := range m.rels.fpReg {
		s := &m.rels.fpReg[i]
		s.mu.Lock()
		for q := s.head; q != nil; q = q.fpNext {
			q.fpMu.Lock()
			for _, e := range q.fp {
				for mode := AccessShareLock; mode <= RowExclusiveLock; mode++ {
					if e.mask&bit(mode) != 0 {
						out = append(out, LockInfo{Tag: RelationTag(e.rel), Mode: mode, Xid: q.xid, Granted: true, FastPath: true})
					}
				}
			}
			q.fpMu.Unlock()
		}
		s.mu.Unlock()
	}
	return out
}
