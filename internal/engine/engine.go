package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/durable"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/stripe"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
	"github.com/tupled/tupled/tuplelock"
)

// Config is an Engine's configuration, every field already defaulted and
// checked by package tupled (Open takes it as it is).
type Config struct {
	// Dir is the database directory; "" is an in-memory engine (no
	// durable.Store).
	Dir string
	// FS, Bbolt (else pebble), SyncCommit, WALSegmentSize,
	// CheckpointInterval, CheckpointWALSize, CacheRows and BlockCacheSize
	// configure the durable.Store.
	FS                 vfs.FS
	Bbolt              bool
	SyncCommit         bool
	WALSegmentSize     int64
	CheckpointInterval time.Duration
	CheckpointWALSize  int64
	CacheRows          int
	// MemoryArena: an in-memory engine keeps settled rows in arenas
	// (memstore.go).
	MemoryArena    bool
	BlockCacheSize int64

	DeadlockTimeout  time.Duration // > 0
	DeadlockStrategy string
	LockTimeout      time.Duration // default of TxOptions.LockTimeout
	ShareFastPathOff bool
	// VacuumInterval > 0 runs a vacuum pass that often in the background;
	// the background loop also runs (without vacuum passes) for an
	// on-disk engine, whose checkpoints and eviction it drives.
	VacuumInterval time.Duration
	Logger         *slog.Logger // required
}

// Engine is one open database: the machinery of the packages below it,
// wired together, behind one type. See the package comment.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	xacts *xact.Manager
	multi *multixact.Store
	heap  *heap.Heap
	locks *lockmgr.Manager
	tl    *tuplelock.Locker
	dur   *durable.Store // nil for an in-memory engine
	// memMu serialises an in-memory engine's moves of rows into its
	// tables' arenas with DropTable (memstore.go).
	arenas   bool // Config.MemoryArena, in memory
	memMu    sync.Mutex
	memLater map[*heap.Table][]*heap.Row // rows cleaned that may leave memory later (memMaintain)

	closed   atomic.Bool
	closeMu  sync.Mutex
	closeErr error
	// active counts the calls running (striped by xid: every call counts
	// in and out, and a plain counter would bounce between cores): Close
	// waits for it to drain before it closes the storage.
	active stripe.Counter

	ddlMu sync.Mutex // CreateTable and DropTable
	idx   indexState // the indexes (index.go)
	fks   fkState    // the foreign keys (fk.go)

	// moves: where key updates took rows (move.go).
	moves moves

	// commits and aborts are striped by xid like active.
	commits    stripe.Counter
	aborts     stripe.Counter
	vacuumRuns atomic.Uint64
	vacuumMu   sync.Mutex

	stop   chan struct{}
	bgDone sync.WaitGroup
}

// Open builds the machinery and, for an on-disk engine, opens (and
// recovers) its durable.Store. Errors: errs.ErrInvalid for an unknown
// deadlock strategy or a directory of the other backend, errs.ErrCorrupted
// for damaged files, errs.ErrIO for any other failure to open.
func Open(cfg Config) (*Engine, error) {
	lm, err := lockmgr.New(lockmgr.Options{DeadlockTimeout: cfg.DeadlockTimeout, Strategy: cfg.DeadlockStrategy})
	if err != nil {
		return nil, errs.Op(errs.ErrInvalid, "tupled: "+err.Error())
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, xacts: xact.NewManager(), multi: multixact.NewStore(), locks: lm, stop: make(chan struct{})}
	e.heap = heap.New(e.xacts, e.multi, nil)
	e.tl = tuplelock.NewLocker(e.heap, e.xacts, e.multi, lm, cfg.ShareFastPathOff)
	if cfg.Dir != "" {
		kind := storage.KindPebble
		if cfg.Bbolt {
			kind = storage.KindBbolt
		}
		d, err := durable.Open(cfg.Dir, durable.Config{
			FS: cfg.FS, Kind: kind, SyncCommit: cfg.SyncCommit, Logger: cfg.Logger,
			WALSegmentSize: cfg.WALSegmentSize, CheckpointInterval: cfg.CheckpointInterval,
			CheckpointWALSize: cfg.CheckpointWALSize, CacheRows: cfg.CacheRows,
			BlockCacheSize: cfg.BlockCacheSize,
		}, durable.Machinery{Xacts: e.xacts, Multi: e.multi, Heap: e.heap})
		if err != nil {
			lm.Close()
			return nil, err
		}
		e.dur = d
	} else if cfg.MemoryArena {
		e.heap.UseArenas()
		e.arenas = true
	}
	e.loadIndexes()
	if cfg.VacuumInterval > 0 || e.dur != nil {
		e.bgDone.Add(1)
		go e.background(cfg.VacuumInterval)
	}
	return e, nil
}

