// Package errs is the error vocabulary shared by the embedded API (package
// tupled) and the engine machinery under it (engine, durable): sentinel
// errors that carry PostgreSQL's SQLSTATE, the decoration that names the
// relation or key while still matching the sentinel, and the error of a
// wait its context ended.
//
// Package tupled re-exports every sentinel under the same name, with the
// contract users read (its errors.go); the engine packages return them so
// that no layer translates errors on the way up. Only the module's own
// packages can import it (internal/).
package errs

import (
	"context"
	"errors"
)

// Sentinels (see package tupled's errors.go for what each means to a caller).
var (
	ErrNotFound             = errors.New("tupled: row not found")
	ErrSkipped              = errors.New("tupled: row skipped (locked by another transaction)")
	ErrDuplicateKey         = New("23505", "duplicate key value violates unique constraint")
	ErrDeadlock             = New("40P01", "deadlock detected")
	ErrSerialization        = New("40001", "could not serialize access due to concurrent update")
	ErrLockNotAvailable     = New("55P03", "could not obtain lock on row")
	ErrLockTimeout          = New("55P03", "canceling statement due to lock timeout")
	ErrTxAborted            = New("25P02", "current transaction is aborted, commands ignored until end of transaction block")
	ErrTxDone               = errors.New("tupled: transaction has already been committed or rolled back")
	ErrReadOnly             = New("25006", "cannot execute in a read-only transaction")
	ErrTableExists          = New("42P07", "relation already exists")
	ErrNoTable              = New("42P01", "relation does not exist")
	ErrClosed               = errors.New("tupled: database is closed")
	ErrInvalid              = New("22023", "invalid parameter value")
	ErrIO                   = New("58030", "I/O error")
	ErrCorrupted            = New("XX001", "data corrupted")
	ErrTxBusy               = New("55000", "tupled: transaction is in use by another call (a Tx must not be used concurrently)")
	ErrDiskFull             = New("53100", "could not write: no space left on device")
	ErrProgramLimitExceeded = New("54000", "program limit exceeded")
	ErrNameTooLong          = New("42622", "identifier too long")
	ErrObjectInUse          = New("55006", "object is in use")
	ErrNoSavepoint          = New("3B001", "savepoint does not exist")
)

// ErrAdminShutdown gives a wait ended by Close its SQLSTATE (the error also
// matches ErrClosed).
var ErrAdminShutdown = New("57P01", "terminating connection due to administrator command")

// StateError is a sentinel that carries a SQLSTATE.
type StateError struct {
	state string
	msg   string
}

// New returns a sentinel with SQLSTATE state and message msg.
func New(state, msg string) *StateError { return &StateError{state: state, msg: msg} }

func (e *StateError) Error() string { return e.msg }

// OpError decorates a sentinel with context (the relation, the key) while
// keeping errors.Is(err, Sentinel) and SQLState(err) working.
type OpError struct {
	Sentinel error
	Msg      string // replaces the sentinel's text (PostgreSQL's message naming the relation)
	Detail   string // appended to the sentinel's text when Msg is empty
	Cause    error  // optional second error matched by errors.Is (ctx's error)
}

func (e *OpError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	if e.Detail == "" {
		return e.Sentinel.Error()
	}
	return e.Sentinel.Error() + ": " + e.Detail
}

func (e *OpError) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Sentinel, e.Cause}
	}
	return []error{e.Sentinel}
}

// Op is &OpError{Sentinel: sentinel, Msg: msg}.
func Op(sentinel error, msg string) error { return &OpError{Sentinel: sentinel, Msg: msg} }

// CanceledError is returned when a wait is ended by its context:
// errors.Is(err, ctx.Err()) holds and SQLState is 57014 (query_canceled).
type CanceledError struct{ Cause error }

func (e *CanceledError) Error() string {
	if errors.Is(e.Cause, context.DeadlineExceeded) {
		return "canceling statement due to statement timeout"
	}
	return "canceling statement due to user request"
}

func (e *CanceledError) Unwrap() error { return e.Cause }

// Canceled is the error of an operation that ctx ended (cause: ctx.Err()).
func Canceled(cause error) error { return &CanceledError{Cause: cause} }

// SQLState returns the PostgreSQL SQLSTATE of err, or "" for nil or an
// error that has none, looking through wrapping.
func SQLState(err error) string {
	if err == nil {
		return ""
	}
	var ce *CanceledError
	if errors.As(err, &ce) {
		return "57014"
	}
	var se *StateError
	if errors.As(err, &se) {
		return se.state
	}
	return ""
}

// IsRetryable reports whether err is (or wraps) ErrDeadlock or
// ErrSerialization.
func IsRetryable(err error) bool {
	return errors.Is(err, ErrDeadlock) || errors.Is(err, ErrSerialization)
}
