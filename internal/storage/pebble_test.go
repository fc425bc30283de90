package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// pebble-only tests: simulated crashes on vfs.NewCrashableMem and injected
// I/O faults with errorfs. bbolt does its own file I/O, so its crash
// atomicity is tested with real process kills (tests/crash/kill_test.go).

func openPebbleFS(t *testing.T, fs vfs.FS) Backend {
	t.Helper()
	b, err := OpenPebble("/db", Options{FS: fs, CacheSize: 4 << 20, Logger: quietLogger()})
	require.NoError(t, err)
	return b
}

// batchKey is key j of batch i.
func batchKey(i, j int) []byte { return fmt.Appendf(nil, "b%04d/%04d", i, j) }

// writeBatch commits batch i: n keys with values of vlen bytes, plus a
// delete of one key of batch i-1 (so a batch is not only Sets).
func writeBatch(t *testing.T, b Backend, i, n, vlen int, sync bool) {
	t.Helper()
	require.NoError(t, b.Commit(buildBatch(b, i, n, vlen), sync))
}

func buildBatch(b Backend, i, n, vlen int) Batch {
	bt := b.NewBatch()
	for j := range n {
		v := make([]byte, vlen)
		for k := range v {
			v[k] = byte(i + j + k)
		}
		bt.Set(batchKey(i, j), v)
	}
	if i > 0 {
		bt.Delete(batchKey(i-1, n-1))
	}
	return bt
}

// batchesPresent returns, per batch, how many of its n keys are present
// (the last key of every batch but the newest was deleted by the next
// batch, so a present batch i < last counts n-1 when batch i+1 is present).
func batchesPresent(t *testing.T, b Backend, batches, n int) []int {
	t.Helper()
	counts := make([]int, batches)
	for i := range batches {
		counts[i] = count(t, b, batchKey(i, 0), batchKey(i+1, 0))
	}
	return counts
}

// checkAllOrNothing asserts each batch is entirely present or entirely
// absent, and that the present ones are a prefix of commit order; it
// returns how many survived.
func checkAllOrNothing(t *testing.T, counts []int, n int, msg string) int {
	t.Helper()
	survived := 0
	for i, c := range counts {
		full := n
		if i+1 < len(counts) && counts[i+1] > 0 {
			full = n - 1 // batch i+1 deleted one key of batch i
		}
		switch {
		case c == 0:
		case c == full:
			require.Equal(t, survived, i, "%s: batch %d present after a missing one: %v", msg, i, counts)
			survived++
		default:
			require.Failf(t, "torn batch", "%s: batch %d has %d of %d keys: %v", msg, i, c, full, counts)
		}
	}
	return survived
}

// TestPebbleCrashAfterSyncCommit: a batch committed with sync=true is
// entirely there after a crash, whatever unsynced data the crash keeps.
func TestPebbleCrashAfterSyncCommit(t *testing.T) {
	const n = 2000 // ~240 KB: many WAL blocks
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			fs := vfs.NewCrashableMem()
			b := openPebbleFS(t, fs)
			defer b.Close()
			writeBatch(t, b, 0, n, 100, true)
			writeBatch(t, b, 1, n, 100, true)
			writeBatch(t, b, 2, n, 100, false) // may or may not survive
			keep := 0
			if seed > 0 {
				keep = rng.IntN(101)
			}
			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: keep, RNG: rng})

			rb := openPebbleFS(t, crashed)
			defer rb.Close()
			counts := batchesPresent(t, rb, 3, n)
			survived := checkAllOrNothing(t, counts, n, fmt.Sprintf("seed %d keep %d%%", seed, keep))
			require.GreaterOrEqual(t, survived, 2, "synced batches lost: %v", counts)
		})
	}
}

