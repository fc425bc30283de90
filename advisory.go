package tupled

import (
	"context"
	"sync/atomic"

	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/errs"
)

// AdvisoryKey names an advisory lock: PostgreSQL's pg_advisory_lock(bigint)
// or pg_advisory_lock(int4, int4). The two key spaces are distinct:
// AdvisoryKeyInt64(1) and AdvisoryKeyPair(0, 1) are different locks, as
// pg_advisory_lock(1) and pg_advisory_lock(0, 1) are. The zero value is not
// a key (the calls refuse it with ErrInvalid, 22023).
type AdvisoryKey struct{ tag engine.AdvisoryKey }

// AdvisoryKeyInt64 is the key of pg_advisory_lock(key).
func AdvisoryKeyInt64(key int64) AdvisoryKey { return AdvisoryKey{engine.AdvisoryKeyInt64(key)} }

// AdvisoryKeyPair is the key of pg_advisory_lock(key1, key2).
func AdvisoryKeyPair(key1, key2 int32) AdvisoryKey {
	return AdvisoryKey{engine.AdvisoryKeyPair(key1, key2)}
}

// String is the key as LockInfo.Tag shows it: "advisory 1", "advisory 0,1".
func (k AdvisoryKey) String() string {
	if !engine.IsAdvisoryKey(k.tag) {
		return "advisory (invalid key)"
	}
	return k.tag.String()
}

func (k AdvisoryKey) check() error {
	if !engine.IsAdvisoryKey(k.tag) {
		return errs.Op(ErrInvalid, "tupled: invalid advisory lock key (use AdvisoryKeyInt64 or AdvisoryKeyPair)")
	}
	return nil
}

// AdvisoryLock takes a transaction-level advisory lock on key, exclusive or
// shared: pg_advisory_xact_lock / pg_advisory_xact_lock_shared. It is held
// until the transaction ends (commit or rollback) and cannot be released
// earlier; taking it again is counted and costs nothing. Exclusive
// conflicts with every other holder, shared only with exclusive, with
// PostgreSQL's FIFO queue: a request that must wait blocks — shown in
// DB.Locks() as an ungranted entry with Tag key.String() — until granted,
// or until ErrDeadlock (40P01; a cycle through advisory and row locks
// counts), ErrLockTimeout (55P03) or ctx's end (57014); each of those
// aborts the transaction. A read-only transaction may take advisory locks.
// In a transaction begun through a Session the lock is the session's and
// never conflicts with the session's own advisory locks.
func (tx *Tx) AdvisoryLock(ctx context.Context, key AdvisoryKey, shared bool) error {
	_, err := tx.advisory(ctx, key, shared, false)
	return err
}

// TryAdvisoryLock is AdvisoryLock without waiting
// (pg_try_advisory_xact_lock[_shared]): false, holding nothing and leaving
// the transaction usable, if the lock is not available at once.
func (tx *Tx) TryAdvisoryLock(ctx context.Context, key AdvisoryKey, shared bool) (bool, error) {
	return tx.advisory(ctx, key, shared, true)
}

func (tx *Tx) advisory(ctx context.Context, key AdvisoryKey, shared, nowait bool) (bool, error) {
	if err := tx.enter(); err != nil {
		return false, err
	}
	defer tx.exit()
	if err := key.check(); err != nil {
		return false, err
	}
	return tx.t.AdvisoryLock(ctx, key.tag, shared, nowait)
}

// Session is what a PostgreSQL connection is to advisory locks: the owner of
// session-level advisory locks, which outlive transactions — held across
// commits and rollbacks until released with AdvisoryUnlock or
// AdvisoryUnlockAll or until Close. Transactions begun through it
// (Session.Begin) are its transactions: their transaction-level advisory
// locks are the session's too, so a session never blocks on itself, and
// the deadlock detector sees the session and its running transaction as one
// participant, as PostgreSQL sees one backend — a session holding an
// advisory lock while its transaction waits for a row, and a transaction
// holding that row while it waits for the advisory lock, are a deadlock.
//
// A Session is used by one goroutine at a time, like a Tx: a call while
// another call of the session runs fails with ErrTxBusy (55000). It runs one
// transaction at a time. Close it when done: its locks are otherwise held
// until the DB closes.
type Session struct {
	db   *DB
	s    *engine.Session
	busy atomic.Bool
	// last is the Tx of the session's previous transaction, whose record
	// Begin reuses once it has ended (see Begin): a Session's
	// transactions allocate nothing. Read and written under busy.
	last *Tx
}

// NewSession returns a new session holding no lock. It costs one small
// allocation and registers nothing.
func (db *DB) NewSession() *Session { return &Session{db: db, s: db.eng.NewSession()} }

// ID is the session's id, unique in the process: LockInfo.Session of its
// advisory locks.
func (s *Session) ID() uint64 { return s.s.ID() }

func (s *Session) enter() error {
	if !s.busy.CompareAndSwap(false, true) {
		return errs.Op(ErrTxBusy, "tupled: session is in use by another call (a Session must not be used concurrently)")
	}
	if err := s.db.enter(); err != nil {
		s.busy.Store(false)
		return err
	}
	return nil
}

