package sqlfe

import (
	"context"
	"errors"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/sql/catalog"
	"github.com/tupled/tupled/sql/pgerror"
)

// ToError converts any error (an engine error, a ctx error, an *Error) into an
// *Error with a SQLSTATE and PostgreSQL's message text.
func ToError(err error) *pgerror.Error {
	var e *pgerror.Error
	if errors.As(err, &e) {
		return e
	}
	code := tupled.SQLState(err)
	if code == "" {
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return pgerror.Errorf(pgerror.CodeQueryCanceled, "canceling statement due to statement timeout")
		case errors.Is(err, context.Canceled):
			return pgerror.Errorf(pgerror.CodeQueryCanceled, "canceling statement due to user request")
		case errors.Is(err, tupled.ErrClosed):
			return pgerror.Errorf("57P01", "terminating connection due to administrator command")
		}
		return pgerror.Errorf(pgerror.CodeInternal, "%v", err)
	}
	e = &pgerror.Error{Code: code, Message: err.Error()}
	var fe *tupled.ForeignKeyError
	if errors.As(err, &fe) {
		e.Cause = fe
	}
	return e
}

// fkCause returns the engine foreign key violation e still has to be
// worded from (ToError), or nil.
func fkCause(e *pgerror.Error) *tupled.ForeignKeyError {
	fe, _ := e.Cause.(*tupled.ForeignKeyError)
	return fe
}

// engineError converts an engine error of an operation on table t into
// PostgreSQL's wording, naming the SQL relation (not the engine table).
func engineError(err error, t *catalog.Table) *pgerror.Error {
	switch {
	case errors.Is(err, tupled.ErrLockNotAvailable):
		return pgerror.Errorf("55P03", "could not obtain lock on row in relation %q", t.Name)
	case errors.Is(err, tupled.ErrDuplicateKey):
		if e := indexViolation(err, t); e != nil { // index.go
			return e
		}
		return pgerror.Errorf(pgerror.CodeUniqueViolation, "duplicate key value violates unique constraint %q", t.PrimaryKeyName())
	case errors.Is(err, tupled.ErrNoTable):
		return pgerror.Errorf(pgerror.CodeUndefinedTable, "relation %q does not exist", t.Name)
	}
	return ToError(err)
}
