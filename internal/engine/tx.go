package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/durable"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/tuplelock"
)

// WaitPolicy is what a lock request does when the row is locked in a
// conflicting mode: PostgreSQL's LockWaitPolicy.
type WaitPolicy = tuplelock.WaitPolicy

// The wait policies.
const (
	Block = tuplelock.Block // wait (LockWaitBlock)
	Skip  = tuplelock.Skip  // SKIP LOCKED (LockWaitSkip)
	Error = tuplelock.Error // NOWAIT (LockWaitError)
)

// TxOptions configure Begin.
type TxOptions struct {
	RepeatableRead bool          // one snapshot for the transaction; else READ COMMITTED
	ReadOnly       bool          // writes and locks fail with errs.ErrReadOnly
	LockTimeout    time.Duration // 0: Config.LockTimeout
	// DeadlockTimeout is this transaction's deadlock_timeout: each of its
	// lock waits is checked for a deadlock this long after it began.
	// 0: Config.DeadlockTimeout.
	DeadlockTimeout time.Duration
}

type txState uint8

const (
	txActive txState = iota
	txAborted
	txDone
)

// Tx is one transaction of the engine. Its methods are the operations of
// package tupled's Tx, with that contract (errors and all); package tupled
// adds the check that a Tx is used by one call at a time, and Enter/Exit
// around each call. Every method here assumes that: one call at a time.
type Tx struct {
	e        *Engine
	id       uint64 // the top-level xid (ID, asked by every API call's Enter/Exit)
	txn      tuplelock.Txn
	proc     *lockmgr.Proc // its lock-manager process: row waits, relation (rellock.go) and advisory locks
	lockTO   time.Duration // lock timeout of its waits; 0: none
	rr       bool          // REPEATABLE READ
	readOnly bool

	mu       sync.Mutex // guards state, snap, haveSnap (Rollback may come from Close's victims)
	state    txState
	snap     xact.Snapshot
	haveSnap bool
	// freshSnap: operations take a fresh snapshot even under REPEATABLE
	// READ (a foreign key's search for referencing rows, fk.go).
	freshSnap bool

	// writes is the write set of an on-disk engine's transaction, logged
	// at commit (durable.Store.Commit).
	writes []durable.Write

	// savepoints are the open savepoints, innermost last (savepoint.go).
	// subAborted: an error aborted the innermost one's subtransaction,
	// not the top level (state is txAborted until RollbackTo).
	savepoints []savepoint
	subAborted bool
	// advTaken: transaction-level advisory locks taken under a savepoint
	// (advisory.go), released by its rollback.
	advTaken []advTake
	// Advisory locks (advisory.go): sess the Session it was begun
	// through; adv (guarded by mu) the owner of its advisory locks, set by
	// the first one or by Session.Begin.
	sess *Session
	adv  *lockmgr.Owner
	// skipIndex: the arbiter whose entry UpsertOn inserted (index.go).
	skipIndex *Index
	// bulk: the tables the transaction bulk-loaded (bulk.go), true while
	// it may load more into them (it has not written them otherwise).
	bulk map[string]bool

	// xrec and prec are the memory of the transaction's xact.Xact and
	// lockmgr.Proc (BeginIn, InitProc): one record per transaction, not
	// three, and none at all when the caller embeds the Tx (package
	// tupled's Tx does). A Tx that has ended may be begun again (BeginIn:
	// package tupled's Session does, so that its transactions allocate
	// nothing); a waiter or the deadlock detector may still hold the
	// ended transaction's Xact or Proc then, and each tells the two
	// transactions apart by their xid, its generation (xact.Manager.BeginIn,
	// lockmgr.Manager.InitProc).
	xrec xact.Xact
	prec lockmgr.Proc
}

