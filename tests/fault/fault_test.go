package fault_test

// Suite 3 of issue 3: I/O faults injected with pebble's vfs/errorfs while
// the concurrent workload runs: fsync errors, write errors, short writes
// and ENOSPC, on the WAL and on the backend's files. Checked:
//   - no false acknowledgement: every Commit that returned nil is in the
//     state recovered from the synced data (a crash image with every
//     unsynced byte dropped) and in the state recovered by reopening the
//     same file system;
//   - a clear error: once a writing Commit failed, every writing Commit
//     started afterwards fails with ErrIO (SQLSTATE 58030), and so do
//     CreateTable and Checkpoint;
//   - recovery to a consistent state (ledger, bank total, no row locks,
//     transaction ids keep growing).
// bbolt does its own file I/O, so with bbolt only the WAL (on the errorfs)
// is faulted; its data file lives on the real disk at the same path.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/tests/utils"
)

// faultFS is errorfs over a crashable MemFS with a rule that can be armed,
// plus short writes (half the buffer written, then ENOSPC).
type faultFS struct {
	vfs.FS
	mem   *vfs.MemFS
	rule  atomic.Pointer[func(errorfs.Op) error]
	short atomic.Pointer[string] // path part: short writes on matching files
	hits  atomic.Uint64
}

func newFaultFS() *faultFS {
	f := &faultFS{mem: vfs.NewCrashableMem()}
	f.FS = errorfs.Wrap(f.mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if r := f.rule.Load(); r != nil {
			if err := (*r)(op); err != nil {
				f.hits.Add(1)
				return err
			}
		}
		return nil
	}))
	return f
}

func (f *faultFS) disarm() { f.rule.Store(nil); f.short.Store(nil) }

func (f *faultFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &shortFile{File: file, fs: f, name: name}, nil
}

func (f *faultFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	file, err := f.FS.OpenReadWrite(name, c, opts...)
	if err != nil {
		return nil, err
	}
	return &shortFile{File: file, fs: f, name: name}, nil
}

func (f *faultFS) ReuseForWrite(old, new string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.ReuseForWrite(old, new, c)
	if err != nil {
		return nil, err
	}
	return &shortFile{File: file, fs: f, name: new}, nil
}

type shortFile struct {
	vfs.File
	fs   *faultFS
	name string
}

func (s *shortFile) shortNow(n int) bool {
	p := s.fs.short.Load()
	return p != nil && strings.Contains(s.name, *p) && n > 1
}

func (s *shortFile) Write(p []byte) (int, error) {
	if s.shortNow(len(p)) {
		s.fs.hits.Add(1)
		n, err := s.File.Write(p[:len(p)/2])
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	}
	return s.File.Write(p)
}

func (s *shortFile) WriteAt(p []byte, off int64) (int, error) {
	if s.shortNow(len(p)) {
		s.fs.hits.Add(1)
		n, err := s.File.WriteAt(p[:len(p)/2], off)
		if err != nil {
			return n, err
		}
		return n, syscall.ENOSPC
	}
	return s.File.WriteAt(p, off)
}

var (
	faultSyncOps  = []errorfs.OpKind{errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo}
	faultWriteOps = []errorfs.OpKind{errorfs.OpFileWrite, errorfs.OpFileWriteAt}
)

// onPath fails ops of the given kinds on files whose path contains part.
func onPath(part string, err error, kinds ...errorfs.OpKind) func(errorfs.Op) error {
	return func(op errorfs.Op) error {
		if !strings.Contains(op.Path, part) {
			return nil
		}
		for _, k := range kinds {
			if op.Kind == k {
				return err
			}
		}
		return nil
	}
}

type faultCase struct {
	name  string
	part  string // "/wal/" or "/data/"
	err   error
	kinds []errorfs.OpKind
	short bool
	// diskFull: with SyncCommit on, the fault is not fatal: commits fail
	// with 53100 (ErrDiskFull) while it lasts, and go on once it is gone.
	diskFull bool
}

