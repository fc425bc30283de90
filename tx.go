package tupled

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/tuplelock"
	"github.com/tupled/tupled/xact"
)

type txState uint8

const (
	txActive txState = iota
	txAborted
	txDone
)

// Tx is a transaction. Like a PostgreSQL session, a Tx is used by one
// goroutine at a time: to abandon an operation that is blocked waiting for a
// lock, cancel the context it was given (the operation then fails with
// SQLSTATE 57014 and the transaction is rolled back), rather than calling
// Rollback from another goroutine.
//
// Concurrent use is detected and refused, not serialized: every method
// (Rollback and Commit included) marks the Tx in use for its duration, and a
// call that finds it in use by another call returns ErrTxBusy (SQLSTATE
// 55000) at once, without touching the transaction — the call that holds
// it goes on undisturbed, and its write set stays whole. A Scan callback
// may call the Tx's methods (the mark is released while the callback runs);
// Scan fails with ErrTxBusy if another goroutine holds the Tx when the
// callback returns. Serializing instead (a mutex) would let a second
// goroutine queue behind a lock wait of the first, outside its context, and
// would still interleave the two goroutines' statements in an order neither
// chose.
type Tx struct {
	db       *DB
	txn      tuplelock.Txn
	iso      IsolationLevel
	readOnly bool

	// busy is set for the duration of each call (see above); a per-Tx flag,
	// so the check costs one uncontended compare-and-swap.
	busy atomic.Bool

	mu       sync.Mutex // guards state, snap, haveSnap
	state    txState
	snap     xact.Snapshot
	haveSnap bool

	// writes is the write set of an on-disk database's transaction, logged
	// at commit (see durable.go).
	writes []writeOp
}

// ID is the transaction's id: unique, valid from Begin on, stable for its
// life. LockInfo.TxID and RowLock.Lockers name it.
func (tx *Tx) ID() uint64 { return tx.txn.X.ID }

// enter marks tx in use by the calling method (ErrTxBusy if another call
// holds it) and counts the call as running for DB.Close; exit undoes both.
// The count is taken before the caller checks db.closed, so Close, which
// sets closed before it waits for the count to drain, either sees the call
// or the call sees closed.
func (tx *Tx) enter() error {
	if !tx.busy.CompareAndSwap(false, true) {
		return ErrTxBusy
	}
	tx.db.active.Add(tx.txn.X.ID, 1)
	return nil
}

func (tx *Tx) exit() {
	tx.db.active.Add(tx.txn.X.ID, ^uint64(0))
	tx.busy.Store(false)
}

// start checks that tx can run an operation and returns its snapshot for
// this operation (READ COMMITTED: a fresh one; REPEATABLE READ: the one
// taken at the first operation).
func (tx *Tx) start(ctx context.Context, write bool) (xact.Snapshot, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.db.closed.Load() {
		return xact.Snapshot{}, ErrClosed
	}
	switch tx.state {
	case txDone:
		return xact.Snapshot{}, ErrTxDone
	case txAborted:
		return xact.Snapshot{}, ErrTxAborted
	}
	if err := ctx.Err(); err != nil {
		tx.abortLocked()
		return xact.Snapshot{}, &canceledError{cause: err}
	}
	if write && tx.readOnly {
		tx.abortLocked()
		return xact.Snapshot{}, ErrReadOnly
	}
	if d := tx.db.dur; d != nil {
		err := d.readable()
		if err == nil && write {
			err = d.fatalErr()
		}
		if err == nil {
			err = asCorrupted(tx.db.heap.BackendError())
		}
		if err != nil {
			tx.abortLocked()
			return xact.Snapshot{}, err
		}
	}
	if tx.iso == RepeatableRead {
		if !tx.haveSnap {
			tx.snap = tx.db.xacts.TakeSnapshot(tx.txn.X)
			tx.haveSnap = true
		}
		return tx.snap, nil
	}
	return tx.db.xacts.TakeSnapshot(tx.txn.X), nil
}

