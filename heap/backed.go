package heap

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/xact"
)

// Persistent tables.
//
// A persistent table keeps its rows in a storage.Backend as of the last
// checkpoint — one committed value per key, nothing else: no xmin, no xmax,
// no multixact, because after a checkpoint or a recovery every transaction
// that could have locked or changed those rows has ended — and keeps in
// memory only the rows in use (a bounded cache). A row missing from memory
// is read from the backend as one frozen version; a clean, unpinned row
// whose only version is frozen and carries no xmax can leave memory again
// (Evict).
//
// The design follows from one fact: a row that is not in memory has exactly
// one version, its backend value, and that version is visible to every
// snapshot that is live now or taken later. Eviction makes it so — it drops
// only rows that are clean (the backend holds their state) and whose one
// version is frozen (committed below every live snapshot's horizon) with no
// live xmax — and the row cannot change while it is out of memory, since
// every change first brings it in. So:
//
//   - Memory holds two structures (backedStore). idx, a hash, finds every
//     row in memory by key: a point read that misses costs one backend Get
//     and one hash insert, with no ordered structure to maintain. The hash
//     is sharded (rowIndex) and the insert holds the table's mutex only
//     shared, so concurrent cold reads of different keys do not queue
//     behind each other. bt, a
//     B-tree, orders only the rows that were written (inserted, updated or
//     deleted) since they entered memory: those are the rows whose state
//     may differ from the backend's, including keys the backend does not
//     hold yet. A row loaded and only read or locked (a FOR SHARE lock
//     changes xmax, not the row's versions) never enters the B-tree.
//   - A scan merges the two sources in key order, batch by batch (scan):
//     a run of the backend's keys and values from the scan's one backend
//     cursor (storage.Cursor: on pebble one iterator, kept between
//     batches, its blocks and readahead with it),
//     the B-tree's rows over the same key range, and, for each backend key,
//     the row in memory if there is one. A key only the backend has is
//     passed as a transient row (Row.Transient): the backend value as a
//     frozen version, never inserted anywhere. Its key and value are the
//     batch's copy, which the scan hands on and never reuses; the Row and
//     Tuple around them are reused by the next batch (scanBufs), so a
//     transient row is valid only until the callback returns for it. A
//     full scan therefore costs about one backend iteration, one copy of
//     each pair and a hash probe per key, and leaves the cache as it found
//     it. A locking scan brings in only the rows it locks
//     (Table.PinScanned).
//   - The backend value a scan (or a load) read is the row's state only if
//     the row stayed out of memory from the read to its use: a row loaded
//     meanwhile, changed, checkpointed and evicted again would leave the
//     reader holding a value from before the change. Rows leave memory only
//     through Remove, which counts them (removals, under mu); a reader
//     notes the count before its backend read and uses what it read only
//     if the count has not moved when it looks in memory, else reads again.
//     A scan's cursor reads pebble's snapshot of the moment it was opened,
//     so its count is noted before the cursor is opened, and the cursor is
//     reopened (at the batch's start) when the count moved. Eviction runs
//     in bursts, so a retry is rare.
//   - A queue's consumers delete from the head of a key range; deleted rows
//     stay in memory (and in the backend until the next checkpoint, then as
//     the backend's tombstones until its compaction), and a scan from the
//     head would walk every one of them on every claim. floor (floor.go,
//     which the in-memory store keeps too) is the key below which no row is
//     visible to any snapshot, live or future: a scan that starts at or
//     below it starts at it instead, moves it up past the rows it finds
//     dead to every snapshot (Heap.deadToAll), and an insert below it lowers
//     it. A claim then costs a seek plus the rows it skips because they are
//     locked, not the rows consumed since the checkpoint.
//   - A bulk load (COPY, INSERT ... SELECT, a serial or rowid key) inserts
//     keys above every key the backend holds, and each insert would pay a
//     backend Get only to learn that the key is new. ceil is the largest
//     key the backend may hold for the table: found once by a reverse
//     seek at the first miss (after Open and its redo, the only writers
//     besides the checkpoint), raised by CheckpointRows before it writes a
//     larger key. A miss in memory for a key above ceil is a new key
//     without a Get. A row leaves memory (Remove) only after a checkpoint
//     wrote its state, which raised ceil first, so a key above ceil is in
//     memory or nowhere.
//
// Invariants:
//   - A row is dirty from the first write (Apply of an insert, update or
//     delete) until a checkpoint has written the state that includes it; a
//     dirty row is never evicted nor unlinked, so the backend's stale copy
//     can never be loaded over it.
//   - An operation pins the row it works on (Table.PinRow) for as long as it
//     holds the *Row; eviction, under the row latch, skips pinned rows and
//     marks the rows it drops removed, so a lookup that raced with it retries.
//   - A row written since it entered memory is in bt (markDirty puts it
//     there under the row latch, before the write is visible); a row in idx
//     but not in bt holds the backend's value for its key as one frozen
//     version, with at most lockers in its xmax.
//   - No row visible to a live or future snapshot has a key below floor.
//   - Once known, no key above ceil is in the backend (for this table).
//   - A row with stored unset has no key in the backend: it was made for a
//     key the backend did not hold (GetOrCreate after a miss) and no
//     checkpoint wrote a value for it since, so a checkpoint that finds
//     no version of it visible has nothing to delete.
//   - The table's dirtyList holds each dirty row once (Row.listed), its
//     first dirtySorted rows in key order (CheckpointRows keeps them so).

