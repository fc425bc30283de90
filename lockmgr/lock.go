package lockmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/tupled/tupled/deadlock"
	"github.com/tupled/tupled/internal/invariants"
)

// lock is one lockable object in use (PostgreSQL's LOCK plus its PROCLOCKs).
//
// Invariants (all under the owning partition's mutex; the first and third,
// and the last, are checked under -tags invariants: invariants.go):
//   - granted[m] = Σ holders[i].counts[m]; grantMask bit m set iff granted[m] > 0;
//   - waiting[m] = number of queue entries requesting m; waitMask likewise;
//   - a holder entry exists iff its mask is non-zero; one entry per proc;
//   - queue is in wait order; entries are removed only by whoever ends their
//     wait (a releaser granting them, or their own goroutine), so an entry
//     whose Wait is no longer Waiting may linger for microseconds: it is
//     ignored when granting and by the detector;
//   - the object is in its partition's map iff it has holders or waiters.
type lock struct {
	tag       Tag
	hash      uint64
	next      *lock      // next lock whose tag has the same hash
	part      *partition // immutable: objects are recycled only within their partition
	granted   [9]int32
	waiting   [9]int32
	grantMask uint16
	waitMask  uint16
	holders   []holder
	queue     []*waiter
}

// holder is a PROCLOCK: what one proc holds on one lock. Re-entrant
// acquisitions are counted per mode; the proc holds mode m while counts[m] > 0.
type holder struct {
	proc   *Proc
	counts [9]uint32
	mask   uint16
}

// waiter is one blocked request: a tuple-lock request (lock != nil) or a wait
// for transactions to end (xacts != nil). Its fields are immutable once
// published, except queued (partition mutex) and dw's state.
type waiter struct {
	dw    deadlock.Wait
	proc  *Proc
	on    *Proc // a session's wait: the transaction it waits on behalf of (nil otherwise; see SessionOwner)
	part  *partition
	lock  *lock
	mode  LockMode
	xacts []AwaitedXact
}

// registered is the proc entered in the waiting registry for w: the
// transaction a session waits on behalf of, else the waiting proc.
func (w *waiter) registered() *Proc {
	if w.on != nil {
		return w.on
	}
	return w.proc
}

func (pt *partition) lookup(tag Tag, h uint64) *lock {
	for l := pt.locks[h]; l != nil; l = l.next {
		if l.tag == tag {
			return l
		}
	}
	return nil
}

func (pt *partition) get(tag Tag, h uint64) *lock {
	if l := pt.lookup(tag, h); l != nil {
		if invariants.Enabled {
			l.checkInUse()
		}
		return l
	}
	var l *lock
	if n := len(pt.free); n > 0 {
		l = pt.free[n-1]
		pt.free[n-1] = nil
		pt.free = pt.free[:n-1]
	} else {
		l = &lock{part: pt}
	}
	l.tag, l.hash = tag, h
	l.next = pt.locks[h]
	pt.locks[h] = l
	return l
}

// release drops l from the table if nothing holds or awaits it.
func (pt *partition) release(l *lock) {
	if len(l.holders) != 0 || len(l.queue) != 0 {
		return
	}
	if head := pt.locks[l.hash]; head == l {
		if l.next == nil {
			delete(pt.locks, l.hash)
		} else {
			pt.locks[l.hash] = l.next
		}
	} else {
		for q := head; q != nil; q = q.next {
			if q.next == l {
				q.next = l.next
				break
			}
		}
	}
	l.next = nil
	if len(pt.free) < maxFreeLocks && cap(l.queue) <= 64 && cap(l.holders) <= 64 {
		*l = lock{part: pt, holders: l.holders[:0], queue: l.queue[:0]}
		pt.free = append(pt.free, l)
	}
}

func (l *lock) holderIndex(p *Proc) int {
	for i := range l.holders {
		if l.holders[i].proc == p {
			return i
		}
	}
	return -1
}

func (l *lock) holdMaskOf(p *Proc) uint16 {
	if i := l.holderIndex(p); i >= 0 {
		return l.holders[i].mask
	}
	return 0
}

// otherGranted is the set of modes granted to procs other than holder hi
// (a proc never conflicts with itself).
func (l *lock) otherGranted(hi int) uint16 {
	if hi < 0 {
		return l.grantMask
	}
	h := &l.holders[hi]
	m := l.grantMask
	for mode := AccessShareLock; mode <= AccessExclusiveLock; mode++ {
		if h.mask&bit(mode) != 0 && l.granted[mode] == int32(h.counts[mode]) {
			m &^= bit(mode)
		}
	}
	return m
}

func (l *lock) grant(p *Proc, hi int, mode LockMode) {
	if hi < 0 {
		l.holders = append(l.holders, holder{proc: p})
		hi = len(l.holders) - 1
	}
	h := &l.holders[hi]
	h.counts[mode]++
	h.mask |= bit(mode)
	l.granted[mode]++
	l.grantMask |= bit(mode)
	if invariants.Enabled {
		l.checkGranted(mode)
	}
}

