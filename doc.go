// Package tupled is PostgreSQL's row-locking machinery rebuilt as an
// embedded Go key-value store: tables of rows by primary key, MVCC
// transactions (READ COMMITTED and REPEATABLE READ), and row locks in
// PostgreSQL's four strengths — FOR KEY SHARE, FOR SHARE, FOR NO KEY
// UPDATE, FOR UPDATE — recorded, as in PostgreSQL, in each tuple's xmax and
// infomask bits, with multixacts when several transactions must be
// remembered.
//
// This comment is the manual; the doc comment of each name is its
// contract. Where PostgreSQL semantics are named, PostgreSQL 15 is the
// oracle: the same schedule of operations has the same outcome (the tests
// replay each schedule of testdata/spec against the output PostgreSQL 15
// printed for its SQL twin). The runnable examples show the common
// patterns: a bank transfer ([DB.RunTx]), a SKIP LOCKED job queue, a
// foreign-key parent lock, NOWAIT, a REPEATABLE READ retry, a unique
// index ([DB.CreateIndex]), a foreign key ([DB.AddForeignKey]) and
// advisory locks ([Session.AdvisoryLock]).
//
// # Opening a database
//
// [Open] with an empty directory name opens a purely in-memory database (no
// write-ahead log, nothing on disk); with a directory it opens or creates an
// on-disk database there. [Options] may be nil for the defaults:
//
//	db, err := tupled.Open("/var/lib/app", nil) // or tupled.Open("", nil)
//	if err != nil {
//		return err
//	}
//	defer db.Close()
//
// An on-disk database keeps a write-ahead log in dir/wal and its tables in
// dir/data, in pebble (the default) or bbolt ([Options].Backend). A
// directory is open in one [DB] at a time; [DB.Close] releases it and the
// same process may open it again. Close refuses new calls, ends every lock
// wait, waits for the calls still running, then checkpoints. See
// [DB.Checkpoint], [DB.Vacuum], [Verify] and [Salvage] for maintenance.
//
// An in-memory database keeps its rows as objects. With
// [Options].MemoryArena it keeps only the rows in use (written, locked, or
// with versions some transaction may still need) as objects, and every
// other row — committed before every running transaction began, not
// locked — as a record in its table's arena: pages of bytes the garbage
// collector does not walk, about 120 bytes for a row of 100, where an
// object costs four. The background loop moves rows there every 100 ms
// (with [Options].VacuumInterval > 0; [DB.Checkpoint] does it at once), a
// plain read of such a row reads its record without a copy, and a lock or
// a write brings it back. Rows brought back by locks stay objects until a
// table has more than [Options].CacheRows of them.
//
// # Tables and rows
//
// A table ([DB.CreateTable]) holds rows: a key and a value, both []byte,
// ordered by [bytes.Compare]. Keys are the primary key: [Tx.Insert] refuses
// a key that is present, [Tx.Update] and [Tx.Delete] change or remove the
// row of a key, [Tx.Get] and [Tx.Lock] read one row, [Tx.Scan] and
// [Tx.Rows] read a key range in order (ScanOptions.Reverse: descending;
// ScanOptions.Prefix: the keys with a prefix). Slices passed in are copied
// before the call returns, and slices handed out (by Get, Lock, Rows and to
// a Scan callback) are the caller's own: the engine never shares the
// memory a row is stored in.
//
// Package [github.com/tupled/tupled/keys] builds keys from integers,
// strings and composite tuples so that their byte order is the tuples'
// order: keys.MustPack("orders", customer, id) keeps a customer's orders
// together, and ScanOptions{Prefix: keys.MustPack("orders", customer)}
// reads them. SQL tables made by tupled serve key their rows the same way.
//
// # Transactions and isolation
//
// Every operation runs in a transaction: [DB.Begin] starts one, [Tx.Commit]
// or [Tx.Rollback] ends it, and [DB.RunTx] does all three around a function
// and retries it when that may help. [TxOptions] choose the isolation level
// and a read-only transaction.
//
// [ReadCommitted] (the default) takes a fresh snapshot for each operation:
// each Get or Scan sees what had committed when it started. When such a
// transaction locks, updates or deletes a row that a concurrent transaction has updated and
// committed meanwhile, it waits if need be and then acts on the newest
// version (PostgreSQL's EvalPlanQual): [Tx.Lock] returns the value of the
// version it locked, and [Tx.Update] replaces that version. An Update
// computed from an earlier Get can therefore overwrite a concurrent change;
// lock the row first ([Tx.Lock] with [ForNoKeyUpdate]) and compute from the
// value Lock returns.
//
// [RepeatableRead] takes one snapshot, at the transaction's first operation
// (not at Begin), as PostgreSQL does. A lock, update or delete of a row that
// a transaction invisible to that snapshot has changed (in a way that
// conflicts with the lock) fails with [ErrSerialization] (SQLSTATE 40001);
// the whole transaction must be retried, which [DB.RunTx] does.
//
// An error aborts the transaction, as any error aborts a PostgreSQL
// transaction: its locks are released when the failing call returns, and
// every later call but Rollback fails with [ErrTxAborted] (25P02). Under a
// savepoint ([Tx.Savepoint]) an error aborts the transaction only down to
// the innermost savepoint: its locks and writes go at once, and
// [Tx.RollbackTo] makes the transaction usable again, with the locks and
// writes from before the savepoint. The exceptions are [ErrNotFound] and
// [ErrSkipped], which report an absent or skipped row, and [ErrTxBusy]:
// they leave the transaction usable. See Errors below.
//
// # Row locks
//
// [Tx.Lock] is SELECT value FROM table WHERE key = key FOR strength; a
// locking [Tx.Scan] ([ScanOptions].Lock) locks every row it returns. The
// four [LockStrength] values are PostgreSQL's, and conflict as in
// PostgreSQL (X = the two conflict):
//
//	                 ForKeyShare  ForShare  ForNoKeyUpdate  ForUpdate
//	ForKeyShare                                                 X
//	ForShare                                      X             X
//	ForNoKeyUpdate                   X            X             X
//	ForUpdate             X          X            X             X
//
// [Tx.Update] takes the ForNoKeyUpdate strength (it is a no-key update: it
// never changes the key) and [Tx.Delete] the ForUpdate strength, so a
// writer conflicts with lockers exactly as the table says: a FOR KEY SHARE
// lock — the lock PostgreSQL's foreign-key check takes on the parent row —
// blocks Delete but not Update. A key update ([Tx.UpdateKey], or an Update
// that changes a unique index's key) takes ForUpdate, as in PostgreSQL.
//
// Locks are held until the transaction ends, and are released all at once
// when it commits or aborts. A transaction never conflicts with itself:
// asking again for a weaker or equal strength is a no-op, a stronger one
// upgrades the lock. A row lock costs no memory outside the row: it lives
// in the tuple's header (a plain transaction id, or a multixact when
// several transactions lock the row).
//
// # Wait policies
//
// A lock request that conflicts with another transaction's lock or write
// does what its [WaitPolicy] says:
//
//   - [Wait] blocks until the lock is granted, the context is done
//     (57014, and errors.Is(err, ctx.Err()) holds), the lock timeout
//     expires ([ErrLockTimeout], 55P03; [Options].LockTimeout or
//     [TxOptions].LockTimeout, PostgreSQL's lock_timeout, per wait), the
//     transaction is chosen as a deadlock victim ([ErrDeadlock], 40P01),
//     or the database closes (an error matching [ErrClosed], 57P01).
//     Each of these ends the transaction.
//   - [NoWait] fails at once with [ErrLockNotAvailable] (55P03), which
//     aborts the transaction, as SELECT ... NOWAIT does.
//   - [SkipLocked] returns [ErrSkipped] at once, which does not abort the
//     transaction; a locking Scan leaves the row out, as SELECT ... SKIP
//     LOCKED does.
//
// [Tx.Update] and [Tx.Delete] wait; [Tx.UpdateWait] and [Tx.DeleteWait]
// take a policy ("delete unless locked" is DeleteWait with SkipLocked, as
// DELETE ... WHERE k IN (SELECT ... FOR UPDATE SKIP LOCKED)). Insert
// always waits: it waits, as a unique index
// does, for a transaction that is inserting or deleting the same key and
// has not yet ended, then fails with [ErrDuplicateKey] (23505) or goes on.
//
// While a call waits, [DB.Locks] shows it as an entry with Granted false and
// TxID the waiter's [Tx.ID] from the moment it blocks (and the entry is
// gone by the time the blocked call returns): this is how a program or a test observes that a
// transaction is blocked, never by sleeping. Waiters for the same row are
// served in arrival order (PostgreSQL's tuple-lock queue), except where
// PostgreSQL lets a lock upgrade or a compatible lock go first.
//
// # Job queues with SKIP LOCKED
//
// A queue is a table of jobs. A worker claims the first job not done that
// no other worker holds — SELECT ... WHERE NOT done ORDER BY id LIMIT 1
// FOR UPDATE SKIP LOCKED — with a locking scan and a qualification,
// processes it in the same transaction, and marks it done (or deletes it)
// before committing:
//
//	claim := tupled.ScanOptions{
//		Where: func(key, value []byte) bool { return string(value) == "todo" },
//		Lock:  tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1,
//	}
//	for job, err := range tx.Rows(ctx, "jobs", claim) { ... }
//
// Where is checked on the version the snapshot sees before the row is
// locked, so jobs already done are neither locked nor counted toward
// Limit; when the lock lands on a newer version (a concurrent update,
// READ COMMITTED) Where is checked again on that version, as PostgreSQL's
// EvalPlanQual does, and a row that fails then stays locked but is not
// returned (PostgreSQL keeps that lock too). Limit counts the rows
// returned, not the rows skipped. A worker that fails or rolls back
// releases its job for the next one. See the examples of [Tx.Rows] and
// [Tx.Scan], and examples/jobqueue.
//
// # NOWAIT
//
// A request with [NoWait] tells "locked by someone else" apart at once:
//
//	_, err := tx.Lock(ctx, "t", key, tupled.ForUpdate, tupled.NoWait)
//	if errors.Is(err, tupled.ErrLockNotAvailable) { // SQLState(err) == "55P03"
//		// tx is aborted: roll it back, and retry later or report "busy".
//	}
//
// [ErrLockTimeout] has the same SQLSTATE (55P03) but a different sentinel.
//
// # Beyond single rows
//
// Each of these follows its PostgreSQL counterpart, with its locks and
// SQLSTATEs; its doc comment is the contract:
//
//   - [Tx.Upsert] and [Tx.UpsertOn]: INSERT … ON CONFLICT DO NOTHING / DO
//     UPDATE, on the key or a unique index.
//   - [Tx.UpdateKey]: an UPDATE that changes the key, one update to
//     everyone else (a READ COMMITTED locking scan follows the row to its
//     new key).
//   - [DB.CreateIndex]: secondary indexes, unique or not, whose key a Go
//     function derives from each row, kept in the writing transaction;
//     [Tx.IndexScan] and [Tx.IndexGet] read and lock through them.
//   - [DB.AddForeignKey]: foreign keys with PostgreSQL's FOR KEY SHARE
//     locks on the parent and its ON DELETE / ON UPDATE actions
//     ([ForeignKeyError], 23503).
//   - [Tx.Savepoint], [Tx.RollbackTo], [Tx.Release]: subtransactions.
//   - [Tx.BulkLoad]: COPY FREEZE into a table only the transaction uses
//     (created or emptied for the load): rows committed and frozen from
//     the start, past the write set and the WAL; an abort or a crash
//     before the commit leaves the table empty.
//   - [Tx.LockTable]: LOCK TABLE in PostgreSQL's eight modes; every
//     operation also takes the table lock PostgreSQL's statement would.
//   - [Tx.AdvisoryLock] and [Session.AdvisoryLock]: pg_advisory_xact_lock
//     and pg_advisory_lock; a [Session] is what a connection is.
//
// # Deadlocks, serialization failures and retries
//
// A deadlock is detected as in PostgreSQL: each waiter checks for a cycle
// once, [Options].DeadlockTimeout (default 1s, PostgreSQL's
// deadlock_timeout) after its own wait began; the first waiter whose check
// finds a cycle through itself fails with [ErrDeadlock] (40P01) and the
// others go on. When the waits began more than DeadlockTimeout apart the
// victim is the transaction that closed the cycle; when they began close
// together it is the first waiter. A waiter does not check again later.
// Taking locks in a fixed order (for example by key) avoids deadlocks.
//
// [ErrDeadlock] and [ErrSerialization] are the retryable errors
// ([IsRetryable]): the same transaction, run again from the start, may
// succeed. [DB.RunTx] does this: it begins a transaction, calls fn,
// commits, and on a retryable error rolls back and runs fn again in a new
// transaction, with jittered exponential backoff, up to 10 attempts. So fn
// must be safe to run more than once:
//
//   - fn must compute everything it writes from what it reads inside its
//     own transaction;
//   - fn must reset any state it captures from outside (counters,
//     appended slices, maps, results assigned to outer variables) at its
//     start, since a failed attempt's state is stale;
//   - fn must not have effects outside the database (sending a message,
//     charging a card) that cannot be repeated; do those after RunTx
//     returns nil.
//
// # Durability
//
// For an on-disk database, a transaction that wrote (Insert, Update,
// Delete) is durable when [Tx.Commit] returns nil: its write set is one
// write-ahead log record, fsynced by group commit (one fsync shared by the
// commits that wait at the same time), and only then do its changes become
// visible and its row locks vanish. [Options].SyncCommit set to false (as
// PostgreSQL's synchronous_commit = off) makes Commit return before the
// fsync, which follows within 20 ms: a crash may then lose the commits of
// those last milliseconds, never part of one. To set it:
//
//	off := false
//	db, err := tupled.Open(dir, &tupled.Options{SyncCommit: &off})
//
// A transaction that only read and locked rows writes nothing and never
// waits for the disk: after a crash no transaction survives, so no row lock
// can matter. [DB.CreateTable] is durable when it returns. Checkpoints
// ([Options].CheckpointInterval) write the committed state to the backend
// and drop the log before it; recovery at [Open] replays the log after the
// last checkpoint.
//
// After a failed write or fsync of the log or the backend the database
// refuses every later write with [ErrIO] (58030) and never acknowledges a
// commit it could not make durable; reopening recovers. A full disk is not
// fatal: the call gets [ErrDiskFull] (53100), nothing of it is durable, and
// writes work again once space is freed (with SyncCommit off, see
// [ErrDiskFull]). Damaged files are [ErrCorrupted] (XX001): nothing damaged
// is ever returned as data.
//
// # Errors
//
// Errors are sentinels, tested with [errors.Is]; the error returned may
// carry more text (the relation, the key) but still matches its sentinel.
// Every error that PostgreSQL reports with a SQLSTATE answers [SQLState]
// with the same code:
//
//	error                      SQLSTATE  aborts the transaction
//	ErrNotFound                -         no
//	ErrSkipped                 -         no
//	ErrDuplicateKey            23505     yes (primary key or unique index)
//	ErrForeignKeyViolation     23503     yes (a *ForeignKeyError)
//	ErrDeadlock                40P01     yes (retryable)
//	ErrSerialization           40001     yes (retryable)
//	ErrLockNotAvailable        55P03     yes
//	ErrLockTimeout             55P03     yes
//	ErrTxAborted               25P02     - (every call on an aborted transaction but Rollback and RollbackTo)
//	ErrNoSavepoint             3B001     yes (down to the innermost savepoint)
//	ErrTxDone                  -         - (a call after Commit or Rollback)
//	ErrReadOnly                25006     yes
//	ErrNoTable                 42P01     yes
//	ErrTableExists             42P07     - (CreateTable, CreateIndex)
//	ErrNoIndex                 42704     yes (DropIndex, IndexScan, UpsertOn)
//	ErrIndexNotReady           55000     yes (an index not registered again since Open)
//	ErrNoForeignKey            42704     - (DropForeignKey)
//	ErrDuplicateObject         42710     - (AddForeignKey: the name is taken)
//	ErrDependentObjects        2BP01     - (DropTable of a referenced table)
//	ErrObjectInUse             55006     - (DropTable of a table in use)
//	ctx's error while waiting  57014     yes
//	ErrInvalid                 22023     yes (an invalid option or argument)
//	ErrProgramLimitExceeded    54000     yes (a key or value too large)
//	ErrNameTooLong             42622     - (CreateTable)
//	ErrTxBusy                  55000     no (a concurrent call on one Tx: nothing was done)
//	ErrBulkRefused             55000     no (BulkLoad: insert row by row instead)
//	ErrClosed                  -         - (57P01 when it ended a wait)
//	ErrDiskFull                53100     yes
//	ErrIO                      58030     yes
//	ErrCorrupted               XX001     yes
//
// [IsRetryable] is true for ErrDeadlock and ErrSerialization. An aborted
// transaction has already released its locks when the failing call
// returns. SQLState returns "" for nil or an error without a SQLSTATE. A
// wait ended by its context returns an error for which errors.Is(err,
// ctx.Err()) holds, with SQLSTATE 57014 (query_canceled).
//
// Every error with a SQLSTATE also reads into an [Error], the fields of
// PostgreSQL's ErrorResponse (as pgconn's PgError): Code, Message, Detail,
// Hint, Table and Constraint — the table and constraint of a unique,
// foreign key or NOWAIT violation, and PostgreSQL's DETAIL naming the key:
//
//	var e *tupled.Error
//	if errors.As(err, &e) && e.Code == "23505" {
//		// e.Table "users", e.Constraint "users_email_key",
//		// e.Detail "Key (users_email_key)=(x@y) already exists."
//	}
//
// errors.Is(err, ErrDuplicateKey) holds all the same, and so does
// errors.Is(e, ErrDuplicateKey).
//
// # Introspection
//
// [DB.Locks] lists the heavyweight locks held and awaited, like pg_locks:
// the brief tuple locks that order the waiters of a row, the waits for
// other transactions, and every running transaction's lock on its own id.
// [DB.RowLocks] lists the rows of a table whose current version holds live
// lockers, like the pgrowlocks extension. [DB.Stats] returns counters:
// row locks taken with and without a multixact, waits, deadlock checks,
// commits, vacuum and WAL activity. None of them stops the engine: each
// reads the lock table partition by partition, or the rows one at a time,
// so its result is consistent per lock or per row but not one instant's
// picture of the whole (PostgreSQL's pg_locks and pgrowlocks are not
// either).
//
// # Limits
//
// A key (and a Scan bound) is at most [MaxKeySize] bytes (8 KiB), a value
// at most [MaxValueSize] (256 MiB), a table name at most [MaxTableNameLen]
// bytes (255). Beyond them a call fails with [ErrProgramLimitExceeded]
// (54000) or [ErrNameTooLong] (42622) before anything changes, and the
// database stays fully usable. A transaction's write set is limited only
// by memory.
//
// # Concurrency
//
// A [DB] is safe for concurrent use by any number of goroutines. A [Tx] is
// one session: it is used by one goroutine at a time. Concurrent use is
// detected, not serialized: a call on a Tx while another call on it runs
// returns [ErrTxBusy] (55000) at once and changes nothing. To abandon a
// call blocked in a lock wait, cancel the context it was given (the call
// then fails with 57014 and the transaction is rolled back), rather than
// calling Rollback from another goroutine. A Scan callback may call its
// own Tx's methods (a queue consumer deleting the job it took); if it
// commits or rolls back, the scan stops. A Scan callback must not call
// [DB.Close].
//
// # What is not supported
//
//   - SERIALIZABLE isolation (predicate locks, SSI): only READ COMMITTED and
//     REPEATABLE READ.
//   - CHECK constraints and triggers: the program checks what it writes.
//     Index keys and foreign key references are Go functions, not
//     stored: a program declares its indexes and foreign keys again after
//     every Open ([DB.CreateIndex], [DB.AddForeignKey]).
//   - Locks on ranges or absent keys (gap or predicate locks): a locking
//     scan locks the rows it returns, not the range; a row inserted into
//     the range later is not blocked.
//   - Several processes on one directory: a directory is open in one DB.
//   - SQL in this package: the tupled serve command (package pgwire,
//     over package sqlfe) speaks PostgreSQL's wire protocol and SQL over
//     this API; README.md lists the SQL it understands.
//
// # Reading the source
//
// Dependencies point one way, from this package down. This package is
// the API only: it talks to one engine.Engine (internal/engine, the facade
// that owns the machinery; it also reads closed databases for Verify and
// Salvage). Below the facade: tuplelock (the locking protocol) → heap,
// multixact, lockmgr (→ deadlock), internal/xact; and internal/durable (WAL
// record codec, checkpoints, recovery, control file) → wal,
// internal/storage. What is not API lives under internal/, where the
// compiler keeps applications out. README.md's package map is generated
// from go list. Start with internal/engine's package doc (it draws the path
// of a Lock and of a Commit through every object), then tuplelock/README.md
// (the algorithm), internal/xact (ids, CSN snapshots), heap (tuples,
// visibility, vacuum), multixact, lockmgr and deadlock/README.md, and
// internal/durable's package doc.
package tupled
