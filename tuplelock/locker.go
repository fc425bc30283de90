package tuplelock

import (
	"context"
	"errors"
	"time"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/stripe"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
)

// WaitPolicy is PostgreSQL's LockWaitPolicy.
type WaitPolicy int

const (
	Block WaitPolicy = iota // LockWaitBlock
	Skip                    // LockWaitSkip: SKIP LOCKED
	Error                   // LockWaitError: NOWAIT
)

// ErrDuplicateKey is returned by Insert when a live row has the key.
var ErrDuplicateKey = errors.New("tuplelock: duplicate key")

// Txn is what tuplelock needs to know of the acting transaction.
type Txn struct {
	x           *xact.Xact
	proc        *lockmgr.Proc
	lockTimeout time.Duration // 0: none

	// carried is a heavyweight tuple lock kept when LockTuple or Update
	// returned TMUpdated: the caller follows the update chain (READ
	// COMMITTED) and calls again for the newer version of the same row,
	// which adopts it, so waiters queued behind us cannot overtake us
	// between the two calls. The caller ends a chain walk with
	// ReleaseCarried.
	carried     lockmgr.Tag
	carriedMode lockmgr.LockMode
	carrying    bool

	// mayBeMember is set by the first LockTuple or Update call. Before
	// it the transaction has put its xid into no xmax, so it is a member
	// of no multixact (only a transaction adds itself to a set; copies
	// carry over members that were added before), and the hot-row path
	// need not scan the set for it: a scan that would cost as much as the
	// rest of the lock on a set of dozens of lockers.
	mayBeMember bool
}

// adoptCarried returns the carried tuple lock if it is the one this call
// would take (same row, same mode); any other carried lock is released.
func (e *Locker) adoptCarried(tx *Txn, tbl *heap.Table, r *heap.Row, m lockmgr.LockMode) (lockmgr.Tag, bool) {
	if !tx.carrying {
		return lockmgr.Tag{}, false
	}
	tx.carrying = false
	if tag := tupleTag(tbl, r); tag == tx.carried && m == tx.carriedMode {
		return tag, true
	}
	e.locks.Unlock(tx.proc, tx.carried, tx.carriedMode)
	return lockmgr.Tag{}, false
}

// endTupleLock releases the tuple lock taken by a LockTuple or Update call,
// or carries it to the next call when res says the caller will follow the
// update chain.
func (e *Locker) endTupleLock(tx *Txn, tag lockmgr.Tag, m lockmgr.LockMode, res heap.TMResult, err error) {
	if err == nil && res == heap.TMUpdated {
		tx.carried, tx.carriedMode, tx.carrying = tag, m, true
		return
	}
	e.locks.Unlock(tx.proc, tag, m)
}

// ReleaseCarried releases a tuple lock carried past a TMUpdated result
// (see Txn.carried). Callers that follow update chains call it when their
// walk ends, however it ends.
func (e *Locker) ReleaseCarried(tx *Txn) {
	if tx.carrying {
		tx.carrying = false
		e.locks.Unlock(tx.proc, tx.carried, tx.carriedMode)
	}
}

// ID is the top-level transaction's xid (the one Locks() and the
// deadlock detector name).
func (t *Txn) ID() uint64 { return t.x.Top().ID() }

// NewTxn is the lock-acquiring state of transaction x: proc is its
// lock-manager process (lockmgr.Manager.NewProc(x.ID)), lockTimeout the
// limit of each of its lock waits (0: none).
func NewTxn(x *xact.Xact, proc *lockmgr.Proc, lockTimeout time.Duration) Txn {
	return Txn{x: x, proc: proc, lockTimeout: lockTimeout}
}

// Xact is the transaction t acquires locks for: the top-level
// transaction, or the subtransaction SetCurrent made current. Its xid is
// the one written into the xmax of what it locks or changes.
func (t *Txn) Xact() *xact.Xact { return t.x }

// Top is t's top-level transaction (its snapshot's owner, the one that
// commits or aborts).
func (t *Txn) Top() *xact.Xact { return t.x.Top() }

// SetCurrent makes x — t's top-level transaction or one of its
// subtransactions (xact.Manager.BeginSub) — the transaction whose xid t's
// next locks and writes record (tuplelock/README.md, "Savepoints and
// subtransactions"). A carried tuple lock stays: it is the top level's.
func (t *Txn) SetCurrent(x *xact.Xact) { t.x = x }

