package storage

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Backend is an ordered byte-key/byte-value store with atomic batches.
//
// Every method is safe for concurrent use. Keys are non-empty byte strings of
// at most MaxKeySize bytes, ordered by bytes.Compare; values are at most
// MaxValueSize bytes (an empty value is a value: Get reports ok=true).
type Backend interface {
	// Get returns a copy of key's value, which the caller owns; ok is false
	// when the key is absent.
	Get(key []byte) (value []byte, ok bool, err error)

	// Scan calls fn for every key in [start, end) in increasing key order; a
	// nil or empty bound is unbounded. key and value are valid only during
	// fn and must not be modified. An error from fn stops the scan and is
	// returned as it is. The scan reads one consistent snapshot taken when
	// it starts: a batch committed while it runs is not visible to it, not
	// even in part. fn may call Get and Scan; it must not call Close (Close
	// waits for the scan) and should not call Commit (on bbolt a commit that
	// outgrows the mapped file waits for every read transaction, this
	// scan's included).
	Scan(start, end []byte, fn func(key, value []byte) error) error

	// ReverseScan is Scan in decreasing key order: the same range [start,
	// end), the same snapshot and callback rules.
	ReverseScan(start, end []byte, fn func(key, value []byte) error) error

	// NewCursor returns a Cursor over [start, end) (a nil or empty bound is
	// unbounded), in increasing key order, or decreasing if reverse. The
	// caller must Close it. While it is open, Close of the backend waits
	// for it, as for a Scan.
	NewCursor(start, end []byte, reverse bool) (Cursor, error)

	// NewBatch returns an empty batch for this backend. A batch is not safe
	// for concurrent use.
	NewBatch() Batch

	// Commit applies b atomically: after it returns nil every operation of b
	// is visible, and after a crash either all of b survives or none of it.
	// With sync, b (and every batch committed before it) is durable when
	// Commit returns nil. Without sync, b may be lost by a crash — even a
	// process crash — until the next successful Sync or Commit(_, true).
	//
	// A batch can be committed once; Reset makes it reusable. Operations
	// are applied in the order they were added (a Set after a DeleteRange
	// that covers it survives). An invalid batch (empty or oversized key,
	// bad range, batch of another backend) is refused with an error before
	// anything is applied, and the backend stays usable.
	//
	// Any other error (an I/O error: write, fsync, ENOSPC) is fatal: the
	// backend enters the failed state (see ErrFailed) and the outcome of b is
	// unknown until the store is reopened, where b is either entirely
	// present or entirely absent. A Commit error is never an
	// acknowledgement.
	Commit(b Batch, sync bool) error

	// Sync makes every batch committed before it durable. An error is fatal
	// as for Commit.
	Sync() error

	// Close makes every committed batch durable, releases the files (the
	// same process may reopen the same location as soon as Close returns)
	// and waits for in-flight calls to finish. Every later call returns
	// ErrClosed. A second Close returns ErrClosed.
	Close() error

	// Name is "pebble", "bbolt" or "arena".
	Name() string

	// Stats returns counters since Open.
	Stats() Stats
}

// Cursor reads a key range a piece at a time, for a caller that does
// other work between the pieces (the heap's scans merge each piece with
// the rows in memory and hand it to the scan's caller). Scan would
// rebuild its read state for every piece; a cursor keeps it: pebble's is
// one iterator, positioned, with its blocks and readahead, over one
// snapshot taken when the cursor was made (a batch committed later is not
// visible to it). bbolt's cursor is Scan again from where the last piece
// stopped, each piece over a snapshot of its own: a bbolt read
// transaction held between pieces would make a commit that must grow the
// mapped file wait for it. A caller that needs the newest state reopens
// the cursor at its position.
//
// A Cursor is not safe for concurrent use.
type Cursor interface {
	// Read calls fn with the cursor's next pairs, in its order, until fn
	// returns false or the range is exhausted (done is true). The pair fn
	// returned false for is not consumed: the next Read starts with it.
	// key and value are valid only during fn and must not be modified; fn
	// must not call Close on the cursor or the backend. After an error the
	// cursor is spent (Close it).
	Read(fn func(key, value []byte) bool) (done bool, err error)
	// Close releases the cursor. A second Close does nothing.
	Close() error
}

// Batch collects writes that Commit applies atomically. Batches are created
// by Backend.NewBatch and belong to that backend. Invalid input is recorded
// in the batch and reported by Commit; the first such error wins.
type Batch interface {
	// Set sets key to value. Both are copied.
	Set(key, value []byte)
	// Delete removes key; deleting an absent key is not an error.
	Delete(key []byte)
	// DeleteRange removes every key in [start, end). Both bounds are
	// required (non-empty); start == end is an empty range; start > end is
	// an error.
	DeleteRange(start, end []byte)
	// Len is the number of operations recorded.
	Len() int
	// Size is the number of key and value bytes recorded, a measure of
	// the batch's memory, so a caller can bound a batch before committing.
	Size() int
	// Reset empties the batch (and forgets a recorded error) so it can be
	// reused, also after Commit.
	Reset()
}

