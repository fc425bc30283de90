package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	dto "github.com/prometheus/client_model/go"
)

// pebbleMemTableSize is pebble's memtable size. Larger than pebble's 4 MiB
// default so that a checkpoint's batches flush into fewer, larger L0
// tables; pebble keeps at most two memtables before it stalls writes.
var pebbleMemTableSize uint64 = 32 << 20

type pebbleBackend struct {
	db   *pebble.DB
	opts *pebble.Options // Open's (Ingest writes its tables with them)
	g    *guard
	fail failure
	ctr  counters
	log  *slog.Logger

	// unsafeState is set when a panic other than the commit pipeline's
	// fatal error escaped pebble (e.g. a failed WAL rotation panics while
	// pebble holds its commit mutex): pebble's internal locks may still be
	// held, so Close must not call into it.
	unsafeState atomic.Bool
	// final holds the Stats taken by Close.
	final atomic.Pointer[Stats]

	// MANIFEST writers in progress (flushes, compactions, ingestions) and
	// how many have begun, for ManifestState; manifest is its last reading.
	fs       vfs.FS
	dir      string
	mwActive atomic.Int64
	mwGen    atomic.Uint64
	manifest atomic.Pointer[manifestReading]
}

// OpenPebble opens (creating if needed) a pebble store in dir on opts.FS.
//
// pebble's own WAL stays on: Commit(sync=true) is then durable with one WAL
// fsync (concurrent sync commits share it), Sync is one WAL fsync, and a
// NoSync commit costs no I/O wait. With the WAL off, the only way to make
// anything durable would be a memtable flush — a new L0 table per
// checkpoint, and per sync commit. See README.md.
func OpenPebble(dir string, opts Options) (_ Backend, err error) {
	if dir == "" {
		return nil, errors.New("storage: pebble: empty directory")
	}
	fs := opts.FS
	if fs == nil {
		fs = vfs.Default
	}
	cache := opts.CacheSize
	if cache <= 0 {
		cache = DefaultCacheSize
	}
	p := &pebbleBackend{g: newGuard(), log: opts.logger().With("backend", KindPebble), fs: fs, dir: dir}
	mwBegin := func() { p.mwGen.Add(1); p.mwActive.Add(1) }
	mwEnd := func() { p.mwActive.Add(-1) }
	po := &pebble.Options{
		FS:                 fs,
		CacheSize:          cache,
		MemTableSize:       pebbleMemTableSize,
		FormatMajorVersion: pebble.FormatNewest,
		ReadOnly:           opts.ReadOnly,
		Logger:             pebbleLogger{log: p.log, fail: &p.fail},
		EventListener: &pebble.EventListener{
			// A background error that is corruption (a compaction or the
			// table-stats loader reading a damaged table) fails the backend:
			// pebble would otherwise retry it for ever, and every read of
			// the damaged range fails anyway. Other background errors (a
			// flush hitting ENOSPC) are retried by pebble.
			BackgroundError: func(err error) {
				p.log.Error("pebble background error", "err", err)
				if pebble.IsCorruptionError(err) {
					p.fail.set(&CorruptionError{What: "pebble store " + dir, Detail: "background work found damage", Cause: err})
				}
			},
			// pebble's default reports corruption with Logger.Fatalf, which
			// must not return: it would end the process from whichever
			// goroutine read the damaged block. We record it instead (the
			// read itself gets the error) and fail the backend.
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				p.log.Error("pebble found on-disk corruption; backend failed", "path", info.Path, "err", info.Details)
				p.fail.set(&CorruptionError{What: "file " + info.Path, Detail: "pebble found a damaged block", Cause: info.Details})
			},
			FlushBegin:      func(pebble.FlushInfo) { mwBegin() },
			FlushEnd:        func(pebble.FlushInfo) { mwEnd() },
			CompactionBegin: func(pebble.CompactionInfo) { mwBegin() },
			CompactionEnd:   func(pebble.CompactionInfo) { mwEnd() },
			DiskSlow: func(info pebble.DiskSlowInfo) {
				p.log.Warn("pebble disk slow", "info", info.String())
			},
		},
	}
	var db *pebble.DB
	defer func() {
		if r := recover(); r != nil {
			err = openError(dir, &CorruptionError{What: "pebble store " + dir, Detail: "pebble panicked while opening it", Cause: panicError(r)})
			if db != nil {
				closeQuietly(db)
			}
		}
	}()
	if err := checkManifest(fs, dir); err != nil {
		return nil, openError(dir, err)
	}
	db, err = pebble.Open(dir, po)
	if err != nil {
		return nil, openError(dir, err)
	}
	if ferr := p.fail.get(); ferr != nil {
		// Open met damage that pebble reported without failing Open.
		closeQuietly(db)
		return nil, openError(dir, ferr)
	}
	p.db, p.opts = db, po.Clone()
	p.opts.EnsureDefaults()
	p.manifestState() // what Open wrote and synced, if no flush began yet
	return p, nil
}

