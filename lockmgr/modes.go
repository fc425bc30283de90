package lockmgr

import (
	"fmt"
	"strconv"
)

// conflictTab is PostgreSQL's LockConflicts (lock.c): for each requested mode,
// the set (bit m = 1<<m) of held modes it conflicts with. It is symmetric.
var conflictTab = [9]uint16{
	NoLock:          0,
	AccessShareLock: bit(AccessExclusiveLock),
	RowShareLock:    bit(ExclusiveLock) | bit(AccessExclusiveLock),
	RowExclusiveLock: bit(ShareLock) | bit(ShareRowExclusiveLock) |
		bit(ExclusiveLock) | bit(AccessExclusiveLock),
	ShareUpdateExclusiveLock: bit(ShareUpdateExclusiveLock) | bit(ShareLock) |
		bit(ShareRowExclusiveLock) | bit(ExclusiveLock) | bit(AccessExclusiveLock),
	ShareLock: bit(RowExclusiveLock) | bit(ShareUpdateExclusiveLock) |
		bit(ShareRowExclusiveLock) | bit(ExclusiveLock) | bit(AccessExclusiveLock),
	ShareRowExclusiveLock: bit(RowExclusiveLock) | bit(ShareUpdateExclusiveLock) |
		bit(ShareLock) | bit(ShareRowExclusiveLock) | bit(ExclusiveLock) | bit(AccessExclusiveLock),
	ExclusiveLock: bit(RowShareLock) | bit(RowExclusiveLock) | bit(ShareUpdateExclusiveLock) |
		bit(ShareLock) | bit(ShareRowExclusiveLock) | bit(ExclusiveLock) | bit(AccessExclusiveLock),
	AccessExclusiveLock: bit(AccessShareLock) | bit(RowShareLock) | bit(RowExclusiveLock) |
		bit(ShareUpdateExclusiveLock) | bit(ShareLock) | bit(ShareRowExclusiveLock) |
		bit(ExclusiveLock) | bit(AccessExclusiveLock),
}

func bit(m LockMode) uint16 { return 1 << uint(m) }

func (m LockMode) valid() bool { return m >= AccessShareLock && m <= AccessExclusiveLock }

// Conflicts reports whether a lock in mode a and one in mode b, held or
// requested by different transactions, conflict (PostgreSQL's conflict table;
// symmetric). NoLock and invalid modes conflict with nothing.
func Conflicts(a, b LockMode) bool {
	if !a.valid() || !b.valid() {
		return false
	}
	return conflictTab[a]&bit(b) != 0
}

var modeNames = [9]string{
	"NoLock", "AccessShareLock", "RowShareLock", "RowExclusiveLock", "ShareUpdateExclusiveLock",
	"ShareLock", "ShareRowExclusiveLock", "ExclusiveLock", "AccessExclusiveLock",
}

// String returns PostgreSQL's name of the mode ("AccessShareLock", ...).
func (m LockMode) String() string {
	if m >= NoLock && int(m) < len(modeNames) {
		return modeNames[m]
	}
	return "LockMode(" + strconv.Itoa(int(m)) + ")"
}

// String describes the tag like pg_locks does: "tuple <table>/<hex key>",
// "transaction <xid>" or "relation <table>".
func (t Tag) String() string {
	switch t.Kind {
	case TagTuple:
		return fmt.Sprintf("tuple %s/%x", t.Rel, t.Key)
	case TagTransaction:
		return "transaction " + strconv.FormatUint(t.Xid, 10)
	case TagAdvisory:
		return t.advisoryString()
	case TagRelation:
		return "relation " + t.Rel
	}
	return fmt.Sprintf("tag(kind=%d rel=%q key=%x xid=%d)", t.Kind, t.Rel, t.Key, t.Xid)
}
