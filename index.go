package tupled

import (
	"context"

	"github.com/tupled/tupled/internal/engine"
	"github.com/tupled/tupled/internal/errs"
)

// IndexOptions declare an index (DB.CreateIndex).
type IndexOptions struct {
	// Unique makes it a unique index: no two live rows may have the same
	// index key (a row Key reports not indexed, like a NULL column, never
	// conflicts).
	Unique bool
	// Key derives a row's index key from its key and value; ok false means
	// the row is not indexed. It must be deterministic, must not retain
	// its arguments, and is called while the engine holds internal state:
	// it must not call the database.
	Key func(key, value []byte) (ikey []byte, ok bool)
}

// ErrNoIndex is an index that does not exist (SQLSTATE 42704).
var ErrNoIndex = engine.ErrNoIndex

// ErrIndexNotReady is an index found on disk whose Key function the
// program has not registered again since it opened the database
// (SQLSTATE 55000). See DB.CreateIndex.
var ErrIndexNotReady = engine.ErrIndexNotReady

// CreateIndex creates index name on table: CREATE [UNIQUE] INDEX name ON
// table. Every row written from then on keeps its index entry in the same
// transaction (so a savepoint's rollback or an abort takes it too, and it
// is as durable as the row). Building over existing rows takes ShareLock
// on the table, as PostgreSQL's CREATE INDEX does: writers of the table
// wait for it, readers do not.
//
// A unique index checks uniqueness as the primary key does: an insert (or
// key-changing update) of an index key another transaction is inserting
// or deleting waits for it, then fails with ErrDuplicateKey (23505,
// `duplicate key value violates unique constraint "name"`) or succeeds.
// An update that changes a unique index's key is a key update: it
// conflicts with FOR KEY SHARE locks, which other updates pass.
//
// The Key function is not stored: like pebble's Comparer, the program
// passes it at every open. An index found on disk is registered again by
// calling CreateIndex with the same name, table and Unique (nothing is
// rebuilt); until then writes to its table and lookups through it fail
// with ErrIndexNotReady (55000) rather than leave it stale.
//
// Errors: ErrNoTable (42P01); ErrTableExists (42P07) when the name is
// taken; ErrInvalid (22023) for an empty name or nil Key; ErrDuplicateKey
// (23505, `could not create unique index "name"`) for a unique index over
// duplicate keys, which leaves nothing behind; the lock wait's errors
// (ErrDeadlock, ErrLockTimeout, ctx's end). Safe for concurrent use.
func (db *DB) CreateIndex(ctx context.Context, table, name string, opts IndexOptions) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return errs.Canceled(err)
	}
	return db.eng.CreateIndex(ctx, table, name, engine.IndexOptions{Unique: opts.Unique, Key: opts.Key})
}

// DropIndex drops index name (DROP INDEX [IF EXISTS]), waiting for
// AccessExclusiveLock on its table. Errors: ErrNoIndex (42704) when there
// is none and !ifExists; the lock wait's errors.
func (db *DB) DropIndex(ctx context.Context, name string, ifExists bool) error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if err := ctx.Err(); err != nil {
		return errs.Canceled(err)
	}
	return db.eng.DropIndex(ctx, name, ifExists)
}

// IndexInfo describes an index (DB.Indexes).
type IndexInfo struct {
	Name, Table string
	Unique      bool
}

// Indexes returns table's indexes ("": every index), in no order.
func (db *DB) Indexes(table string) []IndexInfo {
	var out []IndexInfo
	for _, ix := range db.eng.Indexes(table) {
		out = append(out, IndexInfo{Name: ix.Name(), Table: ix.Table(), Unique: ix.Unique()})
	}
	return out
}

// IndexScan calls fn with the key and value of each row of the index's
// table whose index key is ikey, in key order: SELECT … WHERE <indexed
// expression> = ikey. opts' Where, Limit, Lock and Wait apply as in Scan
// (Start, End, Prefix and Reverse are ignored). It reads the rows the
// snapshot sees; with a Lock it locks each one and, under READ COMMITTED,
// a row whose newest version (locked after a concurrent update) no longer
// has ikey is skipped, as PostgreSQL's EvalPlanQual recheck skips it.
// Errors: ErrNoIndex (42704), ErrIndexNotReady (55000), and Scan's.
func (tx *Tx) IndexScan(ctx context.Context, index string, ikey []byte, opts ScanOptions, fn func(key, value []byte) error) error {
	return tx.scanVia(ctx, opts, fn, func(spec engine.ScanSpec, fn func(key, value []byte) error) error {
		return tx.t.IndexScan(ctx, index, ikey, spec, fn)
	})
}

// IndexGet returns the key and value of the row whose key in the unique
// index is ikey (locked in lock's strength, NoLock for a plain read):
// "SELECT … WHERE k = ikey [FOR KEY SHARE]", as a foreign key check does.
// ErrNotFound if there is none (the transaction stays usable).
func (tx *Tx) IndexGet(ctx context.Context, index string, ikey []byte, lock LockStrength) (key, value []byte, err error) {
	err = tx.IndexScan(ctx, index, ikey, ScanOptions{Lock: lock, Limit: 1}, func(k, v []byte) error {
		key, value = k, v
		return nil
	})
	if err == nil && key == nil {
		err = ErrNotFound
	}
	return key, value, err
}

// UpsertOn is Upsert with the unique index named index as the arbiter:
// INSERT … ON CONFLICT (<index's key>) DO NOTHING (onConflict nil) or DO
// UPDATE. A conflict is a live row whose key in the index is the new
// row's; it is waited for, locked and rechecked as Upsert does (a
// conflicting row that no longer has the index key when locked makes
// UpsertOn try again), and onConflict gets its key and value. A new row
// the index does not index never conflicts. Errors: ErrNoIndex (42704),
// ErrIndexNotReady (55000), ErrInvalid (22023) for an index that is not a
// unique index of table, and Upsert's.
func (tx *Tx) UpsertOn(ctx context.Context, table, index string, key, value []byte, onConflict func(existingKey, existing []byte) (newValue []byte, update bool)) (UpsertOutcome, error) {
	if err := tx.enter(); err != nil {
		return 0, err
	}
	defer tx.exit()
	return tx.t.UpsertOn(ctx, table, index, key, value, onConflict)
}
