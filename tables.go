package tupled

import (
	"context"
	"errors"

	"github.com/tupled/tupled/internal/errs"
)

// Table management: CREATE TABLE IF NOT EXISTS, DROP TABLE [IF EXISTS],
// and the table list.
//
// DROP TABLE in PostgreSQL takes an AccessExclusiveLock on the relation and
// waits for every transaction that holds a lock on it (checked on
// PostgreSQL 15 with isolationtester: after s1's SELECT ... FOR SHARE, s2's
// DROP TABLE waits until s1 commits). Tables here have no relation-level
// lock — a Tx announces a table only when it writes or locks a row — so
// DropTable does not wait: it fails with ErrObjectInUse (SQLSTATE 55006,
// object_in_use, PostgreSQL's code for "cannot DROP TABLE because it is
// being used by active queries") when any row of the table holds a version
// written, deleted or locked by a transaction still in progress, and
// leaves the table whole; the caller waits for those transactions and
// retries. Such state exists only on rows held in memory (eviction refuses
// them), so the check reads no backend.
//
// Once dropped, the table is gone for every transaction: a later call
// naming it fails with ErrNoTable (42P01), and a transaction that wrote to
// it in the instant between its lookup and the drop cannot commit those
// writes (its Commit fails with 42P01 and rolls back). A read-only or
// lock-only transaction that still holds the table from before the drop
// sees it as it was. On disk the drop is logged and the table's data
// deleted from the backend before DropTable returns (internal/durable/drop.go).

// ErrObjectInUse is returned by DropTable when a running transaction has
// written, deleted or locked a row of the table (SQLSTATE 55006).
var ErrObjectInUse = errs.ErrObjectInUse

// DropTableOptions modifies DropTable.
type DropTableOptions struct {
	// IfExists makes dropping a table that does not exist a no-op (DROP
	// TABLE IF EXISTS) instead of ErrNoTable.
	IfExists bool
}

// CreateTableOptions modifies CreateTableWith.
type CreateTableOptions struct {
	// IfNotExists makes creating a table that exists a no-op (CREATE
	// TABLE IF NOT EXISTS) instead of ErrTableExists.
	IfNotExists bool
}

// CreateTableWith is CreateTable with options; opts may be nil (then it is
// CreateTable). With IfNotExists an existing table is left as it is and
// nil returned. Errors as CreateTable: ErrInvalid (22023) for an empty
// name, ErrNameTooLong (42622) past MaxTableNameLen, ErrTableExists
// (42P07) without IfNotExists.
func (db *DB) CreateTableWith(ctx context.Context, name string, opts *CreateTableOptions) error {
	err := db.CreateTable(ctx, name)
	if opts != nil && opts.IfNotExists && errors.Is(err, ErrTableExists) {
		return nil
	}
	return err
}

// CreateTableIfNotExists creates the table unless it exists (CREATE TABLE
// IF NOT EXISTS); see CreateTableWith.
func (db *DB) CreateTableIfNotExists(ctx context.Context, name string) error {
	return db.CreateTableWith(ctx, name, &CreateTableOptions{IfNotExists: true})
}

// ListTables returns the names of every table, sorted.
func (db *DB) ListTables(ctx context.Context) ([]string, error) {
	if err := db.enter(); err != nil {
		return nil, err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return nil, errs.Canceled(err)
	}
	return db.eng.Tables(), nil
}

// DropTable removes the table and all its rows (DROP TABLE), on disk too:
// once it returns nil the drop is durable and the table's data is deleted
// from the backend. opts may be nil.
//
// Errors: ErrNoTable (42P01) when the table does not exist (nil with
// IfExists); ErrObjectInUse (55006) when a running transaction has
// written, deleted or locked one of its rows (the table is left whole; see
// the comment at the top of tables.go for why DropTable does not wait);
// ErrIO (58030) when the WAL or backend fails. A transaction that names
// the table afterwards gets ErrNoTable. Safe for concurrent use.
func (db *DB) DropTable(ctx context.Context, name string, opts *DropTableOptions) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return errs.Canceled(err)
	}
	return db.eng.DropTable(name, opts != nil && opts.IfExists)
}
