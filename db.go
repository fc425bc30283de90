package tupled

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/errs"
)

// DB is an open database (see Open). All methods are safe for concurrent
// use; a Tx it begins is not (see Tx). It is the API over one
// engine.Engine, which owns the machinery (heap, lock manager, multixacts,
// transactions, durability): DB checks arguments, counts calls for Close
// and converts between the API's types and the engine's.
type DB struct {
	eng *engine.Engine
	// recs holds the records (*engine.Tx) of ended DB.Begin transactions
	// for the next ones: a DB.Begin transaction allocates only its small
	// Tx handle, which the caller may keep after the end (Tx.release).
	recs sync.Pool
}

// Open opens or creates a database in dir. dir == "" opens a purely
// in-memory database (no WAL, nothing on disk). opts may be nil (defaults).
//
// Opening an existing on-disk database recovers it: the WAL after the last
// checkpoint is replayed, no transaction of the previous process survives
// (every row comes back unlocked), and transaction ids continue above any
// handed out before. A directory is open in one DB at a time: a second Open
// of it fails (ErrIO) until the first DB is closed. Errors: ErrInvalid (22023) for
// bad Options, ErrCorrupted (XX001) for damaged files (see Verify), ErrIO
// (58030) for any other failure to open.
func Open(dir string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Backend != Pebble && o.Backend != Bbolt {
		return nil, errs.Op(ErrInvalid, fmt.Sprintf("tupled: unknown backend %d", o.Backend))
	}
	if o.BlockCacheSize < 0 {
		return nil, errs.Op(ErrInvalid, fmt.Sprintf("tupled: negative BlockCacheSize %d", o.BlockCacheSize))
	}
	if o.DeadlockTimeout < 0 || o.LockTimeout < 0 {
		return nil, errs.Op(ErrInvalid, "tupled: negative DeadlockTimeout or LockTimeout")
	}
	cfg := engine.Config{
		Dir: dir, FS: o.FS, Bbolt: o.Backend == Bbolt, SyncCommit: true,
		WALSegmentSize: o.walSegmentSize, CheckpointInterval: o.CheckpointInterval,
		CheckpointWALSize: o.CheckpointWALSize, CacheRows: o.CacheRows, BlockCacheSize: o.BlockCacheSize, MemoryArena: o.MemoryArena,
		DeadlockTimeout: o.DeadlockTimeout, DeadlockStrategy: o.DeadlockStrategy,
		LockTimeout: o.LockTimeout, ShareFastPathOff: o.ShareFastPathOff,
		VacuumInterval: o.VacuumInterval, Logger: o.Logger,
	}
	if o.SyncCommit != nil {
		cfg.SyncCommit = *o.SyncCommit
	}
	if cfg.DeadlockTimeout == 0 {
		cfg.DeadlockTimeout = time.Second
	}
	if cfg.VacuumInterval == 0 {
		cfg.VacuumInterval = time.Second
	}
	if cfg.CacheRows <= 0 {
		cfg.CacheRows = 1 << 20
	}
	if cfg.CheckpointInterval <= 0 {
		cfg.CheckpointInterval = 30 * time.Second
	}
	if cfg.CheckpointWALSize == 0 {
		cfg.CheckpointWALSize = 64 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	e, err := engine.Open(cfg)
	if err != nil {
		return nil, err
	}
	return &DB{eng: e}, nil
}

// Close stops background work and releases the database (and its
// directory: the same process may Open it again once Close returns).
// Transactions still open are rolled back implicitly (their later calls
// fail with ErrClosed).
//
// Close first refuses new calls (they fail with ErrClosed), then ends every
// lock wait: a call blocked in Lock, Update, Delete, Insert or a locking
// Scan returns an error that matches ErrClosed with SQLSTATE 57P01
// (admin_shutdown) and rolls its transaction back. It then waits until every
// running call has returned — including a Scan callback still running,
// which must therefore not call Close itself — and only then checkpoints
// and closes the storage. A second Close returns the first one's result.
func (db *DB) Close() error { return db.eng.Close() }

// enter counts a DB-level call as running (see Tx.enter); ErrClosed after
// Close began.
func (db *DB) enter() error {
	db.eng.Enter(0)
	if db.eng.Closing() {
		db.exit()
		return ErrClosed
	}
	return nil
}

func (db *DB) exit() { db.eng.Exit(0) }

// CreateTable creates an empty table, durable when it returns (it is not
// part of any transaction). ErrTableExists (42P07) if the name is taken;
// ErrInvalid (22023) for an empty name, ErrNameTooLong (42622) for one
// longer than MaxTableNameLen. CreateTableIfNotExists leaves an existing
// table alone; DropTable removes one.
func (db *DB) CreateTable(ctx context.Context, name string) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return errs.Canceled(err)
	}
	return db.eng.CreateTable(name)
}

