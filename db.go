package tupled

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/stripe"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
	"github.com/tupled/tupled/tuplelock"
	"github.com/tupled/tupled/xact"
)

// DB is an open database (see Open). All methods are safe for concurrent
// use; a Tx it begins is not (see Tx).
type DB struct {
	opts   Options
	log    *slog.Logger
	xacts  *xact.Manager
	multi  *multixact.Store
	heap   *heap.Heap
	locks  *lockmgr.Manager
	eng    *tuplelock.Engine
	closed atomic.Bool

	ddlMu sync.Mutex
	dur   *durable // nil for an in-memory database

	// commits and aborts are striped by xid: every transaction ends with
	// one increment, and a plain counter would drag the pointers above
	// (read by every call) from core to core with it.
	commits    stripe.Counter
	aborts     stripe.Counter
	vacuumRuns atomic.Uint64
	vacuumMu   sync.Mutex
	// active counts the API calls running (striped like commits): Close
	// waits for it to drain before it closes the storage.
	active stripe.Counter

	stop     chan struct{}
	bgDone   sync.WaitGroup
	closeErr error
	closeMu  sync.Mutex
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
		return nil, &opError{sentinel: ErrInvalid, msg: fmt.Sprintf("tupled: unknown backend %d", o.Backend)}
	}
	if o.DeadlockTimeout < 0 || o.LockTimeout < 0 {
		return nil, &opError{sentinel: ErrInvalid, msg: "tupled: negative DeadlockTimeout or LockTimeout"}
	}
	if o.DeadlockTimeout == 0 {
		o.DeadlockTimeout = time.Second
	}
	if o.SyncCommit == nil {
		t := true
		o.SyncCommit = &t
	}
	if o.VacuumInterval == 0 {
		o.VacuumInterval = time.Second
	}
	if o.CacheRows <= 0 {
		o.CacheRows = 1 << 20
	}
	if o.CheckpointInterval <= 0 {
		o.CheckpointInterval = 30 * time.Second
	}
	if o.CheckpointWALSize == 0 {
		o.CheckpointWALSize = 64 << 20
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	lm, err := lockmgr.New(lockmgr.Options{DeadlockTimeout: o.DeadlockTimeout, Strategy: o.DeadlockStrategy})
	if err != nil {
		return nil, &opError{sentinel: ErrInvalid, msg: "tupled: " + err.Error()}
	}
	db := &DB{opts: o, log: lg, xacts: xact.NewManager(), multi: multixact.NewStore(), locks: lm, stop: make(chan struct{})}
	db.heap = heap.New(db.xacts, db.multi, nil)
	db.eng = &tuplelock.Engine{Heap: db.heap, Xacts: db.xacts, Multi: db.multi, Locks: lm, ShareFastPathOff: o.ShareFastPathOff}
	if dir != "" {
		d, err := openDurable(db, dir, &o)
		if err != nil {
			lm.Close()
			return nil, err
		}
		db.dur = d
	}
	if o.VacuumInterval > 0 || db.dur != nil {
		db.bgDone.Add(1)
		go db.vacuumLoop(o.VacuumInterval)
	}
	return db, nil
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
func (db *DB) Close() error {
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.closed.Swap(true) {
		return db.closeErr
	}
	db.locks.Shutdown()
	// Polling: the calls left are ending (their waits were just ended),
	// and keeping a wait channel per call would cost every call.
	for d := 10 * time.Microsecond; db.active.Load() != 0; d = min(2*d, time.Millisecond) {
		time.Sleep(d)
	}
	close(db.stop)
	db.bgDone.Wait()
	db.locks.Close()
	if db.dur != nil {
		db.closeErr = db.dur.close()
	}
	return db.closeErr
}

// enter counts a DB-level call as running (see Tx.enter); ErrClosed after
// Close began.
func (db *DB) enter() error {
	db.active.Add(0, 1)
	if db.closed.Load() {
		db.exit()
		return ErrClosed
	}
	return nil
}

func (db *DB) exit() { db.active.Add(0, ^uint64(0)) }

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
		return &canceledError{cause: err}
	}
	if name == "" {
		return &opError{sentinel: ErrInvalid, msg: "tupled: empty table name"}
	}
	if err := checkTableName(name); err != nil {
		return err
	}
	db.ddlMu.Lock()
	defer db.ddlMu.Unlock()
	if _, err := db.heap.Table(name); err == nil {
		return &opError{sentinel: ErrTableExists, msg: fmt.Sprintf("relation %q already exists", name)}
	}
	if db.dur != nil {
		if err := db.dur.createTable(name); err != nil {
			return err
		}
	}
	if _, err := db.heap.CreateTable(name); err != nil {
		return &opError{sentinel: ErrTableExists, msg: fmt.Sprintf("relation %q already exists", name)}
	}
	return nil
}