// reuse makes an ended tx (state txDone) a zero Tx again, but for the
// records a late holder may still read (xrec, prec: their own BeginIn and
// InitProc reset them) and the capacity of its slices, which the next
// transaction fills without allocating. Every other field is zeroed
// here (TestReuseZeroesEveryField checks the list).
func (tx *Tx) reuse() {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.state != txDone {
		panic("engine: BeginIn of a Tx that has not ended")
	}
	clear(tx.writes)
	clear(tx.savepoints)
	clear(tx.advTaken)
	tx.e, tx.id, tx.txn, tx.proc, tx.lockTO, tx.rr, tx.readOnly = nil, 0, tuplelock.Txn{}, nil, 0, false, false
	tx.state, tx.snap, tx.haveSnap, tx.freshSnap = txActive, xact.Snapshot{}, false, false
	tx.writes, tx.savepoints, tx.subAborted, tx.advTaken = tx.writes[:0], tx.savepoints[:0], false, tx.advTaken[:0]
	tx.sess, tx.adv, tx.skipIndex, tx.bulk = nil, nil, nil, nil
}

// Begin starts a transaction: its id is assigned (and, on disk, reserved
// in the WAL) at once, its snapshot at its first operation.
func (e *Engine) Begin(o TxOptions) (*Tx, error) {
	tx := new(Tx)
	if err := e.BeginIn(tx, o); err != nil {
		return nil, err
	}
	return tx, nil
}

// BeginIn is Begin in memory the caller provides: tx, a zero Tx never
// begun, becomes the transaction. tx must stay where it is. tx may also be
// a Tx whose transaction has ended (Commit or Rollback returned), which
// becomes the new transaction: the caller must know that no call on the
// old one runs or will run (package tupled's Session reuses its
// transactions' records so). On error tx is left unusable.
func (e *Engine) BeginIn(tx *Tx, o TxOptions) error {
	if tx.state == txDone { // an ended Tx, begun again
		tx.reuse()
	}
	lt := o.LockTimeout
	if lt == 0 {
		lt = e.cfg.LockTimeout
	}
	x := &tx.xrec
	e.xacts.BeginIn(x)
	if e.dur != nil {
		if err := e.dur.ReserveXid(x.ID()); err != nil {
			e.xacts.Abort(x)
			return err
		}
	}
	tx.e, tx.id, tx.rr, tx.readOnly, tx.lockTO = e, x.ID(), o.RepeatableRead, o.ReadOnly, lt
	tx.proc = &tx.prec
	e.locks.InitProc(tx.proc, x.ID())
	tx.proc.SetDeadlockTimeout(o.DeadlockTimeout)
	tx.txn = tuplelock.NewTxn(x, tx.proc, lt)
	return nil
}

// ID is the transaction's id (its xid).
func (tx *Tx) ID() uint64 { return tx.id }

// start checks that tx can run an operation and returns its snapshot for
// this operation (READ COMMITTED: a fresh one; REPEATABLE READ: the one
// taken at the first operation).
func (tx *Tx) start(ctx context.Context, write bool) (xact.Snapshot, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.checkLocked(ctx, write); err != nil {
		return xact.Snapshot{}, err
	}
	return tx.snapshotLocked(), nil
}