// Begin starts a transaction with opts (nil: READ COMMITTED, read-write).
// Its id (Tx.ID) is assigned at once; its snapshot is taken at its first
// operation. The caller must end it with Commit or Rollback: an open
// transaction holds its locks and keeps vacuum from reclaiming the
// versions its snapshot may need. ErrInvalid (22023) for bad opts.
//
// The transaction's record (its lock-manager and transaction-manager
// state) comes from a pool and returns to it at Commit or Rollback, so a
// transaction allocates only the returned handle (64 bytes); the handle
// stays the caller's, and every call on it after the end fails with
// ErrTxDone. Session.Begin reuses the handle too.
func (db *DB) Begin(ctx context.Context, opts *TxOptions) (*Tx, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.exit()
	eo, err := engineTxOptions(ctx, opts)
	if err != nil {
		return nil, err
	}
	rec, _ := db.recs.Get().(*engine.Tx)
	if rec == nil {
		rec = new(engine.Tx)
	}
	if err := db.eng.BeginIn(rec, eo); err != nil {
		return nil, err
	}
	return &Tx{db: db, t: rec, id: rec.ID(), pooled: true}, nil
}

// engineTxOptions checks Begin's ctx and opts and translates opts for the
// engine.
func engineTxOptions(ctx context.Context, opts *TxOptions) (engine.TxOptions, error) {
	if err := ctx.Err(); err != nil {
		return engine.TxOptions{}, errs.Canceled(err)
	}
	var o TxOptions
	if opts != nil {
		o = *opts
	}
	if o.Isolation != ReadCommitted && o.Isolation != RepeatableRead {
		return engine.TxOptions{}, errs.Op(ErrInvalid, fmt.Sprintf("tupled: unknown isolation level %d", o.Isolation))
	}
	if o.LockTimeout < 0 || o.DeadlockTimeout < 0 {
		return engine.TxOptions{}, errs.Op(ErrInvalid, "tupled: negative LockTimeout or DeadlockTimeout")
	}
	return engine.TxOptions{RepeatableRead: o.Isolation == RepeatableRead, ReadOnly: o.ReadOnly, LockTimeout: o.LockTimeout, DeadlockTimeout: o.DeadlockTimeout}, nil
}

