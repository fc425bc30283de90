package tupled_test

// Suite 1 of issue 3: simulated crashes of the whole engine. The database
// runs on vfs.NewCrashableMem(); a crash point is fs.CrashClone taken with
// the ledger frozen (see crashutil_test.go); the clone is reopened and
// checked against the ledger while the workload goes on.

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

var (
	flagCrashPoints = flag.Int("crash.points", 400, "random crash points of TestCrashRandomPoints (per backend)")
	flagCrashWrites = flag.Int("crash.writes", 150, "crash points of TestCrashAtEveryWrite (one after each file write/sync of a short run)")
	flagCrashSeed   = flag.Uint64("crash.seed", 0, "seed of the crash suites (0 = random)")
)

func CrashSeed(t testing.TB) uint64 {
	seed := *flagCrashSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("seed %d (rerun with -crash.seed=%d)", seed, seed)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("FAILED with seed %d (rerun with -crash.seed=%d)", seed, seed)
		}
	})
	return seed
}

func CrashOpts(fs vfs.FS, be tupled.Backend, rng *rand.Rand) *tupled.Options {
	vac := time.Duration(1+rng.IntN(20)) * time.Millisecond
	if rng.IntN(4) == 0 {
		vac = -1
	}
	return &tupled.Options{
		FS: fs, Backend: be, DeadlockTimeout: 20 * time.Millisecond,
		VacuumInterval: vac, CacheRows: 4 + rng.IntN(64),
		CheckpointInterval: time.Hour, // the workload checkpoints itself
	}
}

func ReopenOpts(fs vfs.FS, be tupled.Backend) *tupled.Options {
	return &tupled.Options{FS: fs, Backend: be, VacuumInterval: -1, CheckpointInterval: time.Hour}
}

// VerifyClone opens a crash image and checks it against the ledger.
func VerifyClone(t testing.TB, clone vfs.FS, dir string, be tupled.Backend, s Snapshot, what string) {
	t.Helper()
	db, err := tupled.Open(dir, ReopenOpts(clone, be))
	require.NoError(t, err, "%s: reopen after crash", what)
	defer func() { require.NoError(t, db.Close(), what) }()
	CheckRecovered(t, db, s, what)
}

func randomCloneCfg(rng *rand.Rand) vfs.CrashCloneCfg {
	cfg := vfs.CrashCloneCfg{RNG: rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))}
	if rng.IntN(2) == 0 {
		cfg.UnsyncedDataPercent = rng.IntN(101)
	}
	return cfg
}

// TestCrashRandomPoints: crash points at random moments of the concurrent
// workload (transfers, kv inserts/updates/deletes, FOR SHARE / FOR KEY SHARE
// lockers, key-share multixacts beside updaters, checkpoints, vacuum), on
// the pebble backend. Each run is one database crashed (cloned) many times;
// each clone is reopened and checked while the workload continues.
func TestCrashRandomPoints(t *testing.T) {
	seed := CrashSeed(t)
	total := *flagCrashPoints
	if testing.Short() && raceEnabled {
		total /= 4
	}
	const perRun = 40
	points := 0
	start := time.Now()
	for run := 0; points < total; run++ {
		rng := rand.New(rand.NewPCG(seed, uint64(run)))
		n := min(perRun, total-points)
		crashRun(t, seed, run, rng, n)
		points += n
		if t.Failed() {
			return
		}
	}
	t.Logf("%d crash points in %v", points, time.Since(start))
}