// startOn is start for an operation on table, which first takes mode on
// it (the relation lock PostgreSQL's statement takes, see rellock.go) and
// only then its snapshot, as PostgreSQL locks a statement's tables before
// it takes the statement's snapshot.
func (tx *Tx) startOn(ctx context.Context, write bool, table string, mode lockmgr.LockMode) (xact.Snapshot, error) {
	tx.mu.Lock()
	if err := tx.checkLocked(ctx, write); err != nil {
		tx.mu.Unlock()
		return xact.Snapshot{}, err
	}
	if write && tx.bulk != nil {
		tx.noteWriteLocked(table) // bulk.go
	}
	if tx.proc.HoldsRelation(table, mode) { // the common case: one mutex round
		defer tx.mu.Unlock()
		return tx.snapshotLocked(), nil
	}
	tx.mu.Unlock()
	if err := tx.lockRel(ctx, table, mode, false); err != nil {
		return xact.Snapshot{}, tx.Fail(ctx, err)
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.snapshotLocked(), nil
}

// liveLocked is the first part of every check (tx.mu held): the database
// open, the transaction neither ended nor aborted, ctx not done (which
// aborts it).
func (tx *Tx) liveLocked(ctx context.Context) error {
	if tx.e.closed.Load() {
		return errs.ErrClosed
	}
	if err := tx.usableLocked(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		tx.abortLocked()
		return errs.Canceled(err)
	}
	return nil
}

// checkLocked is start's check that tx can run an operation (tx.mu held);
// an error has aborted the transaction where it should.
func (tx *Tx) checkLocked(ctx context.Context, write bool) error {
	if err := tx.liveLocked(ctx); err != nil {
		return err
	}
	if write && tx.readOnly {
		tx.abortLocked()
		return errs.ErrReadOnly
	}
	if write && len(tx.savepoints) > 0 && tx.savepoints[len(tx.savepoints)-1].sub == nil {
		if err := tx.assignSubLocked(); err != nil {
			tx.abortLocked()
			return err
		}
	}
	if d := tx.e.dur; d != nil {
		err := d.Readable()
		if err == nil && write {
			err = d.FatalErr()
		}
		if err == nil {
			err = d.BackendError()
		}
		if err != nil {
			tx.abortLocked()
			return err
		}
	}
	return nil
}

// snapshotLocked is the operation's snapshot (tx.mu held): READ COMMITTED a
// fresh one, REPEATABLE READ the transaction's, taken at its first
// operation.
func (tx *Tx) snapshotLocked() xact.Snapshot {
	if tx.rr && !tx.freshSnap {
		if !tx.haveSnap {
			tx.snap = tx.e.xacts.TakeSnapshot(tx.txn.Top())
			tx.haveSnap = true
		}
		return tx.snap
	}
	return tx.e.xacts.TakeSnapshot(tx.txn.Top())
}

// Fail aborts the transaction with err (an engine or argument error),
// unless err leaves it usable (errs.ErrNotFound, errs.ErrSkipped), and
// returns err as the API reports it: the lock manager's deadlock, lock
// timeout and shutdown as errs' sentinels, a context's end as 57014.
func (tx *Tx) Fail(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, errs.ErrNotFound) || errors.Is(err, errs.ErrSkipped) {
		return err
	}
	switch {
	case errors.Is(err, lockmgr.ErrDeadlock):
		tx.e.log.Info("deadlock detected", "tx", tx.ID(), "detail", err.Error())
		err = errs.ErrDeadlock
	case errors.Is(err, lockmgr.ErrLockTimeout):
		err = errs.ErrLockTimeout
	case errors.Is(err, lockmgr.ErrShutdown):
		err = &errs.OpError{Sentinel: errs.ErrClosed, Msg: "terminating connection due to administrator command: the database is closing", Cause: errs.ErrAdminShutdown}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		cause := ctx.Err()
		if cause == nil {
			cause = err
		}
		err = errs.Canceled(cause)
	}
	tx.mu.Lock()
	if tx.state == txActive {
		tx.abortLocked()
	}
	tx.mu.Unlock()
	return err
}

// abortLocked is what a failed operation does: under a savepoint it
// rolls back the innermost savepoint's subtransaction (its locks and
// writes go at once, as PostgreSQL's AbortSubTransaction) and leaves the
// transaction aborted until RollbackTo or Rollback; without one it aborts
// the transaction.
func (tx *Tx) abortLocked() {
	if n := len(tx.savepoints); n > 0 {
		tx.state = txAborted
		tx.subAborted = true
		tx.rollbackSubsLocked(n - 1)
		return
	}
	tx.abortAllLocked()
}

// abortAllLocked aborts the top-level transaction, whatever savepoints
// are open.
func (tx *Tx) abortAllLocked() {
	tx.state = txAborted
	tx.subAborted = false
	tx.savepoints, tx.advTaken = nil, nil
	tx.e.xacts.Abort(tx.txn.Top())
	tx.abortBulkLocked() // bulk.go: before the table's lock goes
	tx.releaseRelLocks()
	tx.e.aborts.Add(tx.ID(), 1)
	if tx.adv != nil || tx.sess != nil {
		tx.endAdvisory()
	}
}

