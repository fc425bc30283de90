package tupled

import (
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Backend selects where a database with a directory persists its state.
type Backend int

const (
	Pebble Backend = iota // github.com/cockroachdb/pebble/v2 (default)
	Bbolt                 // go.etcd.io/bbolt
)

// Options configure a DB. The zero value (or nil) means the defaults.
type Options struct {
	Backend         Backend       // Pebble (default) or Bbolt: where tuples, multixacts and commit status persist
	DeadlockTimeout time.Duration // default 1s: how long a wait lasts before it may be checked for deadlock (PostgreSQL's deadlock_timeout)
	LockTimeout     time.Duration // default 0 = no limit (PostgreSQL's lock_timeout); a TxOptions value overrides it
	SyncCommit      *bool         // default true: Commit returns only after its WAL is durable (group commit)
	Logger          *slog.Logger  // nil = discard

	// DeadlockStrategy names the deadlock-detection strategy (see package
	// deadlock): "default", "classic", "shared-first", "single-checker",
	// "single-memo" or "off". "" means "default".
	DeadlockStrategy string
	// ShareFastPathOff forces every row lock through a multixact, replaying the
	// pre-9.3 situation of the 2012 seed. Off (fast path on) by default.
	ShareFastPathOff bool
	// FS is the filesystem of an on-disk database (its WAL and, with the
	// Pebble backend, its data). nil means the operating system's. Tests
	// use pebble's vfs.NewCrashableMem to crash the whole engine at once.
	FS vfs.FS
	// CacheRows bounds how many rows of each persistent table stay in
	// memory when clean (default 1<<20); the rest are read from the backend
	// on demand.
	CacheRows int
	// CheckpointInterval is how often an on-disk database writes its state
	// to the backend and drops the WAL before it (default 30s; a checkpoint
	// also runs when 64 MiB of WAL have accumulated, and at Close).
	CheckpointInterval time.Duration
	// CheckpointWALSize is how much WAL triggers a checkpoint (default 64
	// MiB; negative: only CheckpointInterval and Close do).
	CheckpointWALSize int64
	// VacuumInterval is how often the background vacuum reclaims dead tuple
	// versions, finished multixacts and commit-status pages. Default 1s;
	// negative disables the background vacuum (DB.Vacuum still works).
	VacuumInterval time.Duration

	// walSegmentSize overrides the WAL's segment size (0: the WAL's
	// default); tests use a small one to exercise streamed commits.
	walSegmentSize int64
}

// IsolationLevel of a transaction.
type IsolationLevel int

const (
	ReadCommitted  IsolationLevel = iota // default; a fresh snapshot per operation
	RepeatableRead                       // one snapshot for the whole transaction
)

func (l IsolationLevel) String() string {
	switch l {
	case ReadCommitted:
		return "read committed"
	case RepeatableRead:
		return "repeatable read"
	}
	return "unknown"
}

// TxOptions configure one transaction.
type TxOptions struct {
	Isolation   IsolationLevel
	ReadOnly    bool          // writes and locks fail with ErrReadOnly
	LockTimeout time.Duration // 0 = the DB's LockTimeout
}

// LockStrength is PostgreSQL's LockTupleMode, plus NoLock for plain reads.
type LockStrength int

const (
	NoLock         LockStrength = iota // plain snapshot read (only meaningful in ScanOptions)
	ForKeyShare                        // SELECT ... FOR KEY SHARE
	ForShare                           // SELECT ... FOR SHARE
	ForNoKeyUpdate                     // SELECT ... FOR NO KEY UPDATE; also taken by Update
	ForUpdate                          // SELECT ... FOR UPDATE; also taken by Delete
)

func (s LockStrength) String() string {
	switch s {
	case NoLock:
		return "none"
	case ForKeyShare:
		return "for key share"
	case ForShare:
		return "for share"
	case ForNoKeyUpdate:
		return "for no key update"
	case ForUpdate:
		return "for update"
	}
	return "unknown"
}

// WaitPolicy says what a lock request does when the row is locked.
type WaitPolicy int

const (
	Wait       WaitPolicy = iota // block until granted, ctx done, LockTimeout, or deadlock
	NoWait                       // fail at once with ErrLockNotAvailable
	SkipLocked                   // return ErrSkipped at once (Scan: leave the row out)
)

// ScanOptions configure Tx.Scan.
type ScanOptions struct {
	Start, End []byte       // the range [Start, End); nil = unbounded on that side
	Limit      int          // 0 = no limit; counts rows returned (skipped rows do not count)
	Lock       LockStrength // NoLock = plain snapshot reads
	Wait       WaitPolicy   // with Lock != NoLock; SkipLocked makes queue consumers possible

	// Prefix restricts the scan to keys that begin with it (nil or empty:
	// no restriction). With Start or End too, the scan covers the keys in
	// both: [Start, End) intersected with the prefix's keys.
	Prefix []byte
	// Reverse visits the same range in decreasing key order (ORDER BY key
	// DESC); Limit then keeps the highest keys.
	Reverse bool
	// Where, if not nil, is the scan's qualification (a WHERE clause): a
	// row is returned only if Where reports true for it. It is checked on
	// the version the snapshot sees, before the row is locked; a locking
	// scan under READ COMMITTED that locks a newer version (a concurrent
	// update committed) checks it again on that version, as PostgreSQL's
	// EvalPlanQual does. A row that fails is not returned and does not
	// count toward Limit; it is not locked — except one that fails only the
	// recheck, which stays locked, as in PostgreSQL. key and value are
	// copies valid only during the call: Where must not retain them. Where
	// runs while the scan holds the Tx, so it must not call tx's methods
	// (they fail with ErrTxBusy); a panic in Where ends the scan and passes
	// on, leaving the Tx usable.
	Where func(key, value []byte) bool
}

// LockInfo is one heavyweight lock held or awaited, like a row of pg_locks.
type LockInfo struct {
	Tag       string    // "tuple <table>/<hex key>", "transaction <Tx.ID>", or another kind for engine-internal locks
	Mode      string    // lock mode name
	TxID      uint64    // the holder or waiter (Tx.ID)
	Granted   bool      // false: waiting
	WaitStart time.Time // zero when granted
}

// RowLock is a row whose xmax holds live lockers, like a row of pgrowlocks.
type RowLock struct {
	Key     []byte
	Multi   bool           // xmax is a multixact
	Lockers []uint64       // Tx.IDs of live lockers/updater
	Modes   []LockStrength // parallel to Lockers; an updater shows as ForNoKeyUpdate or ForUpdate
}

// Stats are engine counters since Open.
type Stats struct {
	LocksSingleXid    uint64 // row locks recorded directly in xmax (fast path, no multixact)
	LocksMultiXact    uint64 // row locks that created or extended a multixact
	MultiXactsCreated uint64
	// MultiXactsAppended counts the created multixacts that extended their
	// predecessor's member array in place (the hot row's O(1) path).
	MultiXactsAppended uint64
	LockWaits          uint64
	DeadlockChecks     uint64
	DeadlocksFound     uint64
	// DeadlockCheckTime is the time spent in deadlock checks; the longest
	// delay between a wait's check deadline (its start + DeadlockTimeout)
	// and the start of its check is DeadlockCheckMaxLateness (the default
	// strategy's single detector; zero for the others).
	DeadlockCheckTime        time.Duration
	DeadlockCheckMaxLateness time.Duration

	Commits          uint64
	Aborts           uint64
	TuplesLive       uint64 // tuple versions currently in the heap (all tables)
	TuplesReclaimed  uint64 // versions removed by pruning and vacuum
	MultiXactsLive   uint64 // multixacts still reachable (not yet reclaimed)
	VacuumRuns       uint64
	CommitLogEntries uint64 // commit-status entries still kept
	NextXid          uint64 // the id the next transaction gets
	NextMultiXactID  uint64 // the id the next new multixact gets

	// On-disk databases only.
	WALRecords  uint64 // records appended to the WAL (commit records, catalog, xid reservations)
	WALFsyncs   uint64 // fsyncs of the WAL (group commit shares one among many commits)
	Checkpoints uint64
	// RecoverySkippedWrites counts the logged writes (and table creations)
	// the last recovery skipped because the backend cannot store them: a
	// key or table name over the limits, accepted by a version that did
	// not check them. Each is logged at Error level. 0 normally.
	RecoverySkippedWrites uint64
}
