package deadlock

import (
	"math"
	"sync/atomic"
	"time"
)

// central is the default strategy: one detector goroutine runs the checks,
// and waiters lend a hand when it falls behind.
//
// Arm pushes the wait on a lock-free stack that is moved into a queue ordered
// by check deadline (Start + timeout; see dueQueue), and the waiter goes on
// waiting; Disarm is a no-op (finished waits are dropped when they come due,
// so the queue holds at most the waits of the last timeout interval). The
// goroutine sleeps until the earliest deadline (rounded up to its granule, so
// that a storm of waits costs one wake-up per granule, not one per wait),
// then takes the due waits out of the queue one at a time, in deadline order,
// and checks each. If the next check is more than a granule overdue (the
// goroutine is not being run, or is stuck in a check), the next waiter to
// arm takes up to helpBudget due checks out of the same queue and runs them
// itself before it goes to sleep (help). The queue is guarded by a token
// held only to move waits in and out of it, never during a check.
//
//   - no stop-the-world: the Walker reads one lock partition at a time, under
//     its read lock, briefly, and caches the snapshot for as long as no new
//     wait is published (edges only appear with publications, see Graph);
//   - deadline order + "as of deadline" evaluation keep PostgreSQL's victim
//     rule exactly, even when checks run late: check k sees only the waits
//     that had begun by its deadline; checks start in deadline order, and one
//     that finds a cycle while an earlier member's check is still pending
//     (running elsewhere, or not taken yet) leaves the cycle to it
//     (Detector.leaveTo), so the victim is the one PostgreSQL's timers would
//     have picked even when two checks overlap;
//   - a found cycle is validated (stillWaiting) before the victim is resolved,
//     because the observations were not taken at one instant;
//   - summary first: a search that only has to prove "no cycle" reads each
//     lock's holders, never its queue, so a waiter behind 1000 others on a
//     hot row costs O(1); an exact search runs only on a suspected cycle;
//   - memo stamps (a check that proved its waiter lies on no cycle at epoch E
//     stamps it; later searches at epoch E prune it) make a quiescent pile of
//     1000 chained waiters cost O(1) per check after the first instead of O(n).
//     A stamp stays sound with overlapping checks: it is a fact about the
//     graph at epoch E, and a concurrent victim only removes edges.
type central struct {
	d    *Detector
	base time.Time // deadlines are kept as nanoseconds since base (monotonic)
	// granule: the goroutine wakes at most once per granule, handling every
	// deadline that fell in it (timers of a busy system are batched; checks
	// are evaluated as of their own deadline anyway, so only detection
	// latency grows, by less than one granule).
	granule time.Duration
	// incoming: waits armed since the queue's owner last looked, a
	// lock-free stack (Treiber) linked through Wait.armNext. Arm is one CAS:
	// with tens of thousands of waits a second, a mutex here was a convoy.
	incoming atomic.Pointer[Wait]
	// idle: the goroutine has nothing armed and sleeps until kicked; the
	// Arm that finds it set sends the kick.
	idle atomic.Bool
	// owner is the token that guards the queue: whoever holds it (the
	// goroutine, or a waiter helping in Arm, see help) moves incoming waits
	// into q and takes the next due wait out. It is taken by a
	// compare-and-swap, never waited for, and held for that bookkeeping only:
	// the check itself runs after the token is released, so a checker that
	// is descheduled in the middle of a check holds up that check alone.
	owner atomic.Bool
	// due: when the next check is due, as the instant (ns since base,
	// rounded up to the granule) the goroutine means to wake up for it;
	// noDue when nothing is armed. Arm lowers it, so that a wait nobody has
	// moved into q yet counts too.
	due atomic.Int64
	q   dueQueues // guarded by owner
	s   *searcher // the goroutine's
	// helpers: searchers for helping waiters, each taken by a
	// compare-and-swap; with all of them in use, a waiter does not help.
	// They keep their walkers' snapshots from check to check like the
	// goroutine's (a sync.Pool was emptied by every GC, which the storm
	// runs several times a second).
	helpers [maxHelpers]helperSlot
	// stall (tests): the goroutine blocks on it before each round, to stand
	// for a goroutine the Go scheduler does not run.
	stall chan struct{}
	kick  chan struct{}
	quit  chan struct{}
	done  chan struct{}
}

// maxGranule bounds central.granule (a tenth of the timeout below 10 ms).
const maxGranule = time.Millisecond

// noDue is central.due when nothing is armed.
const noDue = math.MaxInt64

// maxHelpers bounds the waiters helping at once.
const maxHelpers = 4

type helperSlot struct {
	busy atomic.Bool
	s    *searcher
}

// helpBudget bounds the checks one helping Arm runs before its caller goes
// to sleep on its own wait.
const helpBudget = 32