// fail converts an engine error into the API's, aborting the transaction
// unless the error leaves it usable (ErrNotFound, ErrSkipped).
func (tx *Tx) fail(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, ErrSkipped) {
		return err
	}
	switch {
	case errors.Is(err, lockmgr.ErrDeadlock):
		tx.db.log.Info("deadlock detected", "tx", tx.ID(), "detail", err.Error())
		err = ErrDeadlock
	case errors.Is(err, lockmgr.ErrLockTimeout):
		err = ErrLockTimeout
	case errors.Is(err, lockmgr.ErrShutdown):
		err = &opError{sentinel: ErrClosed, msg: "terminating connection due to administrator command: the database is closing", cause: errAdminShutdown}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		cause := ctx.Err()
		if cause == nil {
			cause = err
		}
		err = &canceledError{cause: cause}
	}
	tx.mu.Lock()
	if tx.state == txActive {
		tx.abortLocked()
	}
	tx.mu.Unlock()
	return err
}

func (tx *Tx) abortLocked() {
	tx.state = txAborted
	tx.db.xacts.Abort(tx.txn.X)
	tx.db.aborts.Add(tx.txn.X.ID, 1)
}

func (tx *Tx) table(name string) (*heap.Table, error) { return tx.db.table(name) }

// visible returns the row of key, pinned (the caller unpins it), and its
// version visible to snap.
func (tx *Tx) visible(tbl *heap.Table, key []byte, snap xact.Snapshot) (*heap.Row, *heap.Tuple) {
	r := tbl.PinRow(key)
	if r == nil {
		return nil, nil
	}
	r.Lock()
	defer r.Unlock()
	return r, visibleVersion(tx.db.heap, r, snap)
}

// logWrite remembers a write of an on-disk database's transaction.
func (tx *Tx) logWrite(table string, key, value []byte, isDelete bool) {
	if tx.db.dur != nil {
		tx.writes = append(tx.writes, writeOp{table: table, key: key, value: value, delete: isDelete})
	}
}

