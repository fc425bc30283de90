package lockmgr

import (
	"sync"

	"github.com/tupled/tupled/deadlock"
)

// graph is the Manager as the deadlock detector sees it (deadlock.Graph).
type graph struct{ m *Manager }

func (g graph) NewWalker(l deadlock.Locking) deadlock.Walker {
	return &walker{m: g.m, locking: l, snaps: make(map[*lock]*lockSnap)}
}

// LockAll takes every partition mutex in partition order, like
// CheckDeadLock's loop over the lock-partition LWLocks.
func (g graph) LockAll(exclusive bool) {
	for i := range g.m.parts {
		if exclusive {
			g.m.parts[i].mu.Lock()
		} else {
			g.m.parts[i].mu.RLock()
		}
	}
}

func (g graph) UnlockAll(exclusive bool) {
	for i := len(g.m.parts) - 1; i >= 0; i-- {
		if exclusive {
			g.m.parts[i].mu.Unlock()
		} else {
			g.m.parts[i].mu.RUnlock()
		}
	}
}

// walker enumerates wait-for edges for the detector.
//
// Edges of a tuple-lock wait w (lock L, mode m, proc P):
//   - hard: every other proc holding on L a mode that conflicts with m, to
//     that proc's current wait;
//   - soft: every earlier waiter in L's queue whose request conflicts with m.
//
// Edges of a transaction wait: for every awaited transaction still running,
// to the current wait of its proc if it is waiting (found in the registry).
//
// Unlocked walkers (the default strategy) read each lock under its partition's
// read lock into a lockSnap and keep it for as long as the publication epoch
// does not move: no edge can appear without a publication, so the snapshot
// misses nothing; what it has in excess (waits that ended since) is filtered
// by state and by the final validation. A holder's current wait is read live,
// and followed only if it was published before the snapshot was taken
// (hw.epoch <= snap.epoch): then the holder was already waiting when it was
// seen holding L, and a waiting proc cannot release L, so the edge is real for
// as long as both waits last. Locked walkers (every partition lock held) read
// the live structures.
//
// Bounding the work (deadlock.Expansion):
//   - Naive (classic family): PostgreSQL's cost. Every expanded queue waiter
//     scans its queue from the front: O(n²) for a waiter behind n others.
//   - Exact: within one search, the predecessors of a queue position are
//     scanned once per (lock, requested mode): prefix[m] remembers how far
//     earlier scans for mode m went, and everything before it was already
//     handed to the search. Across searches of one epoch, settled remembers
//     the longest queue prefix whose waits are all settled (ended, or stamped
//     "on no cycle"), which the search would prune anyway. O(n) per search.
//   - Summary (default, single-memo, first pass): soft edges point only
//     backwards, so all a queued wait can reach outside its queue is the
//     waits of the lock's holders; report those once per lock and search,
//     plus the search's start if it is queued earlier on the same lock.
//     O(holders) per lock, whatever the queue length.
type walker struct {
	m       *Manager
	locking deadlock.Locking
	epoch   uint64
	gen     uint64
	snaps   map[*lock]*lockSnap
	spare   []*lockSnap
	procs   []*Proc
	start   *deadlock.Wait     // of the current search
	x       deadlock.Expansion // of the current search
	// incomplete: an UnlockedNoWait walker found a lock busy during the
	// current search and stopped (see rlock).
	incomplete bool
}

func (wk *walker) Incomplete() bool { return wk.incomplete }

// rlock takes mu's read lock. An UnlockedNoWait walker (a waiter helping the
// detector) never blocks: it spins on TryRLock for a few microseconds — a
// partition's writers hold it that long, and between two of them TryRLock
// gets in (the next writer must first be scheduled to take the mutex) — and
// otherwise gives up, marking the search incomplete. A reader that blocks
// parks, and in the storm a parked goroutine waits behind hundreds of
// runnable ones: instrumented, helpers that blocked here stalled 3–68 ms
// mid-check, and with every helper slot stalled nobody helped at all.
func (wk *walker) rlock(mu *sync.RWMutex) bool {
	if wk.locking != deadlock.UnlockedNoWait {
		mu.RLock()
		return true
	}
	for range rlockSpins {
		if mu.TryRLock() {
			return true
		}
	}
	wk.incomplete = true
	return false
}

// rlockSpins bounds an UnlockedNoWait walker's tries of TryRLock.
const rlockSpins = 100

type lockSnap struct {
	epoch   uint64 // publication epoch when taken
	holders []holder
	queue   []*waiter
	index   map[*waiter]int32 // built lazily for long queues
	gen     uint64            // check generation prefix belongs to
	prefix  [9]int32          // per requested mode: queue[:prefix] already emitted in this search
	settled int32             // queue[:settled] are all settled at this epoch
}

func (wk *walker) Begin(epoch uint64, start *deadlock.Wait, x deadlock.Expansion) {
	wk.gen++
	wk.start, wk.x = start, x
	wk.incomplete = false
	if !wk.locking.Unlocked() || epoch != wk.epoch {
		wk.Release()
		wk.epoch = epoch
	}
}

func (wk *walker) Release() {
	for l, s := range wk.snaps {
		delete(wk.snaps, l)
		if wk.locking.Unlocked() {
			clear(s.holders)
			clear(s.queue)
			s.holders, s.queue = s.holders[:0], s.queue[:0]
		} else {
			s.holders, s.queue = nil, nil
		}
		clear(s.index)
		s.settled = 0
		if len(wk.spare) < 64 {
			wk.spare = append(wk.spare, s)
		}
	}
}

