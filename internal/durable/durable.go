package durable

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
	"github.com/tupled/tupled/wal"
)

// WAL record types.
const (
	RecCommit      wal.RecordType = 1 // xid, write set
	RecCreateTable wal.RecordType = 2 // table name
	RecXidReserve  wal.RecordType = 3 // xids below this value may have been handed out
)

const xidReserveChunk = 1 << 16

// Backend keys besides rows (heap.RowKey): catalog and meta.
var (
	metaRedo    = []byte("mredo")
	metaNextXid = []byte("mnextxid")
	// metaIncarnation counts opens. Multixact ids are never written
	// anywhere (no multixact survives a restart), so instead of logging
	// them each incarnation starts its ids at incarnation<<multiIDShift:
	// ids keep growing across restarts without any I/O per multixact.
	metaIncarnation = []byte("mincarnation")
)

const multiIDShift = 40 // 2^40 multixacts per incarnation, 2^24 incarnations

func catalogKey(name string) []byte { return append([]byte("c"), name...) }

// Store is the persistence of an on-disk database: its WAL, its backend
// and its control file (see the package comment). Open recovers it; the
// engine then calls ReserveXid before handing out a transaction id, Commit
// for every transaction that wrote, CreateTable and DropTable for DDL,
// Maintain from its background loop, and Close.
type Store struct {
	xacts *xact.Manager
	multi *multixact.Store
	heap  *heap.Heap
	log   *slog.Logger
	cfg   Config

	fs   vfs.FS
	be   storage.Backend
	wal  *wal.WAL
	sync bool

	// inflight: LSNs of commit records whose transactions have no commit
	// number yet (they wait for the fsync). Guarded by inflightMu, which also
	// orders "remove from inflight" with "commit in xact" against a
	// checkpoint's choice of snapshot and redo point.
	inflightMu sync.Mutex
	inflight   map[uint64]wal.LSN

	reserveMu sync.Mutex
	reserved  atomic.Uint64 // xids below it are reserved in the WAL

	ckMu        sync.Mutex
	dropMu      sync.RWMutex // DROP TABLE (exclusive) vs commits logging (shared), see drop.go
	dir         string
	ckptNo      uint64 // checkpoint number in the backend and the control file (control.go); ckMu
	ctlBackend  uint8
	lastCkptLSN atomic.Uint64
	fatal       atomic.Pointer[error]
	checkpoints atomic.Uint64

	// Maintain's state (only the engine's background loop calls it).
	lastMaintain, lastCkptAt, ckptRetry time.Time

	// skippedAtRecovery: logged writes the last recovery could not store
	// (see redoer).
	skippedAtRecovery atomic.Uint64

	// dataFS and dataDir are where the backend's files are (bbolt's are
	// on the OS file system whatever fs is), for the checkpoint's check of
	// free space.
	dataFS  vfs.FS
	dataDir string
}

func (d *Store) fail(err error) error {
	d.fatal.CompareAndSwap(nil, &err)
	return d.FatalErr()
}

// walFailed is the error of a failed WAL Append or Sync: errs.ErrDiskFull when
// the WAL ran out of space (it voided the records, see wal.Options.
// RetryNoSpace, and goes on), else the database fails.
func (d *Store) walFailed(err error) error {
	if errors.Is(err, wal.ErrNoSpace) {
		return diskFull(err)
	}
	return d.fail(err)
}

func diskFull(err error) error {
	return &errs.OpError{Sentinel: errs.ErrDiskFull, Msg: "tupled: disk full: " + err.Error(), Cause: err}
}

// Readable is the error a read gets on an on-disk database, if any. With
// SyncCommit on every commit readers can see is durable, so a failed WAL
// or backend write leaves reads working. With SyncCommit off, a WAL that
// died may have taken acknowledged, visible commits with it: as PostgreSQL
// PANICs, the database then refuses reads too, so that no one sees commits
// a reopen will not bring back.
func (d *Store) Readable() error {
	if d.sync {
		return nil
	}
	if err := d.wal.Err(); err != nil {
		return d.fail(err)
	}
	return d.FatalErr()
}