// Get returns the value of key visible to the transaction's snapshot (READ
// COMMITTED: taken now; REPEATABLE READ: the transaction's), without
// locking or waiting: SELECT value FROM table WHERE key = key. ErrNotFound
// if no version is visible; ErrNoTable (42P01) if the table does not exist.
// The value is the caller's own copy.
func (tx *Tx) Get(ctx context.Context, table string, key []byte) ([]byte, error) {
	if err := tx.enter(); err != nil {
		return nil, err
	}
	defer tx.exit()
	snap, err := tx.start(ctx, false)
	if err != nil {
		return nil, err
	}
	tbl, err := tx.table(table)
	if err == nil {
		err = checkKey(table, key)
	}
	if err != nil {
		return nil, tx.fail(ctx, err)
	}
	r, tup := tx.visible(tbl, key, snap)
	if r != nil {
		defer r.Unpin()
	}
	if tup == nil {
		if err := tx.readFailed(ctx); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	return bytes.Clone(tup.Value), nil
}

// tupleMode is the row-lock mode of a lock strength; false for NoLock and
// for values outside the enumeration.
func tupleMode(s LockStrength) (tuplemode.Mode, bool) {
	switch s {
	case ForKeyShare:
		return tuplemode.KeyShare, true
	case ForShare:
		return tuplemode.Share, true
	case ForNoKeyUpdate:
		return tuplemode.NoKeyExclusive, true
	case ForUpdate:
		return tuplemode.Exclusive, true
	}
	return 0, false
}

// lockStrength is the public strength of a row-lock mode (a member's
// LockMode: an updater shows as the lock its update implies).
func lockStrength(m tuplemode.Mode) LockStrength {
	return [tuplemode.NumModes]LockStrength{
		tuplemode.KeyShare:       ForKeyShare,
		tuplemode.Share:          ForShare,
		tuplemode.NoKeyExclusive: ForNoKeyUpdate,
		tuplemode.Exclusive:      ForUpdate,
	}[m]
}

func waitPolicy(w WaitPolicy) (tuplelock.WaitPolicy, bool) {
	switch w {
	case Wait:
		return tuplelock.Block, true
	case NoWait:
		return tuplelock.Error, true
	case SkipLocked:
		return tuplelock.Skip, true
	}
	return 0, false
}

// Lock is SELECT value FROM table WHERE key = key FOR <strength> [NOWAIT |
// SKIP LOCKED]: it locks the row and returns the value of the version it
// locked, exactly as PostgreSQL's heap_lock_tuple does. Under READ
// COMMITTED it follows a concurrent update to the newest version (waiting
// for the updater if it is still running) and locks that one. Under
// REPEATABLE READ a concurrent committed change that conflicts with the
// strength is ErrSerialization (40001); for ForKeyShare only a delete or
// key change conflicts: over a no-key update it locks and returns the
// snapshot's version, without waiting even while that update is in
// progress. ErrNotFound when no row qualifies (none visible, or deleted
// concurrently under READ COMMITTED).
//
// When another transaction holds a conflicting lock, wait says what
// happens (see WaitPolicy): Wait blocks — shown in DB.Locks() as an
// ungranted entry — until granted or until ErrDeadlock (40P01),
// ErrLockTimeout (55P03) or ctx's error (57014) ends the wait; NoWait
// fails with ErrLockNotAvailable (55P03); SkipLocked returns ErrSkipped.
// Strength NoLock is ErrInvalid (22023); a read-only transaction gets
// ErrReadOnly (25006). The lock is held until the transaction ends;
// locking a row again with a weaker or equal strength is a no-op, with a
// stronger one an upgrade.
func (tx *Tx) Lock(ctx context.Context, table string, key []byte, strength LockStrength, wait WaitPolicy) ([]byte, error) {
	if err := tx.enter(); err != nil {
		return nil, err
	}
	defer tx.exit()
	snap, err := tx.start(ctx, true)
	if err != nil {
		return nil, err
	}
	mode, ok := tupleMode(strength)
	policy, ok2 := waitPolicy(wait)
	if !ok || !ok2 {
		return nil, tx.fail(ctx, &opError{sentinel: ErrInvalid, msg: fmt.Sprintf("tupled: invalid lock strength %d or wait policy %d", strength, wait)})
	}
	tbl, err := tx.table(table)
	if err == nil {
		err = checkKey(table, key)
	}
	if err != nil {
		return nil, tx.fail(ctx, err)
	}
	r, tup := tx.visible(tbl, key, snap)
	if r != nil {
		defer r.Unpin()
	}
	if tup == nil {
		if err := tx.readFailed(ctx); err != nil {
			return nil, err
		}
		return nil, ErrNotFound
	}
	locked, err := tx.lockVersion(ctx, tbl, r, tup, mode, policy)
	if err != nil {
		return nil, tx.fail(ctx, err)
	}
	return bytes.Clone(locked.Value), nil
}

// lockVersion locks tup (or, under READ COMMITTED, the newest version of its
// update chain) and returns the locked version's value: ExecLockRows plus
// heapam_tuple_lock.
func (tx *Tx) lockVersion(ctx context.Context, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplelock.Mode, policy tuplelock.WaitPolicy) (*heap.Tuple, error) {
	eng := tx.db.eng
	defer eng.ReleaseCarried(&tx.txn)
	for {
		res, err := eng.LockTuple(ctx, &tx.txn, tbl, r, tup, mode, policy, true)
		if err != nil {
			return nil, err
		}
		switch res {
		case heap.TMOk:
			return tup, nil
		case heap.TMWouldBlock:
			if policy == tuplelock.Skip {
				return nil, ErrSkipped
			}
			return nil, &opError{sentinel: ErrLockNotAvailable, msg: fmt.Sprintf("could not obtain lock on row in relation %q", tbl.Name)}
		case heap.TMUpdated:
			if tx.iso == RepeatableRead {
				return nil, ErrSerialization
			}
			tup = eng.LatestVersion(r, tup)
		case heap.TMDeleted:
			if tx.iso == RepeatableRead {
				return nil, ErrSerialization
			}
			return nil, ErrNotFound
		default:
			return nil, ErrNotFound
		}
	}
}

// Insert adds a row. Like a unique index, it waits for a transaction that
// is inserting or deleting the same key and has not ended, then fails with
// ErrDuplicateKey (23505) if a live row has the key. The new row is visible
// to other transactions when this one commits. key and value are copied.
func (tx *Tx) Insert(ctx context.Context, table string, key, value []byte) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	if _, err := tx.start(ctx, true); err != nil {
		return err
	}
	tbl, err := tx.table(table)
	if err == nil {
		err = checkKey(table, key)
	}
	if err == nil {
		err = checkValue(value)
	}
	if err != nil {
		return tx.fail(ctx, err)
	}
	key, value = bytes.Clone(key), bytes.Clone(value)
	err = tx.db.eng.Insert(ctx, &tx.txn, tbl, key, value)
	if err == nil {
		// The key's stored row could not be read: it may exist.
		if ferr := tx.readFailed(ctx); ferr != nil {
			return ferr
		}
	}
	if err == nil {
		tx.logWrite(table, key, value, false)
	}
	if errors.Is(err, tuplelock.ErrDuplicateKey) {
		err = &opError{sentinel: ErrDuplicateKey, msg: fmt.Sprintf("duplicate key value violates unique constraint \"%s_pkey\"", table)}
	}
	return tx.fail(ctx, err)
}

