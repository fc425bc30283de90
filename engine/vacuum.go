package engine

import (
	"time"

	"github.com/tupled/tupled/multixact"
)

// VacuumResult reports one Vacuum pass (package tupled's VacuumResult
// has the same fields and documents them).
type VacuumResult struct {
	Rows            int
	VersionsRemoved int
	RowsUnlinked    int
	ClogTruncatedTo uint64
}

// Vacuum reclaims what no snapshot can need: tuple versions deleted or
// updated by transactions that committed before every live snapshot,
// versions of aborted transactions, finished lockers in xmax (of the rows
// it visits: a single locker's xid on an otherwise settled row is left for
// the next visitor, see heap.Table), multixacts no transaction can need
// (they are then garbage-collected), empty keys, and commit-status entries
// below the oldest xid still referenced. It runs in the background every
// Options.VacuumInterval; calling it directly is safe.
func (e *Engine) Vacuum() VacuumResult {
	e.vacuumMu.Lock()
	defer e.vacuumMu.Unlock()
	horizon := e.xacts.Horizon()
	e.heap.SetPruneHorizon(horizon)
	cutoff := e.xacts.FreezeCutoff(horizon)
	var res VacuumResult
	minRef := cutoff
	var multis map[*multixact.MultiXact]struct{} // interned sets may be shared across tables
	for _, t := range e.heap.Tables() {
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
	e.multi.SetLive(uint64(len(multis)))
	e.xacts.TruncateClog(minRef)
	res.ClogTruncatedTo = minRef
	e.vacuumRuns.Add(1)
	e.log.Debug("vacuum", "rows", res.Rows, "versions_removed", res.VersionsRemoved, "rows_unlinked", res.RowsUnlinked, "clog_truncated_to", res.ClogTruncatedTo, "horizon_csn", horizon)
	return res
}

// background refreshes the prune horizon often (so updates prune their
// row's dead versions as they go), runs a full vacuum every interval (if
// > 0), and lets an on-disk engine's Store checkpoint and evict
// (durable.Store.Maintain).
func (e *Engine) background(interval time.Duration) {
	defer e.bgDone.Done()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-e.stop:
			return
		case now := <-tick.C:
			e.heap.SetPruneHorizon(e.xacts.Horizon())
			e.xacts.RefreshFinished()
			if interval > 0 && now.Sub(last) >= interval {
				e.Vacuum()
				last = now
			}
			if e.dur != nil {
				e.dur.Maintain(now)
			}
		}
	}
}