// FatalErr is the error every write gets once the WAL or backend failed.
func (d *Store) FatalErr() error {
	if p := d.fatal.Load(); p != nil {
		if errors.Is(*p, storage.ErrCorrupted) {
			return AsCorrupted(*p)
		}
		return &errs.OpError{Sentinel: errs.ErrIO, Msg: "tupled: database refuses writes after an I/O failure: " + (*p).Error(), Cause: *p}
	}
	return nil
}

// Config says how Open opens a Store.
type Config struct {
	FS         vfs.FS       // nil: the OS file system
	Kind       string       // storage.KindPebble or storage.KindBbolt
	SyncCommit bool         // Commit waits for the WAL's fsync
	Logger     *slog.Logger // required
	// WALSegmentSize overrides the WAL's segment size (0: its default);
	// tests use small segments.
	WALSegmentSize int64
	// CheckpointInterval and CheckpointWALSize trigger checkpoints from
	// Maintain (CheckpointWALSize <= 0: no size trigger); CacheRows is
	// the number of rows per table eviction keeps cached.
	CheckpointInterval time.Duration
	CheckpointWALSize  int64
	CacheRows          int
	// BlockCacheSize is the pebble backend's block cache in bytes (0:
	// storage.DefaultCacheSize; bbolt reads through the OS page cache).
	BlockCacheSize int64
}

// Machinery is the engine state a Store persists and recovers into.
type Machinery struct {
	Xacts *xact.Manager
	Multi *multixact.Store
	Heap  *heap.Heap
}

// Open opens the database in dir, creating it if needed, and recovers it
// into m (the WAL after the last checkpoint is replayed into the backend,
// the catalog loaded into m.Heap, transaction and multixact ids advanced
// past any handed out before) and checkpoints. Errors: errs.ErrCorrupted
// for damaged files, errs.ErrInvalid for a directory of the other backend,
// errs.ErrIO for any other failure to open.
func Open(dir string, cfg Config, m Machinery) (*Store, error) {
	fs := cfg.FS
	if fs == nil {
		fs = vfs.Default
	}
	// A new directory survives a crash only once its parent is synced: that
	// of every directory created here, not only of dir.
	if err := mkdirAllSynced(fs, dir); err != nil {
		return nil, err
	}
	if err := syncDirs(fs, fs.PathDir(dir), dir); err != nil {
		return nil, fmt.Errorf("tupled: sync %s: %w", dir, err)
	}
	kind := storage.KindPebble
	sopts := storage.Options{FS: fs, Logger: cfg.Logger, CacheSize: cfg.BlockCacheSize}
	if cfg.Kind == storage.KindBbolt {
		kind = storage.KindBbolt
		sopts.FS = nil
	}
	if err := checkManifest(fs, dir, kind); err != nil {
		return nil, err
	}
	be, err := storage.Open(kind, fs.PathJoin(dir, "data"), sopts)
	if err != nil {
		return nil, openFailed(fmt.Errorf("tupled: open %s backend: %w", kind, err))
	}
	be = storage.WithChecksums(be)
	// Preallocate: a commit's fdatasync then writes inside the segment's
	// size and commits no size change to the file system's journal (about
	// a third of a commit's latency on ext4; see wal.Options.Preallocate).
	wopts := wal.Options{FS: fs, Dir: fs.PathJoin(dir, "wal"), Logger: cfg.Logger, SegmentSize: cfg.WALSegmentSize, Preallocate: true}
	if !cfg.SyncCommit {
		wopts.SyncInterval = 20 * time.Millisecond
	} else {
		// Nothing is acknowledged before its Sync: a record the WAL could
		// not write for lack of space can be voided (the commit fails with
		// 53100) and the database go on.
		wopts.RetryNoSpace = true
	}
	w, err := wal.Open(wopts)
	if err != nil {
		be.Close()
		return nil, openFailed(fmt.Errorf("tupled: open WAL: %w", err))
	}
	d := &Store{xacts: m.Xacts, multi: m.Multi, heap: m.Heap, log: cfg.Logger, cfg: cfg,
		fs: fs, be: be, wal: w, sync: cfg.SyncCommit, inflight: make(map[uint64]wal.LSN),
		dir: dir, ctlBackend: backendCode(kind)}
	d.dataFS, d.dataDir = fs, fs.PathJoin(dir, "data")
	if sopts.FS == nil {
		d.dataFS = vfs.Default
	}
	ctl, hasCtl, ckpt, err := d.checkFormat(dir, kind)
	if err == nil {
		d.ckptNo = ckpt
		err = d.recover(ctl, hasCtl)
	}
	if err != nil {
		w.Close()
		be.Close()
		return nil, err
	}
	return d, nil
}

