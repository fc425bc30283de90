package lockmgr

import (
	"errors"
	"time"
)

// LockMode is PostgreSQL's heavyweight lock mode (lockdefs.h), 1..8.
type LockMode int

const (
	NoLock                   LockMode = iota
	AccessShareLock                   // 1: tuple lock for FOR KEY SHARE
	RowShareLock                      // 2: tuple lock for FOR SHARE
	RowExclusiveLock                  // 3
	ShareUpdateExclusiveLock          // 4
	ShareLock                         // 5: what a waiter on a transaction requests
	ShareRowExclusiveLock             // 6
	ExclusiveLock                     // 7: tuple lock for FOR NO KEY UPDATE; a transaction on its own xid
	AccessExclusiveLock               // 8: tuple lock for FOR UPDATE
)

// Errors returned by Lock and WaitXacts.
var (
	ErrWouldBlock  = errors.New("lockmgr: lock not available")                 // nowait request could not be granted at once
	ErrDeadlock    = errors.New("lockmgr: deadlock detected")                  // this waiter's check found a cycle through it
	ErrLockTimeout = errors.New("lockmgr: canceling wait due to lock timeout") // Wait.Timeout expired
	ErrShutdown    = errors.New("lockmgr: shutting down")                      // Shutdown was called: no wait blocks any more
)

// TagKind says what a Tag names.
type TagKind uint8

const (
	TagTuple       TagKind = iota + 1 // a row of a table: queue order among row-lock waiters
	TagTransaction                    // a transaction id: waiting for it to end
	TagRelation                       // a table: LOCK TABLE and the locks statements take on it (issue 13)
	TagAdvisory                       // an advisory lock: pg_advisory_lock and friends (issue 13)
)

// Tag names a lockable object (PostgreSQL's LOCKTAG).
type Tag struct {
	Kind TagKind
	Rel  string // TagTuple, TagRelation: table name
	Key  string // TagTuple: primary key bytes
	Xid  uint64 // TagTransaction
}

// Wait says how a request behaves when it cannot be granted at once.
type Wait struct {
	NoWait  bool          // fail at once with ErrWouldBlock instead of queueing
	Timeout time.Duration // 0 = no limit; else ErrLockTimeout after this long waiting
}

// AwaitedXact is a transaction a waiter may wait for: its id and a channel closed when it ends.
// A subtransaction's Top is its top-level transaction's xid, the one whose
// Proc can end it (the deadlock detector's node); 0 means Xid itself.
type AwaitedXact struct {
	Xid  uint64
	Top  uint64
	Done <-chan struct{}
}

// owner is the xid of the transaction that ends x: its top level's.
func (x AwaitedXact) owner() uint64 {
	if x.Top != 0 {
		return x.Top
	}
	return x.Xid
}

// LockInfo is one held or awaited lock, for DB.Locks().
type LockInfo struct {
	Tag       Tag
	Mode      LockMode
	Xid       uint64 // holder or waiter (a session's lock: the transaction it runs, or 0)
	Session   uint64 // an advisory lock of a SessionOwner: its id; else 0
	Granted   bool
	WaitStart time.Time
	FastPath  bool // a weak relation lock held by the fast path (pg_locks.fastpath)
}

// Stats are counters since New.
type Stats struct {
	LockWaits      uint64 // waits that actually blocked (tuple locks and transaction waits)
	DeadlockChecks uint64
	DeadlocksFound uint64
}

// Options configure a Manager.
type Options struct {
	Partitions      int           // default 16 (power of two)
	DeadlockTimeout time.Duration // default 1s
	Strategy        string        // deadlock strategy name, "" = "default"
}
