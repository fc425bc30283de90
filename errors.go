package tupled

import (
	"context"
	"errors"
)

// Sentinel errors of the embedded API. Test them with errors.Is: the error a
// call returns may carry more text (the relation, the key) and still match
// its sentinel. Each that has a PostgreSQL counterpart answers SQLState with
// the code PostgreSQL uses. Unless said otherwise an error aborts the
// transaction it occurred in (its locks are released when the call returns;
// later calls but Rollback get ErrTxAborted).
var (
	// ErrNotFound: no row of the key is visible to the snapshot (Get,
	// Lock, Update, Delete), or the row was deleted concurrently under
	// READ COMMITTED. No SQLSTATE (SQL reports no row); the transaction
	// stays usable.
	ErrNotFound = errors.New("tupled: row not found")
	// ErrSkipped: Lock with SkipLocked found the row locked in a
	// conflicting strength (a locking Scan leaves such rows out instead).
	// No SQLSTATE; the transaction stays usable.
	ErrSkipped = errors.New("tupled: row skipped (locked by another transaction)")
	// ErrDuplicateKey: Insert of a key that a live row has, possibly after
	// waiting for its in-progress inserter (SQLSTATE 23505,
	// unique_violation).
	ErrDuplicateKey = newStateError("23505", "duplicate key value violates unique constraint")
	// ErrDeadlock: the transaction was chosen as the victim of a deadlock
	// (SQLSTATE 40P01, deadlock_detected). Retryable: see IsRetryable.
	ErrDeadlock = newStateError("40P01", "deadlock detected")
	// ErrSerialization: under REPEATABLE READ, a row the transaction locks,
	// updates or deletes was changed by a transaction its snapshot cannot
	// see (SQLSTATE 40001, serialization_failure). Retryable.
	ErrSerialization = newStateError("40001", "could not serialize access due to concurrent update")
	// ErrLockNotAvailable: a request with NoWait found the row locked in a
	// conflicting strength (SQLSTATE 55P03, lock_not_available).
	ErrLockNotAvailable = newStateError("55P03", "could not obtain lock on row")
	// ErrLockTimeout: a lock wait lasted longer than the LockTimeout
	// (SQLSTATE 55P03, as PostgreSQL's lock_timeout).
	ErrLockTimeout = newStateError("55P03", "canceling statement due to lock timeout")
	// ErrTxAborted: a call on a transaction that an earlier error aborted;
	// only Rollback (or Commit, which then rolls back and returns this
	// error) ends it (SQLSTATE 25P02, in_failed_sql_transaction).
	ErrTxAborted = newStateError("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	// ErrTxDone: a call on a transaction after its Commit or Rollback. No
	// SQLSTATE.
	ErrTxDone = errors.New("tupled: transaction has already been committed or rolled back")
	// ErrReadOnly: a write or lock in a transaction begun with
	// TxOptions.ReadOnly (SQLSTATE 25006, read_only_sql_transaction).
	ErrReadOnly = newStateError("25006", "cannot execute in a read-only transaction")
	// ErrTableExists: CreateTable of a name that exists (SQLSTATE 42P07,
	// duplicate_table).
	ErrTableExists = newStateError("42P07", "relation already exists")
	// ErrNoTable: an operation names a table that does not exist (SQLSTATE
	// 42P01, undefined_table).
	ErrNoTable = newStateError("42P01", "relation does not exist")
	// ErrClosed: a call on a closed (or closing) database. No SQLSTATE of
	// its own; a lock wait ended by Close returns an error that matches
	// ErrClosed and has SQLSTATE 57P01 (admin_shutdown).
	ErrClosed = errors.New("tupled: database is closed")
	// ErrInvalid: an invalid argument or option — an unknown lock
	// strength, wait policy, isolation level or backend, a negative
	// timeout or Limit, an empty table name (SQLSTATE 22023,
	// invalid_parameter_value).
	ErrInvalid = newStateError("22023", "invalid parameter value")
	// ErrIO: the WAL or the backend failed (SQLSTATE 58030, io_error); the
	// database refuses writes until it is reopened (recovery decides the
	// fate of the commit that was in flight), and, with SyncCommit off,
	// reads too. Open returns it when a database cannot be opened for a
	// reason other than damage.
	ErrIO = newStateError("58030", "I/O error")
	// ErrCorrupted: stored data is damaged (a value failing its checksum,
	// a backend or WAL file that is damaged, rolled back or missing, a bad
	// control file). The message names what is damaged; nothing damaged is
	// ever returned as data. SQLSTATE XX001, PostgreSQL's data_corrupted.
	// After a read meets damage the database refuses every operation
	// until it is reopened; Verify and Salvage are the way forward.
	ErrCorrupted = newStateError("XX001", "data corrupted")
	// ErrTxBusy: a call on a Tx while another call on it is running (from
	// another goroutine). A Tx is one session: see Tx. SQLSTATE 55000
	// (object_not_in_prerequisite_state); the call did nothing, and the
	// transaction is not aborted.
	ErrTxBusy = newStateError("55000", "tupled: transaction is in use by another call (a Tx must not be used concurrently)")
	// ErrDiskFull: a write found no space left on the device (SQLSTATE
	// 53100, disk_full). With SyncCommit on, the default, nothing of the
	// call that got it (a commit, CreateTable, or a Begin that had to
	// reserve transaction ids) was made durable (a commit that gets it is rolled back: its WAL record
	// is voided, never replayed) and the database goes on: reads work,
	// and writes work again by themselves once space is freed. With
	// SyncCommit off commits are acknowledged before they are durable, so
	// a failed WAL write (full disk or any other) may have lost
	// acknowledged, visible commits: the database then fails as
	// PostgreSQL PANICs, every call, reads included, returns ErrIO until
	// it is reopened, and the reopen recovers what was durable.
	ErrDiskFull = newStateError("53100", "could not write: no space left on device")
)

// errAdminShutdown gives a wait ended by Close its SQLSTATE (the error also
// matches ErrClosed).
var errAdminShutdown = newStateError("57P01", "terminating connection due to administrator command")

// stateError is a sentinel that carries a SQLSTATE.
type stateError struct {
	state string
	msg   string
}

func newStateError(state, msg string) *stateError { return &stateError{state: state, msg: msg} }

func (e *stateError) Error() string { return e.msg }

// opError decorates a sentinel with context (the relation, the key) while
// keeping errors.Is(err, sentinel) and SQLState(err) working.
type opError struct {
	sentinel error
	msg      string // replaces the sentinel's text (PostgreSQL's message naming the relation)
	detail   string
	cause    error // optional second error matched by errors.Is (ctx's error)
}

func (e *opError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	if e.detail == "" {
		return e.sentinel.Error()
	}
	return e.sentinel.Error() + ": " + e.detail
}

func (e *opError) Unwrap() []error {
	if e.cause != nil {
		return []error{e.sentinel, e.cause}
	}
	return []error{e.sentinel}
}

// canceledError is returned when a wait is ended by its context: errors.Is(err,
// ctx.Err()) holds and SQLState is 57014 (query_canceled).
type canceledError struct{ cause error }

func (e *canceledError) Error() string {
	if errors.Is(e.cause, context.DeadlineExceeded) {
		return "canceling statement due to statement timeout"
	}
	return "canceling statement due to user request"
}
func (e *canceledError) Unwrap() error { return e.cause }

// SQLState returns the PostgreSQL SQLSTATE of err, or "" for nil or an error
// that has none. It looks through wrapping (errors.As), so an error from
// this package keeps its code when a caller wraps it with fmt.Errorf's %w.
// A wait ended by its context has 57014 (query_canceled), and
// errors.Is(err, ctx.Err()) holds for it.
func SQLState(err error) string {
	if err == nil {
		return ""
	}
	var ce *canceledError
	if errors.As(err, &ce) {
		return "57014"
	}
	var se *stateError
	if errors.As(err, &se) {
		return se.state
	}
	return ""
}

// IsRetryable reports whether the whole transaction may succeed if retried
// from its start in a new transaction: err is (or wraps) ErrDeadlock
// (40P01) or ErrSerialization (40001). DB.RunTx retries exactly these.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrDeadlock) || errors.Is(err, ErrSerialization)
}