// RowKey is the backend key of (table, key): 'r', uvarint(len(table)), table, key.
func RowKey(table string, key []byte) []byte {
	return AppendRowKey(make([]byte, 0, 1+binary.MaxVarintLen32+len(table)+len(key)), table, key)
}

// AppendRowKey appends RowKey(table, key) to b.
func AppendRowKey(b []byte, table string, key []byte) []byte {
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

// backedStore is a persistent table's rows: a backend range plus the rows
// in memory (see "Persistent tables" above).
type backedStore struct {
	mu  sync.RWMutex
	idx *rowIndex // every row in memory (sharded; see rowIndex)
	bt  rowTree   // the rows in memory written since they entered it (Row.inTree)
	// removals counts rows Remove unlinked: readers of the backend compare
	// it around their read (load, scan, adopt, readCold). It moves only
	// under mu exclusive, before the row leaves idx, and is read atomically
	// so that readCold needs no lock.
	removals atomic.Uint64

	// floor: no row with a smaller key is visible to any snapshot
	// (floor.go).
	floor scanFloor

	// ceil: the largest key the backend may hold (see "A bulk load"
	// above); nil until ceilKnown. ceilMu orders the first reverse seek
	// and raises.
	ceil      atomic.Pointer[[]byte]
	ceilKnown atomic.Bool
	ceilMu    sync.Mutex

	be    storage.Backend
	arena *storage.Arena // be, when it is the in-memory arena (values without copies)
	// out counts, with an arena, the rows in it and not in memory (each
	// one version): evicted, not loaded since.
	out    atomic.Int64
	prefix []byte
	heap   *Heap
}

// absentFromBackend reports whether key is above every key the backend
// holds for the table, so that a miss in memory means the key is new. The
// first call finds the table's largest backend key; a backend error is
// reported (Heap.backendFailed) and answers false.
func (s *backedStore) absentFromBackend(key []byte) bool {
	if !s.ceilKnown.Load() {
		s.ceilMu.Lock()
		if !s.ceilKnown.Load() {
			var last []byte
			err := s.be.ReverseScan(s.prefix, prefixEnd(s.prefix), func(k, _ []byte) error {
				last = bytes.Clone(k[len(s.prefix):])
				return errStopScan
			})
			if err != nil && err != errStopScan {
				s.ceilMu.Unlock()
				s.heap.backendFailed(err)
				return false
			}
			// A checkpoint may have raised the ceiling meanwhile, for a
			// key the scan did not see yet: keep the larger.
			if c := s.ceil.Load(); last != nil && (c == nil || bytes.Compare(last, *c) > 0) {
				s.ceil.Store(&last)
			}
			s.ceilKnown.Store(true)
		}
		s.ceilMu.Unlock()
	}
	c := s.ceil.Load()
	return c == nil || bytes.Compare(key, *c) > 0
}

// raiseCeil notes that the backend is about to hold key.
func (s *backedStore) raiseCeil(key []byte) {
	if c := s.ceil.Load(); c != nil && bytes.Compare(key, *c) <= 0 {
		return
	}
	s.ceilMu.Lock()
	if c := s.ceil.Load(); c == nil || bytes.Compare(key, *c) > 0 {
		k := bytes.Clone(key)
		s.ceil.Store(&k)
	}
	s.ceilMu.Unlock()
}

var errStopScan = errors.New("heap: stop scan")

// ArenaKeyPrefix is the prefix of every key in a table's own arena
// (Heap.UseArenas): 'r' and the table's key. Without one the empty key
// would be a backend key, which no backend holds, and a scan's bound at
// it would read as no bound.
const ArenaKeyPrefix = 'r'

// newArenaStore returns the store of a table in an arena of its own.
func (h *Heap) newArenaStore(a *storage.Arena) *backedStore {
	return &backedStore{idx: newRowIndex(), bt: newRowTree(), be: a, arena: a, prefix: []byte{ArenaKeyPrefix}, heap: h}
}

// NewBackedStore returns the store of a persistent table.
func (h *Heap) newBackedStore(table string, be storage.Backend) *backedStore {
	arena, _ := be.(*storage.Arena)
	return &backedStore{
		idx: newRowIndex(), bt: newRowTree(),
		be: be, arena: arena, prefix: RowKey(table, nil), heap: h,
	}
}

// A row read from the backend is a Row and its one frozen version, which
// carries the row's first version list (insertedTuple, as an inserted
// version does). The version is not part of the Row's allocation: a row
// that stays in memory while it is updated over and over would keep its
// first version alive, and through its Next link every later version
// vacuum removed (a hot row's whole history: TestMemoryFlatUnderEndlessUpdates
// with arenas saw the Go heap grow by 60 MB).

// newLoadedRow is the row of key (copied) holding value (kept) as its one
// frozen version.
func newLoadedRow(key, value []byte) *Row {
	return loadedRow(bytes.Clone(key), value)
}

// newLoadedRowCopy is newLoadedRow copying value too, with the key in one
// allocation.
func newLoadedRowCopy(key, value []byte) *Row {
	kv := make([]byte, len(key)+len(value))
	copy(kv, key)
	copy(kv[len(key):], value)
	return loadedRow(kv[:len(key):len(key)], kv[len(key):])
}

// loadedRow is the row of key (kept) holding value (kept) as its one
// frozen version.
func loadedRow(key, value []byte) *Row {
	it := &insertedTuple{t: Tuple{value: value, infomask: XminFrozen | XmaxInvalid, applied: true}}
	it.list[0] = &it.t
	r := &Row{key: key, stored: true, versions: it.list[:]}
	r.publish()
	return r
}

// load returns the row for key, reading it from the backend if it is not in
// memory; nil if it exists nowhere. A row it reads enters idx only.
//
// The backend's value is the row's current state only if the row stayed
// out of memory from the read to the insert (see "Persistent tables"): load
// notes the removal count before the read and inserts only if it has not
// moved; otherwise it reads again.
func (s *backedStore) load(key []byte) *Row {
	for {
		// The count first: a row that leaves idx after this moved it
		// (Remove moves it before the row leaves), and insertLoaded
		// then refuses what this read.
		removals := s.removals.Load()
		if r := s.idx.get(key); r != nil {
			return r
		}
		if s.absentFromBackend(key) {
			return nil
		}
		v, ok, err := s.get(key)
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
		// Built outside the locks: an allocation may assist the GC.
		var nr *Row
		if s.arena != nil {
			nr = newLoadedRowCopy(key, v) // see get
		} else {
			nr = newLoadedRow(key, v)
		}
		if r := s.insertLoaded(nr, removals); r != nil {
			return r
		}
		// A row left memory meanwhile: v may be stale.
	}
}

// get reads key's value from the backend: a copy the caller may keep, or
// from an arena the record's own bytes, which the caller copies before it
// keeps them (newLoadedRowCopy: a loaded row may stay in memory for long,
// and its value would keep the arena's whole page alive after a
// compaction moved the records).
func (s *backedStore) get(key []byte) ([]byte, bool, error) {
	var buf [96]byte
	bk := append(append(buf[:0], s.prefix...), key...)
	if s.arena != nil {
		return s.arena.GetNoCopy(bk)
	}
	return s.be.Get(bk)
}

// readCold is a plain read of a key with no row in memory, when the
// backend hands out values without a copy (an in-memory database's
// arena): the backend's value, without bringing the row into memory.
// decided is false when the row is in memory (or came in meanwhile) or
// the backend failed: the caller reads the row as usual.
//
// A row out of memory has one version visible to every live snapshot
// (see "Persistent tables"), so the value is the reader's if it is still
// the key's state after the read: the row did not come into memory (a
// second look in idx) and none left it (the removal count, which Remove
// moves before the row leaves idx). A row that came in, was changed,
// checkpointed and left again between the two looks moved the count.
func (s *backedStore) readCold(key []byte) (value []byte, found, decided bool) {
	if s.arena == nil {
		return nil, false, false
	}
	var buf [96]byte
	bk := append(append(buf[:0], s.prefix...), key...)
	for range 3 {
		n := s.removals.Load()
		if s.idx.get(key) != nil {
			return nil, false, false
		}
		v, found, err := s.arena.GetNoCopy(bk)
		if err != nil {
			return nil, false, false // the latched path reports it
		}
		if s.idx.get(key) != nil {
			return nil, false, false
		}
		if s.removals.Load() == n {
			return v, found, true
		}
	}
	return nil, false, false
}

// insertLoaded puts nr, made of a backend value read when the removal
// count was readAt, into idx and returns it; or returns the row its key
// has (loaded meanwhile); or nil, inserting nothing, if a row left memory
// since the read (the value may be stale: read again). mu is held shared:
// removals only moves under mu exclusive, so it cannot move between the
// check and the insert, and loads of other keys insert beside this one
// (rowIndex).
func (s *backedStore) insertLoaded(nr *Row, readAt uint64) *Row {
	s.mu.RLock()
	r := s.idx.putIfAbsent(nr, func() bool { return s.removals.Load() == readAt })
	s.mu.RUnlock()
	if r == nr {
		s.heap.tuplesLive.Add(1)
		if s.arena != nil {
			s.out.Add(-1)
			s.heap.tuplesOut.Add(-1)
		}
	}
	return r
}

// adopt returns the row in memory for a transient row's key: the row
// already there, else the transient row itself made a cached row when no
// row left memory since the scan read it (its value is still the row's
// state), else a fresh load.
func (s *backedStore) adopt(t *Row) *Row {
	if !t.transient {
		return s.load(t.key)
	}
	// Copies: the scan's key and value live in its batch's buffer.
	if r := s.insertLoaded(newLoadedRow(t.key, bytes.Clone(t.versions[0].value)), t.readAt); r != nil {
		return r
	}
	return s.load(t.key)
}

func (s *backedStore) Get(key []byte) *Row { return s.load(key) }

func (s *backedStore) Resident(key []byte) *Row { return s.idx.get(key) }

func (s *backedStore) Prefetch(keys [][]byte) { s.idx.touch(keys) }

// GetOrCreate returns the row for key, loading it or creating an empty one
// (in bt: its state is not the backend's) that keeps key.
//
// A key above the backend's ceiling (a bulk load's) is in memory or
// nowhere: one putIfAbsent finds the row there or inserts the new one,
// without load's lookup first (the hash and probe of a million-row map,
// twice per row) — provided no row left memory since the ceiling was
// read: a row of the key that was in memory then may since have been
// checkpointed (raising the ceiling past it) and evicted. Then, as when
// the key is below the ceiling, load looks first.
func (s *backedStore) GetOrCreate(key []byte) *Row {
	nr := &Row{key: key, inTree: true} // outside the lock: it may assist the GC
	s.mu.RLock()
	readAt := s.removals.Load()
	s.mu.RUnlock()
	fast := s.absentFromBackend(key)
	for {
		if !fast {
			if r := s.load(key); r != nil {
				return r
			}
		}
		s.mu.Lock()
		if fast && s.removals.Load() != readAt {
			s.mu.Unlock()
			fast = false
			continue
		}
		r := s.idx.putIfAbsent(nr, nil)
		if r == nr {
			s.bt.ReplaceOrInsert(nr)
		}
		s.mu.Unlock()
		return r
	}
}

func (s *backedStore) Remove(r *Row) {
	s.mu.Lock()
	// The count moves first: a readCold that finds the row gone from idx
	// then sees it moved.
	s.removals.Add(1)
	if s.idx.deleteIf(r) {
		if r.inTree {
			s.bt.Delete(r)
			r.inTree = false
		}
	}
	s.mu.Unlock()
}

func (s *backedStore) Len() int { return s.idx.len() }

// written puts r, about to be written, in bt. Row latch held.
func (s *backedStore) written(r *Row) {
	s.mu.Lock()
	if !r.inTree && s.idx.get(r.key) == r {
		s.bt.ReplaceOrInsert(r)
		r.inTree = true
	}
	s.mu.Unlock()
}

// cached returns the rows in memory with keys in [start, end), in key
// order.
func (s *backedStore) cached(start, end []byte) []*Row {
	s.mu.RLock()
	var rows []*Row
	s.idx.each(func(r *Row) bool {
		if (start == nil || bytes.Compare(r.key, start) >= 0) && (end == nil || bytes.Compare(r.key, end) < 0) {
			rows = append(rows, r)
		}
		return true
	})
	s.mu.RUnlock()
	slices.SortFunc(rows, func(a, b *Row) int { return bytes.Compare(a.key, b.key) })
	return rows
}

// A scan's batches grow from firstBatchRows backend pairs, doubling, to
// scanBatchRows (or scanBatchBytes copied): a claim that takes the first
// row it can lock reads a few pairs, a full scan soon reads many per
// backend iterator.
const (
	firstBatchRows = 16
	scanBatchRows  = 512
	scanBatchBytes = 256 << 10
)

// scanArenaChunk is the allocation a scan batch copies backend pairs into,
// several pairs to a chunk. A reading scan hands a row that is only in
// the backend to its caller without another copy (engine's Scan: the
// pair's bytes are the caller's from then on), so a caller that keeps one
// value keeps its chunk alive: small chunks bound that (at most 4 KiB per
// value kept) while a full scan still allocates once per ~35 rows of
// 100 bytes, not once per row.
const scanArenaChunk = 4 << 10

// batch is one run of a scan: the backend's pairs over a key range, copied.
type batch struct {
	keys, values [][]byte
	more         bool // the backend has more keys in the scan's range
}

// scanBufs are a scan's per-batch lists, reused from one batch to the
// next: a full scan of a table only the backend holds would otherwise
// allocate, per row, a transient Row, its Tuple and their list slots on
// top of the copy of the pair it hands its caller — more garbage than
// the copies themselves, and fresh memory the kernel must fault in. A
// batch's transient rows are therefore only valid until the scan's
// callback has returned for them (see Row.Transient); the copies of the
// pairs (the arena) are never reused.
type scanBufs struct {
	keys, values [][]byte
	rows         []*Row
	transient    []Row
	frozen       []Tuple
	lists        []*Tuple
}

// cursor is a scan's backend cursor (storage.Cursor: pebble keeps one
// iterator between batches) and the removal count read just before it was
// opened: its pairs are the backend as of that count (see merge).
type cursor struct {
	c      storage.Cursor
	readAt uint64
}

// open opens cur over [lo, hi) (table keys; nil: unbounded) in the
// scan's direction; ok is false if the backend failed (reported).
func (s *backedStore) open(cur *cursor, lo, hi []byte, reverse bool) (ok bool) {
	s.mu.RLock()
	cur.readAt = s.removals.Load()
	s.mu.RUnlock()
	blo := append(bytes.Clone(s.prefix), lo...)
	bhi := prefixEnd(s.prefix)
	if hi != nil {
		bhi = append(bytes.Clone(s.prefix), hi...)
	}
	c, err := s.be.NewCursor(blo, bhi, reverse)
	if err != nil {
		s.heap.backendFailed(err)
		return false
	}
	cur.c = c
	return true
}

// close closes cur, if open.
func (s *backedStore) close(cur *cursor) {
	if cur.c != nil {
		if err := cur.c.Close(); err != nil {
			s.heap.backendFailed(err)
		}
		cur.c = nil
	}
}

// read reads cur's next keys and values (table keys: without the prefix),
// at most one batch of rows pairs or scanBatchBytes; ok is false if the
// backend failed (reported to the heap).
func (s *backedStore) read(cur *cursor, rows int, bufs *scanBufs) (b batch, ok bool) {
	b.keys, b.values = reuse(bufs.keys, rows), reuse(bufs.values, rows)
	defer func() { bufs.keys, bufs.values = b.keys[:0], b.values[:0] }()
	var arena []byte
	done, err := cur.c.Read(func(k, v []byte) bool {
		if len(b.keys) == rows || len(arena) >= scanBatchBytes {
			return false // the next batch starts with this pair
		}
		k = k[len(s.prefix):]
		if cap(arena)-len(arena) < len(k)+len(v) {
			arena = make([]byte, 0, max(scanArenaChunk, len(k)+len(v)))
		}
		n := len(arena)
		arena = append(append(arena, k...), v...)
		b.keys = append(b.keys, arena[n:n+len(k):n+len(k)])
		b.values = append(b.values, arena[n+len(k):len(arena):len(arena)])
		return true
	})
	if err != nil {
		s.heap.backendFailed(err)
		return batch{}, false
	}
	b.more = !done
	return b, true
}

// reuse returns buf emptied if it holds n elements, else a new slice that
// does.
func reuse[T any](buf []T, n int) []T {
	if cap(buf) >= n {
		return buf[:0]
	}
	return make([]T, 0, n)
}

// merge returns, in increasing key order, the rows of [lo, hi) for one
// batch b of backend pairs (ascending) read when the removal count was
// readAt: bt's rows in the range, and for each backend key the row in
// memory or else a transient row made of the backend's value. ok is false
// when a row left memory since the read: the batch must be read again.
//
// At most limit of bt's rows are taken: when the range holds more (rows
// written and not yet in the backend, such as a bulk load before its
// checkpoint), the range is cut after the last one taken (before, for
// reverse) and b's keys past the cut are left for the next batch; the
// range merged is returned as [mlo, mhi), and cut reports the cut.
func (s *backedStore) merge(b *batch, lo, hi []byte, reverse bool, limit int, readAt uint64, bufs *scanBufs) (rows []*Row, mlo, mhi []byte, cut, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.removals.Load() != readAt {
		return nil, nil, nil, false, false
	}
	rows, mlo, mhi, cut = s.mergeLocked(b, lo, hi, reverse, limit, readAt, true, bufs)
	return rows, mlo, mhi, cut, true
}

// mergeLocked is merge under mu; without transients, a backend key with no
// row in memory is left out. rows and the transient rows are bufs' (valid
// until the next batch).
func (s *backedStore) mergeLocked(b *batch, lo, hi []byte, reverse bool, limit int, readAt uint64, transients bool, bufs *scanBufs) (rows []*Row, mlo, mhi []byte, cut bool) {
	written, cut := s.writtenIn(lo, hi, reverse, limit)
	if cut && reverse {
		lo = written[0].key
		n, _ := slices.BinarySearchFunc(b.keys, lo, bytes.Compare)
		b.keys, b.values = b.keys[n:], b.values[n:]
	} else if cut {
		hi = keyAfter(written[len(written)-1].key)
		n, _ := slices.BinarySearchFunc(b.keys, hi, bytes.Compare)
		b.keys, b.values = b.keys[:n], b.values[:n]
	}
	rows = reuse(bufs.rows, len(b.keys)+len(written))
	// Transient rows, their versions and version lists: bufs' when they
	// are large enough, else one allocation each. Appends stay within
	// the capacity taken (the rest of the batch's keys): rows points
	// into these arrays.
	var transient []Row
	var frozen []Tuple
	var lists []*Tuple
	defer func() {
		bufs.rows = rows[:0]
		if transient != nil {
			bufs.transient, bufs.frozen, bufs.lists = transient[:0], frozen[:0], lists[:0]
		}
	}()
	i, j := 0, 0
	for i < len(b.keys) || j < len(written) {
		if j < len(written) && (i == len(b.keys) || bytes.Compare(written[j].key, b.keys[i]) <= 0) {
			if i < len(b.keys) && bytes.Equal(written[j].key, b.keys[i]) {
				i++
			}
			rows = append(rows, written[j])
			j++
			continue
		}
		k := b.keys[i]
		i++
		if r := s.idx.get(k); r != nil {
			rows = append(rows, r)
			continue
		}
		if !transients {
			continue
		}
		if transient == nil {
			n := len(b.keys) - i + 1
			transient, frozen, lists = reuse(bufs.transient, n), reuse(bufs.frozen, n), reuse(bufs.lists, n)
		}
		frozen = append(frozen, Tuple{value: b.values[i-1], infomask: XminFrozen | XmaxInvalid, applied: true})
		lists = append(lists, &frozen[len(frozen)-1])
		n := len(lists)
		transient = append(transient, Row{key: k, versions: lists[n-1 : n : n], transient: true, readAt: readAt})
		rows = append(rows, &transient[len(transient)-1])
	}
	return rows, lo, hi, cut
}

// writtenIn returns bt's rows in [lo, hi), in increasing key order: at most
// limit of them, taken from the scan's end (the top with reverse); cut
// reports that the range holds more. Under mu.
func (s *backedStore) writtenIn(lo, hi []byte, reverse bool, limit int) (rows []*Row, cut bool) {
	visit := func(r *Row) bool {
		if hi != nil && bytes.Compare(r.key, hi) >= 0 {
			return reverse // ascending: done; descending: the end itself, skipped
		}
		if lo != nil && bytes.Compare(r.key, lo) < 0 {
			return false // descending: done
		}
		if len(rows) == limit {
			cut = true
			return false
		}
		rows = append(rows, r)
		return true
	}
	switch {
	case !reverse && lo == nil:
		s.bt.Ascend(visit)
	case !reverse:
		s.bt.AscendGreaterOrEqual(lo, visit)
	case hi == nil:
		s.bt.Descend(visit)
	default:
		s.bt.DescendLessOrEqual(hi, visit)
	}
	if reverse {
		slices.Reverse(rows)
	}
	return rows, cut
}

// mergeLoaded is merge's fallback when rows keep leaving memory during a
// batch: it loads and pins every backend key of the batch (unpin releases
// them), then merges with nothing left transient.
func (s *backedStore) mergeLoaded(b *batch, lo, hi []byte, reverse bool, limit int, bufs *scanBufs) (rows []*Row, mlo, mhi []byte, cut bool, unpin func()) {
	var held []*Row
	for _, k := range b.keys {
		if r := pinned(s.load, k); r != nil {
			held = append(held, r)
		}
	}
	s.mu.RLock()
	rows, mlo, mhi, cut = s.mergeLocked(b, lo, hi, reverse, limit, 0, false, bufs)
	s.mu.RUnlock()
	return rows, mlo, mhi, cut, func() {
		for _, r := range held {
			r.Unpin()
		}
	}
}

// mergeAttempts is how many times a scan reads a batch again because rows
// left memory meanwhile before it loads the batch's rows instead.
const mergeAttempts = 3

// scan visits the rows of [start, end) (nil: unbounded) in increasing key
// order, or decreasing with reverse, until fn returns false; fn runs with
// no lock held and may block. Rows not in memory are passed transient.
// An ascending scan that starts at or below the floor starts at it, and
// raises it past the rows it finds dead to every snapshot there.
func (s *backedStore) scan(start, end []byte, reverse bool, fn func(*Row) bool) {
	if start != nil && len(end) == len(start)+1 && end[len(start)] == 0 && bytes.HasPrefix(end, start) {
		// The range of one key (a point lock through a scan, as a
		// foreign key's index-less lookup or a SQL statement's
		// "WHERE pk = x" is): a row in memory is the key's whole state,
		// so the backend need not be read.
		r := s.idx.get(start)
		if r != nil {
			fn(r)
			return
		}
	}
	var fs *floorScan
	var horizon uint64
	var candidate []byte
	if reverse {
		start = s.floor.clampReverse(start)
	} else if start, fs = s.floor.begin(start); fs != nil {
		defer func() { s.floor.publish(fs, candidate) }()
		horizon = s.heap.xacts.Horizon()
	}
	if start != nil && end != nil && bytes.Compare(start, end) >= 0 {
		return
	}
	lo, hi := start, end
	batchRows := firstBatchRows
	// One backend cursor serves every batch while nothing leaves memory:
	// its snapshot is then as good as a fresh read (see merge). It is
	// reopened at the batch's start when a row left memory, or when a
	// batch was cut short of the pairs it had read.
	var cur cursor
	defer s.close(&cur)
	var bufs scanBufs
	for {
		var (
			b     batch
			rows  []*Row
			unpin func()
			blo   = lo
			bhi   = hi
		)
		for attempt := 1; ; attempt++ {
			if cur.c == nil && !s.open(&cur, lo, hi, reverse) {
				return
			}
			var ok bool
			if b, ok = s.read(&cur, batchRows, &bufs); !ok {
				return
			}
			blo, bhi = lo, hi
			if reverse {
				slices.Reverse(b.keys)
				slices.Reverse(b.values)
				if b.more {
					blo = bytes.Clone(b.keys[0]) // the caller may scribble on the key it is given
				}
			} else if b.more {
				bhi = keyAfter(b.keys[len(b.keys)-1])
			}
			var cut bool
			if attempt == mergeAttempts {
				rows, blo, bhi, cut, unpin = s.mergeLoaded(&b, blo, bhi, reverse, batchRows, &bufs)
			} else {
				rows, blo, bhi, cut, ok = s.merge(&b, blo, bhi, reverse, batchRows, cur.readAt, &bufs)
			}
			if cut || !ok {
				// Pairs past the cut were read and must be read again by
				// the next batch; or rows left memory since the cursor's
				// snapshot.
				s.close(&cur)
			}
			if attempt == mergeAttempts || ok {
				b.more = b.more || cut
				break
			}
		}
		stopped := false
		for n := range rows {
			r := rows[n]
			if reverse {
				r = rows[len(rows)-1-n]
			}
			if fs != nil {
				if !r.transient && s.heap.deadToAll(r, horizon) {
					candidate = keyAfter(r.key)
					continue
				}
				s.floor.publish(fs, candidate)
				fs = nil
			}
			if !fn(r) {
				stopped = true
				break
			}
		}
		if unpin != nil {
			unpin()
		}
		if stopped || !b.more {
			return
		}
		batchRows = min(2*batchRows, scanBatchRows)
		if reverse {
			hi = blo
		} else {
			lo = bhi
		}
	}
}

// keyAfter is the smallest key greater than k.
func keyAfter(k []byte) []byte { return append(bytes.Clone(k), 0) }

// PinRow returns the row for key pinned (see Row.Pin), or nil. The caller
// must Unpin it when done.
func (t *Table) PinRow(key []byte) *Row { return pinned(t.store.Get, key) }

// PinScanned returns the row a scan passed as r, as it is in memory now and
// pinned (see PinRow), or nil if the key has no row any more. For a
// transient row it brings the row into memory, reusing the scan's copy
// when no row left memory since the scan read it.
func (t *Table) PinScanned(r *Row) *Row {
	if s, ok := t.store.(*backedStore); ok && r.transient {
		return pinned(func([]byte) *Row { return s.adopt(r) }, r.key)
	}
	return t.PinRow(r.key)
}

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
	s, ok := t.store.(*backedStore)
	if !ok {
		return
	}
	if !r.inTree {
		s.written(r)
	}
	if r.dirty {
		return
	}
	r.dirty = true
	t.dirtyMu.Lock()
	if r.listed == 0 {
		r.listed = 1
		t.nDirty++
		t.dirtyList = append(t.dirtyList, r)
	}
	t.dirtyMu.Unlock()
}