// Locker locks, updates, deletes and inserts tuples. It holds no state of
// its own beyond counters: all lock state is in tuple headers (xmax,
// infomask), multixacts and the lock manager's queues.
type Locker struct {
	heap  *heap.Heap
	xacts *xact.Manager
	multi *multixact.Store
	locks *lockmgr.Manager
	// shareFastPathOff forces a multixact for every row lock (the pre-9.3
	// situation the 2012 seed measured).
	shareFastPathOff bool

	// Counters of every row lock, striped by xid: a single counter would
	// be a cache line all cores write on every lock, and it shared its
	// line with the pointers above, which every lock reads.
	locksSingleXid stripe.Counter
	locksMulti     stripe.Counter

	// testAfterXmaxStatus, if set, runs in computeNewXmaxFrom right after
	// the status of a plain xmax was read: a test ends that transaction
	// there to check that the decision uses one reading of it.
	testAfterXmaxStatus func(xmax uint64)
}

// NewLocker is the tuple-lock engine over a heap h, its transactions x,
// multixacts m and lock manager lm (shareFastPathOff: every row lock
// through a multixact, the pre-9.3 situation the 2012 seed measured).
func NewLocker(h *heap.Heap, x *xact.Manager, m *multixact.Store, lm *lockmgr.Manager, shareFastPathOff bool) *Locker {
	return &Locker{heap: h, xacts: x, multi: m, locks: lm, shareFastPathOff: shareFastPathOff}
}

// Counters returns (row locks recorded as a plain xid, row locks that made
// or extended a multixact).
func (e *Locker) Counters() (single, multi uint64) {
	return e.locksSingleXid.Load(), e.locksMulti.Load()
}

// heavyweight is tupleLockExtraInfo's hwlock column (heapam.c): the lock
// manager mode a waiter takes on the tuple, so waiters of conflicting
// modes queue in order and compatible ones do not queue behind each other.
var heavyweight = [tuplemode.NumModes]lockmgr.LockMode{
	tuplemode.KeyShare:       lockmgr.AccessShareLock,
	tuplemode.Share:          lockmgr.RowShareLock,
	tuplemode.NoKeyExclusive: lockmgr.ExclusiveLock,
	tuplemode.Exclusive:      lockmgr.AccessExclusiveLock,
}

// hwMode is the heavyweight tuple-lock mode of a row-lock mode.
func hwMode(m tuplemode.Mode) lockmgr.LockMode { return heavyweight[m] }

func tupleTag(tbl *heap.Table, r *heap.Row) lockmgr.Tag {
	return lockmgr.Tag{Kind: lockmgr.TagTuple, Rel: tbl.Name(), Key: string(r.Key())}
}

// xmaxChanged is xmax_infomask_changed plus the raw xmax comparison.
func xmaxChanged(t *heap.Tuple, xwait uint64, im uint16) bool {
	const mask = heap.XmaxIsMulti | heap.XmaxLockOnly | heap.LockMask
	return t.Xmax() != xwait || t.Infomask()&mask != im&mask
}

// waitXacts waits (per policy) for the running transactions among xids.
// A NOWAIT/SKIP LOCKED conflict is reported as (false, nil).
func (e *Locker) waitXacts(ctx context.Context, tx *Txn, xids []uint64, policy WaitPolicy) (bool, error) {
	var xs []lockmgr.AwaitedXact
	for _, id := range xids {
		// Await, not Lookup: the record may be reused by a later
		// transaction as soon as id ends (xact.Manager.BeginIn).
		if top, done, ok := e.xacts.Await(id); ok {
			xs = append(xs, lockmgr.AwaitedXact{Xid: id, Top: top, Done: done})
		}
	}
	if len(xs) == 0 {
		return true, nil
	}
	err := e.locks.WaitXacts(ctx, tx.proc, xs, lockmgr.Wait{NoWait: policy != Block, Timeout: tx.lockTimeout})
	if errors.Is(err, lockmgr.ErrWouldBlock) {
		return false, nil
	}
	return err == nil, err
}

