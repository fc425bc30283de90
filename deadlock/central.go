package deadlock

import (
	"sync/atomic"
	"time"
)

// central is the default strategy: one detector goroutine owns every check.
//
// Waiters never check anything themselves. Arm pushes the wait on a lock-free
// stack that the goroutine moves into its queue ordered by check deadline (Start + timeout; see dueQueue) and the waiter
// simply goes on waiting; Disarm is a no-op (finished waits are dropped when
// they come due, so the queue holds at most the waits of the last timeout
// interval). The goroutine sleeps until the earliest deadline (rounded up to
// its granule, so that a storm of waits costs one wake-up per granule, not one
// per wait), pops every wait that is due, and checks them one after another in
// deadline order:
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
	base time.Time // deadlines are kept as nanoseconds since base (monotonic)
	// granule: the goroutine wakes at most once per granule, handling every
	// deadline that fell in it (timers of a busy system are batched; checks
	// are evaluated as of their own deadline anyway, so only detection
	// latency grows, by less than one granule).
	granule time.Duration
	// incoming: waits armed since the goroutine last looked, a lock-free
	// stack (Treiber) linked through Wait.armNext. Arm is one CAS: with
	// tens of thousands of waits a second, a mutex here was a convoy.
	incoming atomic.Pointer[Wait]
	// idle: the goroutine has nothing armed and sleeps until kicked; the
	// Arm that finds it set sends the kick.
	idle atomic.Bool
	q    dueQueue // owned by the goroutine
	kick chan struct{}
	quit chan struct{}
	done chan struct{}
}

// maxGranule bounds central.granule (a tenth of the timeout below 10 ms).
const maxGranule = time.Millisecond

func newCentral(d *Detector) *central {
	c := &central{d: d, base: time.Now(), granule: min(maxGranule, d.timeout/10),
		kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *central) stop() {
	close(c.quit)
	<-c.done
}

func (c *central) arm(w *Wait, deadline time.Time) {
	w.deadline = deadline
	w.dueAt = int64(deadline.Sub(c.base))
	for {
		old := c.incoming.Load()
		w.armNext = old
		if c.incoming.CompareAndSwap(old, w) {
			break
		}
	}
	if c.idle.Load() && c.idle.CompareAndSwap(true, false) {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
}

// drain moves the incoming waits into the deadline queue, in arrival order.
func (c *central) drain() {
	w := c.incoming.Swap(nil)
	var rev *Wait
	for w != nil { // the stack is newest first: reverse it
		next := w.armNext
		w.armNext = rev
		rev, w = w, next
	}
	for rev != nil {
		next := rev.armNext
		rev.armNext = nil
		c.q.insert(due{at: rev.dueAt, epoch: rev.epoch, w: rev})
		rev = next
	}
}

func (c *central) loop() {
	defer close(c.done)
	s := newSearcher(c.d.g.NewWalker(Unlocked))
	t := time.NewTimer(time.Hour)
	t.Stop()
	var batch []*Wait
	for {
		c.drain()
		next, has := c.q.first()
		if !has {
			s.w.Release()
			c.idle.Store(true)
			if c.incoming.Load() != nil { // armed before idle was visible
				c.idle.Store(false)
				continue
			}
			select {
			case <-c.kick:
				c.idle.Store(false)
				continue
			case <-c.quit:
				return
			}
		}
		if c.granule > 0 { // wake at the end of the deadline's granule
			g := int64(c.granule)
			next = (next + g - 1) / g * g
		}
		if dl := time.Duration(next - int64(time.Since(c.base))); dl > 0 {
			t.Reset(dl)
			select {
			case <-t.C:
			case <-c.quit:
				t.Stop()
				return
			}
			c.drain()
		}
		now := int64(time.Since(c.base))
		batch = c.q.popDue(now, batch)
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

// due is one armed wait: its deadline (ns since central.base) and
// publication epoch, the queue's sort key.
type due struct {
	at    int64
	epoch uint64
	w     *Wait
}

func (a *due) before(b *due) bool {
	return a.at < b.at || (a.at == b.at && a.epoch < b.epoch)
}

// dueQueue is the armed waits in deadline order (ties: publication order).
//
// Every deadline is Start + the same timeout, and waits are armed right after
// they are published, so arrivals come almost sorted: insert appends and
// walks back over the few entries with a later deadline (insertion sort from
// the tail), pops take from the front. O(1) amortised per wait, against the
// O(log n) sift of a heap with up to (waits per second × timeout) entries,
// most of them waits that ended long before their deadline.
type dueQueue struct {
	buf  []due
	head int
}

// insert adds e.
func (q *dueQueue) insert(e due) {
	q.buf = append(q.buf, e)
	i := len(q.buf) - 1
	for i > q.head && e.before(&q.buf[i-1]) {
		q.buf[i] = q.buf[i-1]
		i--
	}
	q.buf[i] = e
}

func (q *dueQueue) first() (int64, bool) {
	if q.head == len(q.buf) {
		return 0, false
	}
	return q.buf[q.head].at, true
}

// popDue appends the waits whose deadline is at or before now to out, in
// order, and removes them.
func (q *dueQueue) popDue(now int64, out []*Wait) []*Wait {
	for q.head < len(q.buf) && q.buf[q.head].at <= now {
		out = append(out, q.buf[q.head].w)
		q.buf[q.head] = due{}
		q.head++
	}
	switch n := len(q.buf) - q.head; {
	case n == 0:
		q.buf, q.head = q.buf[:0], 0
	case q.head >= 1024 && q.head >= n:
		copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	return out
}

// Len is the number of armed waits (tests).
func (q *dueQueue) Len() int { return len(q.buf) - q.head }
