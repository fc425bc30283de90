package tupled

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"

	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/tuplemode"
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
	db *DB
	// t is the engine's transaction, its record (engine.Tx, ~600 bytes
	// with its Xact and Proc). A DB.Begin transaction takes the record
	// from the DB's pool and gives it back when Commit or Rollback ends
	// it, setting t to nil (so the handle, all the caller may keep, is the
	// only allocation; see DB.Begin); a Session's Tx keeps its record for
	// the session's next transaction (Session.Begin).
	t *engine.Tx
	// id is the transaction's id, kept for ID once t is gone.
	id uint64
	// pooled: t came from the DB's pool and goes back to it at the end.
	pooled bool
	// scans counts the scans running on t (a scan's callback may end the
	// transaction while the scan still holds t): release leaves such a
	// record to the garbage collector instead of the pool.
	scans atomic.Int32

	// busy is set for the duration of each call (see above); a per-Tx flag,
	// so the check costs one uncontended compare-and-swap.
	busy atomic.Bool

	// lent holds, under the invariants build tag only, the scratch copies
	// GetNoCopy and LockNoCopy handed out, which the end of the
	// transaction overwrites (see GetNoCopy).
	lent [][]byte
}

// ID is the transaction's id: unique, valid from Begin on, stable for its
// life. LockInfo.TxID and RowLock.Lockers name it.
func (tx *Tx) ID() uint64 { return tx.id }

// enter marks tx in use by the calling method (ErrTxBusy if another call
// holds it) and counts the call as running for DB.Close; exit undoes both.
// A DB.Begin transaction that has ended has no record any more (t is nil):
// every call fails as the engine fails a call on an ended transaction
// (ErrClosed once the DB is closing, else ErrTxDone).
func (tx *Tx) enter() error { return tx.enterOr(nil) }

// enterOr is enter whose error for an ended DB.Begin transaction is ended
// when not nil: Commit's is ErrTxDone even after Close, Rollback's none
// (errEnded), as the engine answers for an ended record.
func (tx *Tx) enterOr(ended error) error {
	if !tx.busy.CompareAndSwap(false, true) {
		return ErrTxBusy
	}
	if tx.t == nil {
		tx.busy.Store(false)
		if ended != nil {
			return ended
		}
		if tx.db.eng.Closing() {
			return ErrClosed
		}
		return ErrTxDone
	}
	tx.db.eng.Enter(tx.id)
	return nil
}

// errEnded is enterOr's answer to Rollback on an ended transaction.
var errEnded = errors.New("tupled: transaction ended")

// release gives a DB.Begin transaction's record back to the DB's pool once
// Commit or Rollback has ended it (tx held by the caller's enter): from
// then on the record may be another transaction's, so tx forgets it. A
// waiter or the deadlock detector that still holds the ended
// transaction's Xact or Proc tells it from the next by its xid, as for a
// Session's reused record (internal/engine's doc).
func (tx *Tx) release() {
	if !tx.pooled || !tx.t.Finished() {
		return
	}
	if tx.scans.Load() == 0 {
		tx.db.recs.Put(tx.t)
	}
	tx.t = nil
}

func (tx *Tx) exit() {
	tx.db.eng.Exit(tx.id)
	tx.busy.Store(false)
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
	return tx.t.Get(ctx, table, key)
}