// readFailed is the error of an operation during which a backend read
// failed (a row could not be loaded: it might exist, or hold another
// value), or nil. A read that fails loads nothing, so without this check
// the operation would report a row as absent, or a scan would skip it.
func (tx *Tx) readFailed(ctx context.Context) error {
	if tx.e.dur == nil {
		return nil
	}
	if err := tx.e.dur.BackendError(); err != nil {
		return tx.Fail(ctx, err)
	}
	return nil
}

// visible returns the row of key, pinned (the caller unpins it), and its
// version visible to snap.
func (tx *Tx) visible(tbl *heap.Table, key []byte, snap xact.Snapshot) (*heap.Row, *heap.Tuple) {
	r, tup, _ := tx.visibleLatched(tbl, key, snap, false)
	if tup != nil {
		r.Unlock()
	}
	return r, tup
}

// visibleToChange is visible for an operation that will lock or write the
// version it returns. Under REPEATABLE READ it fails with
// errs.ErrSerialization when an older version of the row is visible to the
// snapshot too and was updated or deleted by a transaction that committed
// meanwhile: that happens when this transaction inserted the key anew
// after a concurrent delete of the row its snapshot still sees.
// PostgreSQL keeps both heap tuples under the key; its index scan finds
// the older one first, and locking or updating it fails with 40001
// (testdata/spec/rr-reinsert-lock.spec). Here the key holds one row, so
// the check is explicit.
func (tx *Tx) visibleToChange(tbl *heap.Table, key []byte, snap xact.Snapshot) (*heap.Row, *heap.Tuple, error) {
	r, tup, err := tx.visibleLatched(tbl, key, snap, true)
	if tup != nil {
		r.Unlock()
	}
	return r, tup, err
}

// visibleLatched is visible (change false) or visibleToChange (change
// true) that keeps the row's latch when it returns a version: the caller
// unlocks r then, and unpins it whenever it is not nil. One latch hold
// covers the visibility test, the REPEATABLE READ check and, for Lock,
// heap_lock_tuple's first look at xmax (tuplelock.Locker.LockTupleLatched).
func (tx *Tx) visibleLatched(tbl *heap.Table, key []byte, snap xact.Snapshot, change bool) (*heap.Row, *heap.Tuple, error) {
	r := tbl.PinRow(key)
	if r == nil {
		return nil, nil, nil
	}
	r.Lock()
	tup := tx.e.visibleVersion(r, snap)
	if tup == nil {
		r.Unlock()
		return r, nil, nil
	}
	if change && tx.rr && tx.e.olderVersionChanged(r, tup, snap) {
		r.Unlock()
		r.Unpin()
		return nil, nil, errs.ErrSerialization
	}
	return r, tup, nil
}

// olderVersionChanged reports whether a version of r older than tup is
// visible to snap and was updated or deleted by a committed transaction
// (see visibleToChange). Latch held.
func (e *Engine) olderVersionChanged(r *heap.Row, tup *heap.Tuple, snap xact.Snapshot) bool {
	for _, v := range r.Versions() {
		if v == tup {
			return false
		}
		if !e.heap.SatisfiesMVCC(v, snap) {
			continue
		}
		if upd := heap.UpdateXid(v); upd != 0 {
			if st, _ := e.xacts.Status(upd); st == xact.Committed {
				return true
			}
		}
	}
	return false
}

// logWrite remembers a write of an on-disk engine's transaction.
//
// The write set doubles when it fills: append grows a large slice by a
// quarter, which for a bulk load's million writes (72 bytes each) copied
// the set about four times over as it grew, 6% of an on-disk COPY.
func (tx *Tx) logWrite(table string, key, value []byte, isDelete bool) {
	if tx.e.dur != nil {
		if len(tx.writes) == cap(tx.writes) && len(tx.writes) >= 1024 {
			tx.writes = slices.Grow(tx.writes, len(tx.writes))
		}
		tx.writes = append(tx.writes, durable.Write{Table: table, Key: key, Value: value, Delete: isDelete})
	}
}