func (l *lock) ungrant(hi int, mode LockMode) {
	h := &l.holders[hi]
	h.counts[mode]--
	if h.counts[mode] == 0 {
		h.mask &^= bit(mode)
	}
	l.granted[mode]--
	if l.granted[mode] == 0 {
		l.grantMask &^= bit(mode)
	}
	if h.mask == 0 {
		last := len(l.holders) - 1
		l.holders[hi] = l.holders[last]
		l.holders[last] = holder{}
		l.holders = l.holders[:last]
	}
	if invariants.Enabled {
		l.checkGranted(mode)
	}
}

func (l *lock) enqueue(w *waiter, at int) {
	l.queue = append(l.queue, nil)
	copy(l.queue[at+1:], l.queue[at:])
	l.queue[at] = w
	l.waiting[w.mode]++
	l.waitMask |= bit(w.mode)
}

func (l *lock) dequeue(w *waiter) {
	for i, q := range l.queue {
		if q == w {
			copy(l.queue[i:], l.queue[i+1:])
			l.queue[len(l.queue)-1] = nil
			l.queue = l.queue[:len(l.queue)-1]
			l.unwait(w.mode)
			return
		}
	}
}

func (l *lock) unwait(mode LockMode) {
	l.waiting[mode]--
	if l.waiting[mode] == 0 {
		l.waitMask &^= bit(mode)
	}
}

// Lock acquires mode on tag for p, PostgreSQL's LockAcquire.
//
// Grant rule: at once iff mode conflicts neither with the modes other procs
// hold nor with any waiter's request; otherwise p joins the wait queue at the
// tail, except that if p already holds modes on tag that conflict with an
// earlier waiter's request, p goes just before the first such waiter and is
// granted at once if nothing granted to others nor ahead of it conflicts (and
// gets ErrDeadlock at once if that waiter holds something conflicting with
// mode: PostgreSQL's early "simple" deadlock). Re-entrant requests are counted;
// each must be matched by an Unlock.
//
// A blocked request returns nil when granted, ErrDeadlock if its deadlock
// check found a cycle through it, ErrLockTimeout after w.Timeout, or an error
// wrapping ctx.Err(). On error nothing is held (a grant that raced with the
// cancellation is released) and the waiters behind it are woken.
func (m *Manager) Lock(ctx context.Context, p *Proc, tag Tag, mode LockMode, w Wait) error {
	return m.acquire(ctx, p, nil, tag, mode, w)
}

// acquire is Lock; a session's request (advisory.go) passes as on the
// transaction the session is running, if any, on whose behalf it waits.
func (m *Manager) acquire(ctx context.Context, p, on *Proc, tag Tag, mode LockMode, w Wait) error {
	if !mode.valid() {
		return fmt.Errorf("lockmgr: invalid lock mode %d", int(mode))
	}
	h := m.hash(tag)
	pt := m.partOf(h)
	pt.mu.Lock()
	l := pt.get(tag, h)
	hi := l.holderIndex(p)
	other := l.otherGranted(hi)
	cm := conflictTab[mode]
	if cm&l.waitMask == 0 && cm&other == 0 {
		l.grant(p, hi, mode)
		pt.mu.Unlock()
		return nil
	}

	if w.NoWait {
		// LockAcquireExtended fails a dontWait request on any conflict,
		// before JoinWaitQueue could put it ahead of a waiter it blocks
		// (PostgreSQL's lock-nowait spec).
		pt.release(l)
		pt.mu.Unlock()
		return ErrWouldBlock
	}

	// JoinWaitQueue.
	at := len(l.queue)
	if hi >= 0 {
		mine := l.holders[hi].mask
		var ahead uint16
		for i, q := range l.queue {
			if q.dw.State() != deadlock.Waiting {
				continue
			}
			if mine&conflictTab[q.mode] != 0 {
				if cm&l.holdMaskOf(q.proc) != 0 {
					pt.mu.Unlock()
					if w.NoWait {
						return ErrWouldBlock
					}
					m.simpleDeadlocks.Add(1)
					return fmt.Errorf("%w: process of transaction %d waits for %s on %s; blocked by transaction %d, which waits for %s on it",
						ErrDeadlock, p.xid, mode, tag, q.proc.xid, q.mode)
				}
				if cm&ahead == 0 && cm&other == 0 {
					l.grant(p, hi, mode)
					pt.mu.Unlock()
					return nil
				}
				at = i
				break
			}
			ahead |= bit(q.mode)
		}
	}
	if w.NoWait {
		pt.release(l)
		pt.mu.Unlock()
		return ErrWouldBlock
	}
	if err := ctx.Err(); err != nil {
		pt.release(l)
		pt.mu.Unlock()
		return fmt.Errorf("lockmgr: waiting for %s on %s: %w", mode, tag, err)
	}
	wr := &waiter{proc: p, on: on, part: pt, lock: l, mode: mode}
	wr.dw.Init(wr)
	wr.dw.Timeout = p.deadlockTimeout
	m.det.Publish(&wr.dw)
	l.enqueue(wr, at)
	p.cur.Store(wr)
	if on != nil {
		on.cur.Store(wr)
	}
	m.regAdd(wr.registered())
	pt.mu.Unlock()

	m.lockWaits.Add(1)
	m.det.Arm(&wr.dw)
	return m.sleep(ctx, wr, w.Timeout)
}

