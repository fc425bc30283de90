package heap

import (
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/multixact"
)

// Tuple is one version of a row: PostgreSQL's HeapTupleHeader reduced to what
// row locking and MVCC need.
//
// Its header is the heap's to change: a version is made by NewTuple or
// NewFrozenTuple, gets its initial xmax (the lockers an update carries
// over) by SetInitialXmax before it is applied, and from then on changes
// only through Table.Apply (a Change: xmax, infomask, t_ctid) and the
// heap's own hint bits, pruning and freezing. Outside packages read it
// through the accessors below. Every field but xmin and value is guarded
// by the latch of the Row the tuple belongs to; xmin and value never
// change after the version is made.
type Tuple struct {
	xmin uint64 // inserting (or updating) transaction
	// xmax is the deleting/updating transaction, a locker, or — when
	// infomask&XmaxIsMulti — a MultiXactId, whose members multi points to.
	xmax      uint64
	multi     *multixact.MultiXact
	infomask  uint16
	infomask2 uint16
	// next is t_ctid: the successor version made by an update; nil means the
	// ctid points to the tuple itself (never updated, deleted, or only locked).
	next    *Tuple
	value   []byte
	applied bool // Table.Apply published it (SetInitialXmax refuses then)
}

// insertedTuple is an inserted version and the one-element version list
// a new row starts with, in one allocation (80 bytes, the size class a
// Tuple alone takes). The list keeps the tuple alive only while the row's
// versions are that list: an update's append moves them to a new array,
// and pruning that empties a row drops the list (pruneWith), so no dead
// version outlives its removal through it.
type insertedTuple struct {
	t    Tuple
	list [1]*Tuple
}

// NewInsertTuple is NewTuple(xmin, value, false) with a version list for
// a new row (Change.List): one allocation per inserted row instead of two.
func NewInsertTuple(xmin uint64, value []byte) (*Tuple, []*Tuple) {
	it := &insertedTuple{t: Tuple{xmin: xmin, value: value, infomask: XmaxInvalid}}
	return &it.t, it.list[:0]
}

// NewTuple is a version made by transaction xmin with value, no xmax yet;
// updated marks the new version of an UPDATE (HEAP_UPDATED).
func NewTuple(xmin uint64, value []byte, updated bool) *Tuple {
	t := &Tuple{xmin: xmin, value: value, infomask: XmaxInvalid}
	if updated {
		t.infomask |= Updated
	}
	return t
}

// NewFrozenTuple is a version visible to every transaction (xmin frozen,
// no xmax): a row loaded from the backend, or a test's fixture.
func NewFrozenTuple(value []byte) *Tuple {
	return &Tuple{value: value, infomask: XminFrozen | XmaxInvalid}
}

// SetInitialXmax gives a version not yet applied the xmax it starts with:
// the lockers that survive an update lock its new version too (a plain
// locker's xid with the infomask bits of its lock, or a multixact with
// its hint bits). It panics on a version Table.Apply has published.
func (t *Tuple) SetInitialXmax(xmax uint64, m *multixact.MultiXact, infomask, infomask2 uint16) {
	if t.applied {
		panic("heap: SetInitialXmax on a published tuple")
	}
	t.xmax, t.multi = xmax, m
	t.infomask = t.infomask&^(XmaxBits|XmaxInvalid) | infomask
	t.infomask2 |= infomask2
	if invariants.Enabled {
		checkHeader(t, "SetInitialXmax")
	}
}

// Xmin is the inserting (or updating) transaction.
func (t *Tuple) Xmin() uint64 { return t.xmin }

// Xmax is the deleting or updating transaction, a locker, or, when
// Infomask()&XmaxIsMulti, a MultiXactId whose members Multi() holds. Latch
// held.
func (t *Tuple) Xmax() uint64 { return t.xmax }

// Multi is the multixact of a multi xmax (nil otherwise). Latch held.
func (t *Tuple) Multi() *multixact.MultiXact { return t.multi }

// Infomask is t_infomask (the Xmin*/Xmax* bits). Latch held.
func (t *Tuple) Infomask() uint16 { return t.infomask }

// Infomask2 is t_infomask2 (KeysUpdated). Latch held.
func (t *Tuple) Infomask2() uint16 { return t.infomask2 }

// Next is t_ctid: the successor an update made, or nil. Latch held.
func (t *Tuple) Next() *Tuple { return t.next }

// Value is the version's value; the caller must not modify it.
func (t *Tuple) Value() []byte { return t.value }

// SetXmaxInvalidHint sets the XmaxInvalid hint bit of a version whose
// plain (not multi) xmax aborted, as a visitor that found it so does.
// Latch held.
func SetXmaxInvalidHint(t *Tuple) {
	if t.infomask&XmaxIsMulti == 0 {
		t.infomask |= XmaxInvalid
	}
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
	// listed: 1 when the row is in its table's dirtyList (guarded by the
	// table's dirtyMu, not the latch; 2 only inside CheckpointRows' clean).
	listed uint8
	// writes counts markDirty calls: a checkpoint marks a row clean only
	// if it was not written again since the checkpoint read it.
	writes uint64
	// pins counts operations using the row; eviction skips pinned rows.
	pins atomic.Int32
	// inVac: the row is on its table's vacuum worklist (Table.vacList).
	inVac bool
	// Persistent tables (backed.go). inTree: the row is in its store's
	// B-tree of written rows (guarded by the store's mu). transient: a
	// scan's copy of a row that was not in memory, never in any store and
	// never changed (Table.Apply refuses it); readAt is the store's removal
	// count when the scan read it from the backend (see backedStore.adopt).
	inTree    bool
	transient bool
	// stored: the backend may hold the row's key — the row was loaded from
	// it, or a checkpoint wrote a value for it. A row that never was has
	// nothing in the backend to delete (CheckpointRows). Under the latch.
	stored bool
	readAt uint64
	// cur is the latch-free summary of the newest version (current.go):
	// written by publish under the latch, read by Table.ReadResident
	// without it.
	cur currentVersion
}

// Transient reports whether r is a scan's read-only copy of a row that was
// not in memory (its one version frozen): a caller that wants to lock or
// change the row gets the row itself with Table.PinScanned. A transient
// row's key and value are fresh copies that nothing else refers to once
// the scan has moved past it, unless PinScanned adopted it: a reading scan
// may hand them to its caller as they are. The Row and its Tuple are not:
// the scan reuses them for its next batch, so they are valid only until
// the scan's callback returns for the row (keep the key and value, never
// the *Row or *Tuple).
func (r *Row) Transient() bool { return r.transient }

// Pin marks the row in use, so eviction leaves it in memory. Every Pin is
// matched by one Unpin.
func (r *Row) Pin() { r.pins.Add(1) }

// Unpin undoes one Pin.
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

// Key is the row's primary key. It never changes; it is the row's own
// slice, which the caller must not modify.
func (r *Row) Key() []byte { return r.key }

// Versions returns the versions, oldest first; the latch must be held and the
// slice must not be modified.
func (r *Row) Versions() []*Tuple { return r.versions }

// Removed reports whether vacuum unlinked the (empty) row; the latch must be
// held. A caller that finds it removed looks the key up again.
func (r *Row) Removed() bool { return r.removed.Load() }
