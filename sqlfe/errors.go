package sqlfe

import (
	"context"
	"errors"
	"fmt"

	"github.com/tupled/tupled"
)

// SQLSTATEs the front end produces itself.
const (
	CodeSyntax             = "42601"
	CodeUndefinedTable     = "42P01"
	CodeDuplicateTable     = "42P07"
	CodeDuplicateAlias     = "42712"
	CodeUndefinedColumn    = "42703"
	CodeUndefinedFunction  = "42883"
	CodeUndefinedObject    = "42704"
	CodeInvalidName        = "42602"
	CodeAmbiguousColumn    = "42702"
	CodeGrouping           = "42803"
	CodeWindowing          = "42P20"
	CodeInvalidRegex       = "2201B"
	CodeInvalidEscape      = "22025"
	CodeCardinality        = "21000"
	CodeSubstringError     = "22011"
	CodeProgramLimit       = "54000"
	CodeDatetimeRange      = "22008"
	CodeDuplicateCursor    = "42P03"
	CodeObjectNotInState   = "55000"
	CodeInvalidArgument    = "2201F"
	CodeInvalidLog         = "2201E"
	CodeInvalidPower       = "2201F"
	CodeWrongObjectType    = "42809"
	CodeDatatypeMismatch   = "42804"
	CodeIndeterminateType  = "42P18"
	CodeInvalidColumnRef   = "42P10"
	CodeDuplicateColumn    = "42701"
	CodeInvalidTableDef    = "42P16"
	CodeFeatureNotSupp     = "0A000"
	CodeInvalidText        = "22P02"
	CodeInvalidBinary      = "22P03"
	CodeNumericRange       = "22003"
	CodeDivisionByZero     = "22012"
	CodeNotNull            = "23502"
	CodeUniqueViolation    = "23505"
	CodeInFailedTx         = "25P02"
	CodeActiveTx           = "25001"
	CodeNoActiveTx         = "25P01"
	CodeInvalidSavepoint   = "3B001"
	CodeInvalidParamValue  = "22023"
	CodeCantChangeRuntime  = "55P02"
	CodeQueryCanceled      = "57014"
	CodeProtocolViolation  = "08P01"
	CodeInternal           = "XX000"
	CodeDataCorrupted      = "XX001"
	CodeUndefinedPrepared  = "26000"
	CodeInvalidCursor      = "34000"
	CodeDuplicatePrepared  = "42P05"
	CodeInvalidParamNumber = "08P01"

	CodeStackDepth               = "54001"
	CodeTooManyColumns           = "54011"
	CodeStringTooLong            = "22001"
	CodeCharacterNotInRepertoire = "22021"
	CodeCannotCoerce             = "42846"
	CodeUndefinedParameter       = "42P02"
	CodeInvalidRowCount          = "2201W"
	CodeInvalidOffset            = "2201X"
	CodeTooManyArguments         = "54023"
)

// Error is a PostgreSQL error or notice: what an ErrorResponse or
// NoticeResponse carries.
type Error struct {
	Severity string // "ERROR" (default), "FATAL", "WARNING", "NOTICE"
	Code     string // SQLSTATE
	Message  string
	Detail   string
	Hint     string
	Position int32  // 1-based character position in the query, 0 = none
	Where    string // the context (ErrorResponse field W): "COPY t, line 3", ...

	// Cause is the engine error this one was made from while the session
	// still has to word it: ToError keeps a *tupled.ForeignKeyError here,
	// which Session.describeFK (sqlfe/fk.go) turns into PostgreSQL's
	// message and DETAIL, then clears. pgwire never sees it set.
	Cause error
}

func (e *Error) Error() string { return e.Message }

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

func notSupported(format string, args ...any) *Error {
	return &Error{Code: CodeFeatureNotSupp, Message: fmt.Sprintf(format, args...)}
}

func (e *Error) hint(h string) *Error {
	e.Hint = h
	return e
}

func (e *Error) at(loc int32) *Error {
	if loc >= 0 && e.Position == 0 {
		e.Position = loc + 1
	}
	return e
}

// ToError converts any error (an engine error, a ctx error, an *Error) into an
// *Error with a SQLSTATE and PostgreSQL's message text.
func ToError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	code := tupled.SQLState(err)
	if code == "" {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return errorf(CodeQueryCanceled, "canceling statement due to statement timeout")
		case errors.Is(err, context.Canceled):
			return errorf(CodeQueryCanceled, "canceling statement due to user request")
		case errors.Is(err, tupled.ErrClosed):
			return errorf("57P01", "terminating connection due to administrator command")
		}
		return errorf(CodeInternal, "%v", err)
	}
	e = &Error{Code: code, Message: err.Error()}
	var fe *tupled.ForeignKeyError
	if errors.As(err, &fe) {
		e.Cause = fe
	}
	return e
}

// fkCause returns the engine foreign key violation e still has to be
// worded from (ToError), or nil.
func fkCause(e *Error) *tupled.ForeignKeyError {
	fe, _ := e.Cause.(*tupled.ForeignKeyError)
	return fe
}

// engineError converts an engine error of an operation on table t into
// PostgreSQL's wording, naming the SQL relation (not the engine table).
func engineError(err error, t *Table) *Error {
	switch {
	case errors.Is(err, tupled.ErrLockNotAvailable):
		return errorf("55P03", "could not obtain lock on row in relation %q", t.Name)
	case errors.Is(err, tupled.ErrDuplicateKey):
		if e := indexViolation(err, t); e != nil { // index.go
			return e
		}
		return errorf(CodeUniqueViolation, "duplicate key value violates unique constraint %q", t.pkeyName())
	case errors.Is(err, tupled.ErrNoTable):
		return errorf(CodeUndefinedTable, "relation %q does not exist", t.Name)
	}
	return ToError(err)
}