// sleep is ProcSleep for a queued tuple-lock request.
func (m *Manager) sleep(ctx context.Context, wr *waiter, timeout time.Duration) error {
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	var cause error
	select {
	case <-wr.dw.Done():
	case <-ctx.Done():
		cause = fmt.Errorf("lockmgr: waiting for %s on %s: %w", wr.mode, wr.lock.tag, ctx.Err())
	case <-tc:
		cause = ErrLockTimeout
	case <-m.shutdown:
		cause = fmt.Errorf("lockmgr: waiting for %s on %s: %w", wr.mode, wr.lock.tag, ErrShutdown)
	}
	if cause != nil {
		wr.dw.Resolve(deadlock.Aborted) // loses if a grant or the detector got there first
	}
	defer m.det.Disarm(&wr.dw)
	pt, l, p := wr.part, wr.lock, wr.proc
	switch wr.dw.State() {
	case deadlock.Granted:
		// The releaser did the queue and holder bookkeeping. The registry
		// entry is ours to remove: the releaser resolves the wait before it
		// could touch the registry, and by then we may already be waiting
		// anew, registered again (a second regAdd of a registered Proc would
		// link it to itself, and the detector's walk of the chain would never
		// end).
		m.regRemove(wr.registered())
		if wr.on != nil {
			wr.on.cur.CompareAndSwap(wr, nil)
		}
		if cause == nil {
			return nil
		}
		// Granted while we were being cancelled: give it back.
		pt.mu.Lock()
		if hi := l.holderIndex(p); hi >= 0 && l.holders[hi].counts[wr.mode] > 0 {
			l.ungrant(hi, wr.mode)
			if len(l.queue) > 0 {
				m.wakeup(l)
			}
			pt.release(l)
		}
		pt.mu.Unlock()
		return cause
	default: // Victim or Aborted: we are still queued; leave.
		tag := l.tag // l may be recycled for another tag once released
		pt.mu.Lock()
		l.dequeue(wr)
		m.regRemove(wr.registered())
		p.cur.CompareAndSwap(wr, nil)
		if wr.on != nil {
			wr.on.cur.CompareAndSwap(wr, nil)
		}
		if len(l.queue) > 0 {
			m.wakeup(l)
		}
		pt.release(l)
		pt.mu.Unlock()
		if wr.dw.State() == deadlock.Victim {
			return fmt.Errorf("%w: transaction %d waiting for %s on %s", ErrDeadlock, wr.registered().xid, wr.mode, tag)
		}
		return cause
	}
}

// wakeup is ProcLockWakeup: scan the queue in order and grant every waiter
// whose request conflicts neither with the modes held by others nor with the
// requests of the waiters still ahead of it. Caller holds the partition mutex.
func (m *Manager) wakeup(l *lock) {
	var ahead uint16
	out := l.queue[:0]
	for _, w := range l.queue {
		if w.dw.State() != deadlock.Waiting {
			out = append(out, w) // its owner is on the way to remove it
			continue
		}
		cm := conflictTab[w.mode]
		if cm&ahead == 0 {
			hi := l.holderIndex(w.proc)
			if cm&l.otherGranted(hi) == 0 {
				if !w.dw.Resolve(deadlock.Granted) {
					out = append(out, w) // lost to the detector: a victim now
					continue
				}
				if m.testAfterGrant != nil {
					m.testAfterGrant(w.proc)
				}
				l.unwait(w.mode)
				l.grant(w.proc, hi, w.mode)
				// The registry entry is left to the waiter (see sleep).
				w.proc.cur.CompareAndSwap(w, nil)
				continue
			}
		}
		ahead |= bit(w.mode)
		out = append(out, w)
	}
	clear(l.queue[len(out):])
	l.queue = out
}

// Unlock releases one acquisition of mode on tag by p (LockRelease) and wakes
// the waiters that can now be granted. Releasing a lock that p does not hold
// is a no-op.
func (m *Manager) Unlock(p *Proc, tag Tag, mode LockMode) {
	if !mode.valid() {
		return
	}
	h := m.hash(tag)
	pt := m.partOf(h)
	pt.mu.Lock()
	if l := pt.lookup(tag, h); l != nil {
		if invariants.Enabled {
			l.checkInUse()
		}
		if hi := l.holderIndex(p); hi >= 0 && l.holders[hi].counts[mode] > 0 {
			l.ungrant(hi, mode)
			if len(l.queue) > 0 {
				m.wakeup(l)
			}
			pt.release(l)
		}
	}
	pt.mu.Unlock()
}