var faultCases = []faultCase{
	{name: "wal-fsync-EIO", part: "/wal/", err: syscall.EIO, kinds: faultSyncOps},
	{name: "wal-write-EIO", part: "/wal/", err: syscall.EIO, kinds: faultWriteOps},
	{name: "wal-write-ENOSPC", part: "/wal/", err: syscall.ENOSPC, kinds: faultWriteOps, diskFull: true},
	{name: "wal-short-write", part: "/wal/", short: true, diskFull: true},
	{name: "wal-create-ENOSPC", part: "/wal/", err: syscall.ENOSPC, kinds: []errorfs.OpKind{errorfs.OpCreate}},
	{name: "backend-fsync-EIO", part: "/data/", err: syscall.EIO, kinds: faultSyncOps},
	{name: "backend-write-ENOSPC", part: "/data/", err: syscall.ENOSPC, kinds: faultWriteOps},
	{name: "backend-short-write", part: "/data/", short: true},
}

func TestFaults(t *testing.T) {
	seed := utils.CrashSeed(t)
	for _, be := range utils.Backends {
		for i, fc := range faultCases {
			if be.B == tupled.Bbolt && fc.part != "/wal/" {
				continue // bbolt's file is not on a vfs: see the top of this file
			}
			if fc.kinds != nil && fc.kinds[0] == errorfs.OpCreate {
				continue // needs a segment rotation; covered by the wal package
			}
			t.Run(be.Name+"/"+fc.name, func(t *testing.T) {
				runFault(t, be.B, fc, seed, uint64(i))
			})
		}
	}
}

func runFault(t *testing.T, be tupled.Backend, fc faultCase, seed, stream uint64) {
	rng := rand.New(rand.NewPCG(seed, stream))
	what := fmt.Sprintf("seed %d %v/%s", seed, be, fc.name)
	f := newFaultFS()
	dir := "db"
	if be == tupled.Bbolt {
		dir = t.TempDir() // the WAL on f at this path, bbolt's file on disk at it
	}
	opts := utils.CrashOpts(f, be, rng)
	opts.VacuumInterval = -1 // vacuum reads cold rows; keep the errors to writes
	db, err := tupled.Open(dir, opts)
	require.NoError(t, err, what)
	closed := false
	defer func() {
		if !closed {
			db.Close()
		}
	}()
	utils.SetupTables(t, db)
	l := utils.NewLedger()
	l.SetInitial()
	w := &utils.Workload{DB: db, L: l, Seed: rng.Uint64(), IOErrOK: true, CkptEvery: 2 * time.Millisecond}
	stop := w.Run(context.Background(), 3, 2, 2, 1)
	time.Sleep(time.Duration(5+rng.IntN(40)) * time.Millisecond)
	if fc.short {
		p := fc.part
		f.short.Store(&p)
	} else {
		r := onPath(fc.part, fc.err, fc.kinds...)
		f.rule.Store(&r)
	}
	deadline := time.Now().Add(10 * time.Second)
	if fc.diskFull {
		runDiskFullFault(t, db, f, w, l, dir, be, what, stop, deadline)
		closed = true
		return
	}
	for w.FailedSeen.Load() == 0 && time.Now().Before(deadline) && w.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	// Let the workload run on the failed database a little: every commit
	// it starts now must fail.
	time.Sleep(20 * time.Millisecond)
	stop()
	require.NoError(t, w.Err(), what)
	require.NotZero(t, w.FailedSeen.Load(), "%s: the fault never surfaced as an I/O error (%d injections)", what, f.hits.Load())
	require.NotZero(t, f.hits.Load(), what)

	// Writing commits, DDL and checkpoints are refused with a clear error.
	isIO := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, tupled.ErrIO, what)
		require.Equal(t, "58030", tupled.SQLState(err), what)
	}
	f.disarm() // the database must stay failed even when the disk is back
	tx, err := db.Begin(bg, nil)
	if err == nil {
		err = tx.Update(bg, utils.BankTable, []byte(utils.AcctKey(0)), []byte("0:after"))
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
	}
	isIO(err)
	isIO(db.CreateTable(bg, "after"))
	isIO(db.Checkpoint())
	_ = db.Close() // may report the failure
	closed = true
	s := l.SnapshotLocked()
	t.Logf("%s: %d commits acknowledged, %d failed, %d injections", what, l.NAcked, w.CommitErrs.Load(), f.hits.Load())

	// What was synced: a crash image without any unsynced byte.
	// bbolt's file is on disk and shared by both checks: the first one's
	// recovery writes to it, so it is put back before the second.
	var bboltFile string
	var bboltData []byte
	if be == tupled.Bbolt {
		bboltFile = filepath.Join(dir, "data", storage.BboltFile)
		bboltData, err = os.ReadFile(bboltFile)
		require.NoError(t, err, what)
	}
	clone := f.mem.CrashClone(vfs.CrashCloneCfg{})
	utils.VerifyClone(t, clone, dir, be, s, what+" (synced data only)")
	if be == tupled.Bbolt {
		require.NoError(t, os.WriteFile(bboltFile, bboltData, 0o600), what)
	}
	// The same file system, reopened after the failed process closed it.
	db2, err := tupled.Open(dir, utils.ReopenOpts(f, be))
	require.NoError(t, err, "%s: reopen", what)
	defer func() { require.NoError(t, db2.Close(), what) }()
	utils.CheckRecovered(t, db2, s, what+" (reopened)")
	require.NoError(t, db2.RunTx(bg, nil, func(tx *tupled.Tx) error {
		return tx.Update(bg, utils.BankTable, []byte(utils.AcctKey(0)), []byte(fmt.Sprintf("%d:reopened", utils.InitBalance)))
	}), "%s: the reopened database accepts commits", what)
}

