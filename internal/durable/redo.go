package durable

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/wal"
)

// Recovery: the WAL after the redo point replayed into the backend
// (Store.recover, redoer), the inverse of commit.go.

// recover replays the WAL after the last checkpoint into the backend, loads
// the catalog and checkpoints.
// ctl is the control file's data (hasCtl false for a new database), which
// checkFormat found consistent with the backend.
func (d *Store) recover(ctl controlData, hasCtl bool) (err error) {
	defer func() { err = AsCorrupted(err) }()
	redo, err := getUvarint(d.be, metaRedo)
	if err != nil {
		return err
	}
	nextXid, err := getUvarint(d.be, metaNextXid)
	if err != nil {
		return err
	}
	incarnation, err := getUvarint(d.be, metaIncarnation)
	if err != nil {
		return err
	}
	incarnation++
	tables := map[string]bool{}
	if err := d.be.Scan([]byte("c"), []byte("d"), func(k, _ []byte) error {
		tables[string(k[1:])] = true
		return nil
	}); err != nil {
		return err
	}
	rd := d.newRedoer(nextXid)
	b := rd.b
	replayed := 0
	err = d.wal.Replay(wal.LSN(redo), func(lsn wal.LSN, rec wal.Record) error {
		replayed++
		switch rec.Type {
		case RecCommit:
			return rd.commit(lsn, rec.Data)
		case RecCommitPart, RecCommitEnd:
			return rd.part(lsn, rec.Data, rec.Type == RecCommitEnd)
		case RecCreateTable:
			if rd.createTable(lsn, string(rec.Data)) {
				tables[string(rec.Data)] = true
			}
		case RecDropTable:
			rd.dropTable(string(rec.Data))
			rd.bulkDropped(string(rec.Data))
			delete(tables, string(rec.Data))
		case RecBulkLoad:
			return rd.bulkLoad(lsn, rec.Data) // bulk.go
		case RecXidReserve:
			x, n := binary.Uvarint(rec.Data)
			if n <= 0 {
				return fmt.Errorf("record at %d: %w", lsn, errBadRecord)
			}
			rd.nextXid = max(rd.nextXid, x)
		default:
			return fmt.Errorf("tupled: unknown WAL record type %d at %d", rec.Type, lsn)
		}
		return nil
	})
	if errors.Is(err, wal.ErrRemoved) {
		return corruptf("recovery: the WAL in %s no longer holds the backend's redo point %d: %v", d.fs.PathJoin(d.dir, "wal"), redo, err)
	}
	if err != nil {
		return fmt.Errorf("tupled: recovery: %w", err)
	}
	rd.finish()
	nextXid = rd.nextXid
	nextXid = max(nextXid, 1)
	end := d.wal.EndLSN()
	if hasCtl && uint64(end) < ctl.redo {
		return corruptf("recovery: the WAL in %s ends at LSN %d, before the control file's redo point %d: WAL segments were lost or cut short", d.fs.PathJoin(d.dir, "wal"), end, ctl.redo)
	}
	ckptNo := d.ckptNo + 1
	b.Set(metaCheckpoint, binary.AppendUvarint(nil, ckptNo))
	b.Set(metaRedo, binary.AppendUvarint(nil, uint64(end)))
	b.Set(metaNextXid, binary.AppendUvarint(nil, nextXid))
	b.Set(metaIncarnation, binary.AppendUvarint(nil, incarnation))
	if err := d.be.Commit(b, true); err != nil {
		return fmt.Errorf("tupled: recovery: %w", err)
	}
	if err := d.writeCheckpointControl(ckptNo, end); err != nil {
		return err
	}
	d.ckptNo = ckptNo
	d.multi.AdvanceID(incarnation << multiIDShift)
	if err := d.wal.RemoveBefore(end); err != nil {
		return fmt.Errorf("tupled: recovery: %w", err)
	}
	d.lastCkptLSN.Store(uint64(end))
	d.xacts.AdvanceXid(nextXid)
	d.reserved.Store(nextXid)
	d.heap.SetBackend(d.be)
	for name := range tables {
		if _, err := d.heap.CreateTable(name); err != nil {
			return err
		}
	}
	d.log.Info("recovered", "records_replayed", replayed, "redo_lsn", redo, "end_lsn", end, "tables", len(tables), "next_xid", nextXid)
	return nil
}

