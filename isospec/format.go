package isospec

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/tupled/tupled"
)

// The result forms printed after a step line. Every result line starts with
// "=> " so results stand apart from isolationtester's own lines.
const (
	resultPrefix = "=> "
	notFoundLine = "=> not found"
	conflictLine = "=> conflict" // upsert: nothing inserted or updated
	skippedLine  = "=> skipped"
	noRowsLine   = "=> (no rows)"
	noLocksLine  = "=> (no row locks)"
)

// FormatText prints a key or value: bare when it is a plain token, otherwise
// single-quoted (a quote inside doubled), as the step language reads it.
func FormatText(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\r\n:'\"#;") || strings.HasPrefix(s, "--") {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return s
}

// ValueLine is the result of a get or lock that returned a value.
func ValueLine(v string) string { return resultPrefix + FormatText(v) }

// KV is one row of a scan result.
type KV struct{ Key, Value string }

// ScanLine is the result of a scan: key:value pairs in scan order.
func ScanLine(rows []KV) string {
	if len(rows) == 0 {
		return noRowsLine
	}
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = FormatText(r.Key) + ":" + FormatText(r.Value)
	}
	return resultPrefix + strings.Join(parts, " ")
}

// Locker is one live locker of a row, named by session.
type Locker struct {
	Session string
	Mode    string // keyshare, share, nokeyupdate, update
}

// RowLockLine is one row of a rowlocks result: key, "multi" when xmax is a
// multixact, then session:mode for each live locker, sorted by session.
func RowLockLine(key string, multi bool, lockers []Locker) string {
	sort.SliceStable(lockers, func(i, j int) bool {
		if lockers[i].Session != lockers[j].Session {
			return lockers[i].Session < lockers[j].Session
		}
		return modeRank(lockers[i].Mode) < modeRank(lockers[j].Mode)
	})
	var b strings.Builder
	b.WriteString(resultPrefix)
	b.WriteString(FormatText(key))
	if multi {
		b.WriteString(" multi")
	}
	for _, l := range lockers {
		b.WriteString(" " + l.Session + ":" + l.Mode)
	}
	return b.String()
}

func modeRank(m string) int {
	if s, ok := strengths[m]; ok {
		return int(s)
	}
	return 99
}

// ErrorLine is how an error is printed: isolationtester's "ERROR:  message"
// followed by the SQLSTATE in parentheses.
func ErrorLine(msg, state string) string {
	if state == "" {
		return "ERROR:  " + msg
	}
	return fmt.Sprintf("ERROR:  %s (%s)", msg, state)
}

// sqlCommandName is PostgreSQL's CreateCommandName of the command's twin, used
// in "cannot execute %s in a read-only transaction".
func sqlCommandName(c *Command) string {
	switch c.Kind {
	case CmdInsert:
		return "INSERT"
	case CmdUpdate:
		return "UPDATE"
	case CmdDelete:
		return "DELETE"
	case CmdLock, CmdScan:
		if c.Strength != tupled.NoLock {
			return "SELECT " + strings.ToUpper(c.Strength.String())
		}
		return "SELECT"
	case CmdCreate:
		return "CREATE TABLE"
	case CmdUpsert:
		return "INSERT"
	case CmdRollbackTo:
		return "ROLLBACK TO SAVEPOINT"
	case CmdRelease:
		return "RELEASE SAVEPOINT"
	case CmdLockTable:
		return "LOCK TABLE"
	case CmdFK:
		return "ALTER TABLE"
	}
	return strings.ToUpper(c.Kind.String())
}

// PGError returns the PostgreSQL message text and SQLSTATE for an error that a
// command got from tupled: the text PostgreSQL 15 prints for the same failure.
func PGError(err error, c *Command) (msg, state string) {
	state = tupled.SQLState(err)
	switch {
	case errors.Is(err, tupled.ErrLockNotAvailable) && c.Kind == CmdLockTable:
		msg = fmt.Sprintf("could not obtain lock on relation %q", c.Table)
	case errors.Is(err, tupled.ErrLockNotAvailable):
		msg = fmt.Sprintf("could not obtain lock on row in relation %q", c.Table)
	case errors.Is(err, tupled.ErrLockTimeout):
		msg = "canceling statement due to lock timeout"
	case errors.Is(err, tupled.ErrDeadlock):
		msg = "deadlock detected"
	case errors.Is(err, tupled.ErrSerialization):
		msg = "could not serialize access due to concurrent update"
	case errors.Is(err, tupled.ErrDuplicateKey):
		msg = "duplicate key value violates unique constraint"
	case errors.As(err, new(*tupled.ForeignKeyError)):
		var fe *tupled.ForeignKeyError
		errors.As(err, &fe)
		msg = fe.Error()
	case errors.Is(err, tupled.ErrTxAborted):
		msg = "current transaction is aborted, commands ignored until end of transaction block"
	case errors.Is(err, tupled.ErrReadOnly):
		msg = fmt.Sprintf("cannot execute %s in a read-only transaction", sqlCommandName(c))
	case errors.Is(err, tupled.ErrTableExists):
		msg = fmt.Sprintf("relation %q already exists", c.Table)
	case errors.Is(err, tupled.ErrNoTable):
		msg = fmt.Sprintf("relation %q does not exist", c.Table)
	case state == "57014" && errors.Is(err, context.DeadlineExceeded):
		msg = "canceling statement due to statement timeout"
	case state == "57014" || errors.Is(err, context.Canceled):
		msg, state = "canceling statement due to user request", "57014"
	default:
		msg = err.Error()
	}
	return msg, state
}