// Get returns a copy of the value of key's version visible to the
// snapshot, without locking or waiting; errs.ErrNotFound if none is.
func (tx *Tx) Get(ctx context.Context, table string, key []byte) ([]byte, error) {
	v, err := tx.GetNoCopy(ctx, table, key)
	return bytes.Clone(v), err
}

// GetNoCopy is Get returning the version's own value, not a copy: a
// Tuple's value never changes, and package tupled's Tx.GetNoCopy states
// how long its caller may use it.
func (tx *Tx) GetNoCopy(ctx context.Context, table string, key []byte) ([]byte, error) {
	snap, err := tx.startOn(ctx, false, table, lockmgr.AccessShareLock)
	if err != nil {
		return nil, err
	}
	// The row's newest version, when it decides the read without the
	// latch (heap's currentVersion); else the latched read below.
	if tbl, err := tx.e.table(table); err == nil && checkKey(table, key) == nil {
		if v, ok := tbl.ReadResident(key, snap); ok {
			return v, nil
		}
	}
	_, r, tup, err := tx.target(ctx, table, key, snap, false, nil)
	if r != nil {
		defer r.Unpin()
	}
	if err != nil {
		return nil, err
	}
	return tup.Value(), nil
}

// target finds the row an operation on (table, key) works on, once the
// transaction was checked (start): the table (errs.ErrNoTable), the key's
// size (54000), then check (the operation's other arguments, may be nil),
// then the row, pinned — the caller unpins r whenever it is not nil, even
// with an error — and its version visible to snap (visibleToChange when
// change: the operation locks or writes it). No visible version is
// errs.ErrNotFound, unless a backend read failed. Every error but
// ErrNotFound has aborted the transaction (Fail).
func (tx *Tx) target(ctx context.Context, table string, key []byte, snap xact.Snapshot, change bool, check func() error) (*heap.Table, *heap.Row, *heap.Tuple, error) {
	tbl, r, tup, err := tx.targetLatched(ctx, table, key, snap, change, check)
	if err == nil {
		r.Unlock()
	}
	return tbl, r, tup, err
}

// targetLatched is target that returns, when it finds a version, with the
// row's latch held (visibleLatched): the caller unlocks it.
func (tx *Tx) targetLatched(ctx context.Context, table string, key []byte, snap xact.Snapshot, change bool, check func() error) (*heap.Table, *heap.Row, *heap.Tuple, error) {
	tbl, err := tx.e.table(table)
	if err == nil {
		err = checkKey(table, key)
	}
	if err == nil && check != nil {
		err = check()
	}
	if err != nil {
		return nil, nil, nil, tx.Fail(ctx, err)
	}
	r, tup, err := tx.visibleLatched(tbl, key, snap, change)
	if err != nil {
		return nil, nil, nil, tx.Fail(ctx, err)
	}
	if tup == nil {
		if err := tx.readFailed(ctx); err != nil {
			return nil, r, nil, err
		}
		return nil, r, nil, errs.ErrNotFound
	}
	return tbl, r, tup, nil
}

// checkLock refuses a mode or wait policy outside their enumerations.
func checkLock(mode tuplemode.Mode, policy WaitPolicy) error {
	if mode >= tuplemode.NumModes || policy < Block || policy > Error {
		return errs.Op(errs.ErrInvalid, fmt.Sprintf("tupled: invalid lock strength or wait policy (mode %d, policy %d)", mode, policy))
	}
	return nil
}

// Lock locks key's row in mode, as SELECT ... FOR <mode> with policy, and
// returns a copy of the locked version's value (EvalPlanQual's newest
// version under READ COMMITTED).
func (tx *Tx) Lock(ctx context.Context, table string, key []byte, mode tuplemode.Mode, policy WaitPolicy) ([]byte, error) {
	v, err := tx.LockNoCopy(ctx, table, key, mode, policy)
	return bytes.Clone(v), err
}