// conflictingMembers lists the running members of m, other than me, whose
// status conflicts with mode (DoesMultiXactIdConflict / MultiXactIdWait).
func (e *Locker) conflictingMembers(m *multixact.MultiXact, me *xact.Xact, mode tuplemode.Mode) []uint64 {
	if m == nil {
		return nil
	}
	var out []uint64
	for _, mb := range m.Members() {
		if me.IsCurrent(mb.Xid) || !conflicts(mb.Status.LockMode(), mode) {
			continue
		}
		if e.xacts.IsInProgress(mb.Xid) {
			out = append(out, mb.Xid)
		}
	}
	return out
}

// multiConflicts is DoesMultiXactIdConflict: does a member other than me
// hold a conflicting lock (running locker) or a conflicting update (updater
// that did not abort)?
func (e *Locker) multiConflicts(m *multixact.MultiXact, me *xact.Xact, mode tuplemode.Mode) bool {
	if m == nil {
		return false
	}
	for _, mb := range m.Members() {
		if me.IsCurrent(mb.Xid) || !conflicts(mb.Status.LockMode(), mode) {
			continue
		}
		st, _ := e.xacts.Status(mb.Xid)
		if mb.Status.IsUpdate() {
			if st != xact.Aborted {
				return true
			}
		} else if st == xact.InProgress {
			return true
		}
	}
	return false
}

func (e *Locker) writeXmax(tbl *heap.Table, r *heap.Row, tup *heap.Tuple, me *xact.Xact, mode tuplemode.Mode) error {
	nx, err := e.computeNewXmax(tup, me, mode, false)
	if err != nil {
		return err
	}
	e.installXmax(tbl, r, tup, me, nx)
	return nil
}

// installXmax writes the decided xmax into tup and counts the lock. Latch
// held.
func (e *Locker) installXmax(tbl *heap.Table, r *heap.Row, tup *heap.Tuple, me *xact.Xact, nx newXmax) {
	e.applyXmax(tbl, r, tup, me, nx)
	e.countLock(me, nx)
}

// applyXmax is installXmax without the count, for a caller that counts
// (countLock) after it released the latch. Latch held.
func (e *Locker) applyXmax(tbl *heap.Table, r *heap.Row, tup *heap.Tuple, me *xact.Xact, nx newXmax) {
	if invariants.Enabled {
		e.checkNewXmax(me, nx, "lock")
	}
	tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: me.ID(), Old: tup, Xmax: nx.xmax, Multi: nx.multi, Infomask: nx.im, Infomask2: nx.im2})
}

// countLock counts a lock installXmax or applyXmax recorded (Counters).
func (e *Locker) countLock(me *xact.Xact, nx newXmax) {
	if nx.viaMulti {
		e.locksMulti.Add(me.ID(), 1)
	} else {
		e.locksSingleXid.Add(me.ID(), 1)
	}
}

// LockTuple is heap_lock_tuple: lock version tup of row r in mode for tx.
// It returns TMOk when the lock is recorded (or already held), TMWouldBlock
// when policy forbade waiting, TMUpdated/TMDeleted when a committed
// conflicting update or delete made the version obsolete, TMInvisible when
// the version does not exist for tx. An error is a failed wait (deadlock,
// lock timeout, ctx) or an internal failure.
func (e *Locker) LockTuple(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplemode.Mode, policy WaitPolicy, followUpdates bool) (heap.TMResult, error) {
	var tl tupleLock
	tl.tag, tl.have = e.adoptCarried(tx, tbl, r, hwMode(mode)) // tag built only when we must queue
	member := tx.mayBeMember
	tx.mayBeMember = true
	res, err := e.lockTuple(ctx, tx, tbl, r, tup, mode, policy, followUpdates, &tl, member, false)
	if tl.have {
		e.endTupleLock(tx, tl.tag, hwMode(mode), res, err)
	}
	return res, err
}

