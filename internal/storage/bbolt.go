package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	bolt "go.etcd.io/bbolt"
)

// bboltBucket is the one bucket that holds every key.
var bboltBucket = []byte("tupled")

// bboltLockTimeout bounds how long OpenBbolt waits for the file lock (held
// by another process, or by a backend of this process not yet closed).
var bboltLockTimeout = 2 * time.Second

// bboltInitialMmap is the address space bbolt maps at open.
const bboltInitialMmap = 1 << 30

type bboltBackend struct {
	db   *bolt.DB
	path string
	g    *guard
	fail failure
	ctr  counters
	log  *slog.Logger

	// writeMu serialises Commit and Sync: bbolt has one writer at a time
	// (it would serialise us anyway; holding our own mutex keeps the
	// counters and the failed check in step with the write).
	writeMu  sync.Mutex
	fsyncs   atomic.Int64
	pageSize int
	final    atomic.Pointer[Stats]
}

// OpenBbolt opens (creating if needed) a bbolt store in the file path.
//
// Every commit is durable when it returns, whatever sync says: bbolt's
// NoSync mode skips the fsync that orders data pages before the meta page
// that points at them, so a power loss could leave a meta page pointing at
// pages never written — a corrupt file, not merely a lost batch. See
// README.md.
func OpenBbolt(path string, opts Options) (_ Backend, err error) {
	if err := checkBboltFS(opts.FS); err != nil {
		return nil, err
	}
	if path == "" {
		return nil, errors.New("storage: bbolt: empty path")
	}
	dir := filepath.Dir(path)
	if opts.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("storage: open bbolt %q: %w", path, err)
		}
	} else if err := mkdirAllAndSyncParents(dir); err != nil {
		return nil, fmt.Errorf("storage: open bbolt %q: %w", path, err)
	}
	if err := checkBboltSize(path); err != nil {
		return nil, fmt.Errorf("storage: open bbolt %q: %w", path, err)
	}
	// bbolt panics on some damage (a page of the wrong type, a freelist
	// that points outside the file): that is a corrupt file, not a crash.
	// So does, with faultsPanic, a read of a page past the end of the file.
	defer faultsPanic()()
	var db *bolt.DB
	defer func() {
		if r := recover(); r != nil {
			if db != nil {
				func() { defer func() { _ = recover() }(); _ = db.Close() }()
			}
			err = fmt.Errorf("storage: open bbolt %q: %w", path, &CorruptionError{What: "file " + path, Detail: "bbolt panicked while opening it", Cause: panicError(r)})
		}
	}()
	db, err = bolt.Open(path, 0o600, &bolt.Options{
		Timeout:      bboltLockTimeout,
		FreelistType: bolt.FreelistMapType,
		// Reserve address space up front: bbolt remaps when the file
		// outgrows its mapping, and a remap waits for every read
		// transaction — a long Scan would stall every Commit. 1 GiB of
		// address space costs no memory.
		InitialMmapSize: bboltInitialMmap,
		ReadOnly:        opts.ReadOnly,
		// Never NoSync (see above). No Logger: a bbolt logger is called
		// for every Put; failures reach us as errors and we log them.
	})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("storage: open bbolt %q: file is locked (by another process, or by a backend of this process that is not closed): %w", path, err)
	}
	if err != nil {
		if errors.Is(err, bolt.ErrInvalid) || errors.Is(err, bolt.ErrChecksum) || errors.Is(err, bolt.ErrVersionMismatch) || errors.Is(err, bolt.ErrInvalidMapping) {
			err = &CorruptionError{What: "file " + path, Cause: err}
		}
		return nil, fmt.Errorf("storage: open bbolt %q: %w", path, err)
	}
	if opts.ReadOnly {
		return &bboltBackend{db: db, path: path, g: newGuard(), log: opts.logger().With("backend", KindBbolt), pageSize: db.Info().PageSize}, nil
	}
	// The file may be new: make its directory entry durable.
	if err := syncDir(dir); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("storage: open bbolt %q: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		if tx.Bucket(bboltBucket) != nil {
			return nil
		}
		// A file that holds pages but lost its bucket is damaged, not new.
		if tx.Size() > int64(4*db.Info().PageSize) {
			return &CorruptionError{What: "file " + path, Detail: fmt.Sprintf("bucket %q is missing", bboltBucket)}
		}
		_, err := tx.CreateBucket(bboltBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("storage: open bbolt %q: %w", path, err)
	}
	return &bboltBackend{
		db:       db,
		path:     path,
		g:        newGuard(),
		log:      opts.logger().With("backend", KindBbolt),
		pageSize: db.Info().PageSize,
	}, nil
}

