package eval

import (
	"time"

	"github.com/tupled/tupled/sql/types"
)

// Context is what a function reads of the session that evaluates it. It
// is kept small on purpose: a function that needs more of the session
// (its settings to change, its transaction, the engine) is not eval's but
// sqlfe's. sqlfe's env provides it.
//
// The session's TimeZone is UTC, its DateStyle ISO and its IntervalStyle
// postgres, fixed (sqlfe reports them, SET cannot change them), so no
// function here takes them: timestamptz arithmetic is in UTC.
type Context interface {
	// TxStart is the start of the statement's transaction, now()'s
	// value (the first call may begin the transaction).
	TxStart() time.Time
}

// Builtin is a function of fixed argument types, resolved by name alone:
// the arguments are cast to Args (an integer to another width, a
// character(n) to text) before Fn runs. Fn sees NULL arguments: a strict
// function answers NULL for them itself.
type Builtin struct {
	Args []types.Type
	Ret  types.Type
	Fn   func(ctx Context, args []types.Value) (types.Value, error)
}

// Builtins are the fixed-signature functions, by name; filled by init
// functions, read-only after init. sqlfe's funcCall looks a name up here
// after its own functions (those reading the session).
var Builtins = map[string]Builtin{}
