package tupled

import (
	"context"

	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/errs"
)

// FKAction is what a foreign key does to the rows referencing a row that
// is deleted (ForeignKey.OnDelete) or whose key changes (OnUpdate).
type FKAction = engine.FKAction

// The foreign key actions, PostgreSQL's ON DELETE / ON UPDATE clauses.
const (
	// NoAction fails with ErrForeignKeyViolation (23503) while
	// referencing rows exist — unless a live row with the same referenced
	// key exists again (a unique-index key that moved back).
	NoAction = engine.NoAction
	// Restrict fails with 23503 while referencing rows exist.
	Restrict = engine.Restrict
	// Cascade deletes the referencing rows (ON DELETE) or rewrites their
	// reference to the new key with SetRef (ON UPDATE).
	Cascade = engine.Cascade
	// SetNull rewrites the referencing rows with SetRef(…, SetNull, nil).
	SetNull = engine.SetNull
	// SetDefault rewrites them with SetRef(…, SetDefault, nil); the
	// reference it sets is checked like an insert's.
	SetDefault = engine.SetDefault
)

// ForeignKey declares that every row of Table whose Ref is ok references
// a live row of RefTable (by its key, or by the key of RefTable's unique
// index RefIndex). See DB.AddForeignKey for how it is enforced.
//
//	Name       string // constraint name, unique in the database
//	Table      string // the referencing ("child") table
//	RefTable   string // the referenced ("parent") table
//	RefIndex   string // a unique index of RefTable whose key Ref returns ("": RefTable's key)
//	ChildIndex string // optional index of Table whose key is Ref's result: parents find children through it
//	Ref        func(key, value []byte) (ref []byte, ok bool) // the reference (ok false: NULL, never checked)
//	OnDelete, OnUpdate FKAction
//	SetRef     func(key, value []byte, action FKAction, newRef []byte) ([]byte, error)
//
// Ref must be deterministic and must neither keep nor modify its
// arguments; it is called during writes, so it must not call the
// database. SetRef returns a referencing row's new value for the actions
// that rewrite it (Cascade on a key change, with newRef the parent's new
// key; SetNull and SetDefault, with newRef nil); it is required when one
// of them is used.
type ForeignKey = engine.ForeignKey

// ForeignKeyError is a foreign key violation; errors.As finds it under any
// error with SQLSTATE 23503 from this package. Referenced false: the row
// (Key, Value) of FK.Table refers to Ref, which FK.RefTable does not have
// (`insert or update on table "child" violates foreign key constraint
// "name"`). Referenced true: the row (Key, Value) of FK.RefTable being
// deleted or given a new key is still referenced, by FK.Table's row
// ChildKey (`update or delete on table "parent" violates foreign key
// constraint "name" on table "child"`).
type ForeignKeyError = engine.FKError

// ErrForeignKeyViolation is a foreign key violation (SQLSTATE 23503); the
// error returned is a *ForeignKeyError.
var ErrForeignKeyViolation = engine.ErrForeignKeyViolation

// ErrDependentObjects is DropTable of a table another table's foreign key
// references (SQLSTATE 2BP01): drop that foreign key, or its table, first.
var ErrDependentObjects = engine.ErrDependentObjects

// ErrDuplicateObject is a constraint name already in use (SQLSTATE 42710).
var ErrDuplicateObject = engine.ErrDuplicateObject

// ErrNoForeignKey is a foreign key that does not exist (SQLSTATE 42704).
var ErrNoForeignKey = engine.ErrNoForeignKey

// AddForeignKey declares fk (ALTER TABLE … ADD FOREIGN KEY): from then on
// it is enforced as PostgreSQL's referential-integrity triggers do.
//
//   - Inserting a row of fk.Table, or changing its reference (an update
//     that leaves the reference as it was checks nothing), locks the
//     referenced row FOR KEY SHARE: the lock that conflicts only with a
//     delete or key change of the parent, so child inserts neither wait
//     for nor block updates of the parent's other columns, and concurrent
//     child inserters share it as one multixact. A missing parent (or one
//     deleted while the insert waited for it) is a *ForeignKeyError
//     (23503). Under REPEATABLE READ the check uses the transaction's
//     snapshot: a parent inserted after it is missing, one deleted or
//     given a new key since is ErrSerialization (40001).
//   - Deleting a row of fk.RefTable (or changing the key fk refers to it
//     by, Tx.UpdateKey) first waits, as any delete does, for the
//     transactions holding FOR KEY SHARE on it (the child inserters), then
//     looks for referencing rows with a fresh snapshot — also under
//     REPEATABLE READ, so a child committed after the snapshot counts —
//     locking each, and applies fk.OnDelete / fk.OnUpdate: NoAction and
//     Restrict fail with 23503, Cascade deletes or rewrites the children,
//     SetNull and SetDefault rewrite them; every rewrite is an ordinary
//     write that fires the child's own foreign keys in turn. Children are
//     found through fk.ChildIndex when given, else by scanning fk.Table.
//
// AddForeignKey takes ShareRowExclusiveLock on both tables, as PostgreSQL
// does (so it waits for their writers and they wait for it), and checks
// every existing row: a missing parent is a *ForeignKeyError and the key
// is not added. Like an index's Key, Ref and SetRef are not stored: a
// program declares its foreign keys after every Open. DropTable of a
// referenced table fails with ErrDependentObjects; dropping the
// referencing table drops its foreign keys.
//
// Errors: ErrNoTable (42P01); ErrInvalid (22023) for a missing Name or
// Ref, or a rewriting action without SetRef; ErrNoIndex (42704) or
// ErrInvalid for a RefIndex that is not a unique index of RefTable or a
// ChildIndex not of Table; ErrDuplicateObject (42710); the lock wait's
// (ErrDeadlock, ErrLockTimeout, ctx's end). Safe for concurrent use.
func (db *DB) AddForeignKey(ctx context.Context, fk ForeignKey) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return errs.Canceled(err)
	}
	return db.eng.AddForeignKey(ctx, fk)
}

// AddForeignKey is DB.AddForeignKey inside tx, as PostgreSQL's ALTER TABLE
// … ADD FOREIGN KEY runs in the transaction that issues it: the
// ShareRowExclusiveLocks on both tables are tx's (so a transaction that
// has already written to them does not wait for itself) and are held
// until tx ends, and the existing rows are checked with tx's snapshot.
// The declaration itself is not transactional: it is in force at once,
// for every transaction, and stays if tx rolls back (DropForeignKey, or
// dropping the referencing table, removes it). Errors as
// DB.AddForeignKey's; ErrTxBusy while another call on tx runs.
func (tx *Tx) AddForeignKey(ctx context.Context, fk ForeignKey) error {
	if err := tx.enter(); err != nil {
		return err
	}
	defer tx.exit()
	return tx.t.AddForeignKey(ctx, fk)
}

// DropForeignKey removes foreign key name (ALTER TABLE … DROP
// CONSTRAINT), waiting for AccessExclusiveLock on both its tables. Errors:
// ErrNoForeignKey (42704) when there is none and !ifExists; the lock
// wait's.
func (db *DB) DropForeignKey(ctx context.Context, name string, ifExists bool) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return errs.Canceled(err)
	}
	return db.eng.DropForeignKey(ctx, name, ifExists)
}

// ForeignKeys returns the foreign keys whose Table or RefTable is table
// ("": every one), in no order.
func (db *DB) ForeignKeys(table string) []ForeignKey { return db.eng.ForeignKeys(table) }