// Close refuses new calls, ends every lock wait (the waiting call gets an
// error matching errs.ErrClosed with SQLSTATE 57P01 and its transaction
// is rolled back), waits until every running call has returned, stops the
// background loop and checkpoints and closes the storage. A second Close
// returns the first one's result.
func (e *Engine) Close() error {
	e.closeMu.Lock()
	defer e.closeMu.Unlock()
	if e.closed.Swap(true) {
		return e.closeErr
	}
	e.locks.Shutdown()
	// Polling: the calls left are ending (their waits were just ended),
	// and keeping a wait channel per call would cost every call.
	for d := 10 * time.Microsecond; e.active.Load() != 0; d = min(2*d, time.Millisecond) {
		time.Sleep(d)
	}
	close(e.stop)
	e.bgDone.Wait()
	e.locks.Close()
	if e.dur != nil {
		e.closeErr = e.dur.Close()
	}
	return e.closeErr
}

// Enter counts a call as running, in stripe (a transaction's id; 0 for
// calls outside one), until the matching Exit: Close waits for it. It
// does not check Closing: the caller does after Enter, so that Close,
// which sets closing before it waits for the count to drain, either sees
// the call or the call sees closing.
func (e *Engine) Enter(stripe uint64) { e.active.Add(stripe, 1) }

// Exit ends a call Enter counted.
func (e *Engine) Exit(stripe uint64) { e.active.Add(stripe, ^uint64(0)) }

// Closing reports whether Close has begun.
func (e *Engine) Closing() bool { return e.closed.Load() }

// table returns the table called name, or errs.ErrNoTable.
func (e *Engine) table(name string) (*heap.Table, error) {
	t, err := e.heap.Table(name)
	if errors.Is(err, heap.ErrNoTable) {
		return nil, noTable(name)
	}
	return t, err
}

func noTable(name string) error {
	return errs.Op(errs.ErrNoTable, fmt.Sprintf("relation %q does not exist", name))
}

// CreateTable creates an empty table, durable when it returns:
// errs.ErrTableExists if the name is taken, errs.ErrInvalid for an empty
// name, errs.ErrNameTooLong past MaxTableNameLen, the Store's error if
// the WAL fails.
func (e *Engine) CreateTable(name string) error {
	if name == "" {
		return errs.Op(errs.ErrInvalid, "tupled: empty table name")
	}
	if err := checkTableName(name); err != nil {
		return err
	}
	if isIndexRel(name) {
		return errs.Op(errs.ErrInvalid, "tupled: table names beginning with a NUL byte are reserved")
	}
	return e.createTable(name)
}

// createTable is CreateTable without the name checks (an index's hidden
// table, index.go).
func (e *Engine) createTable(name string) error {
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	exists := errs.Op(errs.ErrTableExists, fmt.Sprintf("relation %q already exists", name))
	if _, err := e.heap.Table(name); err == nil {
		return exists
	}
	if e.dur != nil {
		if err := e.dur.CreateTable(name); err != nil {
			return err
		}
	}
	if _, err := e.heap.CreateTable(name); err != nil {
		return exists
	}
	return nil
}

// DropTable removes the table and its rows, durably (durable.Store's
// DropTable): errs.ErrNoTable if there is none (nil with ifExists),
// errs.ErrObjectInUse if a running transaction has written, deleted or
// locked one of its rows (the table is left whole), errs.ErrIO when the
// WAL or backend fails.
func (e *Engine) DropTable(name string, ifExists bool) error {
	if err := e.checkDropTable(name); err != nil { // fk.go
		return err
	}
	err := e.dropTable(name, ifExists)
	if err == nil && !isIndexRel(name) {
		e.dropTableIndexes(name)
		e.dropTableFKs(name)
	}
	return err
}