// GetNoCopy is Get without the copy, as bbolt's Tx.Get: the value returned
// is the stored version's own bytes. It is valid until the transaction
// ends (Commit or Rollback returns) and must not be modified; keep a copy
// to use it longer, or use Get. Everything else — snapshot, errors — is
// Get's. It allocates nothing on an in-memory database's resident row.
//
// The rule is enforced in test builds: under the invariants build tag
// (go test -tags invariants, which CI runs with -race) the value handed
// out is a scratch copy, and the end of the transaction overwrites it with
// 0xDB bytes, so a use after the end reads garbage, and a use from another
// goroutine not ordered before Commit or Rollback is a data race the race
// detector reports (nocopy_test.go shows both).
//
// Why the transaction's end: today a value's bytes are never reused (the
// garbage collector keeps them while anything refers to them), but the
// rule leaves the row store free to recycle a value's memory once every
// transaction that was running when vacuum removed its version has ended
// (pointer-free value slabs, heap/doc.go's plan), as bbolt reuses a page
// once no transaction holds it.
func (tx *Tx) GetNoCopy(ctx context.Context, table string, key []byte) ([]byte, error) {
	if err := tx.enter(); err != nil {
		return nil, err
	}
	defer tx.exit()
	v, err := tx.t.GetNoCopy(ctx, table, key)
	return tx.lend(v), err
}

// LockNoCopy is Lock without the copy: the locked version's value under
// GetNoCopy's rule (valid until the transaction ends, never modified).
func (tx *Tx) LockNoCopy(ctx context.Context, table string, key []byte, strength LockStrength, wait WaitPolicy) ([]byte, error) {
	if err := tx.enter(); err != nil {
		return nil, err
	}
	defer tx.exit()
	mode, policy := lockArgs(strength, wait)
	v, err := tx.t.LockNoCopy(ctx, table, key, mode, policy)
	return tx.lend(v), err
}

// lend is the value a NoCopy call hands out: v itself, or under the
// invariants tag a scratch copy that endLent overwrites.
func (tx *Tx) lend(v []byte) []byte {
	if invariants.Enabled && v != nil {
		v = bytes.Clone(v)
		tx.lent = append(tx.lent, v)
	}
	return v
}

// lentPoisonBytes is what endLent fills lent values with.
var lentPoisonBytes = bytes.Repeat([]byte{0xDB}, 64)

// endLent ends the validity of the values lent (invariants tag only): the
// transaction has ended.
func (tx *Tx) endLent() {
	if invariants.Enabled {
		for _, v := range tx.lent {
			poison(v)
		}
		tx.lent = nil
	}
}