// CheckpointRows calls put for every dirty row with the value of its version
// visible to snap (ok=false: no such version, the key must be deleted), in
// key order. It returns clean, which the caller calls once what put received is durable
// in the backend: it marks clean the rows whose every version was committed
// at or below snap.CSN (their written state is their current state) and
// that were not written since, and returns them (EvictRows' candidates). Until then they stay dirty, so they are
// neither evicted nor unlinked and loaded again from a backend that does
// not hold the checkpoint yet. The caller's snapshot must be published
// (xact.TakeSnapshot) so that pruning keeps the versions it reads.
//
// A row with no version visible to snap whose key the backend never held
// (Row.stored: not loaded from it, never written to it) is not passed to
// put: there is nothing to delete. That is every row of a bulk load still
// in progress, which each checkpoint during it would otherwise write as a
// delete of a key that is nowhere (and the backend would then compact).
func (t *Table) CheckpointRows(snap xact.Snapshot, put func(key, value []byte, ok bool) error) (clean func() []*Row, err error) {
	t.dirtyMu.Lock()
	n := len(t.dirtyList)
	rows := sortDirty(t.dirtyList[:n:n], t.dirtySorted)
	t.dirtyMu.Unlock()
	bs, _ := t.store.(*backedStore)
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
		if found && bs != nil {
			bs.raiseCeil(r.key) // before the backend can hold it
		}
		var err error
		if found || r.stored {
			r.stored = r.stored || found
			err = put(r.key, val, found)
		}
		if err == nil && t.heap.settledAt(r, snap.CSN()) {
			done = append(done, settled{r, r.writes})
		}
		r.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return func() []*Row {
		var cleaned []*Row
		for _, s := range done {
			s.r.Lock()
			if s.r.dirty && s.r.writes == s.writes {
				s.r.dirty = false
				t.dirtyMu.Lock()
				s.r.listed = 0
				t.nDirty--
				t.dirtyMu.Unlock()
				cleaned = append(cleaned, s.r)
			}
			s.r.Unlock()
		}
		// The list becomes the rows still dirty in key order, then those
		// first written since the checkpoint read it (its tail). A row
		// cleaned above and written again since is in the tail only:
		// marked 2 there, its old entry is dropped.
		t.dirtyMu.Lock()
		tail := t.dirtyList[n:]
		for _, r := range tail {
			r.listed = 2
		}
		kept := make([]*Row, 0, t.nDirty)
		for _, r := range rows {
			if r.listed == 1 {
				kept = append(kept, r)
			}
		}
		t.dirtySorted = len(kept)
		for _, r := range tail {
			r.listed = 1
			kept = append(kept, r)
		}
		t.dirtyList = kept
		t.dirtyMu.Unlock()
		return cleaned
	}, nil
}