// Update replaces the value of key's row: a no-key update, which conflicts
// with other transactions' locks as FOR NO KEY UPDATE does (it does not
// conflict with FOR KEY SHARE) and waits for them. Under READ COMMITTED a
// concurrent committed update is followed and the newest version replaced
// (lock the row with Lock first to compute the new value from it); under
// REPEATABLE READ it is ErrSerialization (40001). ErrNotFound if no row
// of key is visible, or it was deleted concurrently. value is copied.
func (tx *Tx) Update(ctx context.Context, table string, key, value []byte) error {
	return tx.write(ctx, table, key, value, false, Wait)
}

// Delete removes key's row: a key-changing write, which conflicts with
// other transactions' locks as FOR UPDATE does (with every strength,
// FOR KEY SHARE included) and waits for them. Concurrent updates are
// handled as in Update (REPEATABLE READ: a concurrent delete is 40001
// too); ErrNotFound if no row of key is visible.
func (tx *Tx) Delete(ctx context.Context, table string, key []byte) error {
	return tx.write(ctx, table, key, nil, true, Wait)
}

func (tx *Tx) write(ctx context.Context, table string, key, value []byte, isDelete bool, wait WaitPolicy) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	snap, err := tx.start(ctx, true)
	if err != nil {
		return err
	}
	tbl, err := tx.table(table)
	if err == nil {
		err = checkKey(table, key)
	}
	if err == nil {
		err = checkValue(value)
	}
	if err == nil {
		err = checkWait(wait)
	}
	if err != nil {
		return tx.fail(ctx, err)
	}
	if !isDelete {
		value = bytes.Clone(value) // checked first: a refused value is never copied
	}
	r, tup := tx.visible(tbl, key, snap)
	if r != nil {
		defer r.Unpin()
	}
	if tup == nil {
		if err := tx.readFailed(ctx); err != nil {
			return err
		}
		return ErrNotFound
	}
	if wait != Wait {
		if err := tx.lockForWrite(ctx, tbl, r, tup, isDelete, wait); err != nil {
			return tx.fail(ctx, err)
		}
	}
	err = tx.writeVersion(ctx, tbl, r, tup, value, isDelete)
	if err == nil {
		tx.logWrite(table, bytes.Clone(key), value, isDelete)
	}
	return tx.fail(ctx, err)
}