// LockNoCopy is Lock returning the locked version's own value, not a copy
// (see GetNoCopy).
func (tx *Tx) LockNoCopy(ctx context.Context, table string, key []byte, mode tuplemode.Mode, policy WaitPolicy) ([]byte, error) {
	snap, err := tx.startOn(ctx, true, table, lockmgr.RowShareLock)
	if err != nil {
		return nil, err
	}
	if err := checkLock(mode, policy); err != nil {
		return nil, tx.Fail(ctx, err)
	}
	// The row's latch stays held from the visibility test into
	// heap_lock_tuple's first look at xmax: one latch hold, not two.
	tbl, r, tup, err := tx.targetLatched(ctx, table, key, snap, true, nil)
	if r != nil {
		defer r.Unpin()
	}
	if err != nil {
		return nil, err
	}
	locked, err := tx.lockVersionFrom(ctx, tbl, r, tup, mode, policy, true)
	if err != nil {
		return nil, tx.Fail(ctx, err)
	}
	return locked.Value(), nil
}

// lockVersion locks tup (or, under READ COMMITTED, the newest version of
// its update chain) and returns the version locked: ExecLockRows plus
// heapam_tuple_lock. Its caller rechecks its qualification on the version
// returned when that is not tup (EvalPlanQual).
func (tx *Tx) lockVersion(ctx context.Context, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplemode.Mode, policy WaitPolicy) (*heap.Tuple, error) {
	return tx.lockVersionFrom(ctx, tbl, r, tup, mode, policy, false)
}

// lockVersionFrom is lockVersion; latched says the caller holds r's latch
// (targetLatched), which the first lock attempt takes over and releases
// (tuplelock.Locker.LockTupleLatched).
func (tx *Tx) lockVersionFrom(ctx context.Context, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, mode tuplemode.Mode, policy WaitPolicy, latched bool) (*heap.Tuple, error) {
	eng := tx.e.tl
	defer eng.ReleaseCarried(&tx.txn)
	for {
		var res heap.TMResult
		var err error
		if latched {
			latched = false
			res, err = eng.LockTupleLatched(ctx, &tx.txn, tbl, r, tup, mode, policy, true)
		} else {
			res, err = eng.LockTuple(ctx, &tx.txn, tbl, r, tup, mode, policy, true)
		}
		if err != nil {
			return nil, err
		}
		switch res {
		case heap.TMOk:
			return tup, nil
		case heap.TMWouldBlock:
			if policy == Skip {
				return nil, errs.ErrSkipped
			}
			return nil, &errs.OpError{Sentinel: errs.ErrLockNotAvailable, Msg: fmt.Sprintf("could not obtain lock on row in relation %q", tbl.Name()), Table: tbl.Name()}
		case heap.TMUpdated:
			if tx.rr {
				return nil, errs.ErrSerialization
			}
			tup = eng.LatestVersion(r, tup)
		case heap.TMDeleted:
			if tx.rr {
				return nil, errs.ErrSerialization
			}
			if mv, ok := tx.e.movedTo(r, tup); ok {
				return nil, &movedError{mv}
			}
			return nil, errs.ErrNotFound
		default:
			return nil, errs.ErrNotFound
		}
	}
}

// Insert adds a row (key and value are copied), waiting like a unique
// index for an in-progress inserter or deleter of key;
// errs.ErrDuplicateKey if a live row has it.
func (tx *Tx) Insert(ctx context.Context, table string, key, value []byte) error {
	_, err := tx.insert(ctx, table, key, value, false)
	if err == nil {
		err = tx.fkInserted(ctx, table, key, value) // fk.go
	}
	return err
}

// Prefetch is a hint that keys of table are about to be inserted or
// read (heap.Table.Prefetch); an unknown table is ignored, as the calls
// that follow will report it.
func (tx *Tx) Prefetch(table string, keys [][]byte) {
	if tbl, err := tx.e.table(table); err == nil {
		tbl.Prefetch(keys)
	}
}

