package durable

import (
	"context"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/wal"
)

// DROP TABLE, durably.
//
// DropTable appends a RecDropTable record and waits until it is durable,
// then deletes the catalog key and the table's whole row range
// (heap.RowKey(name, nil) up to its prefix end) from the backend in one
// synchronous batch; recovery replays the record the same way, so a crash
// at any point after the record is durable ends with the table gone and
// its data reclaimed, and a crash before leaves it whole. The checkpoint
// is kept out (ckMu) from the unlink to the delete, so it cannot write a
// dropped table's rows back.
//
// A transaction that wrote to the table in the instant between its lookup
// and the drop cannot commit those writes: Commit checks, under dropMu
// shared, that every table it logs still exists, and DropTable logs its
// record under dropMu exclusive.

// RecDropTable: the table name; the table and its rows are gone.
const RecDropTable wal.RecordType = 6

// DropTable unlinks table name from the heap (heap.DropTable: it fails with
// heap.ErrNoTable or heap.ErrTableInUse, leaving everything as it was) and
// makes the drop durable: when it returns nil the drop will survive a
// crash and the table's data is deleted from the backend. The caller
// serializes DDL.
func (d *Store) DropTable(name string) error {
	if err := d.FatalErr(); err != nil {
		return err
	}
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	d.dropMu.Lock()
	defer d.dropMu.Unlock()
	tbl, err := d.heap.DropTable(name)
	if err != nil {
		return err
	}
	lsn, err := d.wal.Append(wal.Record{Type: RecDropTable, Data: []byte(name)})
	if err == nil {
		err = d.wal.Sync(context.Background(), lsn)
	}
	if err != nil {
		// Not durable: the table stays (undo the unlink).
		d.heap.RestoreTable(tbl)
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

// dropTable redoes a RecDropTable record.
func (rd *redoer) dropTable(name string) {
	if len(catalogKey(name)) > storage.MaxKeySize {
		return // never created (see createTable)
	}
	deleteTableRange(rd.b, name)
}

// checkTablesExist fails with heap.ErrNoTable if a write names a dropped
// table. dropMu held (shared).
func (d *Store) checkTablesExist(ws []Write) error {
	last := ""
	for _, w := range ws {
		if w.Table == last {
			continue
		}
		if _, err := d.heap.Table(w.Table); err != nil {
			return err
		}
		last = w.Table
	}
	return nil
}