// TestPebbleCrashUnsynced: batches committed with sync=false before any
// Sync are each either entirely there or entirely absent after a crash,
// and the survivors are a prefix of commit order; batches before a Sync
// always survive.
func TestPebbleCrashUnsynced(t *testing.T) {
	const n, batches = 100, 12
	seeds := 30
	if testing.Short() {
		seeds = 10
	}
	total := map[int]int{}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 7))
		fs := vfs.NewCrashableMem()
		b := openPebbleFS(t, fs)
		syncedUpTo := 0 // batches [0, syncedUpTo) are durable
		syncAt := -1
		if seed%2 == 1 {
			syncAt = rng.IntN(batches)
		}
		crashAt := 1 + rng.IntN(batches)
		for i := range crashAt {
			writeBatch(t, b, i, n, 1+rng.IntN(600), false) // up to 60 KB: batches cross WAL blocks
			if i == syncAt {
				require.NoError(t, b.Sync())
				syncedUpTo = i + 1
			}
		}
		keep := rng.IntN(101)
		crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: keep, RNG: rng})
		require.NoError(t, b.Close())

		rb := openPebbleFS(t, crashed)
		msg := fmt.Sprintf("seed %d: crash after %d batches, synced %d, keep %d%%", seed, crashAt, syncedUpTo, keep)
		survived := checkAllOrNothing(t, batchesPresent(t, rb, batches, n), n, msg)
		require.GreaterOrEqual(t, survived, syncedUpTo, msg)
		require.LessOrEqual(t, survived, crashAt, msg)
		require.NoError(t, rb.Close())
		total[survived-syncedUpTo]++
	}
	t.Logf("unsynced batches surviving the crash (count: runs): %v", total)
}

// TestPebbleCloseIsDurable: Close syncs pebble's WAL.
func TestPebbleCloseIsDurable(t *testing.T) {
	fs := vfs.NewCrashableMem()
	b := openPebbleFS(t, fs)
	writeBatch(t, b, 0, 100, 10, false)
	require.NoError(t, b.Close())
	rb := openPebbleFS(t, fs.CrashClone(vfs.CrashCloneCfg{}))
	defer rb.Close()
	require.Equal(t, 100, count(t, rb, nil, nil))
}

// TestPebbleCrashInNewDirectory: a store created in a directory that did
// not exist survives a crash (pebble fsyncs the new directories).
func TestPebbleCrashInNewDirectory(t *testing.T) {
	fs := vfs.NewCrashableMem()
	b, err := OpenPebble("/a/b/db", Options{FS: fs, Logger: quietLogger()})
	require.NoError(t, err)
	writeBatch(t, b, 0, 10, 10, true)
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, b.Close())
	rb, err := OpenPebble("/a/b/db", Options{FS: crashed, Logger: quietLogger()})
	require.NoError(t, err)
	defer rb.Close()
	require.Equal(t, 10, count(t, rb, nil, nil))
}

// walFault returns an injector of err on the given operations of pebble's
// WAL files, off until toggled on.
func walFault(err error, kinds ...errorfs.OpKind) *errorfs.Toggle {
	return &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		if !strings.HasSuffix(op.Path, ".log") {
			return nil
		}
		for _, k := range kinds {
			if op.Kind == k {
				return err
			}
		}
		return nil
	})}
}

var syncOps = []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo}

// requireFailedState checks that every later call refuses with ErrFailed.
func requireFailedState(t *testing.T, b Backend) {
	t.Helper()
	_, _, err := b.Get(batchKey(0, 0))
	require.ErrorIs(t, err, ErrFailed, "reads are refused too: the store may show a batch that is not durable")
	require.ErrorIs(t, b.Scan(nil, nil, func(k, v []byte) error { return nil }), ErrFailed)
	bt := b.NewBatch()
	bt.Set([]byte("after"), []byte("x"))
	require.ErrorIs(t, b.Commit(bt, false), ErrFailed)
	require.ErrorIs(t, b.Commit(b.NewBatch(), true), ErrFailed)
	require.ErrorIs(t, b.Sync(), ErrFailed)
	require.True(t, b.Stats().Failed)
}