// redoer applies the WAL's records to the backend during recovery.
type redoer struct {
	d       *Store
	b       storage.Batch
	parts   streamedCommits
	nextXid uint64
	skipped int // writes the backend could not hold (see storable)
	// bulk: the tables each transaction began to load (RecBulkLoad) and
	// that no commit of it has settled yet (bulk.go)
	bulk map[uint64][]string
}

func (d *Store) newRedoer(nextXid uint64) *redoer {
	return &redoer{d: d, b: d.be.NewBatch(), parts: streamedCommits{}, nextXid: nextXid}
}

// commit redoes a RecCommit record.
func (rd *redoer) commit(lsn wal.LSN, data []byte) error {
	return rd.apply(lsn, [][]byte{data})
}

// part keeps a RecCommitPart record's fragment; end redoes the whole
// streamed commit.
func (rd *redoer) part(lsn wal.LSN, data []byte, end bool) error {
	frags, done, err := rd.parts.add(data, end)
	if err != nil || !done {
		return err
	}
	return rd.apply(lsn, frags)
}

// streamedCommits gathers the fragments of streamed commits as the WAL is
// read: recovery, verify and salvage all read them through add.
type streamedCommits map[uint64][][]byte // xid -> fragments of a commit not yet ended

// add keeps a RecCommitPart (end false) or RecCommitEnd (end true)
// record's fragment; at the end it returns the commit's fragments, for
// decodeCommitStream.
func (sc streamedCommits) add(data []byte, end bool) (frags [][]byte, done bool, err error) {
	xid, n := binary.Uvarint(data)
	if n <= 0 {
		return nil, false, errBadRecord
	}
	frags = append(sc[xid], data[n:])
	if !end {
		sc[xid] = frags
		return nil, false, nil
	}
	delete(sc, xid)
	return frags, true, nil
}

func (rd *redoer) apply(lsn wal.LSN, frags [][]byte) error {
	xid, err := decodeCommitStream(frags, func(w Write) error {
		if !storable(w.Table, w.Key, w.Value) {
			// Accepted before there were limits; the backend cannot hold
			// it, and refusing to recover would lose the whole database.
			rd.skipped++
			rd.d.log.Error("recovery: skipping a logged write the backend cannot store",
				"lsn", lsn, "table", truncated(w.Table), "key_len", len(w.Key), "value_len", len(w.Value))
			return nil
		}
		if w.Delete {
			rd.b.Delete(heap.RowKey(w.Table, w.Key))
		} else {
			rd.b.Set(heap.RowKey(w.Table, w.Key), w.Value)
		}
		return rd.d.flushIfLarge(rd.b)
	})
	if err != nil {
		return fmt.Errorf("record at %d: %w", lsn, err)
	}
	rd.nextXid = max(rd.nextXid, xid+1)
	delete(rd.bulk, xid)
	return nil
}

// createTable redoes a RecCreateTable record; false if the name cannot be
// stored (a name the engine accepted before there were limits).
func (rd *redoer) createTable(lsn wal.LSN, name string) bool {
	if len(catalogKey(name)) > storage.MaxKeySize {
		rd.skipped++
		rd.d.log.Error("recovery: skipping a logged table whose name the backend cannot store",
			"lsn", lsn, "table", truncated(name), "name_len", len(name))
		return false
	}
	rd.b.Set(catalogKey(name), nil)
	return true
}

// finish reports what replay left unfinished, and empties the tables of
// bulk loads that did not commit.
func (rd *redoer) finish() {
	rd.bulkUnfinished()
	for xid, frags := range rd.parts {
		n := 0
		for _, f := range frags {
			n += len(f)
		}
		rd.d.log.Info("recovery: dropping a commit cut off while it was logged", "xid", xid, "bytes", n)
	}
	rd.parts = nil
	if rd.skipped > 0 {
		rd.d.log.Error("recovery: skipped logged writes the backend cannot store", "count", rd.skipped)
	}
	rd.d.skippedAtRecovery.Store(uint64(rd.skipped))
}

// flushIfLarge commits b without sync once it holds backendChunk bytes,
// and empties it (see "Memory" above).
func (d *Store) flushIfLarge(b storage.Batch) error {
	if b.Size() < backendChunk {
		return nil
	}
	if err := d.be.Commit(b, false); err != nil {
		return d.fail(err)
	}
	b.Reset()
	return nil
}

func truncated(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