// Stats are counters since Open. Counters count successful calls only.
type Stats struct {
	Backend string
	// Commits is the number of batches committed (sync or not).
	Commits uint64
	// SyncCommits is the number of those committed with sync=true.
	SyncCommits uint64
	// Syncs is the number of durability barriers that succeeded:
	// Commit(_, true) calls plus Sync calls.
	Syncs uint64
	// Fsyncs is the number of fsync/fdatasync calls the backend made for
	// commits and syncs. pebble: WAL fsyncs as pebble reports them
	// (concurrent sync commits share one). bbolt: two per commit (pages,
	// then meta page) plus one per Sync; file growth may add more.
	Fsyncs int64
	// LogicalBytes is the number of key and value bytes in committed
	// batches.
	LogicalBytes uint64
	// BytesWritten is the number of bytes written to the backend's files.
	// pebble: exact (WAL + flushes + compactions). bbolt: an estimate (pages
	// allocated by write transactions + one meta page per commit).
	BytesWritten int64
	// MemoryInUse is the memory the backend reports holding: pebble's block
	// cache plus memtables. -1 where the backend does not report it (bbolt
	// reads through mmap, i.e. the OS page cache).
	MemoryInUse int64
	// Failed is set once the backend is in the failed state.
	Failed bool
}

// Options configures a backend. The zero value is valid.
type Options struct {
	// FS is the filesystem of every pebble file (data, WAL, manifest,
	// lock). nil means vfs.Default. Tests use vfs.NewCrashableMem or wrap it
	// with errorfs. bbolt does its own file I/O on the OS filesystem and
	// refuses a non-nil FS other than vfs.Default.
	FS vfs.FS
	// CacheSize is pebble's block cache in bytes; 0 means
	// DefaultCacheSize. bbolt ignores it (it reads through the OS page
	// cache).
	CacheSize int64
	// Logger receives the backend's log lines (pebble's informational
	// lines at Debug level). nil means slog.Default().
	Logger *slog.Logger
	// ReadOnly opens an existing store without writing to it (tupled
	// verify and salvage); Commit and Sync then fail.
	ReadOnly bool
}

const (
	// MaxKeySize is the largest key either backend accepts (bbolt's limit,
	// applied to both so that the engine behaves the same on both).
	MaxKeySize = 32 << 10
	// MaxValueSize is the largest value either backend accepts.
	MaxValueSize = 1 << 30
	// DefaultCacheSize is pebble's block cache when Options.CacheSize is 0.
	DefaultCacheSize = 64 << 20
)

// Backend names accepted by Open.
const (
	KindPebble = "pebble"
	KindBbolt  = "bbolt"
)

// Errors. Test them with errors.Is.
var (
	// ErrClosed is returned by every call after Close has begun.
	ErrClosed = errors.New("storage: backend is closed")
	// ErrFailed is returned (wrapping the original cause) by every call
	// after an I/O error in Commit or Sync. The backend's state in memory
	// can no longer be trusted to match the disk: reads are refused too
	// (pebble may already show the batch whose fsync failed). The only
	// remedy is Close and reopen, which recovers the last durable state;
	// the engine treats it as fatal.
	ErrFailed = errors.New("storage: backend failed after an I/O error; close and reopen")
	// ErrEmptyKey: keys must be non-empty.
	ErrEmptyKey = errors.New("storage: empty key")
	// ErrKeyTooLarge: a key is longer than MaxKeySize.
	ErrKeyTooLarge = fmt.Errorf("storage: key longer than %d bytes", MaxKeySize)
	// ErrValueTooLarge: a value is longer than MaxValueSize.
	ErrValueTooLarge = fmt.Errorf("storage: value longer than %d bytes", MaxValueSize)
	// ErrBadRange: DeleteRange with start > end or an empty bound.
	ErrBadRange = errors.New("storage: bad range (need non-empty start <= end)")
	// ErrNilBatch: Commit(nil, ...).
	ErrNilBatch = errors.New("storage: nil batch")
	// ErrForeignBatch: the batch was made by another backend.
	ErrForeignBatch = errors.New("storage: batch belongs to another backend")
	// ErrBatchCommitted: the batch was already committed; Reset it first.
	ErrBatchCommitted = errors.New("storage: batch already committed (Reset it to reuse)")
	// ErrUnknownBackend: Open with a kind other than "pebble" or "bbolt".
	ErrUnknownBackend = errors.New(`storage: unknown backend (want "pebble" or "bbolt")`)
	// ErrFSNotSupported: a filesystem other than the OS's given to bbolt.
	ErrFSNotSupported = errors.New("storage: bbolt does its own file I/O; Options.FS must be nil or vfs.Default")
)