// openError wraps an error of pebble.Open: corruption (a damaged or missing
// MANIFEST, CURRENT or table) keeps ErrCorrupted.
func openError(dir string, err error) error {
	if !errors.Is(err, ErrCorrupted) && (pebble.IsCorruptionError(err) || missingFile(err)) {
		err = &CorruptionError{What: "pebble store " + dir, Cause: err}
	}
	return fmt.Errorf("storage: open pebble %q: %w", dir, err)
}

// missingFile reports an Open error about a file the MANIFEST names that is
// not there or not whole (a lost or cut table, a lost MANIFEST).
func missingFile(err error) bool {
	msg := err.Error()
	return errors.Is(err, os.ErrNotExist) || strings.Contains(msg, "size mismatch") ||
		strings.Contains(msg, "unknown to the objstorage provider") || strings.Contains(msg, "no such file")
}

func closeQuietly(db *pebble.DB) {
	defer func() { _ = recover() }()
	_ = db.Close()
}

// readError wraps an error of a pebble read, turning pebble's corruption
// errors into ErrCorrupted and reporting the failed state if damage found
// during the read (or in the background) put the backend in it.
func (p *pebbleBackend) readError(op string, err error) error {
	if ferr := p.fail.get(); ferr != nil {
		return ferr
	}
	if pebble.IsCorruptionError(err) {
		return p.fail.set(&CorruptionError{What: "pebble store", Detail: op, Cause: err})
	}
	return fmt.Errorf("storage: pebble %s: %w", op, err)
}

// recoverRead turns a panic out of a pebble read into the failed state (a
// panic there is damage pebble did not expect, or a bug: its state is
// suspect, so Close will not call into it).
func (p *pebbleBackend) recoverRead(op string, errp *error) {
	if r := recover(); r != nil {
		p.readPanic(op, r, errp)
	}
}

func (p *pebbleBackend) readPanic(op string, r any, errp *error) {
	p.unsafeState.Store(true)
	cause := panicError(r)
	p.log.Error("panic inside pebble read; backend failed", "op", op, "err", cause, "stack", string(debug.Stack()))
	*errp = p.fail.set(&CorruptionError{What: "pebble store", Detail: "pebble panicked during " + op, Cause: cause})
}

func (p *pebbleBackend) Name() string { return KindPebble }

func (p *pebbleBackend) Get(key []byte) (value []byte, ok bool, err error) {
	if err := validKey(key); err != nil {
		return nil, false, err
	}
	if err := p.g.enter(); err != nil {
		return nil, false, err
	}
	defer p.g.exit()
	if err := p.fail.get(); err != nil {
		return nil, false, err
	}
	defer p.recoverRead("get", &err)
	v, closer, err := p.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		// A damaged block met on the way reports itself through the
		// failed state, not always through err.
		if ferr := p.fail.get(); ferr != nil {
			return nil, false, ferr
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, p.readError("get", err)
	}
	value = append(make([]byte, 0, len(v)), v...)
	if err := closer.Close(); err != nil {
		return nil, false, p.readError("get", err)
	}
	if ferr := p.fail.get(); ferr != nil {
		return nil, false, ferr
	}
	return value, true, nil
}

