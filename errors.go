package tupled

import "github.com/tupled/tupled/internal/errs"

// Error is what PostgreSQL's ErrorResponse says about an error, in the
// spirit of pgconn's PgError: every error this package returns that has a
// SQLSTATE — directly, or wrapped by the caller with fmt.Errorf's %w —
// can be read into one with errors.As:
//
//	var e *tupled.Error
//	if errors.As(err, &e) {
//		log.Printf("%s: %s (table %q, constraint %q) %s", e.Code, e.Message, e.Table, e.Constraint, e.Detail)
//	}
//
// errors.As makes a new *Error describing err; the sentinels keep working
// (errors.Is(err, ErrDeadlock), errors.Is(e, ErrDeadlock), errors.As into
// a *ForeignKeyError), since Unwrap returns the error described. An error
// without a SQLSTATE (ErrNotFound, ErrSkipped, ErrTxDone, ErrClosed
// outside a wait, a Scan callback's own error) is not an Error: errors.As
// reports false. Error() is the error's own text, unchanged.
type Error struct {
	Code    string // SQLSTATE, as SQLState(err): "23505", "40P01", ...
	Message string // the error's text (PostgreSQL's wording where it has one)
	// Detail is PostgreSQL's DETAIL: for a unique violation "Key
	// (key)=(alice) already exists." (an index names itself in place of
	// key), for a foreign key violation "Key (key)=(bob) is not present
	// in table "customers"." or "... is still referenced from table
	// "orders"."; keys print as text when they are printable UTF-8,
	// else as \x and their hex bytes (PostgreSQL's bytea form).
	Detail string
	Hint   string // PostgreSQL's HINT, when there is one
	// Table is the table the error is about: the table of a unique or
	// row-lock (NOWAIT) violation or of a table lock NOWAIT refused, the
	// referencing table of a foreign key violation (in both directions,
	// as PostgreSQL reports it). "" when no one table is concerned.
	Table string
	// Constraint is the violated constraint: "<table>_pkey" for the
	// primary key, the index's name for a unique index, the foreign key's
	// Name for a foreign key violation.
	Constraint string

	err error // the error described
}

// Error returns the described error's text.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the error described, so errors.Is and errors.As see
// through an *Error to the sentinel (and to ctx's error for 57014).
func (e *Error) Unwrap() error { return e.err }

// SQLState returns Code, as pgconn's PgError.SQLState does, for code that
// checks interface{ SQLState() string }.
func (e *Error) SQLState() string { return e.Code }

