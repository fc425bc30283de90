package heap

import (
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/tuplemode"
)

// Names of the invariants of doc.go checked under -tags invariants.
const (
	// invXmaxInfomask: the xmax and its infomask bits agree (see
	// checkHeader).
	invXmaxInfomask = "heap.xmax-infomask-agree"
	// invChain: a version whose Next is non-nil was updated, and its
	// successor's Xmin is its update xid; a lock-only xmax leaves no Next.
	invChain = "heap.version-chain"
)

// checkHeader checks t's header as Apply, SetInitialXmax or vacuum left it
// (invariants.Enabled only; O(1)):
//   - IS_MULTI is set iff xmax names a multixact: a tuple's multixact is
//     that of a multi xmax, with xmax as its id (IS_MULTI never with xmax 0,
//     nor with XMAX_COMMITTED); IS_MULTI without one is a reclaimed
//     multixact, which the lock decision table treats as not running;
//   - a multi xmax carries GetMultiXactIdHintBits' bits: LOCK_ONLY iff no
//     member updates, the strongest member's lock bits, KEYS_UPDATED iff a
//     member is ForUpdate or Update;
//   - a plain lock-only xmax has lock bits, and KEYS_UPDATED only with the
//     exclusive lock (FOR UPDATE); a plain updater has no lock bits;
//   - an invalid xmax (0) carries no lock bits, no LOCK_ONLY, no IS_MULTI
//     and no KEYS_UPDATED.
func checkHeader(t *Tuple, where string) {
	im, im2 := t.infomask, t.infomask2
	lock := im & LockMask
	isMulti := im&XmaxIsMulti != 0
	lockOnly := im&XmaxLockOnly != 0
	keysUpd := im2&KeysUpdated != 0
	if t.xmax == 0 {
		if lock != 0 || lockOnly || isMulti || keysUpd || t.multi != nil {
			invariants.Fail(invXmaxInfomask, "%s: xmax 0 with infomask %#04x infomask2 %#04x multi %v", where, im, im2, t.multi != nil)
		}
		return
	}
	if t.multi != nil && !isMulti {
		invariants.Fail(invXmaxInfomask, "%s: plain xmax %d (no IS_MULTI) with a multixact", where, t.xmax)
	}
	if !isMulti {
		switch {
		case lockOnly && lock == 0:
			invariants.Fail(invXmaxInfomask, "%s: lock-only xmax %d without lock bits (infomask %#04x)", where, t.xmax, im)
		case lockOnly && keysUpd && lock != XmaxExclLock:
			invariants.Fail(invXmaxInfomask, "%s: lock-only xmax %d with KEYS_UPDATED but lock bits %#04x (not exclusive)", where, t.xmax, lock)
		case !lockOnly && lock != 0:
			invariants.Fail(invXmaxInfomask, "%s: updater xmax %d with lock bits %#04x", where, t.xmax, lock)
		}
		return
	}
	m := t.multi
	if m == nil {
		// A multixact id whose multixact is gone: the decision table's
		// "reclaimed, cannot be running" case (tuplelock's row 2a). Its
		// bits say nothing checkable about members.
		return
	}
	if m.ID() != t.xmax {
		invariants.Fail(invXmaxInfomask, "%s: xmax %d names multixact %d", where, t.xmax, m.ID())
	}
	if im&XmaxCommitted != 0 {
		invariants.Fail(invXmaxInfomask, "%s: XMAX_COMMITTED on multi xmax %d", where, t.xmax)
	}
	strongest, mKeysUpd, hasUpdate := m.Summary()
	want := XmaxExclLock
	switch strongest {
	case tuplemode.KeyShare:
		want = XmaxKeyShrLock
	case tuplemode.Share:
		want = XmaxShrLock
	}
	if lockOnly == hasUpdate || lock != want || keysUpd != mKeysUpd {
		invariants.Fail(invXmaxInfomask, "%s: multi xmax %d infomask %#04x infomask2 %#04x, members say lock-only=%v strongest=%v keys-updated=%v",
			where, t.xmax, im, im2, !hasUpdate, strongest, mKeysUpd)
	}
}

// checkLink checks the link from old, whose header Apply just wrote
// (invariants.Enabled only; O(1)): a version with a successor was updated,
// not only locked, and the successor's xmin is old's update xid.
func checkLink(old *Tuple, where string) {
	n := old.next
	if n == nil {
		return
	}
	if IsLockedOnly(old.infomask) {
		invariants.Fail(invChain, "%s: lock-only xmax %d (infomask %#04x) keeps a Next link", where, old.xmax, old.infomask)
	}
	if upd := UpdateXid(old); upd != n.xmin {
		invariants.Fail(invChain, "%s: successor's xmin %d is not the update xid %d", where, n.xmin, upd)
	}
}