// poison overwrites v with 0xDB bytes: a lent value's validity has ended.
// It uses copy, not a byte loop: the compiler turns a fill loop into a
// memset the race detector does not see.
func poison(v []byte) {
	for len(v) > 0 {
		v = v[copy(v, lentPoisonBytes):]
	}
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

// waitPolicy is the engine's wait policy of w; false for a value outside
// the enumeration.
func waitPolicy(w WaitPolicy) (engine.WaitPolicy, bool) {
	switch w {
	case Wait:
		return engine.Block, true
	case NoWait:
		return engine.Error, true
	case SkipLocked:
		return engine.Skip, true
	}
	return 0, false
}

// lockArgs converts a strength and a wait policy; a value outside its
// enumeration becomes one the engine refuses with ErrInvalid (22023),
// once the transaction has been checked, as every argument is.
func lockArgs(s LockStrength, w WaitPolicy) (tuplemode.Mode, engine.WaitPolicy) {
	m, ok := tupleMode(s)
	if !ok {
		m = tuplemode.NumModes
	}
	p, ok := waitPolicy(w)
	if !ok {
		p = -1
	}
	return m, p
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
	mode, policy := lockArgs(strength, wait)
	return tx.t.Lock(ctx, table, key, mode, policy)
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
	return tx.t.Insert(ctx, table, key, value)
}

// BulkLoad loads rows keys[i] → values[i] (copied) into table as
// PostgreSQL's COPY FREEZE does: committed and frozen from the start,
// without the write set, the WAL or the locking an Insert pays for. It is
// for filling a table that only this transaction uses — one it created or
// emptied for the load, as the SQL layer's COPY into a table created or
// truncated in the same transaction does:
//
//   - the transaction takes the table ACCESS EXCLUSIVE (LockTable), so no
//     other reads or writes it until this one ends;
//   - the table must be empty at the transaction's first BulkLoad of it;
//     later calls add to it, until the transaction writes it otherwise;
//   - if the transaction does not commit, the table is left empty (it is
//     dropped and made again; after a crash, recovery empties it);
//   - once it commits, every transaction sees the rows, including one
//     whose snapshot is older than the commit (PostgreSQL's COPY FREEZE
//     has the same exception to MVCC).
//
// It returns how many rows it loaded. ErrBulkRefused (55000) — which
// leaves the transaction usable, so the caller inserts row by row
// instead — when the table has indexes or foreign keys, a savepoint is
// open, the table is not empty at the first load, or the transaction
// wrote it since loading it. ErrDuplicateKey (23505) when a key is in the
// table or earlier in keys: the count is then the index of that row, and
// the transaction is aborted. Other errors as Insert's.
func (tx *Tx) BulkLoad(ctx context.Context, table string, keys, values [][]byte) (int, error) {
	if err := tx.enter(); err != nil {
		return 0, err
	}
	defer tx.exit()
	return tx.t.BulkLoad(ctx, table, keys, values)
}

// Prefetch is a hint that the keys of table are about to be inserted or
// read, as by a bulk load's next batch of rows: it brings their entries
// of the table's in-memory index into the CPU cache together, so that the
// calls that follow do not each wait for a cache miss in turn. It changes
// nothing, reads nothing from disk and reports nothing.
func (tx *Tx) Prefetch(table string, keys [][]byte) {
	if err := tx.enter(); err != nil {
		return
	}
	defer tx.exit()
	tx.t.Prefetch(table, keys)
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

// UpdateKey replaces oldKey's row by a row under newKey with value: an
// UPDATE that changes the key. It locks the old row as Delete does (FOR
// UPDATE strength, waiting for every locker, READ COMMITTED following a
// concurrent committed update, REPEATABLE READ failing with 40001), then
// inserts newKey as Insert does (ErrDuplicateKey, 23505, if a live row has
// it). Unlike a Delete followed by an Insert, it is one update to other
// transactions: a READ COMMITTED locking Scan whose snapshot saw the old
// row follows it to the new one (rechecking its Where and range there), as
// PostgreSQL follows a tuple's update chain; under REPEATABLE READ their
// lock is a serialization failure "due to concurrent update".
// ErrNotFound if no row of oldKey is visible; with equal keys it is Update.
// Both keys and value are copied.
func (tx *Tx) UpdateKey(ctx context.Context, table string, oldKey, newKey, value []byte) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.UpdateKey(ctx, table, oldKey, newKey, value)
}

func (tx *Tx) write(ctx context.Context, table string, key, value []byte, isDelete bool, wait WaitPolicy) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	_, policy := lockArgs(ForUpdate, wait)
	return tx.t.Write(ctx, table, key, value, isDelete, policy)
}

// Scan calls fn for each row of table in [opts.Start, opts.End) visible to
// the snapshot, in key order, until opts.Limit rows were passed to fn; fn's
// error stops the scan and is returned. key and value are fn's own copies:
// the engine never hands out the memory a row is stored in. (A row read
// from disk may share its allocation with its neighbours', up to 4 KiB:
// a caller that keeps a few values of a long scan and drops the rest may
// copy them to let the rest go.) fn may call
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
	if err := tx.enterOr(ErrTxDone); err != nil {
		return err
	}
	defer tx.exit()
	defer tx.endLent()
	err := tx.t.Commit()
	tx.release()
	return err
}

// Rollback aborts the transaction, discarding its changes and releasing
// its locks, and returns nil; a no-op on a finished one (so it can be
// deferred). It fails with ErrTxBusy, doing nothing, while another call on
// tx runs (cancel that call's context instead).
func (tx *Tx) Rollback() error {
	if err := tx.enterOr(errEnded); err != nil {
		if err == errEnded {
			return nil // ended, its record given back: the no-op
		}
		return err
	}
	defer tx.exit()
	tx.t.Rollback()
	tx.endLent()
	tx.release()
	return nil
}