func (p *pebbleBackend) Scan(start, end []byte, fn func(key, value []byte) error) error {
	return p.scan(start, end, false, fn)
}

func (p *pebbleBackend) ReverseScan(start, end []byte, fn func(key, value []byte) error) error {
	return p.scan(start, end, true, fn)
}

func (p *pebbleBackend) scan(start, end []byte, reverse bool, fn func(key, value []byte) error) (err error) {
	if fn == nil {
		return errors.New("storage: scan with nil fn")
	}
	if err := p.g.enter(); err != nil {
		return err
	}
	defer p.g.exit()
	if err := p.fail.get(); err != nil {
		return err
	}
	if len(start) == 0 {
		start = nil
	}
	if len(end) == 0 {
		end = nil
	}
	if start != nil && end != nil && string(start) >= string(end) {
		return nil
	}
	// A panic out of pebble becomes the failed state; one out of fn is
	// fn's and is passed on.
	inFn := false
	defer func() {
		if inFn {
			return // fn's panic: not ours to stop
		}
		if r := recover(); r != nil {
			p.readPanic("scan", r, &err)
		}
	}()
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return p.readError("scan", err)
	}
	// The iterator is closed exactly once, here, whatever fn does
	// (including panicking).
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = p.readError("scan", cerr)
		}
		if ferr := p.fail.get(); ferr != nil && err == nil {
			err = ferr
		}
	}()
	first, next := it.First, it.Next
	if reverse {
		first, next = it.Last, it.Prev
	}
	for valid := first(); valid; valid = next() {
		v, verr := it.ValueAndErr()
		if verr != nil {
			return p.readError("scan", verr)
		}
		inFn = true
		if err := fn(it.Key(), v); err != nil {
			inFn = false
			return err
		}
		inFn = false
	}
	if err := it.Error(); err != nil {
		return p.readError("scan", err)
	}
	if ferr := p.fail.get(); ferr != nil {
		return ferr
	}
	return nil
}

func (p *pebbleBackend) NewBatch() Batch {
	if err := p.g.enter(); err != nil {
		return &pebbleBatch{owner: p, batchState: batchState{err: err}}
	}
	defer p.g.exit()
	return &pebbleBatch{owner: p, b: p.db.NewBatch()}
}

func (p *pebbleBackend) Commit(b Batch, sync bool) (err error) {
	if b == nil {
		return ErrNilBatch
	}
	pb, ok := b.(*pebbleBatch)
	if !ok || pb == nil || pb.owner != p {
		return ErrForeignBatch
	}
	if err := p.g.enter(); err != nil {
		return err
	}
	defer p.g.exit()
	if err := p.fail.get(); err != nil {
		return err
	}
	if pb.err != nil {
		return pb.err
	}
	if pb.committed {
		return ErrBatchCommitted
	}
	if pb.n == 0 {
		if sync {
			if err := p.syncWAL(); err != nil {
				return err
			}
		}
		pb.committed = true
		p.ctr.committed(0, sync)
		return nil
	}
	defer p.recoverFailure(&err)
	wo := pebble.NoSync
	if sync {
		wo = pebble.Sync // never nil: a nil *WriteOptions means Sync in pebble
	}
	pb.committed = true
	if err := p.db.Apply(pb.b, wo); err != nil {
		// Apply's own errors come before the commit pipeline (read-only
		// store, batch refused): nothing was applied.
		pb.committed = false
		return fmt.Errorf("storage: pebble commit: %w", err)
	}
	p.ctr.committed(pb.size, sync)
	return nil
}

