package heap

import (
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/multixact"
)

// Tuple is one version of a row: PostgreSQL's HeapTupleHeader reduced to what
// row locking and MVCC need.
//
// Every field but Xmin, Value and Key is guarded by the latch of the Row the
// tuple belongs to; Xmin and Value never change after the version is made.
type Tuple struct {
	Xmin uint64 // inserting (or updating) transaction
	// Xmax is the deleting/updating transaction, a locker, or — when
	// Infomask&XmaxIsMulti — a MultiXactId, whose members Multi points to.
	Xmax      uint64
	Multi     *multixact.MultiXact
	Infomask  uint16
	Infomask2 uint16
	// Next is t_ctid: the successor version made by an update; nil means the
	// ctid points to the tuple itself (never updated, deleted, or only locked).
	Next  *Tuple
	Value []byte
}

// Row is every version stored under one primary key, guarded by a short
// latch (PostgreSQL's buffer content lock, per row): it is held for the
// read-modify-write of xmax/infomask and for visibility checks, never while
// waiting for another transaction.
type Row struct {
	mu  sync.Mutex
	key []byte
	// versions are oldest first. Versions of one update chain are linked by
	// Next; a key deleted and inserted again starts a new chain in the same
	// row (as a unique index would hold two heap tuples).
	versions []*Tuple
	removed  atomic.Bool // vacuum or eviction unlinked this row from its table: look it up again (set under the latch)
	// dirty: a write since the last checkpoint (persistent tables only).
	dirty bool
	// writes counts markDirty calls: a checkpoint marks a row clean only
	// if it was not written again since the checkpoint read it.
	writes uint64
	// pins counts operations using the row; eviction skips pinned rows.
	pins atomic.Int32
	// inVac: the row is on its table's vacuum worklist (Table.vacList).
	inVac bool
}

// Pin marks the row in use, so eviction leaves it in memory; Unpin undoes it.
func (r *Row) Pin()   { r.pins.Add(1) }
func (r *Row) Unpin() { r.pins.Add(-1) }

// markRemoved marks the row removed, before vacuum or eviction unlinks it,
// unless someone pinned it. Latch held. pinned() increments pins and then
// loads removed without the latch; this stores removed and then loads pins.
// Both are sequentially consistent atomics, so at least one side sees the
// other's write: either pinned() sees removed (and looks the key up again)
// or this sees the pin (and backs off).
func (r *Row) markRemoved() bool {
	r.removed.Store(true)
	if r.pins.Load() != 0 {
		r.removed.Store(false)
		return false
	}
	return true
}

// Lock takes the row latch.
func (r *Row) Lock() { r.mu.Lock() }

// Unlock releases the row latch.
func (r *Row) Unlock() { r.mu.Unlock() }

// Key is the row's primary key (never modified).
func (r *Row) Key() []byte { return r.key }

// Versions returns the versions, oldest first; the latch must be held and the
// slice must not be modified.
func (r *Row) Versions() []*Tuple { return r.versions }

// Removed reports whether vacuum unlinked the (empty) row; the latch must be
// held. A caller that finds it removed looks the key up again.
func (r *Row) Removed() bool { return r.removed.Load() }