func (s *Session) exit() {
	s.db.exit()
	s.busy.Store(false)
}

// Begin starts a transaction of the session, as DB.Begin does (same opts and
// errors). ErrTxBusy (55000) if the session's previous transaction has not
// ended; ErrInvalid (22023) after Close.
//
// The Tx returned is, once the session's previous transaction has ended
// (Commit, or Rollback, returned), that transaction's own Tx, reused: a
// session's transactions cost no allocation, as a PostgreSQL backend
// reuses its PGPROC. So a Tx of a Session is the caller's until the
// session's next Begin: after its Commit or Rollback, calls on it fail
// with ErrTxDone as on any ended Tx, but after the next Begin the same
// *Tx is the new transaction. (A DB.Begin Tx is never reused; only its
// record is, once the handle has forgotten it.)
// The engine's records stay safe for everyone else who may hold them: a
// waiter that waited for the old transaction, the deadlock detector, the
// lock table all tell the two apart by their xids (internal/engine's doc).
func (s *Session) Begin(ctx context.Context, opts *TxOptions) (*Tx, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.exit()
	eo, err := engineTxOptions(ctx, opts)
	if err != nil {
		return nil, err
	}
	tx := s.reusable()
	if tx == nil {
		tx = &Tx{db: s.db, t: new(engine.Tx)}
		tx.busy.Store(true)
	}
	if err := s.s.BeginIn(tx.t, eo); err != nil {
		tx.busy.Store(false)
		s.last = nil
		return nil, err
	}
	tx.id = tx.t.ID()
	s.last = tx
	tx.busy.Store(false)
	return tx, nil
}

// reusable returns the session's previous Tx, marked busy (no call on it
// can start while Begin reuses it), if its transaction is over and no
// call on it runs; otherwise nil.
func (s *Session) reusable() *Tx {
	tx := s.last
	if tx == nil || !tx.busy.CompareAndSwap(false, true) {
		return nil
	}
	if !tx.t.Finished() {
		tx.busy.Store(false)
		return nil
	}
	tx.lent = nil
	return tx
}

// AdvisoryLock takes a session-level advisory lock on key, exclusive or
// shared: pg_advisory_lock / pg_advisory_lock_shared. It is held until
// released by as many AdvisoryUnlock calls as it was taken (it is counted),
// by AdvisoryUnlockAll or by Close; commit and rollback leave it. Conflicts,
// queueing and errors as Tx.AdvisoryLock: ErrDeadlock (40P01),
// ErrLockTimeout (55P03, the open transaction's lock timeout, else
// Options.LockTimeout), ctx's end (57014). If the session has an open
// transaction the call runs inside it, as in SQL: its wait is the
// transaction's, a failed wait aborts the transaction, and an aborted
// transaction refuses the call (ErrTxAborted, 25P02).
func (s *Session) AdvisoryLock(ctx context.Context, key AdvisoryKey, shared bool) error {
	_, err := s.advisory(ctx, key, shared, false)
	return err
}

// TryAdvisoryLock is AdvisoryLock without waiting
// (pg_try_advisory_lock[_shared]): false, holding nothing, if the lock is
// not available at once.
func (s *Session) TryAdvisoryLock(ctx context.Context, key AdvisoryKey, shared bool) (bool, error) {
	return s.advisory(ctx, key, shared, true)
}

func (s *Session) advisory(ctx context.Context, key AdvisoryKey, shared, nowait bool) (bool, error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.exit()
	if err := key.check(); err != nil {
		return false, err
	}
	return s.s.AdvisoryLock(ctx, key.tag, shared, nowait)
}

// AdvisoryUnlock releases one session-level acquisition of key in the mode
// given (pg_advisory_unlock / pg_advisory_unlock_shared) and reports
// whether there was one: false — PostgreSQL's "you don't own a lock of type
// ExclusiveLock" warning — if the session holds no session-level lock of
// that mode on key. Transaction-level locks are not released by it. Waiters
// that can now be granted are woken. ErrTxBusy or ErrInvalid (a bad key) as
// for the other calls.
func (s *Session) AdvisoryUnlock(key AdvisoryKey, shared bool) (bool, error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	defer s.exit()
	if err := key.check(); err != nil {
		return false, err
	}
	return s.s.AdvisoryUnlock(key.tag, shared), nil
}

// AdvisoryUnlockAll releases every session-level advisory lock of the
// session (pg_advisory_unlock_all); transaction-level ones stay until their
// transaction ends.
func (s *Session) AdvisoryUnlockAll() error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.exit()
	s.s.AdvisoryUnlockAll()
	return nil
}

// Close ends the session as a connection's end does: it rolls back its open
// transaction and releases all its advisory locks. Idempotent; the session
// refuses further calls (ErrInvalid, 22023). It fails with ErrTxBusy while
// another call of the session runs.
func (s *Session) Close() error {
	if !s.busy.CompareAndSwap(false, true) {
		return errs.Op(ErrTxBusy, "tupled: session is in use by another call (a Session must not be used concurrently)")
	}
	defer s.busy.Store(false)
	s.s.Close()
	return nil
}