func rowCmp(a, b *Row) int { return bytes.Compare(a.key, b.key) }

// sortDirty returns list's rows in key order, list[:sorted] being in key
// order already: the rest is sorted (unless it is already: a bulk load's
// keys arrive in order) and merged with it. In key order because a B+tree
// backend (bbolt) applies sorted writes far faster than random ones. list
// itself is never changed: the result is list or a new slice.
func sortDirty(list []*Row, sorted int) []*Row {
	head, tail := list[:sorted], list[sorted:]
	if !slices.IsSortedFunc(tail, rowCmp) {
		tail = slices.Clone(tail)
		slices.SortFunc(tail, rowCmp)
	} else if len(head) == 0 || len(tail) == 0 || rowCmp(head[len(head)-1], tail[0]) < 0 {
		return list // already in key order
	}
	if len(head) == 0 {
		return tail
	}
	out := make([]*Row, 0, len(list))
	i, j := 0, 0
	for i < len(head) && j < len(tail) {
		if rowCmp(tail[j], head[i]) < 0 {
			out = append(out, tail[j])
			j++
		} else {
			out = append(out, head[i])
			i++
		}
	}
	out = append(out, head[i:]...)
	return append(out, tail[j:]...)
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
	return t.nDirty
}

// Evict drops clean rows from memory until at most keep rows remain (or no
// more can go): rows that are not dirty, not pinned, and hold exactly one
// version visible to every snapshot (visibleToAll) without xmax, or with only a finished locker's xid (which
// vacuum leaves alone; see Table.vacList). It returns how many it dropped.
// Victims are taken in the hash's order, which is as good as random.
func (t *Table) Evict(keep int) int {
	s, ok := t.store.(*backedStore)
	if !ok {
		return 0
	}
	size := s.idx.len()
	over := size - keep
	var victims []*Row
	if over > 0 {
		victims = make([]*Row, 0, min(4*over, size))
		s.idx.each(func(r *Row) bool {
			victims = append(victims, r)
			return len(victims) < cap(victims)
		})
	}
	n := 0
	horizon := t.heap.xacts.Horizon()
	for _, r := range victims {
		if n >= over {
			break
		}
		if t.evict(s, r, horizon) {
			n++
		}
	}
	return n
}

