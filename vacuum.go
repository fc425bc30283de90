package tupled

import (
	"time"

	"github.com/tupled/tupled/multixact"
)

// VacuumResult reports one DB.Vacuum pass.
type VacuumResult struct {
	Rows            int    // rows examined (those written since they were last found with nothing to do)
	VersionsRemoved int    // dead tuple versions reclaimed
	RowsUnlinked    int    // keys with no version left, removed from their table
	ClogTruncatedTo uint64 // commit-status entries below this xid were dropped
}

// Vacuum reclaims what no snapshot can need: tuple versions deleted or
// updated by transactions that committed before every live snapshot,
// versions of aborted transactions, finished lockers in xmax (of the rows
// it visits: a single locker's xid on an otherwise settled row is left for
// the next visitor, see heap.Table), multixacts no transaction can need
// (they are then garbage-collected), empty keys, and commit-status entries
// below the oldest xid still referenced. It runs in the background every
// Options.VacuumInterval; calling it directly is safe.
func (db *DB) Vacuum() VacuumResult {
	if db.enter() != nil {
		return VacuumResult{}
	}
	defer db.exit()
	db.vacuumMu.Lock()
	defer db.vacuumMu.Unlock()
	horizon := db.xacts.Horizon()
	db.heap.SetPruneHorizon(horizon)
	cutoff := db.xacts.FreezeCutoff(horizon)
	var res VacuumResult
	minRef := cutoff
	var multis map[*multixact.MultiXact]struct{} // interned sets may be shared across tables
	for _, t := range db.heap.Tables() {
		r := t.Vacuum(horizon, cutoff)
		if multis == nil {
			multis = r.Multis
		} else {
			for m := range r.Multis {
				multis[m] = struct{}{}
			}
		}
		res.Rows += r.Rows
		res.VersionsRemoved += r.Removed
		res.RowsUnlinked += r.RowsUnlinked
		if r.MinXidRef < minRef {
			minRef = r.MinXidRef
		}
	}
	db.multi.SetLive(uint64(len(multis)))
	db.xacts.TruncateClog(minRef)
	res.ClogTruncatedTo = minRef
	db.vacuumRuns.Add(1)
	db.log.Debug("vacuum", "rows", res.Rows, "versions_removed", res.VersionsRemoved, "rows_unlinked", res.RowsUnlinked, "clog_truncated_to", res.ClogTruncatedTo, "horizon_csn", horizon)
	return res
}

// vacuumLoop refreshes the prune horizon often (so updates prune their
// row's dead versions as they go) and runs a full vacuum every interval.
func (db *DB) vacuumLoop(interval time.Duration) {
	defer db.bgDone.Done()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	last, lastCkpt := time.Now(), time.Now()
	var ckptRetry time.Time // after a failed checkpoint (a full disk): no WAL-size trigger before it
	for {
		select {
		case <-db.stop:
			return
		case now := <-tick.C:
			db.heap.SetPruneHorizon(db.xacts.Horizon())
			db.xacts.RefreshFinished()
			if interval > 0 && now.Sub(last) >= interval {
				db.Vacuum()
				last = now
			}
			if d := db.dur; d != nil {
				walSize := int64(uint64(d.wal.EndLSN()) - d.lastCkptLSN.Load())
				if now.Sub(lastCkpt) >= db.opts.CheckpointInterval ||
					(db.opts.CheckpointWALSize > 0 && walSize >= db.opts.CheckpointWALSize && now.After(ckptRetry)) {
					if err := d.checkpoint(); err != nil {
						db.log.Error("checkpoint failed", "err", err)
						ckptRetry = now.Add(time.Second)
					}
					lastCkpt = now
				}
				for _, t := range db.heap.Tables() {
					t.Evict(db.opts.CacheRows)
				}
			}
		}
	}
}

// Checkpoint writes the current committed state of an on-disk database to
// its backend and removes the WAL that is no longer needed. A no-op for an
// in-memory database.
func (db *DB) Checkpoint() error {
	if err := db.enter(); err != nil {
		return err
	}
	defer db.exit()
	if db.dur == nil {
		return nil
	}
	return db.dur.checkpoint()
}
