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
//
// Every error type here (and engine.FKError) has an As method that lets
// errors.As fill in package tupled's exported *tupled.Error from the
// error's ErrorResponse fields ([Fields]) when it has a SQLSTATE: package
// tupled installs [Public] at init, since this package cannot name its
// type. Invariant: an As method answers only that target, so errors.As
// with any other target (and SQLState) behaves as if there were none, and
// the *tupled.Error it makes says Error() exactly what the error says.
package errs

import (
	"context"
	"encoding/hex"
	"errors"
	"unicode"
	"unicode/utf8"
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
	ErrBulkRefused          = New("55000", "cannot bulk-load this table")
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

// PgFields implements Described.
func (e *StateError) PgFields() Fields { return Fields{Code: e.state, Message: e.msg} }

// As lets errors.As find a *tupled.Error (see Public).
func (e *StateError) As(target any) bool { return AsPublic(target, e) }

// OpError decorates a sentinel with context (the relation, the key) while
// keeping errors.Is(err, Sentinel) and SQLState(err) working.
type OpError struct {
	Sentinel error
	Msg      string // replaces the sentinel's text (PostgreSQL's message naming the relation)
	Cause    error  // optional second error matched by errors.Is (ctx's error)
	// PostgreSQL's ErrorResponse fields beyond the message, for
	// *tupled.Error; none of them is part of Error()'s text.
	Detail, Hint, Table, Constraint string
}

func (e *OpError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Sentinel.Error()
}

// PgFields implements Described: the code is SQLState's (the sentinel's,
// or the Cause's when the sentinel has none).
func (e *OpError) PgFields() Fields {
	return Fields{Code: SQLState(e), Message: e.Error(), Detail: e.Detail, Hint: e.Hint, Table: e.Table, Constraint: e.Constraint}
}

// As lets errors.As find a *tupled.Error (see Public).
func (e *OpError) As(target any) bool { return AsPublic(target, e) }

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

// PgFields implements Described.
func (e *CanceledError) PgFields() Fields { return Fields{Code: "57014", Message: e.Error()} }

// As lets errors.As find a *tupled.Error (see Public).
func (e *CanceledError) As(target any) bool { return AsPublic(target, e) }

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

// Fields are what a PostgreSQL ErrorResponse says about an error: package
// tupled's exported Error carries them. Code is the SQLSTATE ("" for an
// error that has none), Message the error's text; the others are "" when
// they do not apply.
type Fields struct {
	Code, Message, Detail, Hint, Table, Constraint string
}

// Described is an error that knows its Fields.
type Described interface {
	error
	PgFields() Fields
}

// Public, installed by package tupled at init, sets target to a new
// *tupled.Error describing err and reports true when target is a
// **tupled.Error and err has a SQLSTATE; otherwise it reports false and
// leaves target alone. It is nil in a program that does not link package
// tupled (this package's and the engine's own tests).
var Public func(target any, err Described) bool

// AsPublic is the As method of every Described error: errors.As(err,
// &tupledErr) succeeds through it.
func AsPublic(target any, err Described) bool { return Public != nil && Public(target, err) }

// KeyText renders a key for a DETAIL: as text when it is printable UTF-8,
// else in PostgreSQL's bytea hex form (\x0102…).
func KeyText(b []byte) string {
	if utf8.Valid(b) {
		printable := true
		for _, r := range string(b) {
			if !unicode.IsPrint(r) {
				printable = false
				break
			}
		}
		if printable {
			return string(b)
		}
	}
	return `\x` + hex.EncodeToString(b)
}
