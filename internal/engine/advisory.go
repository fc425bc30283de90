package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/lockmgr"
)

// Session is PostgreSQL's backend as far as advisory locks go: the owner of
// session-level advisory locks, which outlive its transactions, and of the
// transaction-level ones of the transactions begun through it (Begin). It
// runs one transaction at a time; the lock manager sees it and that
// transaction as one node of the wait-for graph (lockmgr/advisory.go). Its
// methods are called by one goroutine at a time, like a Tx's.
type Session struct {
	e   *Engine
	ls  *lockmgr.SessionOwner
	cur atomic.Pointer[Tx] // the open transaction begun through Begin, or nil

	mu     sync.Mutex
	closed bool
}

// AdvisoryKey names an advisory lock in the lock manager: a lockmgr tag of
// kind TagAdvisory (pg_advisory_lock's bigint, or its int4 pair).
type AdvisoryKey = lockmgr.Tag

// AdvisoryKeyInt64 is the key of pg_advisory_lock(key).
func AdvisoryKeyInt64(key int64) AdvisoryKey { return lockmgr.AdvisoryKeyTag(key) }

// AdvisoryKeyPair is the key of pg_advisory_lock(key1, key2).
func AdvisoryKeyPair(key1, key2 int32) AdvisoryKey { return lockmgr.AdvisoryPairTag(key1, key2) }

// IsAdvisoryKey reports whether k is an advisory lock's key (the zero value
// is not).
func IsAdvisoryKey(k AdvisoryKey) bool { return k.Kind == lockmgr.TagAdvisory }

var sessionIDs atomic.Uint64

// NewSession returns a new session. It costs one small allocation and
// registers nothing.
func (e *Engine) NewSession() *Session {
	return &Session{e: e, ls: e.locks.NewSession(sessionIDs.Add(1))}
}

// ID is the session's id, unique in the process; LockInfo.Session names it.
func (s *Session) ID() uint64 { return s.ls.ID() }

var (
	errSessionBusy   = errs.Op(errs.ErrTxBusy, "tupled: the session is already running a transaction (a Session runs one at a time)")
	errSessionClosed = errs.Op(errs.ErrInvalid, "tupled: the session is closed")
)

// Begin starts a transaction of the session: its transaction-level advisory
// locks are the session's, and a wait of either is seen through the other.
// ErrTxBusy (55000) if the session's previous transaction has not ended.
func (s *Session) Begin(o TxOptions) (*Tx, error) {
	tx := new(Tx)
	if err := s.BeginIn(tx, o); err != nil {
		return nil, err
	}
	return tx, nil
}

// BeginIn is Begin in memory the caller provides, as Engine.BeginIn.
func (s *Session) BeginIn(tx *Tx, o TxOptions) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errSessionClosed
	}
	if t := s.cur.Load(); t != nil && !t.ended() {
		return errSessionBusy
	}
	if err := s.e.BeginIn(tx, o); err != nil {
		return err
	}
	tx.sess = s
	tx.adv = &s.ls.Owner
	s.cur.Store(tx)
	s.ls.SetXact(tx.proc)
	return nil
}

// Close rolls back the session's open transaction and releases every
// advisory lock of the session, as a backend's exit does. Idempotent.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	if t := s.cur.Load(); t != nil {
		t.Rollback()
	}
	s.ls.UnlockAll(lockmgr.XactLevel)
	s.ls.UnlockAll(lockmgr.SessionLevel)
}

// AdvisoryLock takes a session-level advisory lock (pg_advisory_lock,
// pg_try_advisory_lock and their _shared forms). With nowait it returns
// false, holding nothing, if the lock is not available at once; otherwise
// it blocks until granted (true) or until the wait fails: errs.ErrDeadlock
// (40P01), errs.ErrLockTimeout (55P03, after the lock timeout of the
// session's open transaction), ctx's error (57014), ErrClosed. If the
// session has an open transaction, the request runs inside it, as the SQL
// call does: the wait is the transaction's for the deadlock detector, and a
// failed wait aborts the transaction; an aborted transaction refuses the
// call (25P02).
func (s *Session) AdvisoryLock(ctx context.Context, tag lockmgr.Tag, shared, nowait bool) (bool, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return false, errSessionClosed
	}
	if tx := s.cur.Load(); tx != nil && !tx.ended() {
		return tx.advisoryLock(ctx, tag, shared, nowait, lockmgr.SessionLevel)
	}
	if s.e.closed.Load() {
		return false, errs.ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return false, errs.Canceled(err)
	}
	err := s.ls.Lock(ctx, tag, advisoryMode(shared), lockmgr.SessionLevel, lockmgr.Wait{NoWait: nowait, Timeout: s.e.cfg.LockTimeout})
	if nowait && errors.Is(err, lockmgr.ErrWouldBlock) {
		return false, nil
	}
	if err != nil {
		return false, waitError(ctx, err)
	}
	return true, nil
}