// Begin starts a transaction with opts (nil: READ COMMITTED, read-write).
// Its id (Tx.ID) is assigned at once; its snapshot is taken at its first
// operation. The caller must end it with Commit or Rollback: an open
// transaction holds its locks and keeps vacuum from reclaiming the
// versions its snapshot may need. ErrInvalid (22023) for bad opts.
func (db *DB) Begin(ctx context.Context, opts *TxOptions) (*Tx, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return nil, &canceledError{cause: err}
	}
	var o TxOptions
	if opts != nil {
		o = *opts
	}
	if o.Isolation != ReadCommitted && o.Isolation != RepeatableRead {
		return nil, &opError{sentinel: ErrInvalid, msg: fmt.Sprintf("tupled: unknown isolation level %d", o.Isolation)}
	}
	if o.LockTimeout < 0 {
		return nil, &opError{sentinel: ErrInvalid, msg: "tupled: negative LockTimeout"}
	}
	lt := o.LockTimeout
	if lt == 0 {
		lt = db.opts.LockTimeout
	}
	x := db.xacts.Begin()
	if db.dur != nil {
		if err := db.dur.reserveXid(x.ID); err != nil {
			db.xacts.Abort(x)
			return nil, err
		}
	}
	tx := &Tx{db: db, iso: o.Isolation, readOnly: o.ReadOnly}
	tx.txn = tuplelock.Txn{X: x, Proc: db.locks.NewProc(x.ID), LockTimeout: lt}
	return tx, nil
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
			return &canceledError{cause: ctx.Err()}
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
// how a program or a test tells that a transaction is blocked. Mode is the
// PostgreSQL lock mode name (ShareLock, ExclusiveLock, ...). It does not
// stop the engine: partitions of the lock table are read one at a time, so
// the result is not one instant's picture (nor is pg_locks'). The order of
// entries is unspecified.
func (db *DB) Locks() []LockInfo {
	ls := db.locks.Locks()
	out := make([]LockInfo, 0, len(ls)+db.xacts.NumLive())
	for _, l := range ls {
		out = append(out, LockInfo{Tag: l.Tag.String(), Mode: l.Mode.String(), TxID: l.Xid, Granted: l.Granted, WaitStart: l.WaitStart})
	}
	live := db.xacts.LiveUser() // not the checkpoint's (BeginInternal)
	sort.Slice(live, func(i, j int) bool { return live[i] < live[j] })
	for _, x := range live {
		out = append(out, LockInfo{Tag: fmt.Sprintf("transaction %d", x), Mode: lockmgr.ExclusiveLock.String(), TxID: x, Granted: true})
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
	tbl, err := db.table(table)
	if err != nil {
		return nil, err
	}
	// A throw-away snapshot of "everything committed now".
	snap := xact.Snapshot{CSN: db.xacts.LastCSN()}
	var out []RowLock
	// Only cached rows: lock state lives nowhere else (heap.Table.AscendCached).
	tbl.AscendCached(nil, nil, func(r *heap.Row) bool {
		if ctx.Err() != nil {
			return false
		}
		r.Lock()
		defer r.Unlock()
		tup := visibleVersion(db.heap, r, snap)
		if tup == nil {
			return true
		}
		multi, live := db.eng.Members(tup)
		if len(live) == 0 {
			return true
		}
		rl := RowLock{Key: append([]byte(nil), r.Key()...), Multi: multi}
		for _, m := range live {
			rl.Lockers = append(rl.Lockers, m.Xid)
			rl.Modes = append(rl.Modes, lockStrength(m.Status.LockMode()))
		}
		out = append(out, rl)
		return true
	})
	if err := ctx.Err(); err != nil {
		return nil, &canceledError{cause: err}
	}
	return out, nil
}

// Stats returns the engine's counters (see Stats). Safe to call at any
// time while the database is open; each counter is read atomically, the
// set is not one instant's.
func (db *DB) Stats() Stats {
	single, multi := db.eng.Counters()
	ls := db.locks.Stats()
	ds := db.locks.DetectorStats()
	ms := db.multi.Stats()
	s := Stats{
		LocksSingleXid:           single,
		LocksMultiXact:           multi,
		MultiXactsCreated:        ms.Created,
		MultiXactsAppended:       ms.Appended,
		LockWaits:                ls.LockWaits,
		DeadlockChecks:           ls.DeadlockChecks,
		DeadlocksFound:           ls.DeadlocksFound,
		DeadlockCheckTime:        time.Duration(ds.TotalCheckNs),
		DeadlockCheckMaxLateness: ds.MaxLateness,
		Commits:                  db.commits.Load(),
		Aborts:                   db.aborts.Load(),
		TuplesLive:               uint64(max(db.heap.TuplesLive(), 0)),
		TuplesReclaimed:          db.heap.TuplesReclaimed(),
		MultiXactsLive:           ms.Live,
		VacuumRuns:               db.vacuumRuns.Load(),
		CommitLogEntries:         db.xacts.ClogEntries(),
		NextXid:                  db.xacts.NextXid(),
		NextMultiXactID:          db.multi.NextID(),
	}
	if d := db.dur; d != nil {
		ws := d.wal.Stats()
		s.WALRecords, s.WALFsyncs, s.Checkpoints = ws.Records, ws.Fsyncs, d.checkpoints.Load()
		s.RecoverySkippedWrites = d.skippedAtRecovery.Load()
	}
	return s
}

func (db *DB) table(name string) (*heap.Table, error) {
	t, err := db.heap.Table(name)
	if errors.Is(err, heap.ErrNoTable) {
		return nil, &opError{sentinel: ErrNoTable, msg: fmt.Sprintf("relation %q does not exist", name)}
	}
	return t, err
}

// visibleVersion returns the version of r visible to snap (latch held).
func visibleVersion(h *heap.Heap, r *heap.Row, snap xact.Snapshot) *heap.Tuple {
	vs := r.Versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if h.SatisfiesMVCC(vs[i], snap) {
			return vs[i]
		}
	}
	return nil
}