func crashRun(t *testing.T, seed uint64, run int, rng *rand.Rand, points int) {
	fs := vfs.NewCrashableMem()
	const dir = "db"
	db, err := tupled.Open(dir, CrashOpts(fs, tupled.Pebble, rng))
	require.NoError(t, err)
	SetupTables(t, db)
	l := NewLedger()
	l.SetInitial()
	w := &Workload{DB: db, L: l, Seed: rng.Uint64(), CkptEvery: time.Duration(1+rng.IntN(30)) * time.Millisecond}
	stop := w.Run(context.Background(), 3, 2, 2, 1)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
		db.Close()
	}()
	for p := 0; p < points && !t.Failed(); p++ {
		time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond)
		cfg := randomCloneCfg(rng)
		var clone *vfs.MemFS
		s := l.CrashPoint(func() { clone = fs.CrashClone(cfg) })
		what := fmt.Sprintf("seed %d run %d point %d (unsynced %d%%)", seed, run, p, cfg.UnsyncedDataPercent)
		VerifyClone(t, clone, dir, tupled.Pebble, s, what)
	}
	stop()
	stopped = true
	require.NoError(t, w.Err(), "seed %d run %d: workload", seed, run)
	require.Positive(t, l.NAcked, "seed %d run %d: the workload committed nothing", seed, run)
	require.NoError(t, db.Close())
}

// hookFS wraps a vfs.FS and calls after() right after every mutating
// operation on a file or directory under the database: each Write, WriteAt,
// Sync/SyncData/SyncTo (files and directories), Create, Rename, Remove.
type hookFS struct {
	vfs.FS
	after func(op string)
}

func (h *hookFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, h: h, name: name}, nil
}

func (h *hookFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := h.FS.Create(name, c)
	if err == nil {
		h.after("create " + name)
	}
	return h.wrap(name, f, err)
}

func (h *hookFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := h.FS.OpenReadWrite(name, c, opts...)
	return h.wrap(name, f, err)
}

func (h *hookFS) OpenDir(name string) (vfs.File, error) {
	f, err := h.FS.OpenDir(name)
	return h.wrap(name, f, err)
}

func (h *hookFS) ReuseForWrite(old, new string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := h.FS.ReuseForWrite(old, new, c)
	if err == nil {
		h.after("reuse " + new)
	}
	return h.wrap(new, f, err)
}

func (h *hookFS) Rename(old, new string) error {
	err := h.FS.Rename(old, new)
	if err == nil {
		h.after("rename " + new)
	}
	return err
}

func (h *hookFS) Remove(name string) error {
	err := h.FS.Remove(name)
	if err == nil {
		h.after("remove " + name)
	}
	return err
}

type hookFile struct {
	vfs.File
	h    *hookFS
	name string
}

func (f *hookFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.h.after("write " + f.name)
	return n, err
}

func (f *hookFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.h.after("writeat " + f.name)
	return n, err
}

func (f *hookFile) Sync() error {
	err := f.File.Sync()
	f.h.after("sync " + f.name)
	return err
}

func (f *hookFile) SyncData() error {
	err := f.File.SyncData()
	f.h.after("syncdata " + f.name)
	return err
}

func (f *hookFile) SyncTo(length int64) (bool, error) {
	full, err := f.File.SyncTo(length)
	f.h.after("syncto " + f.name)
	return full, err
}