// faultsPanic makes a memory fault in this goroutine panic instead of
// killing the process, until the function it returns restores the previous
// setting. bbolt reads its file through a mapping larger than the file
// (bboltInitialMmap): a page number past the end of a truncated file, or a
// damaged page's pointer, is a read past the end of the file, which the
// kernel answers with SIGBUS — a fatal error, not a panic, without this.
// Every call into bbolt that reads pages runs under it and recovers the
// panic as damage (recoverRead). It costs one runtime call.
func faultsPanic() (restore func()) {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}

// checkBboltSize refuses a file shorter than the pages its newest valid
// meta page counts (a truncated file), before bbolt opens it: bbolt would
// read those pages while opening (its freelist), fault, and — the panic
// coming out of bolt.Open — leave its file lock held with no handle to
// release it. It reads the two meta pages as bbolt lays them out (page
// header of 16 bytes, then magic, version, page size, flags, root bucket,
// freelist, high-water page id, txid and an FNV-64a checksum of the
// fields before it, in native byte order); a file too short or with no
// valid meta page is left for bbolt to judge.
func checkBboltSize(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil // a new store
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	const magic = 0xED0CDAED
	meta := func(off int64) (pageSize, hwm, txid uint64, ok bool) {
		var b [16 + 64]byte
		if _, err := f.ReadAt(b[:], off); err != nil {
			return 0, 0, 0, false
		}
		m := b[16:]
		h := fnv.New64a()
		h.Write(m[:56])
		if binary.NativeEndian.Uint32(m[0:]) != magic || binary.NativeEndian.Uint64(m[56:]) != h.Sum64() {
			return 0, 0, 0, false
		}
		return uint64(binary.NativeEndian.Uint32(m[8:])), binary.NativeEndian.Uint64(m[40:]), binary.NativeEndian.Uint64(m[48:]), true
	}
	// Meta page 0 gives the page size, and meta page 1 sits one page in;
	// bbolt trusts the valid one with the larger txid.
	ps, hwm, tx0, ok := meta(0)
	if !ok {
		ps = uint64(os.Getpagesize()) // bbolt's default, for a damaged page 0
		var ps1 uint64
		if ps1, hwm, _, ok = meta(int64(ps)); !ok || ps1 != ps {
			return nil
		}
	} else if ps < 512 || ps > 1<<20 {
		return nil
	} else if _, hwm1, tx1, ok1 := meta(int64(ps)); ok1 && tx1 > tx0 {
		hwm = hwm1
	}
	if want := hwm * ps; want > uint64(fi.Size()) {
		return &CorruptionError{What: "file " + path, Detail: fmt.Sprintf("the file is %d bytes but its meta page counts %d bytes of pages (truncated)", fi.Size(), want)}
	}
	return nil
}

func checkBboltFS(fs vfs.FS) error {
	if fs == nil || fs == vfs.Default {
		return nil
	}
	return ErrFSNotSupported
}

func (bb *bboltBackend) Name() string { return KindBbolt }

// recoverRead turns a panic out of bbolt (it asserts on damaged pages)
// into the failed state. bbolt's View and Update roll their transaction back
// on a panic, so its locks are released.
func (bb *bboltBackend) recoverRead(op string, errp *error) {
	if r := recover(); r != nil {
		bb.readPanic(op, r, errp)
	}
}

