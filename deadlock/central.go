package deadlock

import (
	"sync"
	"time"
)

// central is the default strategy: one detector goroutine owns every check.
//
// Waiters never check anything themselves. Arm pushes the wait on a min-heap
// ordered by check deadline (Start + timeout) and the waiter simply goes on
// waiting; Disarm is a no-op (finished waits are dropped when they come due, so
// the heap holds at most the waits of the last timeout interval). The
// goroutine sleeps until the earliest deadline, pops every wait that is due,
// and checks them one after another in deadline order:
//
//   - no stop-the-world: the Walker reads one lock partition at a time, under
//     its read lock, briefly, and caches the snapshot for as long as no new
//     wait is published (edges only appear with publications, see Graph);
//   - deadline order + "as of deadline" evaluation keep PostgreSQL's victim
//     rule exactly, even when the goroutine runs behind: check k sees only the
//     waits that had begun by its deadline, and check k+1 (later deadline) runs
//     after check k's verdict is final;
//   - a found cycle is validated (stillWaiting) before the victim is resolved,
//     because the observations were not taken at one instant;
//   - summary first: a search that only has to prove "no cycle" reads each
//     lock's holders, never its queue, so a waiter behind 1000 others on a
//     hot row costs O(1); an exact search runs only on a suspected cycle;
//   - memo stamps (a check that proved its waiter lies on no cycle at epoch E
//     stamps it; later searches at epoch E prune it) make a quiescent pile of
//     1000 chained waiters cost O(1) per check after the first instead of O(n).
type central struct {
	d    *Detector
	mu   sync.Mutex
	h    []*Wait // min-heap on deadline; deadlines guarded by mu until popped
	kick chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newCentral(d *Detector) *central {
	c := &central{d: d, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *central) stop() {
	close(c.quit)
	<-c.done
}

func (c *central) arm(w *Wait, deadline time.Time) {
	c.mu.Lock()
	w.deadline = deadline
	c.push(w)
	first := c.h[0] == w
	c.mu.Unlock()
	if first {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

func (c *central) loop() {
	defer close(c.done)
	s := newSearcher(c.d.g.NewWalker(Unlocked))
	t := time.NewTimer(time.Hour)
	t.Stop()
	var batch []*Wait
	for {
		c.mu.Lock()
		has := len(c.h) > 0
		var next time.Time
		if has {
			next = c.h[0].deadline
		}
		c.mu.Unlock()
		if !has {
			s.w.Release()
			select {
			case <-c.kick:
				continue
			case <-c.quit:
				return
			}
		}
		if dl := time.Until(next); dl > 0 {
			t.Reset(dl)
			select {
			case <-c.kick:
				t.Stop()
				continue
			case <-t.C:
			case <-c.quit:
				t.Stop()
				return
			}
		}
		now := time.Now()
		c.mu.Lock()
		for len(c.h) > 0 && !c.h[0].deadline.After(now) {
			batch = append(batch, c.pop())
		}
		c.mu.Unlock()
		for i, w := range batch {
			batch[i] = nil
			select {
			case <-c.quit:
				return
			default:
			}
			if w.State() != Waiting {
				continue
			}
			begin := time.Now()
			atomicMax(&c.d.maxLate, int64(begin.Sub(w.deadline)))
			c.d.decide(s, w, w.deadline, true, false)
			w.checked.Store(true)
			c.d.noteCheck(time.Since(begin))
		}
		batch = batch[:0]
	}
}

// Binary min-heap on deadline (ties: earlier Start first, then publication).

func (c *central) less(i, j int) bool {
	a, b := c.h[i], c.h[j]
	if !a.deadline.Equal(b.deadline) {
		return a.deadline.Before(b.deadline)
	}
	return a.epoch < b.epoch
}

func (c *central) push(w *Wait) {
	c.h = append(c.h, w)
	i := len(c.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !c.less(i, p) {
			break
		}
		c.h[i], c.h[p] = c.h[p], c.h[i]
		i = p
	}
}

func (c *central) pop() *Wait {
	top := c.h[0]
	n := len(c.h) - 1
	c.h[0] = c.h[n]
	c.h[n] = nil
	c.h = c.h[:n]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && c.less(l, m) {
			m = l
		}
		if r < n && c.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		c.h[i], c.h[m] = c.h[m], c.h[i]
		i = m
	}
	return top
}
