package deadlock

import "time"

// maxMemoDefers bounds how often single-memo lets a waiter skip its check
// because a recent check already walked through it. The seed's patch had no
// bound ("there's absolutely no bound for deadlock checks happening", Andres
// Freund); with it, a waiter's check is delayed by at most maxMemoDefers
// timeouts, so no deadlock waits forever for its detection.
const maxMemoDefers = 2

// The per-waiter strategies reproduce PostgreSQL's own structure: every wait
// arms its own timer (time.AfterFunc, standing in for the backend's SIGALRM)
// and the check runs when that timer fires, in the timer's goroutine, which
// plays the backend that owns the wait:
//
//	classic         lock every partition exclusively, in order; check; unlock.
//	shared-first    check under every partition's read lock; only if a cycle
//	                is found, check again under exclusive locks and resolve.
//	single-checker  classic, but only one check at a time: a timer that fires
//	                while another check runs re-arms for another timeout.
//	single-memo     single-checker plus two memos: the seed's recency one (a
//	                waiter that a check walked through less than a timeout ago
//	                re-arms instead of checking, at most maxMemoDefers times)
//	                and an exact one (a waiter whose check proved it on no
//	                cycle is stamped with the publication epoch; searches at
//	                that epoch prune it).
//
// The victim is always the waiter whose check found the cycle (the check runs
// for w and can only Resolve w).
func (d *Detector) fire(w *Wait) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return
	}
	d.running.Add(1)
	d.mu.Unlock()
	defer d.running.Done()

	w.tmu.Lock()
	if w.disarmed {
		w.tmu.Unlock()
		return
	}
	asOf := d.deadlineOf(w) // not the re-armed firing time: see Wait.deadline
	defers := w.defers
	w.tmu.Unlock()
	if w.State() != Waiting {
		return
	}

	switch d.kind {
	case StrategyClassic:
		d.stopTheWorld(w, asOf, false)

	case StrategySharedFirst:
		begin := time.Now()
		d.g.LockAll(false)
		s := d.getSearcher(LockedShared)
		s.w.Begin(d.epoch.Load(), w, Naive)
		maybe := s.find(w, false, asOf, 0) != nil
		if !maybe {
			w.checked.Store(true)
		}
		d.g.UnlockAll(false)
		d.putSearcher(LockedShared, s)
		if maybe {
			d.g.LockAll(true)
			s := d.getSearcher(LockedExclusive)
			d.decide(s, w, asOf, false, true)
			w.checked.Store(true)
			d.g.UnlockAll(true)
			d.putSearcher(LockedExclusive, s)
		}
		d.noteCheck(time.Since(begin))

	case StrategySingleChecker:
		if !d.busy.CompareAndSwap(false, true) {
			d.rearm(w)
			return
		}
		d.stopTheWorld(w, asOf, false)
		d.busy.Store(false)

	case StrategySingleMemo:
		if defers < maxMemoDefers && time.Since(time.Unix(0, w.visitedAt.Load())) < d.timeoutOf(w) {
			d.rearm(w)
			return
		}
		if !d.busy.CompareAndSwap(false, true) {
			d.rearm(w)
			return
		}
		d.stopTheWorld(w, asOf, true)
		d.busy.Store(false)
	}
}

// stopTheWorld runs PostgreSQL's CheckDeadLock: all partitions exclusively,
// search, resolve, release.
func (d *Detector) stopTheWorld(w *Wait, asOf time.Time, memo bool) {
	begin := time.Now()
	d.g.LockAll(true)
	s := d.getSearcher(LockedExclusive)
	victim := d.decide(s, w, asOf, memo, true)
	if memo && !victim {
		now := time.Now().UnixNano()
		s.visited(func(n *Wait) { n.visitedAt.Store(now) })
	}
	w.checked.Store(true)
	d.g.UnlockAll(true)
	d.putSearcher(LockedExclusive, s)
	d.noteCheck(time.Since(begin))
}

// rearm re-enables w's timer for another timeout (the seed's
// enable_timeout_after(DEADLOCK_TIMEOUT, DeadlockTimeout)).
func (d *Detector) rearm(w *Wait) {
	w.tmu.Lock()
	defer w.tmu.Unlock()
	if w.disarmed || w.State() != Waiting {
		return
	}
	w.defers++
	w.deadline = time.Now().Add(d.timeoutOf(w))
	w.timer.Reset(d.timeoutOf(w))
	d.deferred.Add(1)
}

func (d *Detector) getSearcher(l Locking) *searcher {
	if s, ok := d.pools[l].Get().(*searcher); ok {
		return s
	}
	s := newSearcher(d.g.NewWalker(l))
	s.locked = l == LockedExclusive
	return s
}

func (d *Detector) putSearcher(l Locking, s *searcher) {
	clear(s.parent)
	s.start, s.cur, s.found = nil, nil, nil
	s.w.Release()
	d.pools[l].Put(s)
}