func (p *pebbleBackend) Sync() error {
	if err := p.g.enter(); err != nil {
		return err
	}
	defer p.g.exit()
	if err := p.fail.get(); err != nil {
		return err
	}
	if err := p.syncWAL(); err != nil {
		return err
	}
	p.ctr.syncs.Add(1)
	return nil
}

// syncWAL writes an empty log record with Sync: pebble's WAL is sequential,
// so its fsync makes every earlier write durable.
func (p *pebbleBackend) syncWAL() (err error) {
	defer p.recoverFailure(&err)
	if err := p.db.LogData(nil, pebble.Sync); err != nil {
		return p.fail.set(fmt.Errorf("pebble sync: %w", err))
	}
	return nil
}

func (p *pebbleBackend) Close() (err error) {
	if err := p.g.close(); err != nil {
		return err
	}
	s := p.stats()
	p.final.Store(&s)
	if p.unsafeState.Load() {
		return fmt.Errorf("storage: pebble not closed: a panic inside pebble may have left its locks held; "+
			"its directory stays locked until the process exits: %w", p.fail.get())
	}
	defer func() {
		if r := recover(); r != nil {
			p.unsafeState.Store(true)
			err = fmt.Errorf("storage: pebble close: %w", panicError(r))
		}
	}()
	cerr := p.db.Close()
	return closeResult("pebble", p.fail.get(), cerr)
}

func (p *pebbleBackend) Stats() Stats {
	if s := p.final.Load(); s != nil {
		return *s
	}
	if err := p.g.enter(); err != nil {
		if s := p.final.Load(); s != nil {
			return *s
		}
		return p.counterStats()
	}
	defer p.g.exit()
	return p.stats()
}

func (p *pebbleBackend) counterStats() Stats {
	s := Stats{Backend: KindPebble, Fsyncs: -1, BytesWritten: -1, MemoryInUse: -1}
	p.ctr.fill(&s)
	s.Failed = p.fail.get() != nil
	return s
}

// stats reads pebble's metrics; the caller holds the guard or has closed it.
func (p *pebbleBackend) stats() Stats {
	s := p.counterStats()
	if p.unsafeState.Load() {
		return s // pebble's mutex may be held by the goroutine that panicked
	}
	m := p.db.Metrics()
	written := m.WAL.BytesWritten
	for i := range m.Levels {
		l := &m.Levels[i]
		written += l.TableBytesFlushed + l.TableBytesCompacted + l.BlobBytesFlushed + l.BlobBytesCompacted
	}
	s.BytesWritten = int64(written)
	s.MemoryInUse = m.BlockCache.Size + int64(m.MemTable.Size)
	if h := m.LogWriter.FsyncLatency; h != nil {
		var dm dto.Metric
		if h.Write(&dm) == nil && dm.Histogram != nil {
			s.Fsyncs = int64(dm.Histogram.GetSampleCount())
		}
	}
	return s
}

// recoverFailure turns a panic out of pebble's write path into the failed
// state. pebble reports a commit pipeline error (a WAL write or fsync
// error) through Logger.Fatalf, which must not return: pebbleLogger panics
// with fatalError and we recover it here, on the committing goroutine, after
// pebble has released its locks. Any other panic (a failed WAL rotation
// panics inside the commit pipeline) may leave pebble's locks held.
func (p *pebbleBackend) recoverFailure(errp *error) {
	r := recover()
	if r == nil {
		return
	}
	cause := panicError(r)
	var fe *fatalError
	if !errors.As(cause, &fe) || !fe.commit {
		p.unsafeState.Store(true)
		p.log.Error("panic inside pebble; backend failed", "err", cause, "stack", string(debug.Stack()))
	} else {
		p.log.Error("pebble commit failed; backend failed", "err", cause)
	}
	*errp = p.fail.set(cause)
}

func panicError(r any) error {
	if err, ok := r.(error); ok {
		return err
	}
	return fmt.Errorf("panic: %v", r)
}

