package durable

import (
	"time"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/storage"
)

// storable reports whether the backend can hold a row (table, key, value):
// recovery skips a logged write it cannot (one the engine accepted before
// there were limits) rather than failing on it for ever.
func storable(table string, key, value []byte) bool {
	return heap.RowKeyLen(table, len(key)) <= storage.MaxKeySize && len(value) <= storage.MaxValueSize
}

// Maintain is the Store's share of the engine's background loop, called
// every few milliseconds: it checkpoints every Config.CheckpointInterval,
// or sooner once the WAL since the last checkpoint reaches
// Config.CheckpointWALSize (after a failed checkpoint — a full disk — the
// size trigger waits a second), and then evicts clean rows from each
// table's cache down to Config.CacheRows. A checkpoint's error is logged
// (and the WAL kept), not returned: the next one tries again.
func (d *Store) Maintain(now time.Time) {
	if d.lastMaintain.IsZero() {
		d.lastMaintain, d.lastCkptAt = now, now
	}
	walSize := int64(uint64(d.wal.EndLSN()) - d.lastCkptLSN.Load())
	if now.Sub(d.lastCkptAt) >= d.cfg.CheckpointInterval ||
		(d.cfg.CheckpointWALSize > 0 && walSize >= d.cfg.CheckpointWALSize && now.After(d.ckptRetry)) {
		if err := d.Checkpoint(); err != nil {
			d.log.Error("checkpoint failed", "err", err)
			d.ckptRetry = now.Add(time.Second)
		}
		d.lastCkptAt = now
	}
	for _, t := range d.heap.Tables() {
		t.Evict(d.cfg.CacheRows)
	}
	d.lastMaintain = now
}

// Counters are the Store's statistics.
type Counters struct {
	WALRecords, WALFsyncs, Checkpoints, RecoverySkippedWrites uint64
}

// Counters returns the Store's statistics, each read atomically.
func (d *Store) Counters() Counters {
	ws := d.wal.Stats()
	return Counters{WALRecords: ws.Records, WALFsyncs: ws.Fsyncs, Checkpoints: d.checkpoints.Load(), RecoverySkippedWrites: d.skippedAtRecovery.Load()}
}

// BackendError is the error of an operation during which the heap's
// backend read failed, or nil: an operation during which a row could not
// be loaded must fail, since the row might exist or hold another value (a
// read that fails loads nothing). The backend has failed then, so the
// Store fails with it (fail): errs.ErrCorrupted when the read reported
// damage, else errs.ErrIO (58030), and writes are refused from then on.
func (d *Store) BackendError() error {
	if err := d.heap.BackendError(); err != nil {
		return d.fail(err)
	}
	return nil
}