// LockTupleLatched is LockTuple for a caller that holds r's latch — it
// has just found tup visible under it — and releases it whatever the
// result: heap_lock_tuple's first look at xmax (l3) happens in the same
// latch hold, so a lock that need not wait (the hot row: a key-share
// locker beside others) takes the latch once instead of twice. tx must
// carry no tuple lock (a chain walk's later calls use LockTuple).
func (e *Locker) LockTupleLatched(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplemode.Mode, policy WaitPolicy, followUpdates bool) (heap.TMResult, error) {
	if tx.carrying { // not for this call: releasing it is no work for under the latch
		r.Unlock()
		return e.LockTuple(ctx, tx, tbl, r, tup, mode, policy, followUpdates)
	}
	var tl tupleLock
	member := tx.mayBeMember
	tx.mayBeMember = true
	res, err := e.lockTuple(ctx, tx, tbl, r, tup, mode, policy, followUpdates, &tl, member, true)
	if tl.have {
		e.endTupleLock(tx, tl.tag, hwMode(mode), res, err)
	}
	return res, err
}

// tupleLock is the heavyweight tuple lock a LockTuple call holds, if any.
type tupleLock struct {
	tag  lockmgr.Tag
	have bool
}

// lockTuple is LockTuple's body; the caller releases (or carries) tl. No
// defer here: with this many returns it would not be open-coded, and the
// hot-row path would pay for it on every lock.
//
// member false says tx has written no xmax before this call (see
// Txn.mayBeMember); latched says the caller holds r's latch
// (LockTupleLatched), which the first pass uses instead of taking it.
func (e *Locker) lockTuple(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplemode.Mode, policy WaitPolicy, followUpdates bool, tl *tupleLock, member, latched bool) (heap.TMResult, error) {
	me := tx.x
	first := true
	skipTupleLock := false
	for {
		if latched {
			latched = false
		} else {
			r.Lock()
		}
		res := e.heap.SatisfiesUpdate(tup, me)
		switch res {
		case heap.TMInvisible, heap.TMSelfModified:
			r.Unlock()
			return res, nil
		case heap.TMOk:
			err := e.writeXmax(tbl, r, tup, me, mode)
			r.Unlock()
			return heap.TMOk, err
		}
		xwait, im, im2, multi := tup.Xmax(), tup.Infomask(), tup.Infomask2(), tup.Multi()
		if first && res == heap.TMBeingModified && heap.IsLockedOnly(im) &&
			((mode == tuplemode.KeyShare && im2&heap.KeysUpdated == 0) || (mode == tuplemode.Share && !heap.IsExclLocked(im))) {
			// Only lockers, none of them conflicting: no sleep, no update
			// chain to follow (the hot-row path: a key-share locker beside
			// others). PostgreSQL decides this without releasing the
			// buffer lock, and so do we: adding a locker to a lock-only
			// multixact is an O(1) append (multixact.Store.Expand), so one
			// latch hold covers the decision and the install.
			if member {
				if held, _ := alreadyHeld(xwait, im, im2, multi, me, mode); held {
					r.Unlock()
					return heap.TMOk, nil
				}
			}
			var nx newXmax
			var err error
			appended := false
			if im&heap.XmaxIsMulti != 0 && multi != nil {
				// computeNewXmax's multixact case, minus what this
				// latch hold has already established: a member runs
				// (SatisfiesUpdate) and we are not one of this
				// strength (alreadyHeld). Should every member have
				// ended since, the set we make still says the same.
				var m *multixact.MultiXact
				if m, appended, err = e.multi.AddUncounted(multi, me.ID(), status(mode, false), e.xacts); err == nil {
					nx = viaMulti(m)
				}
			} else {
				nx, err = e.computeNewXmaxFrom(xwait, im, im2, multi, me, mode, false)
			}
			if err != nil {
				r.Unlock()
				return 0, err
			}
			e.applyXmax(tbl, r, tup, me, nx)
			r.Unlock()
			// Counted outside the latch hold: every locker queued on
			// the latch would wait for these cache misses too.
			if appended {
				e.multi.CountAppend(me.ID())
			}
			e.countLock(me, nx)
			return heap.TMOk, nil
		}
		r.Unlock()
		isMulti := im&heap.XmaxIsMulti != 0
		lockOnly := heap.IsLockedOnly(im)

		if first {
			// Already hold at least this strength? Then nothing to do.
			first = false
			held, weaker := alreadyHeld(xwait, im, im2, multi, me, mode)
			if held {
				return heap.TMOk, nil
			}
			// A weaker lock of ours in a multixact: do not queue on the
			// tuple lock behind waiters that wait for us (de87a084).
			skipTupleLock = weaker
		}

		// Try to avoid sleeping.
		requireSleep := true
		switch {
		case mode == tuplemode.KeyShare && im2&heap.KeysUpdated == 0:
			// Key share does not conflict with a non-key update or
			// weaker locks: lock the newer versions too, then this one.
			if !lockOnly && followUpdates {
				if res, err := e.lockUpdatedTuple(ctx, tx, tbl, r, tup, mode); err != nil || res != heap.TMOk {
					return res, err
				}
			}
			requireSleep = false
		case mode == tuplemode.Share && lockOnly && !heap.IsExclLocked(im):
			requireSleep = false
		case mode == tuplemode.NoKeyExclusive && isMulti && !e.multiConflicts(multi, me, mode):
			requireSleep = false
		case mode == tuplemode.NoKeyExclusive && !isMulti && lockOnly && heap.IsKeyShrLocked(im):
			requireSleep = false
		case !isMulti && me.IsCurrent(xwait) && lockOnly:
			requireSleep = false
		}
		if !requireSleep {
			r.Lock()
			if xmaxChanged(tup, xwait, im) {
				r.Unlock()
				continue
			}
			err := e.writeXmax(tbl, r, tup, me, mode)
			r.Unlock()
			return heap.TMOk, err
		}
		if res == heap.TMUpdated || res == heap.TMDeleted {
			return res, nil // a committed conflicting change: sleeping can't help
		}

		// Sleep: first the tuple lock (fixes our place in line), then the
		// transaction(s) in xmax.
		if !skipTupleLock && !tl.have {
			tl.tag = tupleTag(tbl, r)
			err := e.locks.Lock(ctx, tx.proc, tl.tag, hwMode(mode), lockmgr.Wait{NoWait: policy != Block, Timeout: tx.lockTimeout})
			if errors.Is(err, lockmgr.ErrWouldBlock) {
				return heap.TMWouldBlock, nil
			}
			if err != nil {
				return 0, err
			}
			tl.have = true
		}
		var targets []uint64
		if isMulti {
			targets = e.conflictingMembers(multi, me, mode)
		} else {
			targets = []uint64{xwait}
		}
		ok, err := e.waitXacts(ctx, tx, targets, policy)
		if err != nil {
			return 0, err
		}
		if !ok {
			return heap.TMWouldBlock, nil
		}
		if followUpdates && !lockOnly {
			if res, err := e.lockUpdatedTuple(ctx, tx, tbl, r, tup, mode); err != nil || res != heap.TMOk {
				return res, err
			}
		}
		// Done waiting. If xmax changed meanwhile, start over (goto l3);
		// otherwise decide without re-running SatisfiesUpdate: surviving
		// non-conflicting members (and our own) may still be running.
		r.Lock()
		if xmaxChanged(tup, xwait, im) {
			r.Unlock()
			continue
		}
		switch res := e.afterSleep(tup); res {
		case heap.TMOk:
			err := e.writeXmax(tbl, r, tup, me, mode)
			r.Unlock()
			return heap.TMOk, err
		case heap.TMBeingModified:
			r.Unlock()
			continue
		default:
			r.Unlock()
			return res, nil
		}
	}
}

