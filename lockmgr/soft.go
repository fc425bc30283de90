package lockmgr

import "github.com/tupled/tupled/deadlock"

// Soft deadlocks (deadlock.c's DeadLockCheckRecurse, TestConfiguration,
// TopoSort): a cycle of the wait-for graph may run through "soft" edges — a
// waiter W waits for an earlier waiter E of the same lock only because E is
// ahead of it in the queue and their requests conflict, not because E holds
// anything. Such a cycle is broken by reordering that queue: put W ahead of
// E. PostgreSQL does exactly that when the check of a waiter finds a cycle:
// it tries reversing the soft edges of the cycle (deepest first), each time
// re-testing for cycles through the checking waiter and through the waiters
// it moved, and if some configuration has no cycle it applies the new queue
// orders and wakes whoever they let in; only a cycle that no reordering
// removes ("hard") makes the checking waiter the victim.
//
// Here the detector finds a validated cycle the usual way (lock-free, see
// package deadlock), and only then calls Rearrange, which takes every
// partition lock exclusively — stop-the-world, but only for a check that
// found a cycle, which is rare — and redoes the search on the live graph
// with edge kinds. The search for a configuration is greedy (PostgreSQL's
// recursion backtracks over the choice of soft edge; the greedy order —
// deepest soft edge first — is the one PostgreSQL tries first) and bounded
// by maxRearrangements moves.

// maxRearrangements bounds the queue moves one Rearrange tries.
const maxRearrangements = 32

// Rearrange implements deadlock.Rearranger: it breaks the cycles through
// start that are made only of soft edges by reordering wait queues, and
// reports whether start is then on no cycle (a hard cycle remains: false;
// the queues are left as they were). locked: the caller holds every
// partition lock exclusively.
func (g graph) Rearrange(start *deadlock.Wait, locked bool) bool {
	if !locked {
		g.LockAll(true)
		defer g.UnlockAll(true)
	}
	sw, ok := start.Owner.(*waiter)
	if !ok || start.State() != deadlock.Waiting {
		return true
	}
	type saved struct {
		l     *lock
		queue []*waiter
	}
	var undo []saved
	moved := []*waiter{sw}
	touched := func(l *lock) {
		for _, u := range undo {
			if u.l == l {
				return
			}
		}
		undo = append(undo, saved{l, append([]*waiter(nil), l.queue...)})
	}
	for range maxRearrangements {
		var cyc []softEdge
		for _, w := range moved {
			if cyc = findCycle(g.m, w); cyc != nil {
				break
			}
		}
		if cyc == nil {
			for _, u := range undo {
				if len(u.l.queue) > 0 {
					g.m.wakeup(u.l)
				}
			}
			return true
		}
		var e *softEdge
		for i := len(cyc) - 1; i >= 0; i-- { // deepest soft edge first
			if cyc[i].soft {
				e = &cyc[i]
				break
			}
		}
		if e == nil {
			break // a hard cycle
		}
		l := e.from.lock
		touched(l)
		l.moveBefore(e.from, e.to)
		moved = append(moved, e.from)
	}
	for _, u := range undo {
		copy(u.l.queue, u.queue)
	}
	return false
}

// softEdge is one edge of a cycle found by findCycle: from waits for to,
// softly (to is ahead of from in from's lock queue and holds nothing that
// conflicts) or hard.
type softEdge struct {
	from, to *waiter
	soft     bool
}

// moveBefore moves w to just before e in l's queue (w is behind e).
func (l *lock) moveBefore(w, e *waiter) {
	wi, ei := -1, -1
	for i, q := range l.queue {
		switch q {
		case w:
			wi = i
		case e:
			ei = i
		}
	}
	if wi < 0 || ei < 0 || wi < ei {
		return
	}
	copy(l.queue[ei+1:wi+1], l.queue[ei:wi])
	l.queue[ei] = w
}

// findCycle searches the live graph (every partition lock held) for a cycle
// through start and returns its edges in order from start, or nil. Hard
// edges are enumerated before soft ones, as FindLockCycleRecurseMember does.
func findCycle(m *Manager, start *waiter) []softEdge {
	if start.dw.State() != deadlock.Waiting {
		return nil
	}
	visited := map[*waiter]bool{start: true}
	var path []softEdge
	var rec func(w *waiter) bool
	rec = func(w *waiter) bool {
		found := false
		succ := func(to *waiter, soft bool) bool {
			if to == nil || to.dw.State() != deadlock.Waiting {
				return false
			}
			path = append(path, softEdge{w, to, soft})
			if to == start {
				found = true
				return true
			}
			if !visited[to] {
				visited[to] = true
				if rec(to) {
					return true
				}
			}
			path = path[:len(path)-1]
			return false
		}
		if w.lock == nil {
			for _, x := range w.xacts {
				if ended(x) {
					continue
				}
				// The registry has its own lock (a waiter leaves it
				// without a partition lock): collect under it, then
				// recurse. A subtransaction's node is its top level's.
				owner := x.owner()
				sh := m.regOf(owner)
				var procs []*Proc
				sh.mu.RLock()
				for p := sh.procs[owner]; p != nil; p = p.regNext {
					procs = append(procs, p)
				}
				sh.mu.RUnlock()
				for _, p := range procs {
					if p != w.proc && succ(p.cur.Load(), false) {
						return true
					}
				}
			}
			return found
		}
		l := w.lock
		cm := conflictTab[w.mode]
		hard := map[*Proc]bool{}
		for i := range l.holders {
			h := &l.holders[i]
			if h.proc == w.proc || h.mask&cm == 0 {
				continue
			}
			hard[h.proc] = true
			if succ(h.proc.wait(), false) {
				return true
			}
		}
		for _, q := range l.queue {
			if q == w {
				break
			}
			if q.proc == w.proc || cm&bit(q.mode) == 0 || hard[q.proc] {
				continue
			}
			if succ(q, true) {
				return true
			}
		}
		return found
	}
	if rec(start) {
		return path
	}
	return nil
}
