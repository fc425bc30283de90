package engine

import (
	"slices"
	"time"

	"github.com/tupled/tupled/heap"
)

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
// into its tables' arenas and evicts them.
const memMaintainInterval = 100 * time.Millisecond

// memVacuumRows: with more rows than this in memory, a maintenance pass
// starts with a vacuum pass, so that rows a bulk load wrote are frozen and
// off the vacuum worklist (which would keep their objects alive) by the
// time their checkpoint cleans them.
const memVacuumRows = 1 << 17

// memPassHeld, when a test sets it (before Open), runs in every
// maintenance pass while the pass holds its snapshot.
var memPassHeld func()

// memMaintain moves settled rows into the arenas and drops them from
// memory: a vacuum pass first when many rows are in memory, then every
// table's dirty rows written to its arena as of one snapshot
// (CheckpointRows), then the rows that made clean and may leave
// (EvictRows: a written row leaves memory once its write settled, and a
// row read again is read from the arena), then any table over CacheRows
// (Evict: rows brought in by locks stay until then, since a lock needs the
// row in memory and bringing it in again costs more than keeping it).
// Serialised with DropTable by memMu.
func (e *Engine) memMaintain() {
	if e.heap.TuplesInMemory() > memVacuumRows {
		e.Vacuum()
	}
	e.memMu.Lock()
	defer e.memMu.Unlock()
	x := e.xacts.BeginInternal() // holds the horizon while we read
	snap := e.xacts.TakeSnapshot(x)
	defer e.xacts.Abort(x)
	if memPassHeld != nil {
		memPassHeld()
	}
	tables := e.heap.Tables()
	if e.memLater == nil {
		e.memLater = map[*heap.Table][]*heap.Row{}
	}
	for t := range e.memLater {
		if !slices.Contains(tables, t) {
			delete(e.memLater, t) // dropped
		}
	}
	for _, t := range tables {
		a := t.Arena()
		if a == nil {
			continue
		}
		if t.DirtyRows() == 0 {
			if later := e.memLater[t]; len(later) > 0 {
				e.memLater[t] = t.EvictRows(later)
			}
			continue
		}
		b := a.NewArenaBatch()
		b.Grow(t.DirtyRows())
		var keys []byte // the batch's keys, in chunks it keeps until Commit
		clean, err := t.CheckpointRows(snap, func(key, value []byte, ok bool) error {
			if cap(keys)-len(keys) < 1+len(key) {
				keys = make([]byte, 0, max(1+len(key), 64<<10))
			}
			at := len(keys)
			keys = append(append(keys, heap.ArenaKeyPrefix), key...)
			k := keys[at:len(keys):len(keys)]
			if ok {
				b.SetOwned(k, value) // a version's value never changes
			} else {
				b.Delete(k)
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
		e.memLater[t] = t.EvictRows(append(e.memLater[t], clean()...))
	}
	for _, t := range tables {
		t.Evict(e.cfg.CacheRows)
	}
}