// fatalError is what pebbleLogger.Fatalf panics with.
type fatalError struct {
	msg    string
	cause  error // the first error among Fatalf's arguments
	commit bool  // raised by the commit pipeline, on the committer's goroutine
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

// pebbleLogger adapts slog to pebble's Logger; fail is its backend's failed
// state (see Fatalf).
type pebbleLogger struct {
	log  *slog.Logger
	fail *failure
}

func (l pebbleLogger) Infof(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug(fmt.Sprintf(format, args...))
	}
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...))
}

// Fatalf is pebble's "cannot go on". pebble's contract says it does not
// return, but a panic on one of pebble's background goroutines (a table
// found shorter than the MANIFEST says by the table-stats loader, a MANIFEST
// write failing during a flush or compaction) would end the process. So:
//
//   - the commit pipeline's fatal error (a WAL write or fsync failing) is
//     raised on the committing goroutine, inside Commit, which recovers it:
//     Fatalf panics with fatalError and the backend enters the failed state;
//   - every other Fatalf records the failed state, with the message as the
//     cause, and returns. pebble goes on as if nothing happened, but the
//     backend refuses every later call (reads included), and every read in
//     flight checks the failed state before it returns, so nothing pebble
//     does after the fatal error reaches the engine.
func (l pebbleLogger) Fatalf(format string, args ...any) {
	fe := &fatalError{
		msg:    fmt.Sprintf(format, args...),
		commit: strings.HasPrefix(format, "pebble: fatal commit error"),
	}
	for _, a := range args {
		if err, ok := a.(error); ok {
			fe.cause = err
			break
		}
	}
	l.log.Error(fe.msg, "fatal", true)
	if fe.commit || l.fail == nil {
		panic(fe)
	}
	if fe.cause != nil && pebble.IsCorruptionError(fe.cause) || strings.Contains(fe.msg, "corrupt") || strings.Contains(fe.msg, "size mismatch") {
		l.fail.set(&CorruptionError{What: "pebble store", Detail: fe.msg, Cause: fe.cause})
		return
	}
	l.fail.set(fe)
}

// pebbleBatch wraps a pebble batch made by its backend's DB.
type pebbleBatch struct {
	owner   *pebbleBackend
	b       *pebble.Batch // nil if the backend was closed when it was made
	n, size int
	batchState
}

func (x *pebbleBatch) usable() bool { return x.b != nil && x.usableState() }

func (x *pebbleBatch) Set(key, value []byte) {
	if !x.usable() || !x.validSet(key, value) {
		return
	}
	if err := x.b.Set(key, value, nil); err != nil {
		x.err = fmt.Errorf("storage: pebble batch: %w", err)
		return
	}
	x.n++
	x.size += len(key) + len(value)
}

func (x *pebbleBatch) Delete(key []byte) {
	if !x.usable() {
		return
	}
	if err := validKey(key); err != nil {
		x.err = err
		return
	}
	if err := x.b.Delete(key, nil); err != nil {
		x.err = fmt.Errorf("storage: pebble batch: %w", err)
		return
	}
	x.n++
	x.size += len(key)
}

func (x *pebbleBatch) DeleteRange(start, end []byte) {
	if !x.usable() {
		return
	}
	if err := validRange(start, end); err != nil {
		x.err = err
		return
	}
	if string(start) == string(end) {
		return // empty range
	}
	if err := x.b.DeleteRange(start, end, nil); err != nil {
		x.err = fmt.Errorf("storage: pebble batch: %w", err)
		return
	}
	x.n++
	x.size += len(start) + len(end)
}

func (x *pebbleBatch) Len() int  { return x.n }
func (x *pebbleBatch) Size() int { return x.size }

func (x *pebbleBatch) Reset() {
	if x.b == nil {
		return // made after Close: keeps reporting ErrClosed
	}
	x.b.Reset()
	x.err = nil
	x.n, x.size = 0, 0
	x.committed = false
}
