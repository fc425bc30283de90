// Package tuplemode is the engine's one row-lock mode type: PostgreSQL's
// LockTupleMode (heapam.h), with the row-lock conflict table and the
// explicit table to the heavyweight lock a waiter takes on the tuple.
//
// The engine names a row-lock strength in four places, each a different
// concept with its own numbering, and converts between them only through
// tables, never by arithmetic on the numbers:
//
//	tupled.LockStrength     the public API (NoLock, ForKeyShare … ForUpdate)   tupled: lockStrengthMode, modeLockStrength
//	tuplemode.Mode          LockTupleMode: what a locker asks for              (this package)
//	multixact.Status        MultiXactStatus: what a member did (lock or update) multixact: Status.LockMode, StatusFor
//	lockmgr.LockMode        the heavyweight lock on the tuple while waiting    tuplelock: hwMode
//
// Engine machinery, a leaf: imported by heap, multixact, tuplelock,
// internal/engine and the root package only.
package tuplemode

import "fmt"

// Mode is PostgreSQL's LockTupleMode. The order is the strength order:
// a stronger mode conflicts with everything a weaker one does.
type Mode uint8

const (
	KeyShare       Mode = iota // LockTupleKeyShare: FOR KEY SHARE
	Share                      // LockTupleShare: FOR SHARE
	NoKeyExclusive             // LockTupleNoKeyExclusive: FOR NO KEY UPDATE, an UPDATE that keeps the key
	Exclusive                  // LockTupleExclusive: FOR UPDATE, DELETE, an UPDATE of the key

	// NumModes is the number of modes; a Mode below it is valid.
	NumModes = 4
)

var names = [NumModes]string{"LockTupleKeyShare", "LockTupleShare", "LockTupleNoKeyExclusive", "LockTupleExclusive"}

func (m Mode) String() string {
	if m < NumModes {
		return names[m]
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// conflictTable is the row-lock conflict table (requested × held) of
// PostgreSQL's documentation, "Conflicting Row-Level Locks"; symmetric.
var conflictTable = [NumModes][NumModes]bool{
	//              KeyShare Share  NoKeyExcl Excl
	KeyShare:       {false, false, false, true},
	Share:          {false, false, true, true},
	NoKeyExclusive: {false, true, true, true},
	Exclusive:      {true, true, true, true},
}

// Conflicts reports whether a lock of mode a and one of mode b on the same
// row, held by different transactions, conflict.
func Conflicts(a, b Mode) bool { return conflictTable[a][b] }