func init() {
	errs.Public = func(target any, err errs.Described) bool {
		p, ok := target.(**Error)
		if !ok {
			return false
		}
		f := err.PgFields()
		if f.Code == "" {
			return false
		}
		*p = &Error{Code: f.Code, Message: f.Message, Detail: f.Detail, Hint: f.Hint, Table: f.Table, Constraint: f.Constraint, err: err}
		return true
	}
}

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
	ErrNotFound = errs.ErrNotFound
	// ErrSkipped: Lock with SkipLocked found the row locked in a
	// conflicting strength (a locking Scan leaves such rows out instead).
	// No SQLSTATE; the transaction stays usable.
	ErrSkipped = errs.ErrSkipped
	// ErrDuplicateKey: Insert of a key that a live row has, possibly after
	// waiting for its in-progress inserter (SQLSTATE 23505,
	// unique_violation).
	ErrDuplicateKey = errs.ErrDuplicateKey
	// ErrDeadlock: the transaction was chosen as the victim of a deadlock
	// (SQLSTATE 40P01, deadlock_detected). Retryable: see IsRetryable.
	ErrDeadlock = errs.ErrDeadlock
	// ErrSerialization: under REPEATABLE READ, a row the transaction locks,
	// updates or deletes was changed by a transaction its snapshot cannot
	// see (SQLSTATE 40001, serialization_failure). Retryable.
	ErrSerialization = errs.ErrSerialization
	// ErrLockNotAvailable: a request with NoWait found the row locked in a
	// conflicting strength (SQLSTATE 55P03, lock_not_available).
	ErrLockNotAvailable = errs.ErrLockNotAvailable
	// ErrLockTimeout: a lock wait lasted longer than the LockTimeout
	// (SQLSTATE 55P03, as PostgreSQL's lock_timeout).
	ErrLockTimeout = errs.ErrLockTimeout
	// ErrTxAborted: a call on a transaction that an earlier error aborted;
	// only Rollback (or Commit, which then rolls back and returns this
	// error) ends it, or, when the error came under a savepoint, RollbackTo
	// makes it usable again (SQLSTATE 25P02, in_failed_sql_transaction).
	ErrTxAborted = errs.ErrTxAborted
	// ErrNoSavepoint: RollbackTo or Release names no open savepoint
	// (SQLSTATE 3B001, invalid_savepoint_specification).
	ErrNoSavepoint = errs.ErrNoSavepoint
	// ErrBulkRefused: Tx.BulkLoad cannot load the table (indexes, foreign
	// keys, an open savepoint, rows already there); the transaction is
	// left as it was (SQLSTATE 55000, object_not_in_prerequisite_state).
	ErrBulkRefused = errs.ErrBulkRefused
	// ErrTxDone: a call on a transaction after its Commit or Rollback. No
	// SQLSTATE.
	ErrTxDone = errs.ErrTxDone
	// ErrReadOnly: a write or lock in a transaction begun with
	// TxOptions.ReadOnly (SQLSTATE 25006, read_only_sql_transaction).
	ErrReadOnly = errs.ErrReadOnly
	// ErrTableExists: CreateTable of a name that exists (SQLSTATE 42P07,
	// duplicate_table).
	ErrTableExists = errs.ErrTableExists
	// ErrNoTable: an operation names a table that does not exist (SQLSTATE
	// 42P01, undefined_table).
	ErrNoTable = errs.ErrNoTable
	// ErrClosed: a call on a closed (or closing) database. No SQLSTATE of
	// its own; a lock wait ended by Close returns an error that matches
	// ErrClosed and has SQLSTATE 57P01 (admin_shutdown).
	ErrClosed = errs.ErrClosed
	// ErrInvalid: an invalid argument or option — an unknown lock
	// strength, wait policy, isolation level or backend, a negative
	// timeout or Limit, an empty table name (SQLSTATE 22023,
	// invalid_parameter_value).
	ErrInvalid = errs.ErrInvalid
	// ErrIO: the WAL or the backend failed (SQLSTATE 58030, io_error); the
	// database refuses writes until it is reopened (recovery decides the
	// fate of the commit that was in flight), and, with SyncCommit off,
	// reads too. Open returns it when a database cannot be opened for a
	// reason other than damage.
	ErrIO = errs.ErrIO
	// ErrCorrupted: stored data is damaged (a value failing its checksum,
	// a backend or WAL file that is damaged, rolled back or missing, a bad
	// control file). The message names what is damaged; nothing damaged is
	// ever returned as data. SQLSTATE XX001, PostgreSQL's data_corrupted.
	// After a read meets damage the database refuses every operation
	// until it is reopened; Verify and Salvage are the way forward.
	ErrCorrupted = errs.ErrCorrupted
	// ErrTxBusy: a call on a Tx while another call on it is running (from
	// another goroutine). A Tx is one session: see Tx. SQLSTATE 55000
	// (object_not_in_prerequisite_state); the call did nothing, and the
	// transaction is not aborted.
	ErrTxBusy = errs.ErrTxBusy
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
	ErrDiskFull = errs.ErrDiskFull
)

// SQLState returns the PostgreSQL SQLSTATE of err, or "" for nil or an error
// that has none. It looks through wrapping (errors.As), so an error from
// this package keeps its code when a caller wraps it with fmt.Errorf's %w.
// A wait ended by its context has 57014 (query_canceled), and
// errors.Is(err, ctx.Err()) holds for it.
func SQLState(err error) string { return errs.SQLState(err) }

// IsRetryable reports whether the whole transaction may succeed if retried
// from its start in a new transaction: err is (or wraps) ErrDeadlock
// (40P01) or ErrSerialization (40001). DB.RunTx retries exactly these.
func IsRetryable(err error) bool { return errs.IsRetryable(err) }
