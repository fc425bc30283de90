package tupled

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/storage"
	"github.com/tupled/tupled/wal"
)

// Durability: commit-time logical redo.
//
// A writing transaction's changes live only in memory until it commits.
// Commit appends ONE WAL record with its write set (table, key, new value or
// delete, in the order they were made) — or, for a write set larger than a
// record can hold, a stream of parts ended by one record that commits them
// (bigcommit.go) — waits until the record is durable
// (group commit; skipped with SyncCommit off), and only then makes the
// transaction committed and releases its row locks. A transaction that
// wrote nothing — one that only read and locked rows — appends nothing and
// never waits for the disk: its row locks are meaningless after a crash,
// since every transaction of the crashed process is over.
//
// The backend holds the state of the last checkpoint: one committed value per
// key. A checkpoint takes a snapshot S and a redo point R — the smallest LSN
// of a commit record whose transaction has not yet been given its commit
// number, or the end of the WAL — writes for every row written since the
// previous checkpoint its version visible to S, records R, and then drops
// WAL segments before R. Recovery loads nothing into memory: it replays
// every commit record after R into the backend, in LSN order, and
// checkpoints. Replay is idempotent and order-correct: two transactions that
// wrote the same key did so one after the other's commit (the row lock), so
// their records are in commit order; replaying records the checkpoint
// already contains only rewrites values that a later record then sets again.
//
// Damage: the backend is wrapped in storage.WithChecksums (every value
// sealed with CRC32C over key and value), and each checkpoint is numbered
// in the backend and in the control file outside it (control.go), written
// after the backend batch and before WAL segments are removed; Open refuses
// a backend behind the control file, a WAL ending before its redo point, or
// damaged files, with ErrCorrupted (XX001).
//
// No transaction is in progress after recovery, so no xmax, lock or
// multixact survives: every row comes back as one frozen version. Xids are
// reserved in the WAL in ranges before they are handed out, so no id a
// previous incarnation showed is handed out again.