func (bb *bboltBackend) readPanic(op string, r any, errp *error) {
	cause := panicError(r)
	bb.log.Error("panic inside bbolt; backend failed", "op", op, "err", cause, "stack", string(debug.Stack()))
	*errp = bb.fail.set(&CorruptionError{What: "file " + bb.path, Detail: "bbolt panicked during " + op, Cause: cause})
}

func (bb *bboltBackend) Get(key []byte) (value []byte, ok bool, err error) {
	if err := validKey(key); err != nil {
		return nil, false, err
	}
	if err := bb.g.enter(); err != nil {
		return nil, false, err
	}
	defer bb.g.exit()
	if err := bb.fail.get(); err != nil {
		return nil, false, err
	}
	defer bb.recoverRead("get", &err)
	defer faultsPanic()()
	err = bb.db.View(func(tx *bolt.Tx) error {
		// A cursor rather than Bucket.Get, whose nil result does not tell
		// an absent key from an empty value.
		k, v := tx.Bucket(bboltBucket).Cursor().Seek(key)
		if k != nil && bytes.Equal(k, key) {
			// v points into bbolt's mmap, valid only inside the tx: copy.
			value = append(make([]byte, 0, len(v)), v...)
			ok = true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("storage: bbolt get: %w", err)
	}
	return value, ok, nil
}

func (bb *bboltBackend) Scan(start, end []byte, fn func(key, value []byte) error) error {
	return bb.scan(start, end, false, fn)
}

func (bb *bboltBackend) ReverseScan(start, end []byte, fn func(key, value []byte) error) error {
	return bb.scan(start, end, true, fn)
}

func (bb *bboltBackend) scan(start, end []byte, reverse bool, fn func(key, value []byte) error) (err error) {
	if fn == nil {
		return errors.New("storage: scan with nil fn")
	}
	if err := bb.g.enter(); err != nil {
		return err
	}
	defer bb.g.exit()
	if err := bb.fail.get(); err != nil {
		return err
	}
	if len(start) > 0 && len(end) > 0 && string(start) >= string(end) {
		return nil
	}
	// A panic out of bbolt becomes the failed state; one out of fn is
	// fn's and is passed on.
	inFn := false
	defer func() {
		if inFn {
			return
		}
		if r := recover(); r != nil {
			bb.readPanic("scan", r, &err)
		}
	}()
	defer faultsPanic()()
	// fn's error comes back from View unchanged.
	return bb.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bboltBucket).Cursor()
		var k, v []byte
		if reverse {
			// Seek finds the first key >= end; the one before it is the
			// last key of the range.
			if len(end) > 0 {
				if k, _ = c.Seek(end); k != nil {
					k, v = c.Prev()
				} else {
					k, v = c.Last()
				}
			} else {
				k, v = c.Last()
			}
			for ; k != nil; k, v = c.Prev() {
				if len(start) > 0 && bytes.Compare(k, start) < 0 {
					return nil
				}
				inFn = true
				if err := fn(k, v); err != nil {
					return err
				}
				inFn = false
			}
			return nil
		}
		if len(start) > 0 {
			k, v = c.Seek(start)
		} else {
			k, v = c.First()
		}
		for ; k != nil; k, v = c.Next() {
			if len(end) > 0 && bytes.Compare(k, end) >= 0 {
				return nil
			}
			inFn = true
			if err := fn(k, v); err != nil {
				return err
			}
			inFn = false
		}
		return nil
	})
}

func (bb *bboltBackend) NewBatch() Batch {
	return &bboltBatch{owner: bb}
}