// BboltFile is the name of bbolt's file inside the directory given to Open.
const BboltFile = "data.bbolt"

// Open opens (creating if needed) the store of the given kind in dir:
// pebble's files in dir, or bbolt's single file dir/BboltFile.
func Open(kind string, dir string, opts Options) (Backend, error) {
	switch kind {
	case KindPebble:
		return OpenPebble(dir, opts)
	case KindBbolt:
		if dir == "" {
			return nil, errors.New("storage: bbolt: empty directory")
		}
		return OpenBbolt(filepath.Join(dir, BboltFile), opts)
	default:
		return nil, fmt.Errorf("%w: %q", ErrUnknownBackend, kind)
	}
}

func (o Options) logger() *slog.Logger {
	if o.Logger != nil {
		return o.Logger
	}
	return slog.Default()
}

// validKey checks a key of Set or Delete.
func validKey(key []byte) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	if len(key) > MaxKeySize {
		return ErrKeyTooLarge
	}
	return nil
}

func validValue(value []byte) error {
	if len(value) > MaxValueSize {
		return ErrValueTooLarge
	}
	return nil
}

func validRange(start, end []byte) error {
	if len(start) == 0 || len(end) == 0 || string(start) > string(end) {
		return ErrBadRange
	}
	if len(start) > MaxKeySize || len(end) > MaxKeySize {
		return ErrKeyTooLarge
	}
	return nil
}

// guard tracks calls in flight so that Close can wait for them and every
// call that starts after Close has begun fails with ErrClosed instead of
// reaching a closed database (pebble panics on use after close). It is a
// counter, not a RWMutex, so that a Get from inside a Scan callback cannot
// deadlock against a waiting Close.
type guard struct {
	state atomic.Int64 // closedBit | number of calls in flight
	idle  chan struct{}
	once  sync.Once
}

const closedBit = int64(1) << 62

func newGuard() *guard { return &guard{idle: make(chan struct{})} }

// enter registers a call; exit must follow when it returns nil.
func (g *guard) enter() error {
	if g.state.Add(1)&closedBit != 0 {
		g.exit()
		return ErrClosed
	}
	return nil
}

func (g *guard) exit() {
	if g.state.Add(-1) == closedBit {
		g.once.Do(func() { close(g.idle) })
	}
}

// close marks the guard closed and waits for the calls in flight. It
// returns ErrClosed if it was already closed.
func (g *guard) close() error {
	old := g.state.Or(closedBit)
	if old&closedBit != 0 {
		return ErrClosed
	}
	if old != 0 {
		<-g.idle
	}
	return nil
}

// failure is the sticky failed state of a backend.
type failure struct {
	err atomic.Pointer[error]
}

// set records cause (the first one wins) and returns the error to report.
func (f *failure) set(cause error) error {
	wrapped := fmt.Errorf("%w: %w", ErrFailed, cause)
	f.err.CompareAndSwap(nil, &wrapped)
	return *f.err.Load()
}

// get returns the recorded error or nil.
func (f *failure) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// counters are the Stats both backends keep themselves.
type counters struct {
	commits, syncCommits, syncs, logicalBytes atomic.Uint64
}

func (c *counters) committed(b int, sync bool) {
	c.commits.Add(1)
	c.logicalBytes.Add(uint64(b))
	if sync {
		c.syncCommits.Add(1)
		c.syncs.Add(1)
	}
}

func (c *counters) fill(s *Stats) {
	s.Commits = c.commits.Load()
	s.SyncCommits = c.syncCommits.Load()
	s.Syncs = c.syncs.Load()
	s.LogicalBytes = c.logicalBytes.Load()
}

// closeResult is what Close reports: the failure that put the backend in
// the failed state (with the close error, if any, as detail), else the
// close error.
func closeResult(name string, failed, closeErr error) error {
	if failed != nil {
		if closeErr != nil {
			return fmt.Errorf("%w (close: %v)", failed, closeErr)
		}
		return failed
	}
	if closeErr != nil {
		return fmt.Errorf("storage: %s close: %w", name, closeErr)
	}
	return nil
}

// batchState is the validity bookkeeping both backends' batches share:
// the first invalid input is kept and reported by Commit; a committed batch
// refuses writes until Reset.
type batchState struct {
	err       error
	committed bool
}

func (s *batchState) usableState() bool {
	if s.err != nil {
		return false
	}
	if s.committed {
		s.err = ErrBatchCommitted
		return false
	}
	return true
}

// validSet records the first error of an invalid Set and reports validity.
func (s *batchState) validSet(key, value []byte) bool {
	if err := validKey(key); err != nil {
		s.err = err
		return false
	}
	if err := validValue(value); err != nil {
		s.err = err
		return false
	}
	return true
}