// afterSleep decides, once the conflicting transactions have ended and xmax
// is unchanged, whether the version may be locked: yes if xmax is now
// invalid, only a lock, or an update that aborted; TMUpdated/TMDeleted if
// the update committed. Latch held.
func (e *Locker) afterSleep(tup *heap.Tuple) heap.TMResult {
	if tup.Infomask()&heap.XmaxInvalid != 0 || heap.IsLockedOnly(tup.Infomask()) {
		return heap.TMOk
	}
	upd := heap.UpdateXid(tup)
	if upd == 0 {
		return heap.TMOk
	}
	switch st, _ := e.xacts.Status(upd); st {
	case xact.Aborted:
		heap.SetXmaxInvalidHint(tup)
		return heap.TMOk
	case xact.InProgress:
		return heap.TMBeingModified
	}
	if tup.Next() != nil {
		return heap.TMUpdated
	}
	return heap.TMDeleted
}

// alreadyHeld reports whether me already holds mode (or stronger) on a
// tuple whose xmax is (xwait, im, im2, multi): heap_lock_tuple's early exit.
// weaker: me is a member of the multixact with a weaker lock only.
func alreadyHeld(xwait uint64, im, im2 uint16, multi *multixact.MultiXact, me *xact.Xact, mode tuplemode.Mode) (held, weaker bool) {
	if im&heap.XmaxIsMulti != 0 {
		if multi == nil {
			return false, false
		}
		for _, mb := range multi.Members() {
			if !me.IsCurrent(mb.Xid) {
				continue
			}
			if mb.Status.LockMode() >= mode {
				return true, false
			}
			weaker = true
		}
		return false, weaker
	}
	if !me.IsCurrent(xwait) || !heap.IsLockedOnly(im) {
		return false, false
	}
	switch mode {
	case tuplemode.KeyShare:
		return true, false
	case tuplemode.Share:
		return heap.IsShrLocked(im) || heap.IsExclLocked(im), false
	case tuplemode.NoKeyExclusive:
		return heap.IsExclLocked(im), false
	case tuplemode.Exclusive:
		return heap.IsExclLocked(im) && im2&heap.KeysUpdated != 0, false
	}
	return false, false
}