func getUvarint(be storage.Backend, key []byte) (uint64, error) {
	v, ok, err := be.Get(key)
	if err != nil || !ok {
		return 0, err
	}
	x, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, corruptf("meta key %q of the %s backend is not a number", key, be.Name())
	}
	return x, nil
}

// ReserveXid makes sure xid is below the reserved bound, writing a
// reservation record (and waiting for it) when it is not: no id a previous
// incarnation may have shown is handed out again after a crash. The engine
// calls it before a transaction id is used.
func (d *Store) ReserveXid(xid uint64) error {
	if xid < d.reserved.Load() {
		return nil
	}
	d.reserveMu.Lock()
	defer d.reserveMu.Unlock()
	if xid < d.reserved.Load() {
		return nil
	}
	if err := d.FatalErr(); err != nil {
		return err
	}
	upTo := xid + xidReserveChunk
	lsn, err := d.wal.Append(wal.Record{Type: RecXidReserve, Data: binary.AppendUvarint(nil, upTo)})
	if err == nil {
		err = d.wal.Sync(context.Background(), lsn)
	}
	if err != nil {
		return d.walFailed(err)
	}
	d.reserved.Store(upTo)
	return nil
}

// CreateTable logs a new table and waits until the record is durable; the
// caller then creates it in the heap.
func (d *Store) CreateTable(name string) error {
	if err := d.FatalErr(); err != nil {
		return err
	}
	lsn, err := d.wal.Append(wal.Record{Type: RecCreateTable, Data: []byte(name)})
	if err == nil {
		err = d.wal.Sync(context.Background(), lsn)
	}
	if err != nil {
		return d.walFailed(err)
	}
	return nil
}

// BetweenCheckpoints runs f while no checkpoint runs (and so while no
// checkpoint's snapshot holds the horizon back).
func (d *Store) BetweenCheckpoints(f func()) {
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	f()
}

