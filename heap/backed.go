package heap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/tupled/tupled/storage"
	"github.com/tupled/tupled/xact"
)

// Persistent tables.
//
// A persistent table keeps its rows in a storage.Backend as of the last
// checkpoint — one committed value per key, nothing else: no xmin, no xmax,
// no multixact, because after a checkpoint or a recovery every transaction
// that could have locked or changed those rows has ended — plus an in-memory
// B-tree of the rows that are in use (a bounded cache). A row missing from
// memory is loaded on demand as one frozen version; a clean, unpinned row
// whose only version is frozen and carries no xmax can be evicted again.
//
// Invariants:
//   - A row is dirty from the first write (Apply of an insert, update or
//     delete) until a checkpoint has written the state that includes it; a
//     dirty row is never evicted nor unlinked, so the backend's stale copy
//     can never be loaded over it.
//   - An operation pins the row it works on (Table.PinRow) for as long as it
//     holds the *Row; eviction, under the row latch, skips pinned rows and
//     marks the rows it drops removed, so a lookup that raced with it retries.

// RowKey is the backend key of (table, key): 'r', uvarint(len(table)), table, key.
func RowKey(table string, key []byte) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen32+len(table)+len(key))
	b = append(b, 'r')
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	return append(b, key...)
}

// RowKeyLen is len(RowKey(table, key)) for a key of keyLen bytes, without
// building it.
func RowKeyLen(table string, keyLen int) int {
	var b [binary.MaxVarintLen64]byte
	return 1 + binary.PutUvarint(b[:], uint64(len(table))) + len(table) + keyLen
}

// backedStore is a memStore in front of a backend range.
type backedStore struct {
	mem    *memStore
	be     storage.Backend
	prefix []byte
	heap   *Heap
}

// NewBackedStore returns the store of a persistent table.
func (h *Heap) newBackedStore(table string, be storage.Backend) *backedStore {
	return &backedStore{mem: newMemStore(), be: be, prefix: RowKey(table, nil), heap: h}
}

func frozenVersion(value []byte) *Tuple {
	t := NewFrozenTuple(value)
	t.applied = true
	return t
}

// load returns the row for key, reading it from the backend if it is not in
// memory; nil if it exists nowhere.
//
// The backend's value is the row's current state only if the row stayed
// out of memory from the lookup to the insert: a row loaded meanwhile by
// another caller, changed, checkpointed and evicted (or unlinked by
// vacuum) again would leave this caller holding the value from before
// the change, and inserting it would bring that value back as a frozen
// version. So load notes mem's removal count before the backend read and
// inserts only if no row left memory since; otherwise it reads again.
func (s *backedStore) load(key []byte) *Row {
	for {
		s.mem.mu.RLock()
		r := s.mem.idx[string(key)]
		removals := s.mem.removals
		s.mem.mu.RUnlock()
		if r != nil {
			return r
		}
		v, ok, err := s.be.Get(append(bytes.Clone(s.prefix), key...))
		if err != nil {
			s.heap.backendFailed(err)
			return nil
		}
		if hook := s.heap.testAfterBackendGet; hook != nil {
			hook(key)
		}
		if !ok {
			return nil
		}
		s.mem.mu.Lock()
		if r := s.mem.idx[string(key)]; r != nil {
			s.mem.mu.Unlock()
			return r // loaded meanwhile
		}
		if s.mem.removals != removals {
			s.mem.mu.Unlock()
			continue // a row left memory meanwhile: v may be stale
		}
		r = &Row{key: bytes.Clone(key), versions: []*Tuple{frozenVersion(v)}}
		s.mem.insertLocked(r)
		s.mem.mu.Unlock()
		s.heap.tuplesLive.Add(1)
		return r
	}
}

func (s *backedStore) Get(key []byte) *Row { return s.load(key) }

// loadPinned is load plus Pin (see pinned).
func (s *backedStore) loadPinned(key []byte) *Row { return pinned(s.load, key) }

func (s *backedStore) GetOrCreate(key []byte) *Row {
	if r := s.load(key); r != nil {
		return r
	}
	return s.mem.GetOrCreate(key)
}

func (s *backedStore) Remove(r *Row) { s.mem.Remove(r) }