// WAL record types.
const (
	recCommit      wal.RecordType = 1 // xid, write set
	recCreateTable wal.RecordType = 2 // table name
	recXidReserve  wal.RecordType = 3 // xids below this value may have been handed out
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

type writeOp struct {
	table  string
	key    []byte
	value  []byte
	delete bool
}

func encodeCommit(xid uint64, ws []writeOp) []byte {
	n := 2 * binary.MaxVarintLen64
	for _, w := range ws {
		n += 1 + 3*binary.MaxVarintLen32 + len(w.table) + len(w.key) + len(w.value)
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, xid)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	for _, w := range ws {
		op := byte(1)
		if w.delete {
			op = 2
		}
		b = append(b, op)
		b = binary.AppendUvarint(b, uint64(len(w.table)))
		b = append(b, w.table...)
		b = binary.AppendUvarint(b, uint64(len(w.key)))
		b = append(b, w.key...)
		if !w.delete {
			b = binary.AppendUvarint(b, uint64(len(w.value)))
			b = append(b, w.value...)
		}
	}
	return b
}

var errBadRecord = errors.New("tupled: malformed WAL record")

// decodeCommit decodes a recCommit record (see decodeCommitStream).
func decodeCommit(data []byte) (xid uint64, ws []writeOp, err error) {
	xid, err = decodeCommitStream([][]byte{data}, func(w writeOp) error {
		ws = append(ws, w)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return xid, ws, nil
}

// durable is the persistence of an on-disk DB.
type durable struct {
	db   *DB
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
	dropMu      sync.RWMutex // DROP TABLE (exclusive) vs commits logging (shared), see tables.go
	dir         string
	ckptNo      uint64 // checkpoint number in the backend and the control file (control.go); ckMu
	ctlBackend  uint8
	lastCkptLSN atomic.Uint64
	fatal       atomic.Pointer[error]
	checkpoints atomic.Uint64

	// skippedAtRecovery: logged writes the last recovery could not store
	// (see redoer).
	skippedAtRecovery atomic.Uint64

	// dataFS and dataDir are where the backend's files are (bbolt's are
	// on the OS file system whatever fs is), for the checkpoint's check of
	// free space.
	dataFS  vfs.FS
	dataDir string
}

func (d *durable) fail(err error) error {
	d.fatal.CompareAndSwap(nil, &err)
	return d.fatalErr()
}

// walFailed is the error of a failed WAL Append or Sync: ErrDiskFull when
// the WAL ran out of space (it voided the records, see wal.Options.
// RetryNoSpace, and goes on), else the database fails.
func (d *durable) walFailed(err error) error {
	if errors.Is(err, wal.ErrNoSpace) {
		return diskFull(err)
	}
	return d.fail(err)
}

func diskFull(err error) error {
	return &opError{sentinel: ErrDiskFull, msg: "tupled: disk full: " + err.Error(), cause: err}
}

// readable is the error a read gets on an on-disk database, if any. With
// SyncCommit on every commit readers can see is durable, so a failed WAL
// or backend write leaves reads working. With SyncCommit off, a WAL that
// died may have taken acknowledged, visible commits with it: as PostgreSQL
// PANICs, the database then refuses reads too, so that no one sees commits
// a reopen will not bring back.
func (d *durable) readable() error {
	if d.sync {
		return nil
	}
	if err := d.wal.Err(); err != nil {
		return d.fail(err)
	}
	return d.fatalErr()
}

// fatalErr is the error every write gets once the WAL or backend failed.
func (d *durable) fatalErr() error {
	if p := d.fatal.Load(); p != nil {
		if errors.Is(*p, storage.ErrCorrupted) {
			return asCorrupted(*p)
		}
		return &opError{sentinel: ErrIO, msg: "tupled: database refuses writes after an I/O failure: " + (*p).Error(), cause: *p}
	}
	return nil
}

func openDurable(db *DB, dir string, o *Options) (*durable, error) {
	fs := o.FS
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
	sopts := storage.Options{FS: fs, Logger: db.log}
	if o.Backend == Bbolt {
		kind = storage.KindBbolt
		sopts.FS = nil
	}
	if err := checkManifest(fs, dir, o); err != nil {
		return nil, err
	}
	be, err := storage.Open(kind, fs.PathJoin(dir, "data"), sopts)
	if err != nil {
		return nil, openFailed(fmt.Errorf("tupled: open %s backend: %w", kind, err))
	}
	be = storage.WithChecksums(be)
	wopts := wal.Options{FS: fs, Dir: fs.PathJoin(dir, "wal"), Logger: db.log, SegmentSize: o.walSegmentSize}
	if !*o.SyncCommit {
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
	d := &durable{db: db, fs: fs, be: be, wal: w, sync: *o.SyncCommit, inflight: make(map[uint64]wal.LSN),
		dir: dir, ctlBackend: backendCode(o)}
	d.dataFS, d.dataDir = fs, fs.PathJoin(dir, "data")
	if sopts.FS == nil {
		d.dataFS = vfs.Default
	}
	ctl, hasCtl, ckpt, err := d.checkFormat(dir, o)
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

// recover replays the WAL after the last checkpoint into the backend, loads
// the catalog and checkpoints.
// ctl is the control file's data (hasCtl false for a new database), which
// checkFormat found consistent with the backend.
func (d *durable) recover(ctl controlData, hasCtl bool) (err error) {
	defer func() { err = asCorrupted(err) }()
	redo, err := getUvarint(d.be, metaRedo)
	if err != nil {
		return err
	}
	nextXid, err := getUvarint(d.be, metaNextXid)
	if err != nil {
		return err
	}
	incarnation, err := getUvarint(d.be, metaIncarnation)
	if err != nil {
		return err
	}
	incarnation++
	tables := map[string]bool{}
	if err := d.be.Scan([]byte("c"), []byte("d"), func(k, _ []byte) error {
		tables[string(k[1:])] = true
		return nil
	}); err != nil {
		return err
	}
	rd := d.newRedoer(nextXid)
	b := rd.b
	replayed := 0
	err = d.wal.Replay(wal.LSN(redo), func(lsn wal.LSN, rec wal.Record) error {
		replayed++
		switch rec.Type {
		case recCommit:
			return rd.commit(lsn, rec.Data)
		case recCommitPart, recCommitEnd:
			return rd.part(lsn, rec.Data, rec.Type == recCommitEnd)
		case recCreateTable:
			if rd.createTable(lsn, string(rec.Data)) {
				tables[string(rec.Data)] = true
			}
		case recDropTable:
			rd.dropTable(string(rec.Data))
			delete(tables, string(rec.Data))
		case recXidReserve:
			x, n := binary.Uvarint(rec.Data)
			if n <= 0 {
				return fmt.Errorf("record at %d: %w", lsn, errBadRecord)
			}
			rd.nextXid = max(rd.nextXid, x)
		default:
			return fmt.Errorf("tupled: unknown WAL record type %d at %d", rec.Type, lsn)
		}
		return nil
	})
	if errors.Is(err, wal.ErrRemoved) {
		return corruptf("recovery: the WAL in %s no longer holds the backend's redo point %d: %v", d.fs.PathJoin(d.dir, "wal"), redo, err)
	}
	if err != nil {
		return fmt.Errorf("tupled: recovery: %w", err)
	}
	rd.finish()
	nextXid = rd.nextXid
	nextXid = max(nextXid, 1)
	end := d.wal.EndLSN()
	if hasCtl && uint64(end) < ctl.redo {
		return corruptf("recovery: the WAL in %s ends at LSN %d, before the control file's redo point %d: WAL segments were lost or cut short", d.fs.PathJoin(d.dir, "wal"), end, ctl.redo)
	}
	ckptNo := d.ckptNo + 1
	b.Set(metaCheckpoint, binary.AppendUvarint(nil, ckptNo))
	b.Set(metaRedo, binary.AppendUvarint(nil, uint64(end)))
	b.Set(metaNextXid, binary.AppendUvarint(nil, nextXid))
	b.Set(metaIncarnation, binary.AppendUvarint(nil, incarnation))
	if err := d.be.Commit(b, true); err != nil {
		return fmt.Errorf("tupled: recovery: %w", err)
	}
	if err := d.writeCheckpointControl(ckptNo, end); err != nil {
		return err
	}
	d.ckptNo = ckptNo
	d.db.multi.AdvanceID(incarnation << multiIDShift)
	if err := d.wal.RemoveBefore(end); err != nil {
		return fmt.Errorf("tupled: recovery: %w", err)
	}
	d.lastCkptLSN.Store(uint64(end))
	d.db.xacts.AdvanceXid(nextXid)
	d.reserved.Store(nextXid)
	d.db.heap.SetBackend(d.be)
	for name := range tables {
		if _, err := d.db.heap.CreateTable(name); err != nil {
			return err
		}
	}
	d.db.log.Info("recovered", "records_replayed", replayed, "redo_lsn", redo, "end_lsn", end, "tables", len(tables), "next_xid", nextXid)
	return nil
}

// reserveXid makes sure xid is below the reserved bound, writing a
// reservation record (and waiting for it) when it is not.
func (d *durable) reserveXid(xid uint64) error {
	if xid < d.reserved.Load() {
		return nil
	}
	d.reserveMu.Lock()
	defer d.reserveMu.Unlock()
	if xid < d.reserved.Load() {
		return nil
	}
	if err := d.fatalErr(); err != nil {
		return err
	}
	upTo := xid + xidReserveChunk
	lsn, err := d.wal.Append(wal.Record{Type: recXidReserve, Data: binary.AppendUvarint(nil, upTo)})
	if err == nil {
		err = d.wal.Sync(context.Background(), lsn)
	}
	if err != nil {
		return d.walFailed(err)
	}
	d.reserved.Store(upTo)
	return nil
}

// createTable logs a new table and waits until the record is durable.
func (d *durable) createTable(name string) error {
	if err := d.fatalErr(); err != nil {
		return err
	}
	lsn, err := d.wal.Append(wal.Record{Type: recCreateTable, Data: []byte(name)})
	if err == nil {
		err = d.wal.Sync(context.Background(), lsn)
	}
	if err != nil {
		return d.walFailed(err)
	}
	return nil
}

// commit makes tx's writes durable and then commits it (see the comment at
// the top of this file).
func (d *durable) commit(tx *Tx) error {
	if err := d.fatalErr(); err != nil {
		return err
	}
	// dropMu (shared): no DROP TABLE record between the check that every
	// table written still exists and this commit's record (tables.go).
	d.dropMu.RLock()
	if err := d.checkTablesExist(tx.writes); err != nil {
		d.dropMu.RUnlock()
		return err
	}
	x := tx.txn.X
	lsn, err := d.logCommit(x.ID, tx.writes) // registers x in inflight
	d.dropMu.RUnlock()
	if err != nil {
		return err
	}
	if d.sync {
		if err := d.wal.Sync(context.Background(), lsn); err != nil {
			d.inflightMu.Lock()
			delete(d.inflight, x.ID)
			d.inflightMu.Unlock()
			// Out of space: the record is void, never replayed, and the
			// transaction is rolled back.
			return d.walFailed(err)
		}
	}
	d.inflightMu.Lock()
	tx.db.xacts.Commit(x)
	delete(d.inflight, x.ID)
	d.inflightMu.Unlock()
	return nil
}

// checkpoint writes the state as of a fresh snapshot to the backend and
// drops the WAL before the redo point.
func (d *durable) checkpoint() error {
	d.ckMu.Lock()
	defer d.ckMu.Unlock()
	if err := d.fatalErr(); err != nil {
		return err
	}
	db := d.db
	x := db.xacts.BeginInternal() // holds the horizon while we read; not in Locks()
	defer db.xacts.Abort(x)
	// reserveMu: a reservation record is either after the redo point or
	// already counted in reserved, never dropped with neither (xids handed
	// out from it would be given again after a crash).
	d.reserveMu.Lock()
	d.inflightMu.Lock()
	snap := db.xacts.TakeSnapshot(x)
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
	var cleans []func()
	for _, t := range db.heap.Tables() {
		b.Set(catalogKey(t.Name), nil)
		clean, err := t.CheckpointRows(snap, func(key, value []byte, ok bool) error {
			if ok {
				b.Set(heap.RowKey(t.Name, key), value)
			} else {
				b.Delete(heap.RowKey(t.Name, key))
			}
			return d.flushIfLarge(b) // see "Memory" in bigcommit.go
		})
		if err != nil {
			return err
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

// checkpointSpace refuses, with ErrDiskFull, a checkpoint of size bytes
// that the backend may not have room for. A backend that runs out of space
// in the middle of a commit is failed for good (pebble cannot go on after a
// failed write of its own log, and the storage layer refuses every call
// after a failed commit), while refusing here keeps it whole: the WAL keeps
// everything since the last checkpoint and a later checkpoint tries again.
// The margin, four times the batch and 8 MiB, covers the backend's log
// copy of the batch, its flush to a table and the log it rotates to
// (pebble needed about three times a 16 MiB checkpoint on a tmpfs; see
// TestDiskFullTmpfs). A file system that cannot tell its free space (an
// in-memory one) is not checked.
func (d *durable) checkpointSpace(size int) error {
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

func (d *durable) close() error {
	err := d.checkpoint()
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
