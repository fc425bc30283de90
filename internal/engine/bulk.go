package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/lockmgr"
)

// Bulk loads: Tx.BulkLoad, PostgreSQL's COPY FREEZE for a table that only
// the loading transaction can see (heap's "Bulk loads" is the row side,
// durable's "Bulk loads, durably" the WAL side).
//
// The transaction takes the table ACCESS EXCLUSIVE, so no other one reads
// or writes it until it ends; the table must be empty at its first load;
// the rows are written committed and frozen, past the write set and the
// WAL. If the transaction does not commit, the table is dropped and made
// again, empty (abortBulkLocked), before its locks go; a crash before the
// commit leaves recovery to empty it. What a transaction sees of the
// rows: its own, at once; any other, once it commits — including one whose
// snapshot is older than the commit, as with PostgreSQL's COPY FREEZE.
//
// A load is refused with errs.ErrBulkRefused, which leaves the
// transaction as it was (the caller inserts row by row instead), when the
// table has indexes or foreign keys of its own, a savepoint is open (a
// rollback to it could not undo the load), the table is not empty at the
// first load, or the transaction has written it otherwise since loading
// it.

// BulkLoad loads rows keys[i] → values[i] into table (see "Bulk loads").
// It returns how many rows it loaded; with errs.ErrDuplicateKey the
// index of the row whose key the table, or an earlier row, holds (the
// transaction is then aborted, as by every error but ErrBulkRefused).
func (tx *Tx) BulkLoad(ctx context.Context, table string, keys, values [][]byte) (int, error) {
	if len(keys) != len(values) {
		return 0, errs.Op(errs.ErrInvalid, "tupled: BulkLoad needs as many values as keys")
	}
	tx.mu.Lock()
	if err := tx.checkLocked(ctx, true); err != nil {
		tx.mu.Unlock()
		return 0, err
	}
	loadable, loaded := tx.bulk[table]
	open := len(tx.savepoints) > 0
	tx.mu.Unlock()
	tbl, err := tx.e.table(table)
	if err != nil {
		return 0, tx.Fail(ctx, err)
	}
	for i := range keys {
		if err := checkKey(table, keys[i]); err != nil {
			return 0, tx.Fail(ctx, err)
		}
		if err := checkValue(values[i]); err != nil {
			return 0, tx.Fail(ctx, err)
		}
	}
	switch {
	case open:
		return 0, refused(table, "a savepoint is open")
	case loaded && !loadable:
		return 0, refused(table, "the transaction wrote it since loading it")
	case len(tx.e.idx.load().byTable[table]) > 0:
		return 0, refused(table, "it has indexes")
	case len(tx.e.fks.load().byChild[table]) > 0:
		return 0, refused(table, "it has foreign keys")
	}
	if !tx.proc.HoldsRelation(table, lockmgr.AccessExclusiveLock) {
		if err := tx.lockRel(ctx, table, lockmgr.AccessExclusiveLock, false); err != nil {
			return 0, tx.Fail(ctx, err)
		}
	}
	if !loaded {
		if !tbl.Empty() {
			return 0, refused(table, "it is not empty")
		}
		if d := tx.e.dur; d != nil {
			if err := d.BeginBulkLoad(tx.ID(), table); err != nil {
				return 0, tx.Fail(ctx, err)
			}
		}
		tx.mu.Lock()
		if tx.bulk == nil {
			tx.bulk = map[string]bool{}
		}
		tx.bulk[table] = true
		tx.mu.Unlock()
	}
	n, err := tbl.BulkLoad(keys, values)
	if errors.Is(err, heap.ErrBulkDuplicate) {
		err = &errs.OpError{Sentinel: errs.ErrDuplicateKey, Msg: fmt.Sprintf("duplicate key value violates unique constraint \"%s_pkey\"", table),
			Table: table, Constraint: table + "_pkey", Detail: fmt.Sprintf("Key (key)=(%s) already exists.", errs.KeyText(keys[n]))}
	} else if err != nil {
		err = &errs.OpError{Sentinel: errs.ErrIO, Msg: "tupled: bulk load: " + err.Error(), Cause: err}
	}
	return n, tx.Fail(ctx, err)
}

func refused(table, why string) error {
	return &errs.OpError{Sentinel: errs.ErrBulkRefused, Msg: fmt.Sprintf("cannot bulk-load table %q: %s", table, why), Table: table}
}

// noteWriteLocked: a write of table by the transaction ends its bulk loads of
// it (startOn).
func (tx *Tx) noteWriteLocked(table string) {
	if _, ok := tx.bulk[table]; ok {
		tx.bulk[table] = false
	}
}

// commitBulkLocked makes the transaction's loaded rows durable before
// its commit record (durable's "Bulk loads, durably").
func (tx *Tx) commitBulkLocked() error {
	if d := tx.e.dur; d != nil && len(tx.bulk) > 0 {
		return d.SyncBackend()
	}
	return nil
}

// abortBulkLocked empties the tables the aborted transaction loaded: each
// is dropped and made again (its locks still held, so nobody saw the
// rows). A table that cannot be dropped now (the engine closing, the WAL
// failed) keeps its rows until recovery empties it.
func (tx *Tx) abortBulkLocked() {
	if len(tx.bulk) == 0 {
		return
	}
	ok := true
	for table := range tx.bulk {
		if tx.e.closed.Load() {
			ok = false
			break
		}
		err := tx.e.dropTable(table, true)
		if err == nil {
			err = tx.e.createTable(table)
		}
		if err != nil {
			ok = false
			tx.e.log.Error("could not empty a table an aborted transaction bulk-loaded", "table", table, "err", err)
		}
	}
	if d := tx.e.dur; d != nil && ok {
		d.EndBulkLoad(tx.ID())
	}
	tx.bulk = nil
}
