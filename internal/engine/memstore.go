package engine

import "time"

// An in-memory engine's rows.
//
// An in-memory engine's tables are the heap's persistent tables over an
// arena (storage.Arena) instead of pebble: the rows in use are Go objects,
// and a row that is committed, frozen and unlocked is one record in the
// arena's pointer-free pages, which the garbage collector does not walk.
// What package durable does for an on-disk engine — checkpoints that write
// the dirty rows' committed values to the backend, then eviction of clean
// rows from memory — memMaintain does here without a WAL: there is nothing
// to recover, so a "checkpoint" is only the move of settled rows into the
// arena, and nothing is synced.
//
// A plain read of a row in the arena reads its record without bringing the
// row into memory (heap.Table.ReadResident); a lock or a write brings it in,
// and it leaves again once it is clean, frozen by vacuum and unlocked. So
// what stays on the Go heap is the working set: the rows written or locked
// since the last few maintenance passes.

// memMaintainInterval is how often an in-memory engine moves settled rows
// into its arena and evicts them.
const memMaintainInterval = 100 * time.Millisecond

// memKeepRows is how many rows of each table an in-memory engine keeps as
// objects (a bounded working set, as CacheRows bounds an on-disk engine's).
const memKeepRows = 1 << 16

// memMaintain moves settled rows into the arena and drops them from
// memory: a vacuum pass first when the tables hold many more rows in
// memory than they keep (so that a bulk load's rows are frozen and off the
// vacuum worklist, which would keep them alive), then every table's dirty
// rows written to the arena as of one snapshot (CheckpointRows), then the
// rows that made clean and may leave (EvictRows), then any table still
// over memKeepRows (Evict). Serialised with DropTable by memMu.
func (e *Engine) memMaintain() {
	keep := memKeepRows
	if e.cfg.CacheRows > 0 {
		keep = min(e.cfg.CacheRows, memKeepRows)
	}
	if e.heap.TuplesInMemory() > int64(2*keep) {
		e.Vacuum()
	}
	e.memMu.Lock()
	defer e.memMu.Unlock()
	x := e.xacts.BeginInternal() // holds the horizon while we read
	snap := e.xacts.TakeSnapshot(x)
	defer e.xacts.Abort(x)
	for _, t := range e.heap.Tables() {
		a := t.Arena()
		if a == nil || t.DirtyRows() == 0 {
			continue
		}
		b := a.NewArenaBatch()
		b.Grow(t.DirtyRows())
		clean, err := t.CheckpointRows(snap, func(key, value []byte, ok bool) error {
			if ok {
				b.SetOwned(key, value) // a row's key and a version's value never change
			} else {
				b.Delete(key)
			}
			return nil
		})
		if err == nil && b.Len() > 0 {
			err = a.Commit(b, false)
		}
		if err != nil {
			e.log.Error("in-memory checkpoint failed", "table", t.Name(), "err", err)
			continue
		}
		t.EvictRows(clean())
	}
	for _, t := range e.heap.Tables() {
		t.Evict(keep)
	}
}