// reopenAfterFault closes the failed backend, turns the fault off and
// reopens both the same filesystem (no crash: the OS kept what was
// written) and a crash clone of it (only what was synced), checking the
// synced batches are there and the failed one is all or nothing.
func reopenAfterFault(t *testing.T, b Backend, fs *vfs.MemFS, fault *errorfs.Toggle, batches, n, synced int) {
	t.Helper()
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	cerr := b.Close()
	t.Logf("Close after the fault: %v", cerr)
	require.ErrorIs(t, b.Close(), ErrClosed)
	fault.Off()
	for name, f := range map[string]vfs.FS{"same fs": fs, "crash clone": crashed} {
		rb := openPebbleFS(t, f)
		survived := checkAllOrNothing(t, batchesPresent(t, rb, batches, n), n, name)
		require.GreaterOrEqual(t, survived, synced, name)
		t.Logf("%s: %d of %d batches survived (%d acknowledged)", name, survived, batches, synced)
		// The store is fully usable again.
		writeBatch(t, rb, batches, n, 10, true)
		require.NoError(t, rb.Close())
	}
}

// TestPebbleFsyncError: an injected WAL fsync error makes Commit(sync=true)
// return an error — never nil — and puts the backend in the failed state;
// reopening recovers the acknowledged batches.
func TestPebbleFsyncError(t *testing.T) {
	const n = 50
	mem := vfs.NewCrashableMem()
	fault := walFault(errorfs.ErrInjected, syncOps...)
	b := openPebbleFS(t, errorfs.Wrap(mem, fault))
	writeBatch(t, b, 0, n, 10, true)
	writeBatch(t, b, 1, n, 10, true)

	fault.On()
	err := b.Commit(buildBatch(b, 2, n, 10), true)
	require.Error(t, err)
	require.ErrorIs(t, err, ErrFailed)
	require.ErrorIs(t, err, errorfs.ErrInjected)
	t.Logf("Commit: %v", err)
	requireFailedState(t, b)
	reopenAfterFault(t, b, mem, fault, 3, n, 2)
}

// TestPebbleSyncError: the same through Sync after unsynced commits.
func TestPebbleSyncError(t *testing.T) {
	const n = 50
	mem := vfs.NewCrashableMem()
	fault := walFault(errorfs.ErrInjected, syncOps...)
	b := openPebbleFS(t, errorfs.Wrap(mem, fault))
	writeBatch(t, b, 0, n, 10, true)
	fault.On()
	writeBatch(t, b, 1, n, 10, false) // no fsync asked: succeeds
	err := b.Sync()
	require.ErrorIs(t, err, ErrFailed)
	require.ErrorIs(t, err, errorfs.ErrInjected)
	requireFailedState(t, b)
	reopenAfterFault(t, b, mem, fault, 2, n, 1)
}

// TestPebbleWriteError: a WAL write error (EIO) surfaces at the next
// commit that waits for the disk, never as an acknowledgement.
func TestPebbleWriteError(t *testing.T) {
	const n = 50
	mem := vfs.NewCrashableMem()
	fault := walFault(syscall.EIO, errorfs.OpFileWrite, errorfs.OpFileWriteAt)
	b := openPebbleFS(t, errorfs.Wrap(mem, fault))
	writeBatch(t, b, 0, n, 10, true)
	fault.On()
	err := b.Commit(buildBatch(b, 1, n, 10), true)
	require.ErrorIs(t, err, ErrFailed)
	require.ErrorIs(t, err, syscall.EIO)
	requireFailedState(t, b)
	reopenAfterFault(t, b, mem, fault, 2, n, 1)
}

// TestPebbleShortWriteENOSPC: the WAL file takes half of a write and then
// reports ENOSPC (a full disk): the commit fails, and recovery cuts the
// torn tail.
func TestPebbleShortWriteENOSPC(t *testing.T) {
	const n = 200
	mem := vfs.NewCrashableMem()
	var full atomic.Bool
	fs := &shortWriteFS{FS: mem, full: &full}
	b := openPebbleFS(t, fs)
	writeBatch(t, b, 0, n, 100, true)
	full.Store(true)
	err := b.Commit(buildBatch(b, 1, n, 100), true)
	require.ErrorIs(t, err, ErrFailed)
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.Positive(t, fs.shortWrites.Load())
	requireFailedState(t, b)
	// reopenAfterFault wants a Toggle; the fault here is the flag.
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	t.Logf("Close after ENOSPC: %v", b.Close())
	full.Store(false)
	for name, f := range map[string]vfs.FS{"same fs": mem, "crash clone": crashed} {
		rb := openPebbleFS(t, f)
		survived := checkAllOrNothing(t, batchesPresent(t, rb, 2, n), n, name)
		require.GreaterOrEqual(t, survived, 1, name)
		require.NoError(t, rb.Close())
	}
}