// EvictRows drops those of rows (a checkpoint's cleaned rows) that may
// leave memory, as Evict would, and returns those that may leave later
// but not yet: still on the vacuum worklist, pinned, locked or written by
// a live transaction, or not yet visible to every snapshot. Rows written
// again (dirty: the next checkpoint returns them) or gone are dropped
// from the list.
func (t *Table) EvictRows(rows []*Row) (later []*Row) {
	s, ok := t.store.(*backedStore)
	if !ok {
		return nil
	}
	horizon := t.heap.xacts.Horizon()
	for _, r := range rows {
		if !t.evict(s, r, horizon) && !r.Removed() && !t.isDirty(r) {
			later = append(later, r)
		}
	}
	return later
}

// isDirty reports whether r was written since the last checkpoint.
func (t *Table) isDirty(r *Row) bool {
	r.Lock()
	defer r.Unlock()
	return r.dirty
}

// evict drops r from memory if it is clean, unpinned, not on the vacuum
// worklist (which would keep the object alive) and one version visible to
// every snapshot with no live xmax.
func (t *Table) evict(s *backedStore, r *Row, horizon uint64) bool {
	r.Lock()
	defer r.Unlock()
	if !r.dirty && !r.inVac && !r.removed.Load() && r.pins.Load() == 0 && len(r.versions) == 1 &&
		t.heap.visibleToAll(r.versions[0], horizon) && t.heap.noLiveXmax(r.versions[0]) &&
		r.markRemoved() {
		s.Remove(r)
		t.heap.tuplesLive.Add(-1)
		if s.arena != nil {
			s.out.Add(1)
			t.heap.tuplesOut.Add(1)
		}
		return true
	}
	return false
}

// visibleToAll reports whether v's xmin is frozen or committed at or
// below horizon (the oldest live snapshot's CSN), so that every live
// snapshot and every later one sees it: what a row's one version must be
// for the row to leave memory, where the backend's value reads as frozen.
// Vacuum would freeze it; eviction need not wait for that. Latch held.
func (h *Heap) visibleToAll(v *Tuple, horizon uint64) bool {
	if v.infomask&XminFrozen == XminFrozen {
		return true
	}
	st, csn := h.xacts.Status(v.xmin)
	return st == xact.Committed && csn <= horizon
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