// memberList returns the (xid, status) entries of t's xmax. Latch held.
func memberList(t *heap.Tuple) []multixact.Member {
	if t.Infomask()&heap.XmaxInvalid != 0 || t.Xmax() == 0 {
		return nil
	}
	if t.Infomask()&heap.XmaxIsMulti != 0 {
		if t.Multi() == nil {
			return nil
		}
		return t.Multi().Members()
	}
	return []multixact.Member{{Xid: t.Xmax(), Status: oldStatus(t.Infomask(), t.Infomask2())}}
}

// lockUpdatedTuple is heap_lock_updated_tuple: lock every newer version of
// tup's update chain in mode, waiting (always: PostgreSQL 15 ignores the
// wait policy here) for conflicting running members. No tuple locks are
// taken while walking the chain.
func (e *Locker) lockUpdatedTuple(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplemode.Mode) (heap.TMResult, error) {
	me := tx.x
	r.Lock()
	prior := heap.UpdateXid(tup)
	v := tup.Next()
	r.Unlock()
	for v != nil && prior != 0 {
		r.Lock()
		if v.Xmin() != prior {
			r.Unlock()
			return heap.TMOk, nil
		}
		if st, _ := e.xacts.Status(v.Xmin()); st == xact.Aborted {
			r.Unlock()
			return heap.TMOk, nil
		}
		var wait uint64
		skip := false
		for _, mb := range memberList(v) {
			if me.IsCurrent(mb.Xid) {
				skip = true // already locked this version
				break
			}
			st, _ := e.xacts.Status(mb.Xid)
			c := conflicts(mb.Status.LockMode(), mode)
			switch {
			case st == xact.InProgress && c:
				wait = mb.Xid
			case st == xact.Committed && mb.Status.IsUpdate() && c:
				res := heap.TMDeleted
				if v.Next() != nil {
					res = heap.TMUpdated
				}
				r.Unlock()
				return res, nil
			}
			if wait != 0 {
				break
			}
		}
		if wait != 0 && !skip {
			r.Unlock()
			if _, err := e.waitXacts(ctx, tx, []uint64{wait}, Block); err != nil {
				return 0, err
			}
			continue
		}
		if !skip {
			if err := e.writeXmax(tbl, r, v, me, mode); err != nil {
				r.Unlock()
				return 0, err
			}
		}
		if v.Infomask()&heap.XmaxInvalid != 0 || v.Next() == nil || heap.IsLockedOnly(v.Infomask()) {
			r.Unlock()
			return heap.TMOk, nil
		}
		prior = heap.UpdateXid(v)
		v = v.Next()
		r.Unlock()
	}
	return heap.TMOk, nil
}

// LatestVersion follows tup's update chain past committed updates and
// returns the newest version (READ COMMITTED's "find last version").
func (e *Locker) LatestVersion(r *heap.Row, tup *heap.Tuple) *heap.Tuple {
	r.Lock()
	defer r.Unlock()
	for {
		next := tup.Next()
		if next == nil {
			return tup
		}
		upd := heap.UpdateXid(tup)
		if upd == 0 || next.Xmin() != upd {
			return tup
		}
		if st, _ := e.xacts.Status(upd); st != xact.Committed {
			return tup
		}
		tup = next
	}
}