func newCentral(d *Detector, stall chan struct{}) *central {
	c := &central{d: d, base: time.Now(), granule: min(maxGranule, d.timeout/10),
		stall: stall, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	c.due.Store(noDue)
	c.s = newSearcher(d.g.NewWalker(Unlocked))
	for i := range c.helpers {
		c.helpers[i].s = newSearcher(d.g.NewWalker(UnlockedNoWait))
	}
	go c.loop()
	return c
}

func (c *central) stop() {
	close(c.quit)
	<-c.done
}

// wakeAt rounds a deadline up to the end of its granule.
func (c *central) wakeAt(at int64) int64 {
	if g := int64(c.granule); g > 0 {
		return (at + g - 1) / g * g
	}
	return at
}

func (c *central) arm(w *Wait, deadline time.Time) {
	w.deadline = deadline
	w.dueAt = int64(deadline.Sub(c.base))
	c.push(w)
	if c.idle.Load() && c.idle.CompareAndSwap(true, false) {
		select {
		case c.kick <- struct{}{}:
		default:
		}
	}
	c.help(int64(w.Start.Sub(c.base)))
}

// push puts w (deadline set) on the incoming stack and lowers due to it.
func (c *central) push(w *Wait) {
	for {
		old := c.incoming.Load()
		w.armNext = old
		if c.incoming.CompareAndSwap(old, w) {
			break
		}
	}
	wake := c.wakeAt(w.dueAt)
	for {
		old := c.due.Load()
		if wake >= old {
			break
		}
		if c.due.CompareAndSwap(old, wake) {
			if old != noDue {
				// The goroutine may be asleep until old: with one
				// timeout a later arrival is never due earlier, but a
				// wait with a shorter timeout of its own (Wait.Timeout)
				// is. Wake it to re-plan.
				select {
				case c.kick <- struct{}{}:
				default:
				}
			}
			break
		}
	}
}

// help runs overdue checks in the caller's goroutine: a waiter that has just
// armed its own wait and is about to sleep on it, holding no partition lock.
//
// Why: the detector goroutine is one goroutine among thousands. In the storm
// (1000 clients, most of them runnable) a goroutine readied by its timer
// waits in the runnext slot of the P that ran the timer, and when that P is
// busy — the GC's mark worker, a mark assist, or its OS thread preempted by
// another process — the other P never steals it (it always has work of its
// own): the scheduler trace showed the detector runnable but not running for
// 12 ms at a time, and its lateness reached 100–400 ms. Waiters arming
// waits are, by contrast, running right now, on whichever P is making
// progress. So when the next check is more than a granule overdue, an
// arming waiter takes the queue's token and runs up to helpBudget due
// checks itself, in deadline order and each as of its own deadline, exactly
// as the goroutine would have.
//
// The cost falls on a goroutine that is about to block anyway, holds no lock
// of the engine (Arm's contract), and stops after helpBudget checks: the
// engine is never stalled. now is the caller's wait's Start (read a moment
// ago), a lower bound of the current time that costs nothing.
func (c *central) help(now int64) {
	due := c.due.Load()
	if due == noDue || now-due < int64(c.granule) {
		return
	}
	var slot *helperSlot
	for i := range c.helpers {
		if h := &c.helpers[i]; h.busy.CompareAndSwap(false, true) {
			slot = h
			break
		}
	}
	if slot == nil {
		return // enough waiters are helping already
	}
	defer slot.busy.Store(false)
	for range helpBudget {
		w, _ := c.next(now)
		if w == nil {
			return
		}
		if !c.check(slot.s, w) {
			// A partition lock was busy: a helper never waits for one
			// (it would park, and a parked helper is as late as the
			// goroutine it stands in for). The check is back in the
			// queue, first in line; leave it to the goroutine or the
			// next helper.
			c.d.yielded.Add(1)
			return
		}
		c.d.helped.Add(1)
	}
}

// next takes the owner token, moves the incoming waits into the queue, and
// pops the first wait due by now that is still waiting (finished ones are
// dropped on the way). It returns nil if nothing is due or the token is
// busy (busy reports which); the earliest deadline left, if any, is
// published in due.
func (c *central) next(now int64) (w *Wait, busy bool) {
	if !c.owner.CompareAndSwap(false, true) {
		return nil, true
	}
	select {
	case <-c.quit:
		c.owner.Store(false)
		return nil, false
	default:
	}
	c.drain()
	for {
		at, has := c.q.first()
		if !has {
			// Arm lowers due again for whatever arrives from now on.
			c.due.Store(noDue)
			break
		}
		if at > now {
			c.due.Store(c.wakeAt(at))
			break
		}
		x := c.q.pop()
		if x.State() == Waiting {
			w = x
			if next, ok := c.q.first(); ok {
				c.due.Store(c.wakeAt(next))
			} else {
				c.due.Store(noDue)
			}
			break
		}
	}
	c.owner.Store(false)
	return w, false
}

// check runs w's check, as of its deadline, with searcher s.
//
// Checks run concurrently (the goroutine, and helpers when it is late), so
// one that finds a cycle defers to an earlier member whose check is still
// pending (Detector.leaveTo, as the per-waiter strategies do): that member's
// check, evaluated as of its own deadline when the cycle was already
// complete, makes it the victim, which is PostgreSQL's rule.
//
// It reports false if the check was inconclusive (a helper's walker found a
// partition lock busy and would not wait): w then goes back to the incoming
// stack, unchecked, and is popped again before any later deadline.
func (c *central) check(s *searcher, w *Wait) bool {
	begin := time.Now()
	atomicMax(&c.d.maxLate, int64(begin.Sub(w.deadline)))
	c.d.decide(s, w, w.deadline, true, true)
	if s.incomplete {
		c.push(w)
		return false
	}
	w.checked.Store(true)
	c.d.noteCheck(time.Since(begin))
	return true
}

// drain moves the incoming waits into the deadline queue, in arrival order.
// The caller holds the owner token.
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
		c.q.insert(c.d.timeoutOf(rev), due{at: rev.dueAt, epoch: rev.epoch, w: rev})
		rev = next
	}
}

