package tupled

import (
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Backend selects the store of an on-disk database's tables (Options.Backend).
// A database is reopened with the backend it was created with.
type Backend int

const (
	Pebble Backend = iota // github.com/cockroachdb/pebble/v2 (default)
	Bbolt                 // go.etcd.io/bbolt
)

// The deadlock-detection strategies Options.DeadlockStrategy accepts, as
// package deadlock names them; DeadlockOff detects nothing (only lock
// timeouts end a deadlock), the others are the variants "tupled bench
// storm" compares.
const (
	DeadlockDefault       = "default"
	DeadlockClassic       = "classic"
	DeadlockSharedFirst   = "shared-first"
	DeadlockSingleChecker = "single-checker"
	DeadlockSingleMemo    = "single-memo"
	DeadlockOff           = "off"
)

// DeadlockStrategies lists every name Options.DeadlockStrategy accepts.
func DeadlockStrategies() []string {
	return []string{DeadlockDefault, DeadlockClassic, DeadlockSharedFirst, DeadlockSingleChecker, DeadlockSingleMemo, DeadlockOff}
}

// Options configure a DB. The zero value (or nil) means the defaults; a
// negative DeadlockTimeout or LockTimeout, or an unknown Backend, makes Open
// fail with ErrInvalid (22023).
type Options struct {
	// Backend is where an on-disk database keeps its tables: Pebble
	// (default) or Bbolt. The backend holds each row's committed value as
	// of the last checkpoint and the catalog; no lock, multixact or
	// transaction status is ever stored, since none survives a restart.
	// Ignored by an in-memory database.
	Backend Backend
	// DeadlockTimeout (default 1s) is how long a lock wait lasts before it
	// is checked for a deadlock, PostgreSQL's deadlock_timeout: each wait
	// is checked once, then, and the first waiter whose check finds a
	// cycle through itself gets ErrDeadlock (40P01).
	DeadlockTimeout time.Duration
	// LockTimeout (default 0: no limit) ends any single lock wait that lasts
	// longer with ErrLockTimeout (55P03), PostgreSQL's lock_timeout. A
	// TxOptions.LockTimeout overrides it for one transaction.
	LockTimeout time.Duration
	// SyncCommit (default true; nil means the default) makes Commit of a
	// writing transaction on an on-disk database return only once its WAL
	// record is durable (group commit shares one fsync among the commits
	// waiting together). With false, as PostgreSQL's synchronous_commit =
	// off, Commit returns before the fsync, which follows within 20 ms: a
	// crash can lose the commits of those last milliseconds, never part of
	// one. It is a pointer so that false can be told from unset:
	//
	//	off := false
	//	opts := &tupled.Options{SyncCommit: &off}
	SyncCommit *bool
	// Logger receives the engine's log (deadlocks detected, recovery,
	// failed checkpoints; vacuum passes at Debug level); nil discards it.
	Logger *slog.Logger

	// DeadlockStrategy names the deadlock-detection strategy, one of
	// DeadlockStrategies (deadlock/README.md compares them). "" means
	// DeadlockDefault.
	DeadlockStrategy string
	// ShareFastPathOff forces every row lock through a multixact, replaying the
	// pre-9.3 situation of the 2012 seed. Off (fast path on) by default.
	ShareFastPathOff bool
	// FS is the filesystem of an on-disk database (its WAL and, with the
	// Pebble backend, its data). nil means the operating system's. Tests
	// use pebble's vfs.NewCrashableMem to crash the whole engine at once.
	FS vfs.FS
	// CacheRows bounds how many rows of each table stay in memory as
	// objects when clean (default 1<<20); the rest are read from the
	// backend on demand — on disk from pebble or bbolt, in memory with
	// MemoryArena from the table's arena.
	CacheRows int
	// BlockCacheSize is the pebble backend's block cache, in bytes: the
	// backend's blocks a read found stay in memory up to this much, so
	// that a row read again after it left the row cache (CacheRows) costs
	// no disk read and no decompression. Default 64 MiB; a table that
	// does not fit reads blocks again. Memory is taken as blocks are read,
	// not up front. Negative is refused with ErrInvalid. The bbolt backend
	// ignores it (it reads through the operating system's page cache).
	BlockCacheSize int64
	// MemoryArena makes an in-memory database keep its settled rows —
	// committed before every running transaction began, not locked — in
	// pages of bytes the garbage collector does not walk (one arena per
	// table) instead of as objects: 1M rows of 100 B take ~180 B of Go
	// heap per row instead of ~390 and 0.1 objects instead of 5, and a
	// collection ~10 ms instead of ~80. The price, today: moving rows
	// there costs a bulk load a third of its rate, and a row a lock needs
	// must come back into memory first (bench/RESULTS.md, "Issue 28 —
	// settled rows in arenas"). Ignored on disk. See the package doc,
	// "Opening a database".
	MemoryArena bool
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

// IsolationLevel of a transaction (TxOptions.Isolation), as PostgreSQL's
// transaction_isolation. SERIALIZABLE is not supported.
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

// TxOptions configure one transaction; nil means the zero value: READ
// COMMITTED, read-write, the DB's LockTimeout. An unknown Isolation or a
// negative LockTimeout makes Begin fail with ErrInvalid (22023).
type TxOptions struct {
	Isolation   IsolationLevel
	ReadOnly    bool          // writes and locks fail with ErrReadOnly (25006), which aborts the transaction
	LockTimeout time.Duration // 0 = the DB's LockTimeout; else the limit of each lock wait (ErrLockTimeout, 55P03)
	// DeadlockTimeout is this transaction's deadlock_timeout (PostgreSQL's
	// is per session): each of its lock waits is checked for a deadlock
	// this long after it began, so among the waits of a cycle the one
	// whose check comes first is the victim. 0 = the DB's
	// DeadlockTimeout; negative is ErrInvalid (22023).
	DeadlockTimeout time.Duration
}

// LockStrength is PostgreSQL's LockTupleMode, plus NoLock for plain reads.
// The four strengths conflict as in PostgreSQL (see the package
// documentation's table): FOR KEY SHARE conflicts only with FOR UPDATE,
// FOR SHARE with the two update strengths, FOR NO KEY UPDATE with all but
// FOR KEY SHARE, FOR UPDATE with all. A value outside NoLock..ForUpdate is
// refused with ErrInvalid (22023).
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

// WaitPolicy says what a lock request does when the row is locked in a
// conflicting strength by another transaction (PostgreSQL's default,
// NOWAIT and SKIP LOCKED). A value outside Wait..SkipLocked is refused with
// ErrInvalid (22023).
type WaitPolicy int

const (
	Wait       WaitPolicy = iota // block until granted, ctx done, LockTimeout, or deadlock
	NoWait                       // fail at once with ErrLockNotAvailable
	SkipLocked                   // return ErrSkipped at once (Scan: leave the row out)
)

// ScanOptions configure Tx.Scan. The zero value scans the whole table
// without locking.
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
	// copies valid only during the call: Where must not retain them. Like
	// the scan's callback, Where may call the Tx's methods (a SQL WHERE
	// calling pg_advisory_xact_lock); if it ends the transaction the scan
	// stops with its error. A panic in Where ends the scan and passes on,
	// leaving the Tx usable.
	Where func(key, value []byte) bool
	// NoCopy, for a reading scan (Lock == NoLock), passes the callback the
	// stored row's own key and value bytes instead of the caller's own
	// copies, saving an allocation and a copy per row (a SQL join's scans
	// decode each row into values at once and keep nothing of it). They
	// are valid only during the callback's call (with Rows, during the
	// loop body's iteration), must not be modified,
	// and must not be kept: copy what is needed past the call. With a
	// lock strength it is ErrInvalid (22023): a locking scan's rows are
	// copies of the version locked.
	//
	// The rule is enforced in test builds as GetNoCopy's is: under the
	// invariants build tag the bytes passed are a scratch copy that is
	// overwritten with 0xDB bytes when the callback returns, so a use
	// after the call reads garbage, and a use from another goroutine not
	// ordered before the callback's return is a data race the race
	// detector reports (nocopy_invariants_test.go).
	NoCopy bool
}

// LockInfo is one heavyweight lock held or awaited, like a row of pg_locks
// (DB.Locks). An entry with Granted false is a call blocked in a lock wait;
// it is gone within milliseconds of the wait ending.
type LockInfo struct {
	Tag       string    // "tuple <table>/<hex key>", "transaction <Tx.ID>", "relation <table>", "advisory <key>" (AdvisoryKey.String), or another kind for engine-internal locks
	Mode      string    // lock mode name
	TxID      uint64    // the holder or waiter (Tx.ID); a Session's advisory lock: its open transaction, or 0
	Session   uint64    // an advisory lock held or awaited by a Session: Session.ID; else 0
	Granted   bool      // false: waiting
	WaitStart time.Time // zero when granted
	FastPath  bool      // a weak table lock held by the fast path (pg_locks.fastpath), not in the shared lock table
}

// RowLock is a row whose current version's xmax holds live lockers (or a
// running updater), like a row of the pgrowlocks extension (DB.RowLocks).
type RowLock struct {
	Key     []byte
	Multi   bool           // xmax is a multixact
	Lockers []uint64       // Tx.IDs of live lockers/updater
	Modes   []LockStrength // parallel to Lockers; an updater shows as ForNoKeyUpdate or ForUpdate
}

// Stats are engine counters since Open (DB.Stats): cumulative counts
// unless said otherwise (TuplesLive, MultiXactsLive, CommitLogEntries,
// NextXid and NextMultiXactID are current values).
type Stats struct {
	LocksSingleXid    uint64 // row locks recorded directly in xmax (fast path, no multixact)
	LocksMultiXact    uint64 // row locks that created or extended a multixact
	MultiXactsCreated uint64 // multixacts made (by a lock or an update beside another transaction's lock)
	// MultiXactsAppended counts the created multixacts that extended their
	// predecessor's member array in place (the hot row's O(1) path).
	MultiXactsAppended uint64
	// MultiXactMembersWritten counts the member entries written into new
	// multixacts: a copy writes every member, an append one. PostgreSQL
	// writes all members of every new multixact, so a row locked by n
	// transactions at once costs it O(n) entries per lock.
	MultiXactMembersWritten uint64
	LockWaits               uint64 // waits that blocked: for a heavyweight tuple lock or for a transaction to end (one row lock may count both)
	DeadlockChecks          uint64 // deadlock checks run (one per wait that lasted DeadlockTimeout)
	DeadlocksFound          uint64 // checks that found a cycle: ErrDeadlock returned to a victim
	// DeadlockCheckTime is the time spent in deadlock checks; the longest
	// delay between a wait's check deadline (its start + DeadlockTimeout)
	// and the start of its check is DeadlockCheckMaxLateness (the default
	// strategy's single detector; zero for the others).
	DeadlockCheckTime        time.Duration
	DeadlockCheckMaxLateness time.Duration

	Commits          uint64 // transactions committed
	Aborts           uint64 // transactions rolled back or aborted by an error
	TuplesLive       uint64 // tuple versions currently in the heap (all tables)
	TuplesReclaimed  uint64 // versions removed by pruning and vacuum
	MultiXactsLive   uint64 // multixacts still reachable (not yet reclaimed)
	VacuumRuns       uint64 // vacuum passes (background and DB.Vacuum)
	CommitLogEntries uint64 // commit-status entries still kept
	NextXid          uint64 // the id the next transaction gets
	NextMultiXactID  uint64 // the id the next new multixact gets

	// On-disk databases only.
	WALRecords  uint64 // records appended to the WAL (commit records, catalog, xid reservations)
	WALFsyncs   uint64 // fsyncs of the WAL (group commit shares one among many commits)
	Checkpoints uint64 // checkpoints completed (periodic, after CheckpointWALSize of WAL, DB.Checkpoint)
	// RecoverySkippedWrites counts the logged writes (and table creations)
	// the last recovery skipped because the backend cannot store them: a
	// key or table name over the limits, accepted by a version that did
	// not check them. Each is logged at Error level. 0 normally.
	RecoverySkippedWrites uint64
}