// Checkpoint writes the state as of a fresh snapshot to the backend and
// drops the WAL before the redo point.
func (d *Store) Checkpoint() error {
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	if err := d.FatalErr(); err != nil {
		return err
	}
	x := d.xacts.BeginInternal() // holds the horizon while we read; not in Locks()
	defer d.xacts.Abort(x)
	// reserveMu: a reservation record is either after the redo point or
	// already counted in reserved, never dropped with neither (xids handed
	// out from it would be given again after a crash).
	d.reserveMu.Lock()
	d.inflightMu.Lock()
	snap := d.xacts.TakeSnapshot(x)
	redo := d.wal.EndLSN()
	for _, l := range d.inflight {
		// l is the LSN just past the commit record, and replay starts with
		// the first record ending after the redo point: l-1 keeps the
		// record (l would drop a commit this checkpoint does not contain).
		redo = min(redo, l-1)
	}
	end := d.wal.EndLSN()
	if d.sync {
		// Records past the flushed end are in-flight commits (counted
		// above) or records voided for lack of space that may never reach
		// the disk: a redo point past the durable end would make a later
		// recovery skip records appended after a restart at those LSNs.
		redo = min(redo, d.wal.FlushedLSN())
	}
	nextXid := d.reserved.Load()
	d.inflightMu.Unlock()
	d.reserveMu.Unlock()
	if !d.sync {
		// Commits included in snap may not be durable yet.
		if err := d.wal.Sync(context.Background(), end); err != nil {
			return d.fail(err)
		}
	}
	b := d.be.NewBatch()
	var cleans []func() []*heap.Row
	for _, t := range d.heap.Tables() {
		b.Set(catalogKey(t.Name()), nil)
		clean, err := t.CheckpointRows(snap, func(key, value []byte, ok bool) error {
			if ok {
				b.Set(heap.RowKey(t.Name(), key), value)
			} else {
				b.Delete(heap.RowKey(t.Name(), key))
			}
			return d.flushIfLarge(b) // see "Memory" in commit.go
		})
		if err != nil {
			return d.fail(err) // a batch flushed early failed: the backend refuses every call now
		}
		cleans = append(cleans, clean)
	}
	// The bound must cover xids handed out in ranges not yet reserved past
	// the redo point: the reservation records before redo are dropped.
	b.Set(metaRedo, binary.AppendUvarint(nil, uint64(redo)))
	b.Set(metaNextXid, binary.AppendUvarint(nil, nextXid))
	ckptNo := d.ckptNo + 1
	b.Set(metaCheckpoint, binary.AppendUvarint(nil, ckptNo))
	if err := d.checkpointSpace(b.Size()); err != nil {
		return err
	}
	if err := d.be.Commit(b, true); err != nil {
		return d.fail(err) // the backend refuses every call now, see checkpointSpace
	}
	// The control file names the checkpoint before any WAL it makes
	// unnecessary is removed (control.go).
	if err := d.writeCheckpointControl(ckptNo, redo); err != nil {
		return d.fail(err)
	}
	d.ckptNo = ckptNo
	// Only now may the rows written be evicted or unlinked: a load before
	// the commit would have read the backend's previous copy.
	for _, clean := range cleans {
		clean()
	}
	if err := d.wal.RemoveBefore(redo); err != nil {
		return d.fail(err)
	}
	d.lastCkptLSN.Store(uint64(redo))
	d.checkpoints.Add(1)
	return nil
}

// checkpointSpace refuses, with errs.ErrDiskFull, a checkpoint of size bytes
// that the backend may not have room for. A backend that runs out of space
// in the middle of a commit is failed for good (pebble cannot go on after a
// failed write of its own log, and the storage layer refuses every call
// after a failed commit), while refusing here keeps it whole: the WAL keeps
// everything since the last checkpoint and a later checkpoint tries again.
// The margin, four times the batch and 8 MiB, covers the backend's log
// copy of the batch, its flush to a table and the log it rotates to
// (pebble needed about three times a 16 MiB checkpoint on a tmpfs; see
// tests/fault's TestDiskFullTmpfs). A file system that cannot tell its free space (an
// in-memory one) is not checked.
func (d *Store) checkpointSpace(size int) error {
	u, err := d.dataFS.GetDiskUsage(d.dataDir)
	if err != nil {
		return nil
	}
	need := 4*uint64(size) + 8<<20
	if u.AvailBytes < need {
		return diskFull(fmt.Errorf("checkpoint of %d bytes needs about %d bytes free in %s, %d are", size, need, d.dataDir, u.AvailBytes))
	}
	return nil
}

// Close checkpoints and closes the WAL and the backend. The engine calls it
// once no call is running.
func (d *Store) Close() error {
	err := d.Checkpoint()
	if e := d.wal.Close(); err == nil {
		if errors.Is(e, wal.ErrNoSpace) {
			// Only records voided for lack of space (failed commits) were
			// left unwritten: nothing acknowledged is lost.
			e = diskFull(e)
		}
		err = e
	}
	if e := d.be.Close(); err == nil {
		err = e
	}
	return err
}

// mkdirAllSynced creates dir and its missing ancestors, fsyncing the parent
// of each directory it creates.
func mkdirAllSynced(fs vfs.FS, dir string) error {
	var missing []string
	for d := dir; ; {
		if _, err := fs.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		parent := fs.PathDir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(missing) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDirs(fs, fs.PathDir(missing[i])); err != nil {
			return fmt.Errorf("tupled: sync parent of %s: %w", missing[i], err)
		}
	}
	return nil
}

func syncDirs(fs vfs.FS, dirs ...string) error {
	for _, d := range dirs {
		f, err := fs.OpenDir(d)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