// AdvisoryUnlock releases one session-level acquisition (pg_advisory_unlock
// and _shared); false if the session holds none in that mode (PostgreSQL
// warns "you don't own a lock of type ExclusiveLock"/"ShareLock").
func (s *Session) AdvisoryUnlock(tag lockmgr.Tag, shared bool) bool {
	return s.ls.Unlock(tag, advisoryMode(shared))
}

// AdvisoryUnlockAll releases every session-level advisory lock of the
// session (pg_advisory_unlock_all); transaction-level ones stay.
func (s *Session) AdvisoryUnlockAll() { s.ls.UnlockAll(lockmgr.SessionLevel) }

func advisoryMode(shared bool) lockmgr.LockMode {
	if shared {
		return lockmgr.ShareLock
	}
	return lockmgr.ExclusiveLock
}

// waitError is the API error of a failed lock-manager wait outside a
// transaction (Tx.Fail's mapping, without the abort).
func waitError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, lockmgr.ErrDeadlock):
		return errs.ErrDeadlock
	case errors.Is(err, lockmgr.ErrLockTimeout):
		return errs.ErrLockTimeout
	case errors.Is(err, lockmgr.ErrShutdown):
		return &errs.OpError{Sentinel: errs.ErrClosed, Msg: "terminating connection due to administrator command: the database is closing", Cause: errs.ErrAdminShutdown}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		cause := ctx.Err()
		if cause == nil {
			cause = err
		}
		return errs.Canceled(cause)
	}
	return err
}

// AdvisoryLock takes a transaction-level advisory lock
// (pg_advisory_xact_lock, pg_try_advisory_xact_lock and _shared), released
// when the transaction ends. Results as Session.AdvisoryLock; a failed wait
// aborts the transaction. A transaction begun through a Session takes it as
// the session's (it never conflicts with the session's own locks).
func (tx *Tx) AdvisoryLock(ctx context.Context, tag lockmgr.Tag, shared, nowait bool) (bool, error) {
	return tx.advisoryLock(ctx, tag, shared, nowait, lockmgr.XactLevel)
}

func (tx *Tx) advisoryLock(ctx context.Context, tag lockmgr.Tag, shared, nowait bool, lvl lockmgr.Level) (bool, error) {
	if err := tx.check(ctx); err != nil {
		return false, err
	}
	tx.mu.Lock()
	if tx.adv == nil {
		tx.adv = tx.e.locks.TxOwner(tx.proc)
	}
	adv := tx.adv
	tx.mu.Unlock()
	err := adv.Lock(ctx, tag, advisoryMode(shared), lvl, lockmgr.Wait{NoWait: nowait, Timeout: tx.lockTO})
	if nowait && errors.Is(err, lockmgr.ErrWouldBlock) {
		return false, nil
	}
	if err != nil {
		return false, tx.Fail(ctx, err)
	}
	if lvl == lockmgr.XactLevel {
		tx.mu.Lock()
		if len(tx.savepoints) > 0 {
			// Released again if the savepoint rolls back (savepoint.go).
			tx.advTaken = append(tx.advTaken, advTake{tag, advisoryMode(shared)})
		}
		tx.mu.Unlock()
	}
	return true, nil
}

// advTake is one transaction-level advisory acquisition made under a
// savepoint.
type advTake struct {
	tag  lockmgr.Tag
	mode lockmgr.LockMode
}

// releaseAdvisoryFrom releases the transaction-level advisory locks taken
// since advTaken had n entries (a rolled-back savepoint's), newest first.
// tx.mu held.
func (tx *Tx) releaseAdvisoryFrom(n int) {
	for i := len(tx.advTaken) - 1; i >= n; i-- {
		tx.adv.UnlockXact(tx.advTaken[i].tag, tx.advTaken[i].mode)
	}
	clear(tx.advTaken[n:])
	tx.advTaken = tx.advTaken[:n]
}

// check is start without the snapshot: whether tx can run an operation.
func (tx *Tx) check(ctx context.Context) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.liveLocked(ctx)
}

// Finished reports whether tx has ended with Commit or Rollback (not
// merely been aborted by an error, which leaves it to be rolled back): a
// Tx BeginIn may reuse.
func (tx *Tx) Finished() bool {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.state == txDone
}

func (tx *Tx) ended() bool {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	return tx.state != txActive
}

// endAdvisory runs at the transaction's end (commit or abort, tx.mu held):
// it releases its transaction-level advisory locks and unlinks it from its
// session. Only transactions that took an advisory lock or belong to a
// Session get here.
func (tx *Tx) endAdvisory() {
	if tx.sess != nil {
		tx.sess.ls.SetXact(nil)
	}
	if tx.adv != nil {
		tx.adv.UnlockAll(lockmgr.XactLevel)
	}
}