func (e *Engine) dropTable(name string, ifExists bool) error {
	if err := checkTableName(name); err != nil {
		return err
	}
	e.ddlMu.Lock()
	defer e.ddlMu.Unlock()
	var err error
	if e.dur != nil {
		err = e.dur.DropTable(name)
	} else {
		e.memMu.Lock()
		_, err = e.heap.DropTable(name) // its arena goes with it
		e.memMu.Unlock()
	}
	switch {
	case errors.Is(err, heap.ErrNoTable):
		if ifExists {
			return nil
		}
		return errs.Op(errs.ErrNoTable, fmt.Sprintf("table %q does not exist", name))
	case errors.Is(err, heap.ErrTableInUse):
		return errs.Op(errs.ErrObjectInUse, fmt.Sprintf("cannot drop table %q because it is being used by active transactions", name))
	}
	return err
}

// Tables returns the names of every table, sorted.
func (e *Engine) Tables() []string {
	ts := e.heap.Tables()
	out := make([]string, len(ts))
	out = out[:0]
	for _, t := range ts {
		if !isIndexRel(t.Name()) { // an index's entries (index.go)
			out = append(out, t.Name())
		}
	}
	sort.Strings(out)
	return out
}

// LockInfo is one heavyweight lock held or awaited (package tupled's
// LockInfo has the same fields and documents them).
type LockInfo struct {
	Tag       string
	Mode      string
	TxID      uint64
	Session   uint64
	Granted   bool
	WaitStart time.Time
	FastPath  bool
}

// Locks returns the lock manager's locks and every running user
// transaction's lock on its own id (not the engine's internal
// transactions', xact.BeginInternal), like pg_locks. It does not stop the
// engine: partitions are read one at a time.
func (e *Engine) Locks() []LockInfo {
	ls := e.locks.Locks()
	out := make([]LockInfo, 0, len(ls)+e.xacts.NumLive())
	for _, l := range ls {
		out = append(out, LockInfo{Tag: l.Tag.String(), Mode: l.Mode.String(), TxID: l.Xid, Session: l.Session, Granted: l.Granted, WaitStart: l.WaitStart, FastPath: l.FastPath})
	}
	live := e.xacts.LiveUserXacts()
	sort.Slice(live, func(i, j int) bool { return live[i].ID < live[j].ID })
	for _, x := range live {
		// A subtransaction's xid is held by its transaction (TxID), as
		// PostgreSQL's pg_locks shows a subxid held by its backend.
		out = append(out, LockInfo{Tag: fmt.Sprintf("transaction %d", x.ID), Mode: lockmgr.ExclusiveLock.String(), TxID: x.Top, Granted: true})
	}
	return out
}

// RowLock is a row whose current version's xmax holds live lockers (or a
// running updater), like a row of pgrowlocks.
type RowLock struct {
	Key     []byte
	Multi   bool             // xmax is a multixact
	Lockers []uint64         // live lockers' (or the updater's) transaction ids (a savepoint's: its transaction's, so one may appear twice)
	Modes   []tuplemode.Mode // parallel to Lockers: the lock each holds or its update implies
}

