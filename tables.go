package tupled

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/storage"
	"github.com/tupled/tupled/wal"
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
// writes (its Commit fails with 42P01 and rolls back): durable.commit
// checks, under dropMu shared, that every table it logs still exists, and
// DropTable logs its record under dropMu exclusive. A read-only or
// lock-only transaction that still holds the table from before the drop
// sees it as it was; it never touches the backend's (now deleted) range
// for a row it has not cached, and those reads find nothing.
//
// Durability: DropTable appends a recDropTable record and waits until it
// is durable, then deletes the catalog key and the table's whole row range
// (heap.RowKey(name, nil) up to its prefix end) from the backend in one
// synchronous batch; recovery replays the record the same way, so a crash
// at any point after the record is durable ends with the table gone and
// its data reclaimed, and a crash before leaves it whole. The checkpoint
// is kept out (ckMu) from the unlink to the delete, so it cannot write a
// dropped table's rows back.

// recDropTable: the table name; the table and its rows are gone.
const recDropTable wal.RecordType = 6

// ErrObjectInUse is returned by DropTable when a running transaction has
// written, deleted or locked a row of the table (SQLSTATE 55006).
var ErrObjectInUse = newStateError("55006", "object is in use")

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
		return nil, &canceledError{cause: err}
	}
	ts := db.heap.Tables()
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	sort.Strings(out)
	return out, nil
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
		return &canceledError{cause: err}
	}
	if err := checkTableName(name); err != nil {
		return err
	}
	db.ddlMu.Lock()
	defer db.ddlMu.Unlock()
	d := db.dur
	if d != nil {
		if err := d.fatalErr(); err != nil {
			return err
		}
		d.ckMu.Lock()
		defer d.ckMu.Unlock()
		d.dropMu.Lock()
		defer d.dropMu.Unlock()
	}
	tbl, err := db.heap.DropTable(name)
	switch {
	case errors.Is(err, heap.ErrNoTable):
		if opts != nil && opts.IfExists {
			return nil
		}
		return &opError{sentinel: ErrNoTable, msg: fmt.Sprintf("table %q does not exist", name)}
	case errors.Is(err, heap.ErrTableInUse):
		return &opError{sentinel: ErrObjectInUse, msg: fmt.Sprintf("cannot drop table %q because it is being used by active transactions", name)}
	case err != nil:
		return err
	}
	if d == nil {
		return nil
	}
	lsn, err := d.wal.Append(wal.Record{Type: recDropTable, Data: []byte(name)})
	if err == nil {
		err = d.wal.Sync(context.Background(), lsn)
	}
	if err != nil {
		// Not durable: the table stays (undo the unlink).
		db.heap.RestoreTable(tbl)
		return d.walFailed(err)
	}
	b := d.be.NewBatch()
	deleteTableRange(b, name)
	if err := d.be.Commit(b, true); err != nil {
		// The record is durable, so recovery finishes the delete.
		return d.fail(err)
	}
	return nil
}

// deleteTableRange adds to b the deletion of table name's catalog entry
// and rows.
func deleteTableRange(b storage.Batch, name string) {
	b.Delete(catalogKey(name))
	lo := heap.RowKey(name, nil)
	b.DeleteRange(lo, heap.PrefixEnd(lo))
}

// dropTable redoes a recDropTable record.
func (rd *redoer) dropTable(name string) {
	if len(catalogKey(name)) > storage.MaxKeySize {
		return // never created (see createTable)
	}
	deleteTableRange(rd.b, name)
}

// checkTablesExist fails with ErrNoTable if a write names a dropped table.
// dropMu held (shared).
func (d *durable) checkTablesExist(ws []writeOp) error {
	last := ""
	for _, w := range ws {
		if w.table == last {
			continue
		}
		if _, err := d.db.table(w.table); err != nil {
			return err
		}
		last = w.table
	}
	return nil
}