// insert is Insert; speculative (INSERT … ON CONFLICT) reports a
// conflicting row as (false, nil) instead of failing with 23505 — after
// waiting, as Insert does, for a transaction inserting or deleting the key
// to end — and under REPEATABLE READ fails with 40001 when the conflicting
// row is one the snapshot does not see (PostgreSQL's ExecCheckTIDVisible).
func (tx *Tx) insert(ctx context.Context, table string, key, value []byte, speculative bool) (bool, error) {
	snap, err := tx.startOn(ctx, true, table, lockmgr.RowExclusiveLock)
	if err != nil {
		return false, err
	}
	tbl, err := tx.e.table(table)
	if err == nil {
		err = checkKey(table, key)
	}
	if err == nil {
		err = checkValue(value)
	}
	if err != nil {
		return false, tx.Fail(ctx, err)
	}
	key, value = bytes.Clone(key), bytes.Clone(value)
	err = tx.e.tl.Insert(ctx, &tx.txn, tbl, key, value)
	if err == nil {
		// The key's stored row could not be read: it may exist.
		if ferr := tx.readFailed(ctx); ferr != nil {
			return false, ferr
		}
		tx.logWrite(table, key, value, false)
		if err := tx.indexInsert(ctx, table, key, value); err != nil { // index.go
			return false, tx.Fail(ctx, err)
		}
		return true, nil
	}
	if errors.Is(err, tuplelock.ErrDuplicateKey) {
		if speculative {
			if tx.rr && !tx.sees(tbl, key, snap) {
				return false, tx.Fail(ctx, errs.ErrSerialization)
			}
			return false, nil
		}
		err = &errs.OpError{Sentinel: errs.ErrDuplicateKey, Msg: fmt.Sprintf("duplicate key value violates unique constraint \"%s_pkey\"", table),
			Table: table, Constraint: table + "_pkey", Detail: fmt.Sprintf("Key (key)=(%s) already exists.", errs.KeyText(key))}
	}
	return false, tx.Fail(ctx, err)
}

// sees reports whether a version of key is visible to snap.
func (tx *Tx) sees(tbl *heap.Table, key []byte, snap xact.Snapshot) bool {
	r, tup := tx.visible(tbl, key, snap)
	if r != nil {
		r.Unpin()
	}
	return tup != nil
}

// Write updates (value) or deletes key's row. With policy Block it waits
// for conflicting lockers; with Error or Skip it first takes the lock the
// write needs (FOR NO KEY UPDATE, or FOR UPDATE for a delete) with that
// policy: "write unless locked".
func (tx *Tx) Write(ctx context.Context, table string, key, value []byte, isDelete bool, policy WaitPolicy) error {
	snap, err := tx.startOn(ctx, true, table, lockmgr.RowExclusiveLock)
	if err != nil {
		return err
	}
	tbl, r, tup, err := tx.target(ctx, table, key, snap, true, func() error {
		if err := checkValue(value); err != nil {
			return err
		}
		return checkLock(0, policy)
	})
	if r != nil {
		defer r.Unpin()
	}
	if err != nil {
		return err
	}
	if !isDelete {
		value = bytes.Clone(value) // checked first: a refused value is never copied
	}
	if policy != Block {
		mode := tuplemode.NoKeyExclusive
		if isDelete {
			mode = tuplemode.Exclusive
		}
		// The write that follows finds the row locked by its own
		// transaction and does not wait.
		if _, err := tx.lockVersion(ctx, tbl, r, tup, mode, policy); err != nil {
			return tx.Fail(ctx, err)
		}
	}
	old, err := tx.writeVersion(ctx, tbl, r, tup, value, isDelete)
	if err == nil {
		tx.logWrite(table, bytes.Clone(key), value, isDelete)
		err = tx.indexWrite(ctx, table, key, old.Value(), value, isDelete) // index.go
	}
	if err == nil && !isDelete {
		err = tx.fkChildChanged(ctx, table, key, old.Value(), key, value) // fk.go
	}
	if err == nil {
		err = tx.fkParentChanged(ctx, table, key, old.Value(), key, value, isDelete)
	}
	return tx.Fail(ctx, err)
}