// RunTx runs fn in a transaction begun with opts and commits it, retrying
// the whole transaction while the error (fn's or Commit's) is retryable
// (IsRetryable: a deadlock victim, 40P01, or a serialization failure,
// 40001): at most 10 attempts, with jittered exponential backoff (about
// 1 ms before the second attempt, doubling up to about 250 ms). It returns nil once a commit succeeded; fn's
// first non-retryable error (after rolling the transaction back), Commit's
// error, the last retryable error after the 10th attempt, or, if ctx ends
// during a backoff, an error matching ctx.Err() with SQLSTATE 57014.
//
// fn may therefore run several times, each time in a new transaction, and
// must be written for it: compute everything from what it reads through
// tx; reset, at its start, any state it captures from outside (counters,
// slices it appends to, results assigned to outer variables), since a
// failed attempt leaves them stale; and keep effects outside the database
// (messages, payments) until RunTx has returned nil. fn must not call
// Commit or Rollback on tx (RunTx does) nor use tx after it returns.
//
// If fn panics (or calls runtime.Goexit) the transaction is rolled back,
// releasing its locks, and the panic goes on.
func (db *DB) RunTx(ctx context.Context, opts *TxOptions, fn func(tx *Tx) error) error {
	const attempts = 10
	backoff := time.Millisecond
	var err error
	for i := 0; i < attempts; i++ {
		var tx *Tx
		tx, err = db.Begin(ctx, opts)
		if err != nil {
			return err
		}
		err = runFn(tx, fn)
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
		if err == nil || !IsRetryable(err) {
			return err
		}
		sleep := backoff/2 + rand.N(backoff)
		t := time.NewTimer(sleep)
		select {
		case <-ctx.Done():
			t.Stop()
			return errs.Canceled(ctx.Err())
		case <-t.C:
		}
		if backoff < 200*time.Millisecond {
			backoff *= 2
		}
	}
	return err
}

// runFn calls fn(tx), rolling tx back if fn does not return.
func runFn(tx *Tx, fn func(tx *Tx) error) error {
	returned := false
	defer func() {
		if !returned {
			_ = tx.Rollback()
		}
	}()
	err := fn(tx)
	returned = true
	return err
}

// Locks returns the heavyweight locks held and awaited, like pg_locks: tuple
// locks (held briefly while a row lock is acquired, and queued waiters),
// waits for transactions, and every running user transaction's lock on its
// own id (the engine's own transactions, such as a checkpoint's, are not
// listed: no caller can act on them).
//
// Row locks themselves are not here (they live in the tuples: see
// RowLocks). A call blocked in a lock wait shows as an entry with Granted
// false, TxID its Tx.ID and Tag the row ("tuple <table>/<hex key>") or the
// transaction it waits for ("transaction <id>"), from the moment it blocks
// until its wait is cleaned up, before the blocked call returns. That is
// how a program or a test tells that a transaction is blocked. Advisory
// locks show held and awaited with Tag AdvisoryKey.String() ("advisory 1",
// "advisory 0,1"), Mode ExclusiveLock or ShareLock, and, for a Session's,
// LockInfo.Session (a session-level lock between transactions has TxID 0;
// a waiting Session without a transaction is found by Session). Mode is the
// PostgreSQL lock mode name (ShareLock, ExclusiveLock, ...). It does not
// stop the engine: partitions of the lock table are read one at a time, so
// the result is not one instant's picture (nor is pg_locks'). The order of
// entries is unspecified.
func (db *DB) Locks() []LockInfo {
	ls := db.eng.Locks()
	out := make([]LockInfo, len(ls))
	for i, l := range ls {
		out[i] = LockInfo(l)
	}
	return out
}

// RowLocks returns, like pgrowlocks, the rows of table whose current version
// has live lockers (or a running updater) in its xmax, in key order, with
// each locker's Tx.ID and strength. ErrNoTable (42P01) if there is no such
// table; ctx's error (57014) if ctx ends first. It takes no lock and reads
// each row under its latch only, so the result is a consistent view of
// each row, not of the table at one instant.
func (db *DB) RowLocks(ctx context.Context, table string) ([]RowLock, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.exit()
	rls, err := db.eng.RowLocks(table, func() error {
		if err := ctx.Err(); err != nil {
			return errs.Canceled(err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, errs.Canceled(err)
	}
	out := make([]RowLock, len(rls))
	for i, rl := range rls {
		out[i] = RowLock{Key: rl.Key, Multi: rl.Multi, Lockers: rl.Lockers, Modes: make([]LockStrength, len(rl.Modes))}
		for j, m := range rl.Modes {
			out[i].Modes[j] = lockStrength(m)
		}
	}
	return out, nil
}

// Stats returns the engine's counters (see Stats). Safe to call at any
// time while the database is open; each counter is read atomically, the
// set is not one instant's.
func (db *DB) Stats() Stats { return Stats(db.eng.Stats()) }