// backendBatch is one batch of a scan: up to backendBatchSize keys of the
// table from scan (the backend's Scan or ReverseScan) over the backend keys
// [lo, hi), with their rows loaded into memory and pinned, so eviction
// cannot drop a row between loading and visiting it; unpin releases them.
// ok is false when the backend failed (reported to the heap).
func (s *backedStore) backendBatch(scan func(lo, hi []byte, fn func(k, v []byte) error) error, lo, hi []byte) (keys [][]byte, unpin func(), ok bool) {
	errStop := fmt.Errorf("stop")
	err := scan(lo, hi, func(k, _ []byte) error {
		keys = append(keys, bytes.Clone(k[len(s.prefix):]))
		if len(keys) == backendBatchSize {
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		s.heap.backendFailed(err)
		return nil, nil, false
	}
	pinned := make([]*Row, 0, len(keys))
	for _, k := range keys {
		if r := s.loadPinned(k); r != nil {
			pinned = append(pinned, r)
		}
	}
	return keys, func() {
		for _, r := range pinned {
			r.Unpin()
		}
	}, true
}

const backendBatchSize = 64

// backendKey is the backend key of the table's key k; nil k is the end of
// the table's keys.
func (s *backedStore) backendKey(k []byte) []byte {
	if k == nil {
		return prefixEnd(s.prefix)
	}
	return append(bytes.Clone(s.prefix), k...)
}

// Ascend merges the backend's keys into memory batch by batch, then walks
// memory: every row in range is visited once, in key order.
func (s *backedStore) Ascend(start, end []byte, fn func(*Row) bool) {
	cursor := start
	for {
		keys, unpin, ok := s.backendBatch(s.be.Scan, append(bytes.Clone(s.prefix), cursor...), s.backendKey(end))
		if !ok {
			return
		}
		if len(keys) < backendBatchSize {
			s.mem.Ascend(cursor, end, fn)
			unpin()
			return
		}
		// Visit memory up to and including the last backend key.
		next := append(bytes.Clone(keys[len(keys)-1]), 0)
		stopped := false
		s.mem.Ascend(cursor, next, func(r *Row) bool {
			stopped = !fn(r)
			return !stopped
		})
		unpin()
		if stopped {
			return
		}
		cursor = next
	}
}

// Descend is Ascend backwards: each batch is the backend's next keys below
// the cursor, merged into memory, then memory is walked down to the batch's
// lowest key.
func (s *backedStore) Descend(start, end []byte, fn func(*Row) bool) {
	cursor := end
	lo := append(bytes.Clone(s.prefix), start...)
	for {
		keys, unpin, ok := s.backendBatch(s.be.ReverseScan, lo, s.backendKey(cursor))
		if !ok {
			return
		}
		if len(keys) < backendBatchSize {
			s.mem.Descend(start, cursor, fn)
			unpin()
			return
		}
		// Visit memory down to and including the lowest backend key.
		last := keys[len(keys)-1]
		stopped := false
		s.mem.Descend(last, cursor, func(r *Row) bool {
			stopped = !fn(r)
			return !stopped
		})
		unpin()
		if stopped {
			return
		}
		cursor = last
	}
}

func (s *backedStore) Len() int { return s.mem.Len() }

// prefixEnd is the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	e := bytes.Clone(p)
	for i := len(e) - 1; i >= 0; i-- {
		if e[i] != 0xff {
			e[i]++
			return e[:i+1]
		}
	}
	return nil
}

// PinRow returns the row for key pinned (see Row.Pin), or nil. The caller
// must Unpin it when done.
func (t *Table) PinRow(key []byte) *Row { return pinned(t.store.Get, key) }

// pinned looks key up with get and pins the row, retrying when eviction or
// vacuum removed it between the lookup and the pin.
func pinned(get func([]byte) *Row, key []byte) *Row {
	for {
		r := get(key)
		if r == nil {
			return nil
		}
		r.Pin()
		// Pin, then check removed; markRemoved sets removed, then
		// checks pins: one of the two sees the other (see markRemoved).
		if !r.removed.Load() {
			return r
		}
		r.Unpin()
	}
}

// Persistent reports whether the table lives in a backend.
func (t *Table) Persistent() bool { _, ok := t.store.(*backedStore); return ok }

// markDirty records a write to r. Latch held.
func (t *Table) markDirty(r *Row) {
	r.writes++
	if r.dirty || !t.Persistent() {
		return
	}
	r.dirty = true
	t.dirtyMu.Lock()
	t.dirtyRows[r] = struct{}{}
	t.dirtyMu.Unlock()
}

// CheckpointRows calls put for every dirty row with the value of its version
// visible to snap (ok=false: no such version, the key must be deleted). It
// returns clean, which the caller calls once what put received is durable
// in the backend: it marks clean the rows whose every version was committed
// at or below snap.CSN (their written state is their current state) and
// that were not written since. Until then they stay dirty, so they are
// neither evicted nor unlinked and loaded again from a backend that does
// not hold the checkpoint yet. The caller's snapshot must be published
// (xact.TakeSnapshot) so that pruning keeps the versions it reads.
func (t *Table) CheckpointRows(snap xact.Snapshot, put func(key, value []byte, ok bool) error) (clean func(), err error) {
	t.dirtyMu.Lock()
	rows := make([]*Row, 0, len(t.dirtyRows))
	for r := range t.dirtyRows {
		rows = append(rows, r)
	}
	t.dirtyMu.Unlock()
	// In key order: a B+tree backend (bbolt) applies sorted writes far
	// faster than random ones.
	slices.SortFunc(rows, func(a, b *Row) int { return bytes.Compare(a.key, b.key) })
	type settled struct {
		r      *Row
		writes uint64
	}
	var done []settled
	for _, r := range rows {
		r.Lock()
		var val []byte
		found := false
		vs := r.versions
		for i := len(vs) - 1; i >= 0; i-- {
			if t.heap.SatisfiesMVCC(vs[i], snap) {
				val, found = vs[i].value, true
				break
			}
		}
		err := put(r.key, val, found)
		if err == nil && t.heap.settledAt(r, snap.CSN()) {
			done = append(done, settled{r, r.writes})
		}
		r.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return func() {
		for _, s := range done {
			s.r.Lock()
			if s.r.dirty && s.r.writes == s.writes {
				s.r.dirty = false
				t.dirtyMu.Lock()
				delete(t.dirtyRows, s.r)
				t.dirtyMu.Unlock()
			}
			s.r.Unlock()
		}
	}, nil
}

// settledAt reports whether every version of r was made, and if updated or
// deleted was so, by transactions committed at or below csn. Latch held.
func (h *Heap) settledAt(r *Row, csn uint64) bool {
	for _, v := range r.versions {
		if v.infomask&XminFrozen != XminFrozen {
			st, c := h.xacts.Status(v.xmin)
			if st == xact.InProgress || (st == xact.Committed && c > csn) {
				return false
			}
		}
		if upd := UpdateXid(v); upd != 0 {
			st, c := h.xacts.Status(upd)
			if st == xact.InProgress || (st == xact.Committed && c > csn) {
				return false
			}
		}
	}
	return true
}

// DirtyRows is the number of rows written since the last checkpoint.
func (t *Table) DirtyRows() int {
	t.dirtyMu.Lock()
	defer t.dirtyMu.Unlock()
	return len(t.dirtyRows)
}

// Evict drops clean rows from memory until at most keep rows remain (or no
// more can go): rows that are not dirty, not pinned, and hold exactly one
// frozen version without xmax, or with only a finished locker's xid (which
// vacuum leaves alone; see Table.vacList). It returns how many it dropped.
func (t *Table) Evict(keep int) int {
	s, ok := t.store.(*backedStore)
	if !ok || s.mem.Len() <= keep {
		return 0
	}
	over := s.mem.Len() - keep
	var victims []*Row
	s.mem.mu.RLock()
	s.mem.bt.Ascend(func(r *Row) bool {
		victims = append(victims, r)
		return len(victims) < 4*over
	})
	s.mem.mu.RUnlock()
	n := 0
	for _, r := range victims {
		if n >= over {
			break
		}
		r.Lock()
		if !r.dirty && !r.removed.Load() && r.pins.Load() == 0 && len(r.versions) == 1 &&
			r.versions[0].infomask&XminFrozen == XminFrozen && t.heap.noLiveXmax(r.versions[0]) &&
			r.markRemoved() {
			s.mem.Remove(r)
			t.heap.tuplesLive.Add(-1)
			n++
		}
		r.Unlock()
	}
	return n
}

// noLiveXmax reports whether v's xmax is empty or a finished plain locker
// (then cleared, as the next visitor would). Latch held.
func (h *Heap) noLiveXmax(v *Tuple) bool {
	if v.infomask&XmaxInvalid != 0 || v.xmax == 0 {
		return true
	}
	if v.infomask&XmaxIsMulti != 0 || !IsLockedOnly(v.infomask) || h.xacts.IsInProgress(v.xmax) {
		return false
	}
	h.freezeXmax(v)
	return true
}