// runDiskFullFault continues runFault for a disk-full case: the workload
// sees ErrDiskFull and never ErrIO, and once the disk is back its commits
// succeed again without a reopen; the synced data and a reopen hold every
// acknowledged commit and none of those that failed with 53100.
func runDiskFullFault(t *testing.T, db *tupled.DB, f *faultFS, w *utils.Workload, l *utils.Ledger, dir string, be tupled.Backend, what string, stop func(), deadline time.Time) {
	for w.DiskFullSeen.Load() == 0 && time.Now().Before(deadline) && w.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	require.NotZero(t, w.DiskFullSeen.Load(), "%s: the fault never surfaced as 53100 (%d injections)", what, f.hits.Load())
	f.disarm()
	for w.DiskFullAcks.Load() < 10 && time.Now().Before(deadline.Add(10*time.Second)) && w.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	stop()
	require.NoError(t, w.Err(), what)
	require.Zero(t, w.FailedSeen.Load(), "%s: disk full is not fatal", what)
	require.GreaterOrEqual(t, w.DiskFullAcks.Load(), uint64(10), "%s: commits resume once space is back", what)
	require.NoError(t, db.Close(), what)
	s := l.SnapshotLocked()
	t.Logf("%s: %d commits acknowledged, %d failed, %d disk-full errors, %d injections", what, l.NAcked, w.CommitErrs.Load(), w.DiskFullSeen.Load(), f.hits.Load())
	var bboltFile string
	var bboltData []byte
	var err error
	if be == tupled.Bbolt {
		bboltFile = filepath.Join(dir, "data", storage.BboltFile)
		bboltData, err = os.ReadFile(bboltFile)
		require.NoError(t, err, what)
	}
	utils.VerifyClone(t, f.mem.CrashClone(vfs.CrashCloneCfg{}), dir, be, s, what+" (synced data only)")
	if be == tupled.Bbolt {
		require.NoError(t, os.WriteFile(bboltFile, bboltData, 0o600), what)
	}
	db2, err := tupled.Open(dir, utils.ReopenOpts(f, be))
	require.NoError(t, err, "%s: reopen", what)
	defer func() { require.NoError(t, db2.Close(), what) }()
	utils.CheckRecovered(t, db2, s, what+" (reopened)")
}
