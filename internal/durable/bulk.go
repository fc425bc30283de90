package durable

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/wal"
)

// Bulk loads, durably.
//
// A bulk load (heap's "Bulk loads", the engine's Tx.BulkLoad) writes its
// rows to the backend directly, not to the WAL. Its transaction's commit
// must make them durable and its abort — or a crash before its commit —
// must leave the table empty again (it was empty when the load began):
//
//   - BeginBulkLoad logs RecBulkLoad (xid, table) and waits until it is
//     durable, before the first row is written, and registers the xid in
//     inflight with that record's LSN, so no checkpoint moves the redo
//     point past it while the transaction runs (logCommit keeps the
//     smaller LSN when the commit registers the xid again).
//   - At commit, SyncBackend makes the rows durable before the commit
//     record is logged (Commit is called even with an empty write set: its
//     record is what tells recovery the load committed).
//   - At abort the engine drops and re-creates the table (RecDropTable,
//     RecCreateTable), then EndBulkLoad unregisters the xid.
//   - Recovery notes each RecBulkLoad; a commit of its xid settles it, a
//     RecDropTable of its table voids it; one left at the end of the WAL
//     belonged to a transaction that never committed, and its table's rows
//     are deleted (redoer.finish).

// RecBulkLoad: uvarint xid, then the table name; the transaction xid
// loads rows into the table past the WAL.
const RecBulkLoad wal.RecordType = 7

// BeginBulkLoad makes durable that transaction xid loads rows into table
// (see "Bulk loads, durably").
func (d *Store) BeginBulkLoad(xid uint64, table string) error {
	if err := d.FatalErr(); err != nil {
		return err
	}
	data := binary.AppendUvarint(nil, xid)
	data = append(data, table...)
	d.inflightMu.Lock()
	lsn, err := d.wal.Append(wal.Record{Type: RecBulkLoad, Data: data})
	if err == nil {
		if l, ok := d.inflight[xid]; !ok || lsn < l {
			d.inflight[xid] = lsn
		}
	}
	d.inflightMu.Unlock()
	if err != nil {
		return d.appendFailed(err)
	}
	if err := d.wal.Sync(context.Background(), lsn); err != nil {
		return d.walFailed(err)
	}
	return nil
}

// EndBulkLoad unregisters an aborted loading transaction, once its tables
// were emptied.
func (d *Store) EndBulkLoad(xid uint64) {
	d.inflightMu.Lock()
	delete(d.inflight, xid)
	d.inflightMu.Unlock()
}

// SyncBackend makes every row written to the backend durable (a loading
// transaction's, before its commit record). An error is fatal.
func (d *Store) SyncBackend() error {
	if err := d.be.Sync(); err != nil {
		return d.fail(err)
	}
	return nil
}

// bulkLoad notes a RecBulkLoad record in recovery.
func (rd *redoer) bulkLoad(lsn wal.LSN, data []byte) error {
	xid, n := binary.Uvarint(data)
	if n <= 0 {
		return fmt.Errorf("record at %d: %w", lsn, errBadRecord)
	}
	if rd.bulk == nil {
		rd.bulk = map[uint64][]string{}
	}
	rd.bulk[xid] = append(rd.bulk[xid], string(data[n:]))
	return nil
}

// bulkDropped voids the loads into a dropped table (the drop emptied it).
func (rd *redoer) bulkDropped(name string) {
	for xid, ts := range rd.bulk {
		kept := ts[:0]
		for _, t := range ts {
			if t != name {
				kept = append(kept, t)
			}
		}
		rd.bulk[xid] = kept
	}
}

// bulkUnfinished deletes the rows of the loads no commit followed.
func (rd *redoer) bulkUnfinished() {
	for xid, ts := range rd.bulk {
		for _, t := range ts {
			rd.d.log.Info("recovery: emptying a table loaded by a transaction that did not commit", "xid", xid, "table", truncated(t))
			lo := heap.RowKey(t, nil)
			rd.b.DeleteRange(lo, heap.PrefixEnd(lo))
		}
	}
	rd.bulk = nil
}
