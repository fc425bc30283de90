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

// Vacuum runs one vacuum pass over every table (heap.Table.Vacuum) at the
// current horizon, then garbage-collects multixacts and truncates the
// commit log below the oldest xid still referenced. Passes are serialized.
func (e *Engine) Vacuum() VacuumResult {
	e.vacuumMu.Lock()
	defer e.vacuumMu.Unlock()
	return e.vacuumAt(e.xacts.Horizon())
}

// VacuumNow is Vacuum as a caller asks for it (DB.Vacuum): its horizon is
// that of the transactions alone. A checkpoint or an in-memory maintenance
// pass holds the horizon back with its own snapshot while it runs (so the
// versions it reads are not pruned under it); Vacuum in the background
// does not mind, but a caller who vacuums once every transaction of theirs
// has ended expects every dead version gone. So VacuumNow takes its
// horizon between such passes, not during one.
func (e *Engine) VacuumNow() VacuumResult {
	e.vacuumMu.Lock()
	defer e.vacuumMu.Unlock()
	var horizon uint64
	if e.dur != nil {
		e.dur.BetweenCheckpoints(func() { horizon = e.xacts.Horizon() })
	} else {
		e.memMu.Lock()
		horizon = e.xacts.Horizon()
		e.memMu.Unlock()
	}
	return e.vacuumAt(horizon)
}

// vacuumAt is a vacuum pass at horizon; vacuumMu is held.
func (e *Engine) vacuumAt(horizon uint64) VacuumResult {
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
	lastMem := last
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
			} else if e.arenas && now.Sub(lastMem) >= memMaintainInterval {
				e.memMaintain()
				lastMem = now
			}
		}
	}
}