// TestPebbleConcurrentCommitsUnderFault: with the fault on, no concurrent
// sync commit is acknowledged.
func TestPebbleConcurrentCommitsUnderFault(t *testing.T) {
	mem := vfs.NewCrashableMem()
	fault := walFault(errorfs.ErrInjected, syncOps...)
	b := openPebbleFS(t, errorfs.Wrap(mem, fault))
	writeBatch(t, b, 0, 10, 10, true)
	fault.On()
	var wg sync.WaitGroup
	var acked atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for i := range 5 {
				bt := b.NewBatch()
				bt.Set(fmt.Appendf(nil, "w%d/%d", w, i), []byte("x"))
				if b.Commit(bt, true) == nil {
					acked.Add(1)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, acked.Load(), "a sync commit was acknowledged while every fsync failed")
	requireFailedState(t, b)
	_ = b.Close()
	fault.Off()
	rb := openPebbleFS(t, mem.CrashClone(vfs.CrashCloneCfg{}))
	require.Equal(t, 10, count(t, rb, batchKey(0, 0), batchKey(1, 0)))
	require.Zero(t, count(t, rb, []byte("w"), []byte("x")), "nothing unacknowledged was synced")
	require.NoError(t, rb.Close())
}

// shortWriteFS makes writes to WAL files short, with ENOSPC, while full.
type shortWriteFS struct {
	vfs.FS
	full        *atomic.Bool
	shortWrites atomic.Int64
}

func (fs *shortWriteFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil || !strings.HasSuffix(name, ".log") {
		return f, err
	}
	return &shortWriteFile{File: f, fs: fs}, nil
}

func (fs *shortWriteFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs *shortWriteFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs *shortWriteFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

type shortWriteFile struct {
	vfs.File
	fs *shortWriteFS
}

func (f *shortWriteFile) Write(p []byte) (int, error) {
	if !f.fs.full.Load() {
		return f.File.Write(p)
	}
	f.fs.shortWrites.Add(1)
	n, err := f.File.Write(p[:len(p)/2])
	if err == nil {
		err = syscall.ENOSPC
	}
	return n, err
}

func (f *shortWriteFile) WriteAt(p []byte, off int64) (int, error) {
	if !f.fs.full.Load() {
		return f.File.WriteAt(p, off)
	}
	f.fs.shortWrites.Add(1)
	n, err := f.File.WriteAt(p[:len(p)/2], off)
	if err == nil {
		err = syscall.ENOSPC
	}
	return n, err
}

// TestPebblePanicInsidePebble: a panic out of pebble other than the commit
// pipeline's Fatalf (pebble's locks may be held) fails the backend, and
// Close reports it instead of calling into pebble and risking a hang.
func TestPebblePanicInsidePebble(t *testing.T) {
	b := openPebbleFS(t, vfs.NewMem())
	p := b.(*pebbleBackend)
	writeBatch(t, b, 0, 10, 10, true)
	var err error
	func() {
		defer p.recoverFailure(&err)
		panic(errors.New("simulated panic inside pebble"))
	}()
	require.ErrorIs(t, err, ErrFailed)
	requireFailedState(t, b)
	cerr := b.Close()
	require.ErrorIs(t, cerr, ErrFailed)
	require.Contains(t, cerr.Error(), "not closed")
	require.ErrorIs(t, b.Close(), ErrClosed)
	require.NoError(t, p.db.Close()) // the test knows pebble is in fact fine
}
