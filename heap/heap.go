package heap

import (
	"errors"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// ErrTableExists and ErrNoTable are returned by the catalog.
var (
	ErrTableExists = errors.New("heap: table exists")
	ErrNoTable     = errors.New("heap: no such table")
)

// ChangeKind says what a Change does.
type ChangeKind uint8

const (
	ChangeInsert ChangeKind = iota + 1 // a new version with no predecessor
	ChangeUpdate                       // Old gets a new xmax and Next = New
	ChangeXmax                         // Old gets a new xmax (row lock, delete, lock of an updated version)
	ChangeVacuum                       // pruning or freezing of the row (no payload yet)
)

// Change is one logical heap mutation. Every mutation of a tuple header or of
// a row's version list (apart from hint bits and vacuum, which PostgreSQL
// does not WAL-log as such either) is described by a Change and applied by
// Table.Apply, the single place where header and version-list changes
// happen. (The write-ahead log does not hook in here: it logs each
// transaction's write set at commit, see package durable.)
type Change struct {
	Kind ChangeKind
	Xid  uint64 // the acting transaction
	Old  *Tuple // ChangeUpdate, ChangeXmax: the version whose header changes
	New  *Tuple // ChangeInsert, ChangeUpdate: the version added, made by NewTuple and not yet in any row
	// List (ChangeInsert, optional): room for a row's first version list,
	// used if the row has none (NewInsertTuple's, allocated with New).
	List []*Tuple

	// The new header of Old.
	Xmax      uint64
	Multi     *multixact.MultiXact
	Infomask  uint16 // only the XmaxBits part is applied
	Infomask2 uint16 // only KeysUpdated is applied
}

// ChangeHook observes every Change before it is applied (tests use it; the
// engine passes nil). It runs under the row latch and must not block on
// other rows.
type ChangeHook func(table string, key []byte, c *Change)

// Heap is the catalog of tables plus the services visibility needs.
type Heap struct {
	xacts *xact.Manager
	multi *multixact.Store
	hook  ChangeHook

	mu     sync.RWMutex
	tables map[string]*Table

	// backend, when set, makes CreateTable create persistent tables.
	backend storage.Backend
	arenas  bool                  // UseArenas: each table in an arena of its own
	failed  atomic.Pointer[error] // first backend read error

	tuplesLive      atomic.Int64
	tuplesOut       atomic.Int64 // rows in tables' arenas and not in memory
	tuplesReclaimed atomic.Uint64
	// pruneHorizon is the CSN horizon last computed by vacuum; writers use
	// it to prune a row's dead versions opportunistically (heap_page_prune).
	pruneHorizon atomic.Uint64

	// testAfterBackendGet, if set, runs in a persistent table's load right
	// after the backend read (export_test.go): a test changes the row there.
	testAfterBackendGet func(key []byte)
}

// New returns an empty heap.
func New(x *xact.Manager, m *multixact.Store, hook ChangeHook) *Heap {
	return &Heap{xacts: x, multi: m, hook: hook, tables: make(map[string]*Table)}
}

// Table is one table: rows by primary key in a rowStore.
type Table struct {
	name  string
	heap  *Heap
	store rowStore
	arena *storage.Arena // the table's own arena (Heap.UseArenas), or nil

	// Persistent tables: the rows written since the last checkpoint
	// (backed.go, markDirty and CheckpointRows), each once, in the order
	// they were first written since they were last clean, after the
	// leftovers of the last checkpoint kept in key order: dirtyList[:dirtySorted]
	// is in key order, so a checkpoint sorts only what was written since
	// the last one, and not even that when keys arrive in order (a bulk
	// load). Row.listed says "in dirtyList"; nDirty counts those rows.
	// Guarded by dirtyMu.
	dirtyMu     sync.Mutex
	dirtyList   []*Row
	dirtySorted int
	nDirty      int

	// vacList is the vacuum worklist (PostgreSQL's visibility map, inverted):
	// every row that may hold something for vacuum to do — more than one
	// version, an unfrozen xmin, an xmax other than a plain locker's — is
	// in it, entered by Apply. A row not in it is one frozen version with
	// no xmax or a single locker's xid, so vacuum skips it: its cost follows
	// the rows written since it last ran, not the size of the table.
	// Row.inVac (under the row latch) says "listed".
	//
	// A lock-only plain xid is left for whoever comes next, as PostgreSQL
	// leaves it for the next visitor's hint bit: every reader asks only
	// whether that xid is still running, which stays true-to-fact even
	// after the clog forgot it (a forgotten xid reads as committed), and
	// eviction clears it. Listing such rows made vacuum revisit every row a
	// FOR SHARE workload touched — 8% of forshare's CPU.
	vacMu   sync.Mutex
	vacList []*Row
}

// Name is the table's name.
func (t *Table) Name() string { return t.name }

// noteVacuum puts r on the vacuum worklist. Row latch held.
func (t *Table) noteVacuum(r *Row) {
	if r.inVac {
		return
	}
	r.inVac = true
	t.vacMu.Lock()
	t.vacList = append(t.vacList, r)
	t.vacMu.Unlock()
}

// CreateTable adds an empty in-memory table.
func (h *Heap) CreateTable(name string) (*Table, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.tables[name]; ok {
		return nil, ErrTableExists
	}
	t := &Table{name: name, heap: h, store: newMemStore()}
	switch {
	case h.backend != nil:
		t.store = h.newBackedStore(name, h.backend)
	case h.arenas:
		t.arena = storage.OpenArena()
		t.store = h.newArenaStore(t.arena)
	}
	h.tables[name] = t
	return t, nil
}

// SetBackend makes tables created from now on persistent in be. It is
// called once, before any table is created (package durable does, when it
// opens an on-disk engine).
func (h *Heap) SetBackend(be storage.Backend) { h.backend = be }

// UseArenas makes tables created from now on persistent in an arena of
// their own (storage.Arena, keys without the table's prefix): an in-memory
// engine's tables, whose settled rows leave the Go heap (package engine,
// memstore.go). Called once, before any table is created.
func (h *Heap) UseArenas() { h.arenas = true }

// Arena is the table's arena (UseArenas), or nil.
func (t *Table) Arena() *storage.Arena { return t.arena }

func (h *Heap) backendFailed(err error) { h.failed.CompareAndSwap(nil, &err) }

// BackendError returns the first error a backend read reported, if any. A
// read error makes the engine refuse work: a row it could not read might
// exist.
func (h *Heap) BackendError() error {
	if p := h.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// Table returns the named table.
func (h *Heap) Table(name string) (*Table, error) {
	h.mu.RLock()
	t := h.tables[name]
	h.mu.RUnlock()
	if t == nil {
		return nil, ErrNoTable
	}
	return t, nil
}

// Tables returns every table, by name.
func (h *Heap) Tables() []*Table {
	h.mu.RLock()
	out := make([]*Table, 0, len(h.tables))
	for _, t := range h.tables {
		out = append(out, t)
	}
	h.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// TuplesLive is the number of tuple versions in all tables: in memory,
// and in the tables' arenas (UseArenas) for rows out of memory. A
// persistent table's rows only in its backend are not counted.
func (h *Heap) TuplesLive() int64 { return h.tuplesLive.Load() + h.tuplesOut.Load() }

// TuplesInMemory is the number of tuple versions held as objects.
func (h *Heap) TuplesInMemory() int64 { return h.tuplesLive.Load() }

// TuplesReclaimed counts versions removed by pruning and vacuum.
func (h *Heap) TuplesReclaimed() uint64 { return h.tuplesReclaimed.Load() }

// Row returns the row for key (nil if none).
func (t *Table) Row(key []byte) *Row { return t.store.Get(key) }

// Prefetch is a hint that keys are about to be looked up or inserted
// (COPY FROM's batch of rows): it loads their point-index slots into the
// cache all at once, so the rows' misses overlap instead of stalling each
// insert in turn. It changes nothing and never reads a backend.
func (t *Table) Prefetch(keys [][]byte) { t.store.Prefetch(keys) }

// RowForInsert returns the row for key, creating it if needed, with its
// latch held and not removed. A row it creates keeps key as its own, not a
// copy: the caller hands over a key nothing changes afterwards (the
// engine's insert passes the copy it made of its caller's key, which its
// write set shares; one copy per inserted row instead of two).
func (t *Table) RowForInsert(key []byte) *Row {
	for {
		r := t.store.GetOrCreate(key)
		r.Lock()
		if !r.removed.Load() {
			return r
		}
		r.Unlock()
	}
}

// Ascend visits rows in key order in [start, end); the callback runs without
// any table lock held (rows are collected in batches), so it may block.
//
// A persistent table's rows that are not in memory are passed as transient
// copies (Row.Transient), never loaded: a caller that locks or changes one
// gets the row itself with PinScanned.
func (t *Table) Ascend(start, end []byte, fn func(*Row) bool) {
	if s, ok := t.store.(*backedStore); ok {
		s.scan(start, end, false, fn)
		return
	}
	ms := t.store.(*memStore)
	// from the floor (floor.go) rather than through the dead head before it,
	// raising it past the dead rows this scan finds there
	next, fs := ms.floor.begin(start)
	var horizon uint64
	var candidate []byte
	if fs != nil {
		defer func() { ms.floor.publish(fs, candidate) }()
		horizon = t.heap.xacts.Horizon()
	}
	const batch = 64
	skipFirst := false
	for {
		rows := make([]*Row, 0, batch)
		ms.Ascend(next, end, func(r *Row) bool {
			if skipFirst {
				skipFirst = false
				if string(r.key) == string(next) {
					return true
				}
			}
			rows = append(rows, r)
			return len(rows) < batch
		})
		for _, r := range rows {
			if fs != nil {
				if t.heap.deadToAll(r, horizon) {
					candidate = keyAfter(r.key)
					continue
				}
				ms.floor.publish(fs, candidate)
				fs = nil
			}
			if !fn(r) {
				return
			}
		}
		if len(rows) < batch {
			return
		}
		next = rows[len(rows)-1].key
		skipFirst = true
	}
}

// scanFloor is t's store's floor (floor.go).
func (t *Table) scanFloor() *scanFloor {
	if s, ok := t.store.(*backedStore); ok {
		return &s.floor
	}
	return &t.store.(*memStore).floor
}

// Descend visits rows in decreasing key order in [start, end), in batches
// like Ascend: the callback runs without any table lock held.
func (t *Table) Descend(start, end []byte, fn func(*Row) bool) {
	if s, ok := t.store.(*backedStore); ok {
		s.scan(start, end, true, fn)
		return
	}
	ms := t.store.(*memStore)
	start = ms.floor.clampReverse(start)
	const batch = 64
	next := end
	for {
		rows := make([]*Row, 0, batch)
		ms.Descend(start, next, func(r *Row) bool {
			rows = append(rows, r)
			return len(rows) < batch
		})
		for _, r := range rows {
			if !fn(r) {
				return
			}
		}
		if len(rows) < batch {
			return
		}
		// The end is exclusive: the next batch starts below the last row.
		next = rows[len(rows)-1].key
	}
}

// Apply performs c on row r, whose latch the caller holds. It is the single
// entry point for heap mutations (see Change).
func (t *Table) Apply(r *Row, c Change) {
	if r.transient {
		panic("heap: Apply on a transient row (Table.PinScanned first)")
	}
	if t.heap.hook != nil {
		hc := c // only this path pays for a heap copy
		t.heap.hook(t.name, r.key, &hc)
	}
	if c.Kind != ChangeXmax || c.Infomask&XmaxLockOnly == 0 || c.Infomask&XmaxIsMulti != 0 {
		t.noteVacuum(r) // see Table.vacList for the plain locker's exception
	}
	switch c.Kind {
	case ChangeInsert:
		t.markDirty(r)
		t.scanFloor().noteInsert(r.key)
		if len(r.versions) > 0 {
			// A key inserted and deleted over and over (a queue, the
			// storm's contended unique inserts) collects dead versions
			// that every unique check walks: prune them here, as an
			// update does (heap_page_prune runs on any page visit).
			t.prune(r)
		}
		c.New.applied = true
		if cap(r.versions) == 0 {
			r.versions = c.List
		}
		r.versions = append(r.versions, c.New)
		t.heap.tuplesLive.Add(1)
	case ChangeUpdate:
		t.markDirty(r)
		setXmax(c.Old, &c)
		c.Old.next = c.New
		c.New.applied = true
		r.versions = append(r.versions, c.New)
		t.heap.tuplesLive.Add(1)
		if invariants.Enabled {
			checkHeader(c.Old, "Apply(ChangeUpdate)")
			checkLink(c.Old, "Apply(ChangeUpdate)")
		}
		t.prune(r)
	case ChangeXmax:
		if c.Infomask&XmaxLockOnly == 0 {
			t.markDirty(r) // a delete
		}
		setXmax(c.Old, &c)
		if c.Infomask&XmaxLockOnly != 0 || UpdateXid(c.Old) == c.Xid {
			// A lock-only xmax never keeps a ctid link, nor does the
			// acting transaction's delete: the update that made it
			// aborted (heap_lock_tuple and heap_delete set t_ctid =
			// self). Otherwise the row reads as updated, not deleted,
			// once the delete commits. A lock of a version that another
			// transaction is updating keeps its link (the multixact's
			// updater is not c.Xid).
			c.Old.next = nil
		}
		if invariants.Enabled {
			checkHeader(c.Old, "Apply(ChangeXmax)")
			checkLink(c.Old, "Apply(ChangeXmax)")
		}
	}
	r.publish()
}

func setXmax(tup *Tuple, c *Change) {
	tup.xmax = c.Xmax
	tup.multi = c.Multi
	tup.infomask = tup.infomask&^XmaxBits | c.Infomask&XmaxBits
	tup.infomask2 = tup.infomask2&^KeysUpdated | c.Infomask2&KeysUpdated
}
