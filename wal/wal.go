package wal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// LSN is a position in the logical log: a byte offset that grows across
// segment files and is never reused for a durable record. The LSN of a
// record, as Append returns it and Replay reports it, is the position just
// past the record, so "everything up to lsn" includes the record itself.
// LSN 0 is before every record.
type LSN uint64

// RecordType tells the engine what a record's payload means. 0 is reserved
// (a zero-filled header must never look like a record); the engine defines
// the other values.
type RecordType uint8

// Record is a typed, opaque payload. The WAL never looks inside Data.
type Record struct {
	Type RecordType
	Data []byte
}

// Options configure Open.
type Options struct {
	// FS is where the segment files live; nil means vfs.Default (the OS).
	FS vfs.FS
	// Dir is the WAL's directory; Open creates it if needed. Required.
	Dir string
	// SegmentSize caps a segment file's size in bytes (header included).
	// A record never spans segments, so a record's payload must fit in
	// SegmentSize-60 bytes. 0 means 64 MiB. Changing it between opens is
	// allowed: it only governs when the next segment starts.
	SegmentSize int64
	// Logger receives opening, tail-cutting, rotation, removal and fatal
	// errors; nil discards them.
	Logger *slog.Logger
	// SyncInterval, if positive, makes the writer also write and fsync
	// buffered records at least this often when nobody calls Sync. It bounds
	// what a crash can lose for callers that acknowledge before Sync (the
	// engine's SyncCommit=false): at most about one interval of appends.
	// 0 means records are written only when Sync (or Close, or Replay)
	// asks, or when 1 MiB is buffered, and fsynced only by Sync and Close.
	SyncInterval time.Duration
	// RetryNoSpace makes a write that fails with ENOSPC — of records, or of
	// a new segment's file — survivable instead of fatal, for callers that
	// acknowledge nothing before Sync returned nil. The records not yet
	// written at that moment (every record appended and not written) are
	// voided: they keep their place in the log, so LSNs are never reused,
	// but Replay never shows them, and every Sync for an LSN among them
	// returns an error wrapping ErrNoSpace, now and later. The writer keeps
	// them queued and writes them again (as void records) at the next
	// round, so the log goes on as soon as space is freed. What was written
	// before the failure is fsynced as usual. A failed fsync stays fatal
	// (after it the kernel's page cache state is unknown), and so does every
	// other write error. A caller that acknowledges records before Sync
	// (SyncInterval with the engine's SyncCommit off) must leave it off: a
	// voided record would be an acknowledged one lost.
	RetryNoSpace bool
	// Preallocate gives every new segment file its full SegmentSize when
	// it is created (fallocate), and the last segment when Open finds it
	// shorter; records then overwrite zeros instead of growing the file.
	// That is the commit latency: an fdatasync after an append that grew
	// the file must also commit the new size to the file system's journal,
	// one after writing inside the file's allocated size need not (ext4
	// here: p50 ~105 µs against ~155 µs per 143-byte commit; PostgreSQL
	// zero-fills its segments, pebble recycles its logs, for the same
	// reason). The zeros past a segment's last record are its free room:
	// Open neither cuts them nor counts them as damage (see README.md,
	// "Preallocated segments"). Where the file system cannot preallocate
	// (a file with no descriptor, such as vfs.MemFS's, or fallocate
	// refused, say for lack of space) the segment grows by appends as
	// without this option; nothing else changes.
	Preallocate bool

	// zeroFill preallocates files without a descriptor by writing zeros
	// (package tests on vfs.MemFS, with small segments); preallocStep, if
	// not 0, replaces defaultPreallocStep (tests of the growth).
	zeroFill     bool
	preallocStep int64
}