func (bb *bboltBackend) Commit(b Batch, sync bool) (err error) {
	if b == nil {
		return ErrNilBatch
	}
	x, ok := b.(*bboltBatch)
	if !ok || x == nil || x.owner != bb {
		return ErrForeignBatch
	}
	if err := bb.g.enter(); err != nil {
		return err
	}
	defer bb.g.exit()
	if err := bb.fail.get(); err != nil {
		return err
	}
	if x.err != nil {
		return x.err
	}
	if x.committed {
		return ErrBatchCommitted
	}
	bb.writeMu.Lock()
	defer bb.writeMu.Unlock()
	if err := bb.fail.get(); err != nil { // failed while we waited
		return err
	}
	if len(x.ops) == 0 {
		if sync {
			if err := bb.syncLocked(); err != nil {
				return err
			}
		}
		x.committed = true
		bb.ctr.committed(0, sync)
		return nil
	}
	// A panic out of bbolt (a damaged page met while updating) fails the
	// backend; Update rolled the transaction back.
	defer bb.recoverRead("commit", &err)
	defer faultsPanic()()
	sortPointOps(x.ops)
	// Update, not Batch: bolt's Batch may run the function more than once
	// and coalesces callers into one transaction, so one caller's failure
	// would be retried alone — we want exactly one transaction per Commit.
	err = bb.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(bboltBucket)
		for i := range x.ops {
			op := &x.ops[i]
			switch op.kind {
			case opSet:
				// bbolt keeps references to key and value until the
				// transaction ends; the batch owns them and is not touched
				// while Commit runs.
				if err := bk.Put(op.key, op.value); err != nil {
					return err
				}
			case opDelete:
				if err := bk.Delete(op.key); err != nil {
					return err
				}
			case opDeleteRange:
				// Seek again after each delete: Cursor.Next after
				// Cursor.Delete can skip a key.
				c := bk.Cursor()
				for k, _ := c.Seek(op.key); k != nil && bytes.Compare(k, op.value) < 0; k, _ = c.Seek(op.key) {
					if err := c.Delete(); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		// The batch was validated when it was built, so this is an I/O
		// error (write, fdatasync, ENOSPC, mmap growth). bbolt rolled the
		// transaction back in memory, but the file may hold part of it and
		// the meta page may or may not have reached the disk: the outcome
		// is known only after reopening.
		bb.log.Error("bbolt commit failed; backend failed", "err", err)
		return bb.fail.set(fmt.Errorf("bbolt commit: %w", err))
	}
	x.committed = true
	bb.fsyncs.Add(2) // data pages, then the meta page
	bb.ctr.committed(x.size, sync)
	return nil
}

// sortPointOps puts a batch of Sets and Deletes in key order, keeping the
// order of operations on one key (a stable sort: the batch's outcome is
// the same). bbolt inserts into one in-memory leaf node per page until the
// transaction commits and splits it, shifting the node's later entries for
// every key put before them: a checkpoint writing 200k rows of one table
// after 100k rows of another whose keys sort after them spent 48 s in that
// shifting (memmove) in Close. In key order every put appends. A batch
// with a DeleteRange keeps its order (a Set after a covering DeleteRange
// must survive it).
func sortPointOps(ops []bboltOp) {
	sorted := true
	for i := range ops {
		if ops[i].kind == opDeleteRange {
			return
		}
		if i > 0 && sorted && bytes.Compare(ops[i-1].key, ops[i].key) > 0 {
			sorted = false
		}
	}
	if !sorted {
		slices.SortStableFunc(ops, func(a, b bboltOp) int { return bytes.Compare(a.key, b.key) })
	}
}

func (bb *bboltBackend) Sync() error {
	if err := bb.g.enter(); err != nil {
		return err
	}
	defer bb.g.exit()
	bb.writeMu.Lock()
	defer bb.writeMu.Unlock()
	if err := bb.fail.get(); err != nil {
		return err
	}
	if err := bb.syncLocked(); err != nil {
		return err
	}
	bb.ctr.syncs.Add(1)
	return nil
}

// syncLocked fdatasyncs the file. Every commit already did, so this is a
// barrier that costs little; it is kept so that Sync means the same on
// both backends. Caller holds writeMu.
func (bb *bboltBackend) syncLocked() error {
	if err := bb.db.Sync(); err != nil {
		bb.log.Error("bbolt sync failed; backend failed", "err", err)
		return bb.fail.set(fmt.Errorf("bbolt sync: %w", err))
	}
	bb.fsyncs.Add(1)
	return nil
}

func (bb *bboltBackend) Close() error {
	if err := bb.g.close(); err != nil {
		return err
	}
	s := bb.stats()
	p := &s
	bb.final.Store(p)
	cerr := bb.db.Close()
	return closeResult("bbolt", bb.fail.get(), cerr)
}

func (bb *bboltBackend) Stats() Stats {
	if s := bb.final.Load(); s != nil {
		return *s
	}
	if err := bb.g.enter(); err != nil {
		if s := bb.final.Load(); s != nil {
			return *s
		}
		s := Stats{Backend: KindBbolt, Fsyncs: bb.fsyncs.Load(), BytesWritten: -1, MemoryInUse: -1}
		bb.ctr.fill(&s)
		return s
	}
	defer bb.g.exit()
	return bb.stats()
}

func (bb *bboltBackend) stats() Stats {
	s := Stats{Backend: KindBbolt, Fsyncs: bb.fsyncs.Load(), MemoryInUse: -1}
	bb.ctr.fill(&s)
	s.Failed = bb.fail.get() != nil
	ts := bb.db.Stats().TxStats
	s.BytesWritten = ts.GetPageAlloc() + int64(s.Commits)*int64(bb.pageSize)
	return s
}

type opKind uint8

const (
	opSet opKind = iota
	opDelete
	opDeleteRange
)

// bboltOp is one operation; for opDeleteRange key is start and value end.
type bboltOp struct {
	kind       opKind
	key, value []byte
}

// bboltBatch records copies of its operations; Commit applies them in
// order inside one bbolt write transaction.
type bboltBatch struct {
	owner *bboltBackend
	opBatch
}

// opBatch is the operation list bbolt's and the arena's batches share:
// copies of what was added, in order, with their size.
type opBatch struct {
	ops  []bboltOp
	size int
	batchState
}

func (x *opBatch) Set(key, value []byte) {
	if !x.usableState() || !x.validSet(key, value) {
		return
	}
	// One allocation for both copies; value is never nil, so bbolt
	// stores an empty value rather than refusing a nil one.
	buf := make([]byte, len(key)+len(value))
	copy(buf, key)
	copy(buf[len(key):], value)
	x.ops = append(x.ops, bboltOp{kind: opSet, key: buf[:len(key):len(key)], value: buf[len(key):]})
	x.size += len(key) + len(value)
}

func (x *opBatch) Delete(key []byte) {
	if !x.usableState() {
		return
	}
	if err := validKey(key); err != nil {
		x.err = err
		return
	}
	x.ops = append(x.ops, bboltOp{kind: opDelete, key: bytes.Clone(key)})
	x.size += len(key)
}

func (x *opBatch) DeleteRange(start, end []byte) {
	if !x.usableState() {
		return
	}
	if err := validRange(start, end); err != nil {
		x.err = err
		return
	}
	if string(start) == string(end) {
		return // empty range
	}
	x.ops = append(x.ops, bboltOp{kind: opDeleteRange, key: bytes.Clone(start), value: bytes.Clone(end)})
	x.size += len(start) + len(end)
}

func (x *opBatch) Len() int  { return len(x.ops) }
func (x *opBatch) Size() int { return x.size }

func (x *opBatch) Reset() {
	clear(x.ops) // drop references to the old copies
	x.ops = x.ops[:0]
	x.err = nil
	x.size = 0
	x.committed = false
}

// mkdirAllAndSyncParents creates dir and any missing parents on the OS
// filesystem, fsyncing the parent of each directory it created so the new
// entries survive a crash.
func mkdirAllAndSyncParents(dir string) error {
	dir = filepath.Clean(dir)
	var created []string
	for d := dir; ; {
		_, err := os.Stat(d)
		if err == nil {
			break
		}
		if !os.IsNotExist(err) {
			return err
		}
		created = append(created, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(created) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(created) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(created[i])); err != nil {
			return err
		}
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	serr := f.Sync()
	cerr := f.Close()
	if serr != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, serr)
	}
	return cerr
}