// writeVersion is ExecUpdate/ExecDelete: under READ COMMITTED a concurrent
// committed update is followed to the newest version (EvalPlanQual); under
// REPEATABLE READ it is a serialization failure.
//
// It returns the version it updated or deleted.
func (tx *Tx) writeVersion(ctx context.Context, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, value []byte, isDelete bool) (*heap.Tuple, error) {
	eng := tx.e.tl
	defer eng.ReleaseCarried(&tx.txn)
	for {
		var res heap.TMResult
		var err error
		if !isDelete && tx.e.uniqueKeyChanged(tbl.Name(), r.Key(), tup.Value(), value) { // index.go
			res, err = eng.KeyUpdate(ctx, &tx.txn, tbl, r, tup, value)
		} else {
			res, err = eng.Update(ctx, &tx.txn, tbl, r, tup, value, isDelete)
		}
		if err != nil {
			return nil, err
		}
		switch res {
		case heap.TMOk:
			return tup, nil
		case heap.TMUpdated:
			if tx.rr {
				return nil, errs.ErrSerialization
			}
			tup = eng.LatestVersion(r, tup)
		case heap.TMDeleted:
			if tx.rr {
				if _, moved := tx.e.movedTo(r, tup); moved {
					return nil, errs.ErrSerialization // a key update is an update
				}
				return nil, errs.Op(errs.ErrSerialization, "could not serialize access due to concurrent delete")
			}
			return nil, errs.ErrNotFound
		default:
			return nil, errs.ErrNotFound
		}
	}
}

// StillActive is the error a running operation stops with once the
// transaction ended or the engine began closing under it.
func (tx *Tx) StillActive() error {
	if tx.e.closed.Load() {
		return errs.ErrClosed
	}
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.usableLocked()
}

// Commit commits the transaction and ends it (on disk, a transaction that
// wrote is logged first: durable.Store.Commit). See package tupled's
// Tx.Commit for the errors.
func (tx *Tx) Commit() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	switch tx.state {
	case txDone:
		return errs.ErrTxDone
	case txAborted:
		if tx.subAborted {
			tx.abortAllLocked()
		}
		tx.state = txDone
		return errs.ErrTxAborted
	}
	if tx.e.closed.Load() {
		tx.abortAllLocked()
		tx.state = txDone
		return errs.ErrClosed
	}
	tx.savepoints, tx.advTaken = nil, nil
	if tx.e.dur != nil && (len(tx.writes) > 0 || len(tx.bulk) > 0) {
		err := tx.commitBulkLocked() // bulk.go: the loaded rows durable first
		if err == nil {
			err = tx.e.dur.Commit(tx.txn.Top(), tx.writes)
		}
		if err != nil {
			if errors.Is(err, heap.ErrNoTable) {
				err = tx.droppedTable()
			}
			tx.abortAllLocked()
			tx.state = txDone
			return err
		}
	} else {
		// In memory, or nothing to log: a transaction that only read or
		// locked ends without a CSN of its own (xact.CommitNoWrite; one
		// that wrote, noted by tuplelock, takes the full Commit there).
		tx.e.xacts.CommitNoWrite(tx.txn.Top())
	}
	tx.releaseRelLocks()
	tx.state = txDone
	tx.writes, tx.bulk = nil, nil
	tx.e.commits.Add(tx.ID(), 1)
	if tx.adv != nil || tx.sess != nil {
		tx.endAdvisory()
	}
	return nil
}

// droppedTable is the error of a commit whose write set names a table
// dropped meanwhile: errs.ErrNoTable naming the first such table.
func (tx *Tx) droppedTable() error {
	for _, w := range tx.writes {
		if _, err := tx.e.heap.Table(w.Table); err != nil {
			return noTable(w.Table)
		}
	}
	return errs.ErrNoTable
}

// Rollback aborts the transaction unless it ended, and ends it.
func (tx *Tx) Rollback() {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.state == txActive || tx.subAborted {
		tx.abortAllLocked()
	}
	tx.state = txDone
}
