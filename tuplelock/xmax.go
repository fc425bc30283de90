package tuplelock

import (
	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// conflicts is the row-lock conflict table.
func conflicts(a, b tuplemode.Mode) bool { return tuplemode.Conflicts(a, b) }

// status maps a mode to the multixact member status of a locker or updater.
func status(m tuplemode.Mode, isUpdate bool) multixact.Status {
	return multixact.StatusFor(m, isUpdate)
}

// lockBits are the infomask bits of a single-xid locker of mode m.
func lockBits(m tuplemode.Mode) (im, im2 uint16) {
	switch m {
	case tuplemode.KeyShare:
		return heap.XmaxLockOnly | heap.XmaxKeyShrLock, 0
	case tuplemode.Share:
		return heap.XmaxLockOnly | heap.XmaxShrLock, 0
	case tuplemode.NoKeyExclusive:
		return heap.XmaxLockOnly | heap.XmaxExclLock, 0
	default:
		return heap.XmaxLockOnly | heap.XmaxExclLock, heap.KeysUpdated
	}
}

// multiHintBits is GetMultiXactIdHintBits: IS_MULTI, the strongest member's
// lock bits, KEYS_UPDATED if a member is FOR UPDATE or Update, LOCK_ONLY iff
// no member is an updater.
func multiHintBits(m *multixact.MultiXact) (im, im2 uint16) {
	im = heap.XmaxIsMulti
	strongest, keysUpdated, hasUpdate := m.Summary()
	if keysUpdated {
		im2 |= heap.KeysUpdated
	}
	switch strongest {
	case tuplemode.KeyShare:
		im |= heap.XmaxKeyShrLock
	case tuplemode.Share:
		im |= heap.XmaxShrLock
	default:
		im |= heap.XmaxExclLock
	}
	if !hasUpdate {
		im |= heap.XmaxLockOnly
	}
	return im, im2
}

// oldStatus derives the status of a single-xid xmax from its bits.
func oldStatus(im, im2 uint16) multixact.Status {
	if heap.IsLockedOnly(im) {
		switch {
		case heap.IsKeyShrLocked(im):
			return multixact.ForKeyShare
		case heap.IsShrLocked(im):
			return multixact.ForShare
		case im2&heap.KeysUpdated != 0:
			return multixact.ForUpdate
		default:
			return multixact.ForNoKeyUpdate
		}
	}
	if im2&heap.KeysUpdated != 0 {
		return multixact.Update
	}
	return multixact.NoKeyUpdate
}

// newXmax is what compute_new_xmax_infomask decides.
type newXmax struct {
	xmax     uint64
	multi    *multixact.MultiXact
	im, im2  uint16
	viaMulti bool
}

// computeNewXmax is compute_new_xmax_infomask: given the current xmax of tup
// (row latch held), the header that records transaction me as an additional
// locker (or the updater, isUpdate) of strength mode. It is the decision
// table of tuplelock/README.md, evaluated top-down; "restart" re-evaluates
// as if the old xmax were invalid (label l5 in PostgreSQL).
func (e *Locker) computeNewXmax(tup *heap.Tuple, me *xact.Xact, mode tuplemode.Mode, isUpdate bool) (newXmax, error) {
	return e.computeNewXmaxFrom(tup.Xmax(), tup.Infomask(), tup.Infomask2(), tup.Multi(), me, mode, isUpdate)
}

// computeNewXmaxFrom is computeNewXmax on a copy of the xmax fields: it reads
// nothing else of the tuple, so it may run without the latch on fields read
// under it (the caller re-checks them before writing).
func (e *Locker) computeNewXmaxFrom(oldXmax uint64, oldIm, oldIm2 uint16, oldMulti *multixact.MultiXact, me *xact.Xact, mode tuplemode.Mode, isUpdate bool) (newXmax, error) {
	x := e.xacts
	for {
		// 1. No (live) xmax: a single xid.
		if oldIm&heap.XmaxInvalid != 0 || oldXmax == 0 {
			if isUpdate {
				var im2 uint16
				if mode == tuplemode.Exclusive {
					im2 = heap.KeysUpdated
				}
				return newXmax{xmax: me.ID(), im2: im2}, nil
			}
			if e.shareFastPathOff {
				// Pre-9.3 behaviour: every lock goes through a multixact.
				m, err := e.multi.Create([]multixact.Member{{Xid: me.ID(), Status: status(mode, false)}})
				if err != nil {
					return newXmax{}, err
				}
				return viaMulti(m), nil
			}
			im, im2 := lockBits(mode)
			return newXmax{xmax: me.ID(), im: im, im2: im2}, nil
		}
		// 2. A multixact.
		if oldIm&heap.XmaxIsMulti != 0 {
			if oldMulti == nil {
				oldIm |= heap.XmaxInvalid // reclaimed: cannot be running
				continue
			}
			if !multixact.IsRunning(oldMulti, x) {
				upd, _ := oldMulti.UpdateXid()
				if heap.IsLockedOnly(oldIm) || upd == 0 || !x.DidCommit(upd) {
					oldIm |= heap.XmaxInvalid // 2b: drop the multixact
					continue
				}
			}
			m, err := e.multi.Expand(oldMulti, me.ID(), status(mode, isUpdate), x)
			if err != nil {
				return newXmax{}, err
			}
			return viaMulti(m), nil
		}
		// 3.-5. A plain xid. Its status is read once: read twice, a
		// transaction that commits in between looks "running" to the
		// first test and "not running" to the second, and a committed
		// updater would be dropped as if it had been a finished locker
		// (PostgreSQL tests TransactionIdIsInProgress first and
		// TransactionIdDidCommit second for the same reason: a
		// transaction leaves the in-progress state only once its outcome
		// is final).
		st := xact.Committed
		if oldIm&heap.XmaxCommitted == 0 {
			st, _ = x.Status(oldXmax)
		}
		if e.testAfterXmaxStatus != nil {
			e.testAfterXmaxStatus(oldXmax)
		}
		switch {
		case st == xact.Committed && !heap.IsLockedOnly(oldIm):
			// A committed updater must be preserved in a multixact.
			return e.pair(oldXmax, oldStatus(oldIm, oldIm2), me.ID(), status(mode, isUpdate))
		case st == xact.InProgress && oldXmax == me.ID():
			// Our own lock, taken by this very (sub)transaction: keep a
			// single xid with the stronger mode. A lock of another xid
			// of ours (the parent's, under a savepoint) is paired with
			// ours in a multixact below, as PostgreSQL does: should the
			// subtransaction roll back, the parent's lock is left.
			if om := oldStatus(oldIm, oldIm2).LockMode(); om > mode {
				mode = om
			}
			oldIm |= heap.XmaxInvalid
			continue
		case st == xact.InProgress:
			return e.pair(oldXmax, oldStatus(oldIm, oldIm2), me.ID(), status(mode, isUpdate))
		}
		// 6. The locker finished or the updater aborted.
		oldIm |= heap.XmaxInvalid
	}
}

func (e *Locker) pair(x1 uint64, s1 multixact.Status, x2 uint64, s2 multixact.Status) (newXmax, error) {
	m, err := e.multi.Create([]multixact.Member{{Xid: x1, Status: s1}, {Xid: x2, Status: s2}})
	if err != nil {
		return newXmax{}, err
	}
	return viaMulti(m), nil
}

// viaMulti is the header naming multixact m.
func viaMulti(m *multixact.MultiXact) newXmax {
	im, im2 := multiHintBits(m)
	return newXmax{xmax: m.ID(), multi: m, im: im, im2: im2, viaMulti: true}
}