func (wk *walker) snap(l *lock, pt *partition) *lockSnap {
	if s := wk.snaps[l]; s != nil {
		return s
	}
	var s *lockSnap
	if n := len(wk.spare); n > 0 {
		s = wk.spare[n-1]
		wk.spare = wk.spare[:n-1]
	} else {
		s = &lockSnap{}
	}
	if wk.locking.Unlocked() {
		if !wk.rlock(&pt.mu) {
			wk.spare = append(wk.spare, s)
			return nil
		}
		s.epoch = wk.m.det.Epoch()
		s.holders = append(s.holders[:0], l.holders...)
		s.queue = append(s.queue[:0], l.queue...)
		pt.mu.RUnlock()
	} else {
		s.epoch = wk.m.det.Epoch()
		s.holders, s.queue = l.holders, l.queue
	}
	s.gen = 0
	s.settled = 0
	wk.snaps[l] = s
	return s
}

func (s *lockSnap) pos(w *waiter) int32 {
	if len(s.queue) <= 16 {
		for i, q := range s.queue {
			if q == w {
				return int32(i)
			}
		}
		return -1
	}
	if len(s.index) == 0 {
		if s.index == nil {
			s.index = make(map[*waiter]int32, len(s.queue))
		}
		for i, q := range s.queue {
			s.index[q] = int32(i)
		}
	}
	if i, ok := s.index[w]; ok {
		return i
	}
	return -1
}

func (wk *walker) Successors(dw *deadlock.Wait, visit func(*deadlock.Wait) bool) bool {
	w := dw.Owner.(*waiter)
	if w.lock == nil {
		return wk.xactSuccessors(w, visit)
	}
	s := wk.snap(w.lock, w.part)
	if s == nil {
		return false // UnlockedNoWait and the partition was busy
	}
	pos := s.pos(w)
	if pos < 0 {
		return true // no longer queued on this lock
	}
	if wk.x == deadlock.Summary {
		return wk.summary(w, s, pos, visit)
	}
	cm := conflictTab[w.mode]
	for i := range s.holders {
		h := &s.holders[i]
		if h.proc == w.proc || h.mask&cm == 0 {
			continue
		}
		if hw := h.proc.wait(); hw != nil && hw.dw.Epoch() <= s.epoch {
			if !visit(&hw.dw) {
				return false
			}
		}
	}
	from := int32(0)
	if wk.x == deadlock.Exact {
		if s.gen != wk.gen {
			s.gen = wk.gen
			s.prefix = [9]int32{}
		}
		for s.settled < pos && s.queue[s.settled].dw.Settled(wk.epoch) {
			s.settled++
		}
		from = max(s.prefix[w.mode], s.settled)
	}
	for j := from; j < pos; j++ {
		q := s.queue[j]
		if cm&bit(q.mode) != 0 && q.proc != w.proc {
			if !visit(&q.dw) {
				return false
			}
		}
	}
	if wk.x == deadlock.Exact && pos > s.prefix[w.mode] {
		s.prefix[w.mode] = pos
	}
	return true
}

// summary is the non-exact expansion of a tuple-lock wait at position pos of
// s. Soft edges point only backwards within a queue, so everything a queued
// wait reaches is earlier waits of the same queue plus, through any of them,
// the current waits of the lock's holders. Report exactly that superset's
// exits — every holder's valid current wait — and the start of the search if
// it is queued earlier on this lock (the only way back into the queue). The
// queue itself is never scanned: a check of a waiter deep in a hot row's queue
// costs O(holders), not O(queue), even while new waits keep arriving.
func (wk *walker) summary(w *waiter, s *lockSnap, pos int32, visit func(*deadlock.Wait) bool) bool {
	if s.gen != wk.gen { // the holders' waits, once per lock and search
		s.gen = wk.gen
		for i := range s.holders {
			h := &s.holders[i]
			if hw := h.proc.wait(); hw != nil && hw.dw.Epoch() <= s.epoch {
				if !visit(&hw.dw) {
					return false
				}
			}
		}
	}
	if sw, ok := wk.start.Owner.(*waiter); ok && sw.lock == w.lock {
		if sp := s.pos(sw); sp >= 0 && sp < pos {
			return visit(wk.start)
		}
	}
	return true
}

func (wk *walker) xactSuccessors(w *waiter, visit func(*deadlock.Wait) bool) bool {
	for _, x := range w.xacts {
		if ended(x) {
			continue
		}
		// The node is the transaction that can end x: a subtransaction's
		// top level (its Proc is registered under the top-level xid).
		owner := x.owner()
		sh := wk.m.regOf(owner)
		wk.procs = wk.procs[:0]
		if !wk.rlock(&sh.mu) {
			return false
		}
		for p := sh.procs[owner]; p != nil; p = p.regNext {
			wk.procs = append(wk.procs, p)
		}
		sh.mu.RUnlock()
		for _, p := range wk.procs {
			if p == w.proc {
				continue
			}
			if pw := p.cur.Load(); pw != nil {
				if !visit(&pw.dw) {
					return false
				}
			}
		}
	}
	clear(wk.procs)
	return true
}