// RowLocks returns table's rows with live lockers, in key order. It walks
// the rows held in memory only: lock state lives nowhere else (a row with
// a live locker is never evicted). It takes no lock and reads each row
// under its latch, so the result is consistent per row, not per table;
// stop (checked between rows) ends it early with stop's error.
func (e *Engine) RowLocks(table string, stop func() error) ([]RowLock, error) {
	tbl, err := e.table(table)
	if err != nil {
		return nil, err
	}
	// A throw-away snapshot of "everything committed now".
	snap := e.xacts.CommittedNow()
	var out []RowLock
	var stopErr error
	tbl.AscendCached(nil, nil, func(r *heap.Row) bool {
		if stopErr = stop(); stopErr != nil {
			return false
		}
		r.Lock()
		defer r.Unlock()
		tup := e.visibleVersion(r, snap)
		if tup == nil {
			return true
		}
		multi, live := e.tl.Members(tup)
		if len(live) == 0 {
			return true
		}
		rl := RowLock{Key: append([]byte(nil), r.Key()...), Multi: multi}
		for _, m := range live {
			id := m.Xid
			if top := e.xacts.TopOf(id); top != xact.InvalidXID {
				id = top // a savepoint's lock is its transaction's (Tx.ID)
			}
			rl.Lockers = append(rl.Lockers, id)
			rl.Modes = append(rl.Modes, m.Status.LockMode())
		}
		out = append(out, rl)
		return true
	})
	if stopErr != nil {
		return nil, stopErr
	}
	return out, nil
}

// visibleVersion returns the version of r visible to snap (latch held).
func (e *Engine) visibleVersion(r *heap.Row, snap xact.Snapshot) *heap.Tuple {
	vs := r.Versions()
	for i := len(vs) - 1; i >= 0; i-- {
		if e.heap.SatisfiesMVCC(vs[i], snap) {
			return vs[i]
		}
	}
	return nil
}

// Stats are the engine's counters (package tupled's Stats has the same
// fields and documents them).
type Stats struct {
	LocksSingleXid           uint64
	LocksMultiXact           uint64
	MultiXactsCreated        uint64
	MultiXactsAppended       uint64
	MultiXactMembersWritten  uint64
	LockWaits                uint64
	DeadlockChecks           uint64
	DeadlocksFound           uint64
	DeadlockCheckTime        time.Duration
	DeadlockCheckMaxLateness time.Duration

	Commits          uint64
	Aborts           uint64
	TuplesLive       uint64
	TuplesReclaimed  uint64
	MultiXactsLive   uint64
	VacuumRuns       uint64
	CommitLogEntries uint64
	NextXid          uint64
	NextMultiXactID  uint64

	WALRecords            uint64
	WALFsyncs             uint64
	Checkpoints           uint64
	RecoverySkippedWrites uint64
}

// Stats returns the counters, each read atomically (the set is not one
// instant's).
func (e *Engine) Stats() Stats {
	single, multi := e.tl.Counters()
	ls := e.locks.Stats()
	ds := e.locks.DetectorStats()
	ms := e.multi.Stats()
	s := Stats{
		LocksSingleXid:           single,
		LocksMultiXact:           multi,
		MultiXactsCreated:        ms.Created,
		MultiXactsAppended:       ms.Appended,
		MultiXactMembersWritten:  ms.MembersWritten,
		LockWaits:                ls.LockWaits,
		DeadlockChecks:           ls.DeadlockChecks,
		DeadlocksFound:           ls.DeadlocksFound,
		DeadlockCheckTime:        time.Duration(ds.TotalCheckNs),
		DeadlockCheckMaxLateness: ds.MaxLateness,
		Commits:                  e.commits.Load(),
		Aborts:                   e.aborts.Load(),
		TuplesLive:               uint64(max(e.heap.TuplesLive(), 0)),
		TuplesReclaimed:          e.heap.TuplesReclaimed(),
		MultiXactsLive:           ms.Live,
		VacuumRuns:               e.vacuumRuns.Load(),
		CommitLogEntries:         e.xacts.ClogEntries(),
		NextXid:                  e.xacts.NextXid(),
		NextMultiXactID:          e.multi.NextID(),
	}
	if e.dur != nil {
		c := e.dur.Counters()
		s.WALRecords, s.WALFsyncs, s.Checkpoints, s.RecoverySkippedWrites = c.WALRecords, c.WALFsyncs, c.Checkpoints, c.RecoverySkippedWrites
	}
	return s
}

// Checkpoint checkpoints an on-disk engine (durable.Store's Checkpoint);
// in memory with arenas, it moves settled rows into them (memMaintain).
func (e *Engine) Checkpoint() error {
	if e.dur == nil {
		if e.arenas {
			e.memMaintain()
		}
		return nil
	}
	return e.dur.Checkpoint()
}