// TestCrashAtEveryWrite: a short concurrent run with a crash point right
// after each write, fsync, create, rename and remove of any file (the WAL's
// segments and directory, and pebble's files written by checkpoints), both
// with unsynced data dropped and with a random part of it kept.
func TestCrashAtEveryWrite(t *testing.T) {
	seed := CrashSeed(t)
	limit := *flagCrashWrites
	if testing.Short() && raceEnabled {
		limit /= 3
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	mem := vfs.NewCrashableMem()
	var (
		armed  atomic.Bool
		l      = NewLedger()
		mu     sync.Mutex // serializes crash points
		n      int
		ops    = map[string]int{}
		done   = make(chan struct{})
		failed atomic.Bool
	)
	closeDone := sync.OnceFunc(func() { close(done) })
	l.SetInitial()
	const dir = "db"
	h := &hookFS{FS: mem}
	h.after = func(op string) {
		if !armed.Load() || failed.Load() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if n >= limit {
			return
		}
		p := n
		n++
		cfg := vfs.CrashCloneCfg{}
		if p%2 == 1 {
			cfg = randomCloneCfg(rng)
		}
		var clone *vfs.MemFS
		s := l.CrashPoint(func() { clone = mem.CrashClone(cfg) })
		kind, _, _ := strings.Cut(op, " ")
		ops[kind]++
		what := fmt.Sprintf("seed %d write point %d after %s (unsynced %d%%)", seed, p, op, cfg.UnsyncedDataPercent)
		// Verify on this goroutine: whoever wrote waits, which is what a
		// crash would do to it anyway. t.FailNow is not allowed off the
		// test goroutine, so failures are recorded with a non-fatal check.
		ok := t.Run(fmt.Sprintf("point%d", p), func(t *testing.T) { VerifyClone(t, clone, dir, tupled.Pebble, s, what) })
		if !ok {
			failed.Store(true)
		}
		if n == limit || !ok {
			closeDone()
		}
	}
	opts := CrashOpts(h, tupled.Pebble, rng)
	db, err := tupled.Open(dir, opts)
	require.NoError(t, err)
	SetupTables(t, db)
	w := &Workload{DB: db, L: l, Seed: seed, CkptEvery: 5 * time.Millisecond}
	armed.Store(true)
	stop := w.Run(context.Background(), 2, 1, 1, 1)
	select {
	case <-done:
	case <-time.After(60 * time.Second):
	}
	stop()
	armed.Store(false)
	require.NoError(t, w.Err(), "seed %d: workload", seed)
	require.NoError(t, db.Close())
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d crash points (%v), %d commits acknowledged", n, ops, l.NAcked)
	if failed.Load() {
		return
	}
	require.Equal(t, limit, n, "seed %d: the run ended before reaching every crash point", seed)
}

// TestCheckpointDuringCommitKeepsIt: a checkpoint taken while a commit's
// record is appended but not yet durable (so the transaction is not in the
// checkpoint's snapshot) must keep that record for replay. It used to set
// the redo point to the LSN just past the record, so replay skipped it and
// the acknowledged commit vanished after a crash (found by
// TestCrashAtEveryWrite).
func TestCheckpointDuringCommitKeepsIt(t *testing.T) {
	mem := vfs.NewCrashableMem()
	var armed atomic.Bool
	reached, release := make(chan struct{}), make(chan struct{})
	h := &hookFS{FS: mem}
	h.after = func(op string) {
		if strings.HasPrefix(op, "syncdata db/wal/") && armed.CompareAndSwap(true, false) {
			close(reached)
			<-release
		}
	}
	db, err := tupled.Open("db", &tupled.Options{FS: h, VacuumInterval: -1, CheckpointInterval: time.Hour})
	require.NoError(t, err)
	defer db.Close()
	SetupTables(t, db)
	armed.Store(true)
	done := async(func() error {
		return db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Insert(bg, KVTable, []byte("x026"), []byte("v")) })
	})
	<-reached
	require.NoError(t, db.Checkpoint())
	close(release)
	require.NoError(t, <-done)
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	db2, err := tupled.Open("db", ReopenOpts(clone, tupled.Pebble))
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	require.Equal(t, KState{true, "v"}, ReadState(t, db2)[LKey(KVTable, "x026")])
}

// TestOpenSyncsEveryCreatedDirectory: Open of a path whose ancestors do not
// exist yet must fsync the parent of every directory it creates, or a crash
// loses the whole database, acknowledged commits included. It used to sync
// only dir's parent (found by TestFaults/bbolt, whose WAL lives under a
// nested temp path of a MemFS).
func TestOpenSyncsEveryCreatedDirectory(t *testing.T) {
	// Pebble: all the files are on mem. (With bbolt the data file is on the
	// real disk, so losing the WAL directory would not lose the checkpoint
	// Close writes; TestFaults/bbolt covers that case.)
	mem := vfs.NewCrashableMem()
	const dir = "/x/y/db"
	db, err := tupled.Open(dir, ReopenOpts(mem, tupled.Pebble))
	require.NoError(t, err)
	SetupTables(t, db)
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, db.Close())
	db2, err := tupled.Open(dir, ReopenOpts(clone, tupled.Pebble))
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	require.Equal(t, KState{true, fmt.Sprintf("%d:init", InitBalance)}, ReadState(t, db2)[LKey(BankTable, AcctKey(0))])
}