// Sentinel errors; test them with errors.Is.
var (
	// ErrFatal wraps every error of Append and Sync after a write or fsync
	// of the log failed once (the first cause is wrapped too). The WAL never
	// retries: after a failed fsync the kernel may have dropped the dirty
	// pages and a second fsync would report success for data that is gone.
	// Close the WAL and Open it again to recover from what is on disk.
	ErrFatal = errors.New("wal: fatal I/O error, the log accepts no more appends or syncs")
	// ErrClosed is returned by calls after Close.
	ErrClosed = errors.New("wal: closed")
	// ErrCorrupt is returned by Open and Replay when durable records are
	// damaged: anywhere before the tail of the last segment, a missing
	// segment, or damage in the last segment that a later intact record
	// proves was already durable.
	ErrCorrupt = errors.New("wal: corrupt log")
	// ErrNoSpace wraps the ENOSPC of a failed write under RetryNoSpace: the
	// records covered were voided (they are never replayed) and the log
	// goes on. Append returns it too while a write is failing and much is
	// already queued, rather than queueing more.
	ErrNoSpace = errors.New("wal: no space left on device")
	// ErrRecordTooLarge is returned by Append for a record that cannot fit
	// in one segment.
	ErrRecordTooLarge = errors.New("wal: record larger than a segment can hold")
	// ErrInvalidRecord is returned by Append for a record of type 0.
	ErrInvalidRecord = errors.New("wal: record type 0 is reserved")
	// ErrBeyondEnd is returned by Sync for an LSN past EndLSN.
	ErrBeyondEnd = errors.New("wal: LSN beyond the end of the log")
	// ErrRemoved is returned by Replay when asked for records that
	// RemoveBefore already deleted.
	ErrRemoved = errors.New("wal: records before the oldest segment were removed")
)

// Stats are cumulative counters since Open (Segments, EndLSN and FlushedLSN
// are current values).
type Stats struct {
	Appends    uint64 // Append calls that appended at least one record
	Records    uint64 // records appended
	Bytes      uint64 // framed bytes appended (record headers included)
	Fsyncs     uint64 // fsyncs of segment files: group commits, periodic and closing syncs, seals before rotation, new segment headers
	DirSyncs   uint64 // fsyncs of the directory (segment created, cut or removed)
	SyncCalls  uint64 // calls of Sync
	SyncWaits  uint64 // calls of Sync that queued for the writer (the others found their LSN durable already)
	Segments   int    // segment files in the directory
	EndLSN     LSN
	FlushedLSN LSN
}

// writeThreshold is how many buffered bytes make the writer write them out
// (without an fsync) even if nobody asked.
const writeThreshold = 1 << 20

// chunk is encoded records bound for the segment whose base LSN is base.
type chunk struct {
	base LSN
	data []byte
}

// waiter is a Sync (sync=true) or Replay (sync=false) waiting for the
// writer to have fsynced (or written) everything up to upTo.
type waiter struct {
	sync bool
	upTo LSN
	ch   chan error // buffered: the writer never blocks on a waiter that gave up
}

// voidRange is (from, to]: the records ending in it were voided after a
// write failed for lack of space (see Options.RetryNoSpace).
type voidRange struct {
	from, to LSN
	err      error // what Sync returns for them
}

// maxStalled is how many bytes may be queued while writes fail for lack of
// space before Append refuses more (with ErrNoSpace).
const maxStalled = 4 * writeThreshold

// segFile is the segment the writer appends to.
type segFile struct {
	base LSN
	f    vfs.File
	off  int64 // bytes of header and records (the segment's end)
	room int64 // the file's preallocated size: a write past it grows it a step (maxRoom: never)
}

// WAL is a segmented write-ahead log. Its methods are safe for concurrent
// use; see the package documentation for the threading model.
type WAL struct {
	fs      vfs.FS
	dirname string
	segSize int64
	log     *slog.Logger
	syncIvl time.Duration

	lock io.Closer // the directory's LOCK file
	dir  vfs.File  // the directory, kept open for fsyncs

	// mu guards the append side: the queue of encoded records, the end of
	// the log, the waiters, closed and the segment list.
	mu           sync.Mutex
	pending      []chunk
	pendingBytes int
	spare        [][]byte // written-out buffers for reuse
	end          LSN      // end of the last appended record
	appBase      LSN      // base of the segment the next record goes to
	appOff       int64    // bytes used in that segment
	waiters      []waiter
	closed       bool
	segs         []LSN // bases of the live segments, ascending

	// Under RetryNoSpace: the error of the last write that failed for lack
	// of space, until a write succeeds again, and the voided ranges.
	retryNoSpace bool
	noSpace      error
	voids        atomic.Pointer[[]voidRange] // copied on write (under mu), read lock-free by Sync

	prealloc, zeroFill bool  // Options.Preallocate and its test knob
	step               int64 // how far ahead a segment is preallocated

	fatal   atomic.Pointer[error]
	flushed atomic.Uint64 // everything before it is durable
	written atomic.Uint64 // everything before it was handed to the file

	// cur is owned by the writer goroutine (and by Open before it starts).
	cur segFile

	kick       chan struct{}
	closing    chan struct{}
	writerDone chan struct{}

	// replayMu keeps RemoveBefore from deleting a segment a Replay reads.
	replayMu sync.RWMutex

	appends, records, bytes atomic.Uint64
	fsyncs, dirSyncs        atomic.Uint64
	syncCalls, syncWaits    atomic.Uint64
}