func (c *central) loop() {
	defer close(c.done)
	t := time.NewTimer(time.Hour)
	t.Stop()
	sleep := func(d time.Duration) bool {
		t.Reset(d)
		select {
		case <-t.C:
			return true
		case <-c.kick: // an earlier deadline was armed (push)
			t.Stop()
			return true
		case <-c.quit:
			t.Stop()
			return false
		}
	}
	for {
		if c.stall != nil {
			select {
			case <-c.stall:
			case <-c.quit:
				return
			}
		}
		now := int64(time.Since(c.base))
		w, busy := c.next(now)
		if w != nil {
			c.check(c.s, w)
			continue
		}
		select {
		case <-c.quit:
			return
		default:
		}
		if busy {
			// A helper holds the token for a moment: look again soon.
			if !sleep(max(c.granule/4, time.Microsecond)) {
				return
			}
			continue
		}
		if due := c.due.Load(); due != noDue {
			if dl := time.Duration(due - now); dl > 0 && !sleep(dl) {
				return
			}
			continue
		}
		// Nothing armed: go idle until an Arm kicks.
		c.s.w.Release()
		c.idle.Store(true)
		if c.incoming.Load() != nil { // armed before idle was visible
			c.idle.Store(false)
			continue
		}
		select {
		case <-c.kick:
			c.idle.Store(false)
		case <-c.quit:
			return
		}
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

// dueQueues is the armed waits in deadline order, as one dueQueue per
// distinct deadlock timeout (PostgreSQL's deadlock_timeout is per session,
// Wait.Timeout): within one queue every deadline is Start + the same
// timeout, so arrivals stay almost sorted and insertion from the tail stays
// O(1) (see dueQueue); first and pop take the earliest head among the queues.
// There are as many queues as timeouts in use by armed waits (one, unless
// sessions set their own): a queue that empties is dropped, unless it is the
// last one.
type dueQueues struct {
	qs []timedQueue
}

type timedQueue struct {
	timeout time.Duration
	q       dueQueue
}

// insert adds e, whose wait's deadlock timeout is timeout.
func (qs *dueQueues) insert(timeout time.Duration, e due) {
	for i := range qs.qs {
		if qs.qs[i].timeout == timeout {
			qs.qs[i].q.insert(e)
			return
		}
	}
	qs.qs = append(qs.qs, timedQueue{timeout: timeout})
	qs.qs[len(qs.qs)-1].q.insert(e)
}

// earliest is the index of the queue whose head is due first, or -1.
func (qs *dueQueues) earliest() int {
	best := -1
	for i := range qs.qs {
		q := &qs.qs[i].q
		if q.head == len(q.buf) {
			continue
		}
		if best < 0 || q.buf[q.head].before(&qs.qs[best].q.buf[qs.qs[best].q.head]) {
			best = i
		}
	}
	return best
}

func (qs *dueQueues) first() (int64, bool) {
	i := qs.earliest()
	if i < 0 {
		return 0, false
	}
	return qs.qs[i].q.first()
}

// pop removes and returns the earliest wait. The queues must not all be
// empty.
func (qs *dueQueues) pop() *Wait {
	i := qs.earliest()
	w := qs.qs[i].q.pop()
	if qs.qs[i].q.Len() == 0 && len(qs.qs) > 1 {
		qs.qs = append(qs.qs[:i], qs.qs[i+1:]...)
	}
	return w
}

// Len is the number of armed waits (tests).
func (qs *dueQueues) Len() int {
	n := 0
	for i := range qs.qs {
		n += qs.qs[i].q.Len()
	}
	return n
}

// dueQueue is the armed waits of one deadlock timeout in deadline order
// (ties: publication order).
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

// pop removes and returns the first wait. The queue must not be empty.
func (q *dueQueue) pop() *Wait {
	w := q.buf[q.head].w
	q.buf[q.head] = due{}
	q.head++
	switch n := len(q.buf) - q.head; {
	case n == 0:
		q.buf, q.head = q.buf[:0], 0
	case q.head >= 1024 && q.head >= n:
		copy(q.buf, q.buf[q.head:])
		clear(q.buf[n:])
		q.buf, q.head = q.buf[:n], 0
	}
	return w
}

// Len is the number of armed waits (tests).
func (q *dueQueue) Len() int { return len(q.buf) - q.head }
