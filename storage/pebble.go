package storage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	p := &pebbleBackend{g: newGuard(), log: opts.logger().With("backend", KindPebble)}
	po := &pebble.Options{
		FS:                 fs,
		CacheSize:          cache,
		MemTableSize:       pebbleMemTableSize,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             pebbleLogger{p.log},
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) {
				p.log.Error("pebble background error", "err", err)
			},
			DiskSlow: func(info pebble.DiskSlowInfo) {
				p.log.Warn("pebble disk slow", "info", info.String())
			},
		},
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("storage: open pebble %q: %w", dir, panicError(r))
		}
	}()
	db, err := pebble.Open(dir, po)
	if err != nil {
		return nil, fmt.Errorf("storage: open pebble %q: %w", dir, err)
	}
	p.db = db
	return p, nil
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
	v, closer, err := p.db.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: pebble get: %w", err)
	}
	value = append(make([]byte, 0, len(v)), v...)
	if err := closer.Close(); err != nil {
		return nil, false, fmt.Errorf("storage: pebble get: %w", err)
	}
	return value, true, nil
}

func (p *pebbleBackend) Scan(start, end []byte, fn func(key, value []byte) error) (err error) {
	if fn == nil {
		return errors.New("storage: Scan with nil fn")
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
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return fmt.Errorf("storage: pebble scan: %w", err)
	}
	// The iterator is closed exactly once, here, whatever fn does
	// (including panicking).
	defer func() {
		if cerr := it.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("storage: pebble scan: %w", cerr)
		}
	}()
	for valid := it.First(); valid; valid = it.Next() {
		v, verr := it.ValueAndErr()
		if verr != nil {
			return fmt.Errorf("storage: pebble scan: %w", verr)
		}
		if err := fn(it.Key(), v); err != nil {
			return err
		}
	}
	if err := it.Error(); err != nil {
		return fmt.Errorf("storage: pebble scan: %w", err)
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

// pebbleLogger adapts slog to pebble's Logger.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug(fmt.Sprintf(format, args...))
	}
}

func (l pebbleLogger) Errorf(format string, args ...any) {
	l.log.Error(fmt.Sprintf(format, args...))
}

// Fatalf must not return (pebble's contract). It panics: on a committing
// goroutine the backend recovers and enters the failed state; on one of
// pebble's background goroutines (a MANIFEST write failing during a flush
// or compaction) the panic ends the process, as pebble's default logger
// (os.Exit) would, and the engine recovers on restart.
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
	panic(fe)
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
