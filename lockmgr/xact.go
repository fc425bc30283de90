package lockmgr

import (
	"context"
	"fmt"
	"time"

	"github.com/tupled/tupled/deadlock"
)

func ended(x AwaitedXact) bool {
	if x.Done == nil {
		return true
	}
	select {
	case <-x.Done:
		return true
	default:
		return false
	}
}

// WaitXacts waits until every transaction of xs has ended (its Done channel
// is closed): PostgreSQL's XactLockTableWait / MultiXactIdWait.
//
// p's own xid in xs is ignored (a transaction never waits for itself, nor
// for one of its subtransactions), and so is a nil Done channel. If every transaction has already ended it returns nil
// at once without touching any lock. With w.NoWait it returns ErrWouldBlock at
// once if one is still running. Otherwise p blocks, visible in Locks() as one
// ungranted ShareLock on "transaction <xid>" per awaited transaction still
// running, and in the wait-for graph as waiting for each of those
// transactions; it returns nil when all have ended, ErrDeadlock, ErrLockTimeout
// after w.Timeout, or an error wrapping ctx.Err().
//
// Nothing is ever recorded for the transactions waited for: a transaction
// "holds" its xid implicitly until its Done channel closes.
func (m *Manager) WaitXacts(ctx context.Context, p *Proc, xs []AwaitedXact, w Wait) error {
	n := 0
	for _, x := range xs {
		if x.owner() != p.xid && !ended(x) {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if w.NoWait {
		return ErrWouldBlock
	}
	pending := make([]AwaitedXact, 0, n)
	for _, x := range xs {
		if x.owner() != p.xid && !ended(x) {
			pending = append(pending, x)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("lockmgr: waiting for transaction %d: %w", pending[0].Xid, err)
	}

	// Publish under the partition of the first awaited xid, as PostgreSQL
	// takes that partition's lock to queue for ShareLock on the xid.
	pt := m.partOf(m.hash(Tag{Kind: TagTransaction, Xid: pending[0].Xid}))
	wr := &waiter{proc: p, part: pt, mode: ShareLock, xacts: pending}
	wr.dw.Init(wr)
	wr.dw.Timeout = p.deadlockTimeout
	pt.mu.Lock()
	m.det.Publish(&wr.dw)
	p.cur.Store(wr)
	m.regAdd(p)
	pt.mu.Unlock()
	m.lockWaits.Add(1)
	m.det.Arm(&wr.dw)

	var tc <-chan time.Time
	if w.Timeout > 0 {
		t := time.NewTimer(w.Timeout)
		defer t.Stop()
		tc = t.C
	}
	var cause error
wait:
	for _, x := range pending {
		select {
		case <-x.Done:
		case <-wr.dw.Done():
			break wait
		case <-ctx.Done():
			cause = fmt.Errorf("lockmgr: waiting for transaction %d: %w", x.Xid, ctx.Err())
			break wait
		case <-tc:
			cause = ErrLockTimeout
			break wait
		case <-m.shutdown:
			cause = fmt.Errorf("lockmgr: waiting for transaction %d: %w", x.Xid, ErrShutdown)
			break wait
		}
	}
	if cause == nil {
		wr.dw.Resolve(deadlock.Granted)
	} else {
		wr.dw.Resolve(deadlock.Aborted)
	}
	pt.mu.Lock()
	m.regRemove(p)
	p.cur.CompareAndSwap(wr, nil)
	pt.mu.Unlock()
	m.det.Disarm(&wr.dw)
	switch wr.dw.State() {
	case deadlock.Granted:
		return nil
	case deadlock.Victim:
		return fmt.Errorf("%w: transaction %d waiting for ShareLock on transaction %d", ErrDeadlock, p.xid, firstRunning(pending))
	}
	return cause
}

func firstRunning(xs []AwaitedXact) uint64 {
	for _, x := range xs {
		if !ended(x) {
			return x.Xid
		}
	}
	return xs[0].Xid
}