// writeVersion is ExecUpdate/ExecDelete: under READ COMMITTED a concurrent
// committed update is followed to the newest version (EvalPlanQual); under
// REPEATABLE READ it is a serialization failure.
func (tx *Tx) writeVersion(ctx context.Context, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, value []byte, isDelete bool) error {
	eng := tx.db.eng
	defer eng.ReleaseCarried(&tx.txn)
	for {
		res, err := eng.Update(ctx, &tx.txn, tbl, r, tup, value, isDelete)
		if err != nil {
			return err
		}
		switch res {
		case heap.TMOk:
			return nil
		case heap.TMUpdated:
			if tx.iso == RepeatableRead {
				return ErrSerialization
			}
			tup = eng.LatestVersion(r, tup)
		case heap.TMDeleted:
			if tx.iso == RepeatableRead {
				return &opError{sentinel: ErrSerialization, msg: "could not serialize access due to concurrent delete"}
			}
			return ErrNotFound
		default:
			return ErrNotFound
		}
	}
}

// Scan calls fn for each row of table in [opts.Start, opts.End) visible to
// the snapshot, in key order, until opts.Limit rows were passed to fn; fn's
// error stops the scan and is returned. key and value are fn's own copies:
// the engine never hands out the memory a row is stored in. fn may call
// tx's methods (see Tx); if it ends the transaction, the scan stops.
//
// With opts.Lock != NoLock, each row is locked as Lock would lock it (with
// opts.Wait) before fn sees it, and fn gets the value of the version
// locked: SELECT ... FOR <strength> [NOWAIT | SKIP LOCKED] LIMIT n. Rows
// skipped with SkipLocked, and rows deleted concurrently under READ
// COMMITTED, are left out and not counted. A lock error (ErrDeadlock,
// ErrLockNotAvailable, ...) stops the scan and aborts the transaction.
func (tx *Tx) Scan(ctx context.Context, table string, opts ScanOptions, fn func(key, value []byte) error) error {
	return tx.scan(ctx, table, opts, fn)
}

// stillActive is the error a running operation stops with once the
// transaction ended or the database began closing under it.
func (tx *Tx) stillActive() error {
	if tx.db.closed.Load() {
		return ErrClosed
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	switch tx.state {
	case txDone:
		return ErrTxDone
	case txAborted:
		return ErrTxAborted
	}
	return nil
}

// Commit commits the transaction and ends it: its changes become visible
// and all its row locks are released at once. The transaction is over
// whatever Commit returns, except with ErrTxBusy.
//
// nil means committed: on an on-disk database with SyncCommit on (the
// default), a transaction that wrote is also durable (see
// Options.SyncCommit); one that only read and locked rows has nothing to
// make durable and never waits for the disk.
//
// ErrTxAborted (25P02) means an earlier failed operation had aborted the
// transaction; it is now rolled back and nothing of it is committed.
// ErrTxDone: it had already ended. ErrClosed: the database is closed; it
// is rolled back. ErrTxBusy (55000): another call on tx is running;
// nothing was done.
//
// ErrDiskFull (53100): the commit record found no space; the transaction
// is rolled back and the database goes on. Any other error (ErrIO, 58030)
// is an I/O failure: the transaction is not visible, the database refuses
// further writes until it is reopened, and whether the transaction
// survives is decided by recovery then (its record may have reached the
// disk). A failed Commit is never an acknowledgement.
func (tx *Tx) Commit() error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	tx.mu.Lock()
	defer tx.mu.Unlock()
	switch tx.state {
	case txDone:
		return ErrTxDone
	case txAborted:
		tx.state = txDone
		return ErrTxAborted
	}
	if tx.db.closed.Load() {
		tx.abortLocked()
		tx.state = txDone
		return ErrClosed
	}
	if tx.db.dur != nil && len(tx.writes) > 0 {
		if err := tx.db.dur.commit(tx); err != nil {
			tx.abortLocked()
			tx.state = txDone
			return err
		}
	} else {
		tx.db.xacts.Commit(tx.txn.X)
	}
	tx.state = txDone
	tx.writes = nil
	tx.db.commits.Add(tx.txn.X.ID, 1)
	return nil
}

// Rollback aborts the transaction, discarding its changes and releasing
// its locks, and returns nil; a no-op on a finished one (so it can be
// deferred). It fails with ErrTxBusy, doing nothing, while another call on
// tx runs (cancel that call's context instead).
func (tx *Tx) Rollback() error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.state == txActive {
		tx.abortLocked()
	}
	tx.state = txDone
	return nil
}
