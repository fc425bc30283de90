package pgerror

import "fmt"

// SQLSTATEs the SQL layer produces itself (PostgreSQL's errcodes.txt names
// them; an engine error brings its own through tupled.SQLState).
const (
	CodeSyntax                  = "42601"
	CodeUndefinedTable          = "42P01"
	CodeDuplicateTable          = "42P07"
	CodeDuplicateAlias          = "42712"
	CodeUndefinedColumn         = "42703"
	CodeUndefinedFunction       = "42883"
	CodeAmbiguousFunction       = "42725"
	CodeUndefinedObject         = "42704"
	CodeInvalidName             = "42602"
	CodeAmbiguousColumn         = "42702"
	CodeGrouping                = "42803"
	CodeInvalidObjectDefinition = "42P17"
	CodeWindowing               = "42P20"
	CodeInvalidRegex            = "2201B"
	CodeNullValueNotAllowed     = "22004" // null_value_not_allowed
	CodeInvalidEscape           = "22025"
	CodeInvalidEscapeUse        = "2200C"
	// window functions' argument errors
	CodeInvalidPrecedingOrFollowing = "22013"
	CodeInvalidArgumentForNtile     = "22014"
	CodeInvalidArgumentForNthValue  = "22016"
	CodeCardinality                 = "21000"
	CodeSubstringError              = "22011"
	CodeProgramLimit                = "54000"
	CodeDatetimeRange               = "22008"
	CodeIntervalFieldOverflow       = "22015" // interval_field_overflow: an interval input field out of range
	CodeDuplicateCursor             = "42P03"
	CodeObjectNotInState            = "55000"
	CodeInvalidArgument             = "2201F"
	CodeInvalidLog                  = "2201E"
	CodeInvalidPower                = "2201F"
	CodeWrongObjectType             = "42809"
	CodeDatatypeMismatch            = "42804"
	CodeIndeterminateType           = "42P18"
	CodeInvalidColumnRef            = "42P10"
	CodeDuplicateColumn             = "42701"
	CodeInvalidTableDef             = "42P16"
	CodeFeatureNotSupp              = "0A000"
	CodeInvalidText                 = "22P02"
	CodeInvalidBinary               = "22P03"
	CodeNumericRange                = "22003"
	CodeDivisionByZero              = "22012"
	CodeNotNull                     = "23502"
	CodeUniqueViolation             = "23505"
	CodeInFailedTx                  = "25P02"
	CodeActiveTx                    = "25001"
	CodeNoActiveTx                  = "25P01"
	CodeInvalidSavepoint            = "3B001"
	CodeInvalidParamValue           = "22023"
	CodeCantChangeRuntime           = "55P02"
	CodeQueryCanceled               = "57014"
	CodeProtocolViolation           = "08P01"
	CodeInternal                    = "XX000"
	CodeDataCorrupted               = "XX001"
	CodeUndefinedPrepared           = "26000"
	CodeInvalidCursor               = "34000"
	CodeDuplicatePrepared           = "42P05"
	CodeInvalidParamNumber          = "08P01"
	CodeCheckViolation              = "23514" // check_violation
	CodeBadCopyFormat               = "22P04" // bad_copy_file_format
	CodeDatetimeFormat              = "22007" // invalid_datetime_format: a malformed date or time

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
	// message and DETAIL, then clears. pgwire does not read it.
	Cause error
}

// Error returns the message, so an *Error is an error.
func (e *Error) Error() string { return e.Message }

// Errorf returns an ERROR of SQLSTATE code with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotSupported returns a feature_not_supported (0A000) error naming the
// construct.
func NotSupported(format string, args ...any) *Error {
	return &Error{Code: CodeFeatureNotSupp, Message: fmt.Sprintf(format, args...)}
}

// WithHint sets the HINT field and returns e.
func (e *Error) WithHint(h string) *Error {
	e.Hint = h
	return e
}

// At sets the error's position to loc, a 0-based offset in the query text
// (a parse node's Location), unless loc is negative (none) or a position is
// already set; it returns e.
func (e *Error) At(loc int32) *Error {
	if loc >= 0 && e.Position == 0 {
		e.Position = loc + 1
	}
	return e
}