// Open opens the log in opts.Dir, creating the directory and a first
// segment if needed, and recovers it: every segment is read and checked, a
// torn tail of the last segment (partial header or payload, CRC mismatch,
// stale record, anything but zeros after the first invalid point) is cut
// at the last valid record durably (the shortened file replaces the old
// one by rename, then the directory is fsynced), zeros after the last
// record are left as preallocated room, and damage that cannot be a torn tail is reported as ErrCorrupt
// without changing anything. After Open, FlushedLSN() == EndLSN(): what
// Open found is fsynced, so Replay only ever shows durable records.
func Open(opts Options) (*WAL, error) {
	if opts.Dir == "" {
		return nil, errors.New("wal: Options.Dir is required")
	}
	if opts.FS == nil {
		opts.FS = vfs.Default
	}
	if opts.SegmentSize == 0 {
		opts.SegmentSize = defaultSegmentSize
	}
	if opts.SegmentSize < minSegmentSize || opts.SegmentSize > maxSegmentSize {
		return nil, fmt.Errorf("wal: SegmentSize %d outside [%d, %d]", opts.SegmentSize, minSegmentSize, int64(maxSegmentSize))
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	w := &WAL{
		fs:         opts.FS,
		dirname:    opts.Dir,
		segSize:    opts.SegmentSize,
		log:        opts.Logger.With("component", "wal", "dir", opts.Dir),
		syncIvl:    opts.SyncInterval,
		kick:       make(chan struct{}, 1),
		closing:    make(chan struct{}),
		writerDone: make(chan struct{}),
	}
	w.retryNoSpace = opts.RetryNoSpace
	w.prealloc, w.zeroFill, w.step = opts.Preallocate, opts.zeroFill, opts.preallocStep
	if w.step <= 0 {
		w.step = defaultPreallocStep
	}
	start := time.Now()
	if err := w.makeDir(); err != nil {
		return nil, err
	}
	lock, err := w.fs.Lock(w.fs.PathJoin(w.dirname, lockName))
	if err != nil {
		return nil, fmt.Errorf("wal: lock %s: %w", w.dirname, err)
	}
	w.lock = lock
	if w.dir, err = w.fs.OpenDir(w.dirname); err != nil {
		_ = w.lock.Close()
		return nil, fmt.Errorf("wal: open directory %s: %w", w.dirname, err)
	}
	if err := w.recover(); err != nil {
		if w.cur.f != nil {
			_ = w.cur.f.Close()
		}
		_ = w.dir.Close()
		_ = w.lock.Close()
		return nil, err
	}
	end := w.cur.base + LSN(w.cur.off)
	w.end, w.appBase, w.appOff = end, w.cur.base, w.cur.off
	w.written.Store(uint64(end))
	w.flushed.Store(uint64(end))
	w.log.Info("wal opened", "segments", len(w.segs), "first", w.segs[0], "end", end, "took", time.Since(start))
	go w.run()
	return w, nil
}

// makeDir creates the WAL directory and any missing parents, fsyncing the
// parent of each directory it created: a new directory entry survives a
// crash only once its parent is fsynced.
func (w *WAL) makeDir() error {
	var missing []string
	for d := w.dirname; ; {
		if _, err := w.fs.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		parent := w.fs.PathDir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if len(missing) == 0 {
		return nil
	}
	if err := w.fs.MkdirAll(w.dirname, 0o755); err != nil {
		return fmt.Errorf("wal: create directory %s: %w", w.dirname, err)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		parent := w.fs.PathDir(missing[i])
		d, err := w.fs.OpenDir(parent)
		if err != nil {
			return fmt.Errorf("wal: open directory %s: %w", parent, err)
		}
		err = d.Sync()
		_ = d.Close()
		if err != nil {
			return fmt.Errorf("wal: fsync directory %s: %w", parent, err)
		}
	}
	return nil
}

func (w *WAL) segPath(base LSN) string { return w.fs.PathJoin(w.dirname, segmentName(base)) }

// Append encodes recs at the end of the log and returns the LSN just past
// the last of them, the value to give Sync. The records are buffered, not
// durable: only a Sync covering the returned LSN (or Close) makes them so.
// Records of one call are contiguous and in order, but not atomic: a crash
// may keep a prefix of them. Append validates all records before appending
// any. After a fatal I/O error it returns an error wrapping ErrFatal.
func (w *WAL) Append(recs ...Record) (LSN, error) {
	maxPayload := w.segSize - segHeaderSize - recHeaderSize
	for i, r := range recs {
		if r.Type == 0 || r.Type == voidType {
			return 0, fmt.Errorf("%w (record %d has type %d)", ErrInvalidRecord, i, r.Type)
		}
		if int64(len(r.Data)) > maxPayload {
			return 0, fmt.Errorf("%w: record %d has %d bytes, at most %d fit", ErrRecordTooLarge, i, len(r.Data), maxPayload)
		}
	}
	w.mu.Lock()
	if err := w.usableLocked(); err != nil {
		w.mu.Unlock()
		return 0, err
	}
	if w.noSpace != nil && w.pendingBytes >= maxStalled {
		err := w.noSpace
		w.mu.Unlock()
		w.kickWriter() // try again: space may have been freed
		return 0, err
	}
	if len(recs) == 0 {
		end := w.end
		w.mu.Unlock()
		return end, nil
	}
	synced := LSN(w.flushed.Load())
	var n int64
	for _, r := range recs {
		size := int64(recHeaderSize + len(r.Data))
		if w.appOff+size > w.segSize {
			// Start the next segment where this one ends.
			w.appBase += LSN(w.appOff)
			w.appOff = segHeaderSize
		}
		c := w.chunkLocked(w.appBase)
		c.data = appendRecord(c.data, w.appBase+LSN(w.appOff), synced, r)
		w.appOff += size
		n += size
	}
	w.end = w.appBase + LSN(w.appOff)
	w.pendingBytes += int(n)
	end, kick := w.end, w.pendingBytes >= writeThreshold
	w.mu.Unlock()

	w.appends.Add(1)
	w.records.Add(uint64(len(recs)))
	w.bytes.Add(uint64(n))
	if kick {
		w.kickWriter()
	}
	return end, nil
}

// chunkLocked returns the pending chunk for segment base, starting one if
// the last pending chunk is for an earlier segment.
func (w *WAL) chunkLocked(base LSN) *chunk {
	if n := len(w.pending); n > 0 && w.pending[n-1].base == base {
		return &w.pending[n-1]
	}
	var buf []byte
	if n := len(w.spare); n > 0 {
		buf, w.spare = w.spare[n-1][:0], w.spare[:n-1]
	}
	w.pending = append(w.pending, chunk{base: base, data: buf})
	return &w.pending[len(w.pending)-1]
}

func (w *WAL) usableLocked() error {
	if p := w.fatal.Load(); p != nil {
		return *p
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

func (w *WAL) kickWriter() {
	select {
	case w.kick <- struct{}{}:
	default: // a kick is already pending; the writer will see our work
	}
}

// Sync returns nil once every record up to upTo is durable (written and
// fsynced). Concurrent callers share fsyncs: one writer goroutine writes
// whatever is buffered and fsyncs once for every caller queued meanwhile
// (group commit). Sync never returns nil unless upTo is durable: after a
// failed write or fsync it returns an error wrapping ErrFatal and the
// cause, now and forever after, even for LSNs that were durable before.
//
// If ctx ends first, Sync returns ctx.Err() at once. The records stay
// queued and are normally made durable by the writer anyway, so they may or
// may not be durable; a caller that must know calls Sync again (or checks
// FlushedLSN).
func (w *WAL) Sync(ctx context.Context, upTo LSN) error {
	w.syncCalls.Add(1)
	if p := w.fatal.Load(); p != nil {
		return *p
	}
	if err := w.voided(upTo); err != nil {
		return err
	}
	if upTo <= LSN(w.flushed.Load()) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ch, err := w.enqueue(upTo, true)
	if ch == nil {
		return err
	}
	w.syncWaits.Add(1)
	return awaitWriter(ctx, ch)
}

// awaitWriter waits for the writer's answer on ch, or for ctx; an answer
// that is already there wins over a context that ended meanwhile.
func awaitWriter(ctx context.Context, ch chan error) error {
	select {
	case err := <-ch:
		return err
	case <-ctx.Done():
		select {
		case err := <-ch:
			return err
		default:
			return ctx.Err()
		}
	}
}

// enqueue registers a waiter for everything appended so far and kicks the
// writer. It returns a nil channel and the answer when no wait is needed.
func (w *WAL) enqueue(upTo LSN, sync bool) (chan error, error) {
	w.mu.Lock()
	if err := w.usableLocked(); err != nil {
		w.mu.Unlock()
		return nil, err
	}
	if upTo > w.end {
		end := w.end
		w.mu.Unlock()
		return nil, fmt.Errorf("%w: %d > EndLSN %d", ErrBeyondEnd, upTo, end)
	}
	if sync && upTo <= LSN(w.flushed.Load()) {
		w.mu.Unlock()
		return nil, nil
	}
	if !sync && upTo <= LSN(w.written.Load()) {
		w.mu.Unlock()
		return nil, nil
	}
	ch := make(chan error, 1)
	w.waiters = append(w.waiters, waiter{sync: sync, upTo: upTo, ch: ch})
	w.mu.Unlock()
	w.kickWriter()
	return ch, nil
}

// voided returns the error of the void range holding upTo, or nil.
func (w *WAL) voided(upTo LSN) error {
	p := w.voids.Load()
	if p == nil {
		return nil
	}
	vs := *p
	for i := len(vs) - 1; i >= 0; i-- {
		if v := vs[i]; v.from < upTo && upTo <= v.to {
			return v.err
		}
	}
	return nil
}

// Err returns the fatal error once the log died (see ErrFatal), else nil.
func (w *WAL) Err() error {
	if p := w.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

// FlushedLSN is the durable end of the log: every record whose LSN is at
// or below it survives a crash.
func (w *WAL) FlushedLSN() LSN { return LSN(w.flushed.Load()) }

// EndLSN is the end of the log: the LSN of the last appended record (or,
// before the first record of a fresh log, the end of the first segment's
// header). Replay(EndLSN(), ...) visits only records appended later.
func (w *WAL) EndLSN() LSN {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.end
}

// Stats returns the counters.
func (w *WAL) Stats() Stats {
	w.mu.Lock()
	segs, end := len(w.segs), w.end
	w.mu.Unlock()
	return Stats{
		Appends:    w.appends.Load(),
		Records:    w.records.Load(),
		Bytes:      w.bytes.Load(),
		Fsyncs:     w.fsyncs.Load(),
		DirSyncs:   w.dirSyncs.Load(),
		SyncCalls:  w.syncCalls.Load(),
		SyncWaits:  w.syncWaits.Load(),
		Segments:   segs,
		EndLSN:     end,
		FlushedLSN: w.FlushedLSN(),
	}
}

// Close writes and fsyncs everything appended, stops the writer and
// releases the directory. It returns the fatal error if the log died (now
// or earlier): then some appended records may not be durable. Calls after
// Close return ErrClosed.
func (w *WAL) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	w.closed = true
	w.mu.Unlock()
	close(w.closing)
	<-w.writerDone
	var err error
	if p := w.fatal.Load(); p != nil {
		err = *p
	}
	if cerr := w.dir.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: close directory: %w", cerr)
	}
	if cerr := w.lock.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("wal: release lock: %w", cerr)
	}
	return err
}

// die records the first fatal error and returns the error every later call
// will get.
func (w *WAL) die(cause error) error {
	e := fmt.Errorf("%w: %w", ErrFatal, cause)
	if w.fatal.CompareAndSwap(nil, &e) {
		w.log.Error("wal is dead: a write or fsync failed; no further appends or syncs", "err", cause,
			"flushed", w.FlushedLSN(), "written", LSN(w.written.Load()))
	}
	return *w.fatal.Load()
}

// run is the writer goroutine: the only one that writes or fsyncs segment
// files once Open returned. Each round it takes everything appended and
// every waiter queued so far, writes the records, fsyncs once if any waiter
// needs durability, and answers all the waiters with the same result.
// While it writes and fsyncs, new commits queue up for the next round: that
// is the group commit.
func (w *WAL) run() {
	defer close(w.writerDone)
	var tick <-chan time.Time
	if w.syncIvl > 0 {
		t := time.NewTicker(w.syncIvl)
		defer t.Stop()
		tick = t.C
	}
	lastGroup := 0              // Sync waiters served by the last fsync
	var fsyncTime time.Duration // moving average of the data fsyncs
	for {
		periodic := false
		select {
		case <-w.kick:
		case <-tick:
			periodic = true
		case <-w.closing:
		}
		w.gather(lastGroup, fsyncTime/2)
		w.mu.Lock()
		chunks := w.pending
		w.pending, w.pendingBytes = nil, 0
		end := w.end
		waiters := w.waiters
		w.waiters = nil
		closing := w.closed
		w.mu.Unlock()

		needSync := closing || periodic
		for _, wt := range waiters {
			needSync = needSync || wt.sync
		}
		var err error
		done := len(chunks)
		if p := w.fatal.Load(); p != nil {
			err = *p
		} else {
			var took time.Duration
			took, done, err = w.writeOut(chunks, end, needSync)
			if took > 0 {
				fsyncTime = (3*fsyncTime + took) / 4
				lastGroup = 0
				for _, wt := range waiters {
					if wt.sync {
						lastGroup++
					}
				}
			}
		}
		w.recycle(chunks[:done])
		if err != nil && closing && w.fatal.Load() == nil {
			err = w.die(err) // Close reports what it could not write
		}
		w.answer(waiters, err)
		if closing {
			// Appends and Syncs after closed was set are refused, so
			// nothing can be queued behind this last round.
			if w.cur.f != nil {
				if cerr := w.cur.f.Close(); cerr != nil && w.fatal.Load() == nil {
					w.die(fmt.Errorf("close %s: %w", w.segPath(w.cur.base), cerr))
				}
				w.cur.f = nil
			}
			return
		}
	}
}

// answer gives each waiter of a round its result: err, except that after a
// write that failed for lack of space (not fatal) a waiter whose records
// got out before the failure succeeds, and a waiter whose records were
// voided fails whatever this round did.
func (w *WAL) answer(waiters []waiter, err error) {
	stalled := err != nil && w.fatal.Load() == nil
	flushed, written := LSN(w.flushed.Load()), LSN(w.written.Load())
	if stalled || w.voids.Load() != nil {
		for i, wt := range waiters {
			e := err
			if stalled && ((wt.sync && wt.upTo <= flushed) || (!wt.sync && wt.upTo <= written)) {
				e = nil
			}
			if e == nil {
				e = w.voided(wt.upTo)
			}
			waiters[i].ch <- e
		}
		return
	}
	for _, wt := range waiters {
		wt.ch <- err
	}
}

// gather delays a round that has Sync waiters but fewer than the last
// fsync served, for at most maxWait, so that committers just released by
// the last fsync can join this one. Without it a round starts as soon as
// the first of them is back and the rest wait a whole fsync more, which
// at 8 committers costs about a third of the sharing. One committer
// (want <= 1) never waits.
func (w *WAL) gather(want int, maxWait time.Duration) {
	if want <= 1 || maxWait <= 0 {
		return
	}
	var timer *time.Timer
	for {
		w.mu.Lock()
		n := 0
		for _, wt := range w.waiters {
			if wt.sync {
				n++
			}
		}
		closed := w.closed
		w.mu.Unlock()
		if n == 0 || n >= want || closed {
			return
		}
		if timer == nil {
			timer = time.NewTimer(maxWait)
			defer timer.Stop()
		}
		select {
		case <-w.kick:
		case <-timer.C:
			return
		case <-w.closing:
			return
		}
	}
}

// writeOut writes chunks (which end at end) and, if needSync, fsyncs; it
// returns how long the fsync took (0 if none) and how many chunks it wrote.
// Any failure kills the WAL, but for a write that fails for lack of space
// under RetryNoSpace (see stall).
func (w *WAL) writeOut(chunks []chunk, end LSN, needSync bool) (time.Duration, int, error) {
	for i, c := range chunks {
		if c.base != w.cur.base {
			if err := w.rotate(c.base); err != nil {
				if w.retryable(err) {
					return 0, i, w.stall(chunks[i:], err, needSync)
				}
				return 0, i, w.die(err)
			}
		}
		if end := w.cur.off + int64(len(c.data)); end > w.cur.room {
			w.cur.room = w.preallocate(w.cur.f, w.segPath(w.cur.base), w.cur.room, end+w.step)
		}
		n, err := w.cur.f.WriteAt(c.data, w.cur.off)
		if err == nil && n != len(c.data) {
			err = io.ErrShortWrite
		}
		if err != nil {
			err = fmt.Errorf("write %s at offset %d: %w", w.segPath(w.cur.base), w.cur.off, err)
			if w.retryable(err) {
				// The bytes that got out are a prefix of c.data, which
				// the next round writes again at the same offset.
				return 0, i, w.stall(chunks[i:], err, needSync)
			}
			return 0, i, w.die(err)
		}
		w.cur.off += int64(n)
		w.written.Store(uint64(w.cur.base) + uint64(w.cur.off))
	}
	if got := LSN(w.written.Load()); got != end {
		return 0, len(chunks), w.die(fmt.Errorf("internal error: wrote up to %d, log ends at %d", got, end))
	}
	if w.retryNoSpace {
		w.mu.Lock()
		if w.noSpace != nil {
			w.noSpace = nil
			w.log.Info("wal writes resumed after running out of space", "written", end)
		}
		w.mu.Unlock()
	}
	if !needSync || LSN(w.flushed.Load()) >= end {
		return 0, len(chunks), nil
	}
	start := time.Now()
	err := w.cur.f.SyncData()
	took := max(time.Since(start), 1)
	w.fsyncs.Add(1)
	if err != nil {
		return took, len(chunks), w.die(fmt.Errorf("fsync %s: %w", w.segPath(w.cur.base), err))
	}
	w.flushed.Store(uint64(end))
	return took, len(chunks), nil
}

// errSyncFailed marks an fsync failure inside an error that may also say
// ENOSPC: an fsync failure is never retried.
var errSyncFailed = errors.New("fsync failed")

// retryable reports whether a failed write is one RetryNoSpace survives.
func (w *WAL) retryable(err error) bool {
	return w.retryNoSpace && errors.Is(err, syscall.ENOSPC) && !errors.Is(err, errSyncFailed)
}

// stall handles a write that failed for lack of space under RetryNoSpace.
// kept are the chunks not written. What was written before is fsynced if
// a waiter needs it (a failure is fatal). Every record not written — kept,
// and appended since the round began — is voided and queued again ahead
// of later appends, and their LSNs are remembered, so that their Syncs fail
// for ever and Replay skips them even once the next round writes them.
func (w *WAL) stall(kept []chunk, cause error, needSync bool) error {
	written := LSN(w.written.Load())
	if needSync && w.cur.f != nil && LSN(w.flushed.Load()) < written {
		err := w.cur.f.SyncData()
		w.fsyncs.Add(1)
		if err != nil {
			return w.die(fmt.Errorf("fsync %s: %w", w.segPath(w.cur.base), err))
		}
		w.flushed.Store(uint64(written))
	}
	err := fmt.Errorf("%w: %w", ErrNoSpace, cause)
	w.mu.Lock()
	n := 0
	for _, c := range kept {
		voidRecords(c.data)
		n += len(c.data)
	}
	for _, c := range w.pending {
		voidRecords(c.data)
	}
	var vs []voidRange
	if p := w.voids.Load(); p != nil {
		vs = slices.Clone(*p)
	}
	if k := len(vs); k > 0 && vs[k-1].from == written {
		vs[k-1].to, vs[k-1].err = w.end, err
	} else {
		vs = append(vs, voidRange{from: written, to: w.end, err: err})
	}
	w.voids.Store(&vs)
	w.pending = append(slices.Clone(kept), w.pending...)
	w.pendingBytes += n
	first := w.noSpace == nil
	w.noSpace = err
	end := w.end
	w.mu.Unlock()
	if first {
		w.log.Warn("wal write failed for lack of space; the records not written are void, writes go on when space is freed",
			"err", cause, "written", written, "voided_up_to", end)
	}
	return err
}

// recycle keeps a few written-out buffers for later appends.
func (w *WAL) recycle(chunks []chunk) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range chunks {
		if len(w.spare) < 4 && cap(c.data) <= 4*writeThreshold {
			w.spare = append(w.spare, c.data[:0])
		}
	}
}

// rotate seals the current segment (fsync, so that a segment that has a
// successor is always complete on disk) and starts the segment at base.
func (w *WAL) rotate(base LSN) error {
	if want := w.cur.base + LSN(w.cur.off); base != want {
		return fmt.Errorf("internal error: next segment at %d, current one ends at %d", base, want)
	}
	if w.cur.f != nil { // nil: sealed already by a rotation that failed to create the next one
		err := w.cur.f.SyncData()
		w.fsyncs.Add(1)
		if err != nil {
			return fmt.Errorf("fsync %s before starting the next segment: %w: %w", w.segPath(w.cur.base), errSyncFailed, err)
		}
		w.flushed.Store(uint64(base))
		if err := w.cur.f.Close(); err != nil {
			return fmt.Errorf("close %s: %w", w.segPath(w.cur.base), err)
		}
		w.cur.f = nil
	}
	f, room, err := w.createSegment(base)
	if err != nil {
		return err
	}
	w.cur = segFile{base: base, f: f, off: segHeaderSize, room: room}
	w.written.Store(uint64(base) + segHeaderSize)
	w.flushed.Store(uint64(base) + segHeaderSize)
	w.log.Debug("wal segment started", "base", base)
	return nil
}

// createSegment creates the segment file for base with its header, fsyncs
// it and the directory (a new file survives a crash only once its directory
// entry is durable), and adds it to the segment list. It returns the
// file and its preallocated size (see segFile.room).
func (w *WAL) createSegment(base LSN) (vfs.File, int64, error) {
	name := w.segPath(base)
	f, err := w.fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return nil, 0, fmt.Errorf("create %s: %w", name, err)
	}
	fail := func(err error) (vfs.File, int64, error) {
		_ = f.Close()
		// A headerless file must not be left where the next segment goes
		// (best effort: a crash now leaves it, and Open copes with that).
		_ = w.fs.Remove(name)
		return nil, 0, err
	}
	hdr := encodeSegmentHeader(base)
	if n, err := f.WriteAt(hdr, 0); err != nil || n != len(hdr) {
		if err == nil {
			err = io.ErrShortWrite
		}
		return fail(fmt.Errorf("write header of %s: %w", name, err))
	}
	// Before the fsync: it makes the new size durable with the header.
	room := w.preallocate(f, name, segHeaderSize, segHeaderSize+w.step)
	err = f.Sync()
	w.fsyncs.Add(1)
	if err != nil {
		return fail(fmt.Errorf("fsync %s: %w: %w", name, errSyncFailed, err))
	}
	if err := w.syncDir(); err != nil {
		return fail(err)
	}
	w.mu.Lock()
	w.segs = append(w.segs, base)
	w.mu.Unlock()
	return f, room, nil
}

func (w *WAL) syncDir() error {
	err := w.dir.Sync()
	w.dirSyncs.Add(1)
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w: %w", w.dirname, errSyncFailed, err)
	}
	return nil
}
