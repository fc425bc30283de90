package heap

import "github.com/tupled/tupled/internal/tuplemode"

// Infomask bits, with PostgreSQL's values and meaning (htup_details.h). The
// Go names drop the HEAP_ prefix: XmaxKeyShrLock is HEAP_XMAX_KEYSHR_LOCK.
const (
	XmaxKeyShrLock uint16 = 0x0010 // HEAP_XMAX_KEYSHR_LOCK: xmax is a key-share locker
	XmaxExclLock   uint16 = 0x0040 // HEAP_XMAX_EXCL_LOCK: xmax is an exclusive locker
	XmaxLockOnly   uint16 = 0x0080 // HEAP_XMAX_LOCK_ONLY: xmax, if valid, is only a locker
	// XmaxShrLock is HEAP_XMAX_SHR_LOCK: a share lock is the combination of
	// the two bits above, not a bit of its own.
	XmaxShrLock   uint16 = XmaxExclLock | XmaxKeyShrLock
	LockMask      uint16 = XmaxShrLock | XmaxExclLock | XmaxKeyShrLock // HEAP_LOCK_MASK
	XminCommitted uint16 = 0x0100                                      // HEAP_XMIN_COMMITTED hint
	XminInvalid   uint16 = 0x0200                                      // HEAP_XMIN_INVALID hint (aborted)
	XminFrozen    uint16 = XminCommitted | XminInvalid                 // HEAP_XMIN_FROZEN: visible to every snapshot
	XmaxCommitted uint16 = 0x0400                                      // HEAP_XMAX_COMMITTED hint (never set on a multi)
	XmaxInvalid   uint16 = 0x0800                                      // HEAP_XMAX_INVALID hint: no xmax, or it aborted, or the lock is gone
	XmaxIsMulti   uint16 = 0x1000                                      // HEAP_XMAX_IS_MULTI: xmax is a MultiXactId
	Updated       uint16 = 0x2000                                      // HEAP_UPDATED: this version was made by an UPDATE

	// XmaxBits are cleared whenever xmax is replaced (HEAP_XMAX_BITS).
	XmaxBits uint16 = XmaxCommitted | XmaxInvalid | XmaxIsMulti | LockMask | XmaxLockOnly
)

// Infomask2 bits.
const (
	KeysUpdated uint16 = 0x2000 // HEAP_KEYS_UPDATED: the xmax operation compromises the key (FOR UPDATE, delete)
)

// IsLockedOnly is HEAP_XMAX_IS_LOCKED_ONLY (without the pg_upgrade clause,
// which tupled never produces).
func IsLockedOnly(infomask uint16) bool { return infomask&XmaxLockOnly != 0 }

// IsShrLocked is HEAP_XMAX_IS_SHR_LOCKED.
func IsShrLocked(infomask uint16) bool { return infomask&LockMask == XmaxShrLock }

// IsExclLocked is HEAP_XMAX_IS_EXCL_LOCKED.
func IsExclLocked(infomask uint16) bool { return infomask&LockMask == XmaxExclLock }

// IsKeyShrLocked is HEAP_XMAX_IS_KEYSHR_LOCKED.
func IsKeyShrLocked(infomask uint16) bool { return infomask&LockMask == XmaxKeyShrLock }

// LockModeOfBits returns the row-lock mode a
// single-xid lock-only xmax with these bits holds (meaningless otherwise).
func LockModeOfBits(infomask, infomask2 uint16) tuplemode.Mode {
	switch {
	case IsKeyShrLocked(infomask):
		return tuplemode.KeyShare
	case IsShrLocked(infomask):
		return tuplemode.Share
	case IsExclLocked(infomask) && infomask2&KeysUpdated != 0:
		return tuplemode.Exclusive
	default:
		return tuplemode.NoKeyExclusive
	}
}
