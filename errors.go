package tupled

import (
	"context"
	"errors"
)

// Sentinel errors of the embedded API. Test them with errors.Is; each that has a
// PostgreSQL counterpart answers SQLState with the same code PostgreSQL uses.
var (
	ErrNotFound         = errors.New("tupled: row not found")
	ErrSkipped          = errors.New("tupled: row skipped (locked by another transaction)")
	ErrDuplicateKey     = newStateError("23505", "duplicate key value violates unique constraint")
	ErrDeadlock         = newStateError("40P01", "deadlock detected")
	ErrSerialization    = newStateError("40001", "could not serialize access due to concurrent update")
	ErrLockNotAvailable = newStateError("55P03", "could not obtain lock on row")
	ErrLockTimeout      = newStateError("55P03", "canceling statement due to lock timeout")
	ErrTxAborted        = newStateError("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	ErrTxDone           = errors.New("tupled: transaction has already been committed or rolled back")
	ErrReadOnly         = newStateError("25006", "cannot execute in a read-only transaction")
	ErrTableExists      = newStateError("42P07", "relation already exists")
	ErrNoTable          = newStateError("42P01", "relation does not exist")
	ErrClosed           = errors.New("tupled: database is closed")
	ErrInvalid          = newStateError("22023", "invalid parameter value")
	// ErrIO: the WAL or the backend failed; the database refuses writes
	// until it is reopened (recovery decides the fate of the commit that
	// was in flight).
	ErrIO = newStateError("58030", "I/O error")
	// ErrCorrupted: stored data is damaged (a value failing its checksum,
	// a backend or WAL file that is damaged, rolled back or missing, a bad
	// control file). The message names what is damaged; nothing damaged is
	// ever returned as data. PostgreSQL's data_corrupted.
	ErrCorrupted = newStateError("XX001", "data corrupted")
	// ErrTxBusy: a call on a Tx while another call on it is running (from
	// another goroutine). A Tx is one session: see Tx.
	ErrTxBusy = newStateError("55000", "tupled: transaction is in use by another call (a Tx must not be used concurrently)")
	// ErrDiskFull: a write found no space left on the device (with
	// SyncCommit on, the default). Nothing of the call that got it was
	// made durable (a commit that gets it is rolled back: its WAL record
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
// that has none.
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

// IsRetryable reports whether the whole transaction may succeed if retried:
// deadlock victims and serialization failures.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrDeadlock) || errors.Is(err, ErrSerialization)
}
