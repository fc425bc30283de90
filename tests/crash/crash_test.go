package crash_test

// Suite 1 of issue 3: simulated crashes of the whole engine. The database
// runs on vfs.NewCrashableMem(); a crash point is fs.CrashClone taken with
// the ledger frozen (see tests/utils/crash.go); the clone is reopened and
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
	"github.com/tupled/tupled/tests/utils"
)

var (
	flagCrashPoints = flag.Int("crash.points", 400, "random crash points of TestCrashRandomPoints (per backend)")
	flagCrashWrites = flag.Int("crash.writes", 150, "crash points of TestCrashAtEveryWrite (one after each file write/sync of a short run)")
)

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
	seed := utils.CrashSeed(t)
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
	db, err := tupled.Open(dir, utils.CrashOpts(fs, tupled.Pebble, rng))
	require.NoError(t, err)
	utils.SetupTables(t, db)
	l := utils.NewLedger()
	l.SetInitial()
	w := &utils.Workload{DB: db, L: l, Seed: rng.Uint64(), CkptEvery: time.Duration(1+rng.IntN(30)) * time.Millisecond}
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
		utils.VerifyClone(t, clone, dir, tupled.Pebble, s, what)
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
	seed := utils.CrashSeed(t)
	limit := *flagCrashWrites
	if testing.Short() && raceEnabled {
		limit /= 3
	}
	rng := rand.New(rand.NewPCG(seed, 99))
	mem := vfs.NewCrashableMem()
	var (
		armed  atomic.Bool
		l      = utils.NewLedger()
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
		ok := t.Run(fmt.Sprintf("point%d", p), func(t *testing.T) { utils.VerifyClone(t, clone, dir, tupled.Pebble, s, what) })
		if !ok {
			failed.Store(true)
		}
		if n == limit || !ok {
			closeDone()
		}
	}
	opts := utils.CrashOpts(h, tupled.Pebble, rng)
	db, err := tupled.Open(dir, opts)
	require.NoError(t, err)
	utils.SetupTables(t, db)
	w := &utils.Workload{DB: db, L: l, Seed: seed, CkptEvery: 5 * time.Millisecond}
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
	utils.SetupTables(t, db)
	armed.Store(true)
	done := utils.Async(func() error {
		return db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Insert(bg, utils.KVTable, []byte("x026"), []byte("v")) })
	})
	<-reached
	require.NoError(t, db.Checkpoint())
	close(release)
	require.NoError(t, <-done)
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	db2, err := tupled.Open("db", utils.ReopenOpts(clone, tupled.Pebble))
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	require.Equal(t, utils.KState{Present: true, Val: "v"}, utils.ReadState(t, db2)[utils.LKey(utils.KVTable, "x026")])
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
	db, err := tupled.Open(dir, utils.ReopenOpts(mem, tupled.Pebble))
	require.NoError(t, err)
	utils.SetupTables(t, db)
	clone := mem.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, db.Close())
	db2, err := tupled.Open(dir, utils.ReopenOpts(clone, tupled.Pebble))
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	require.Equal(t, utils.KState{Present: true, Val: fmt.Sprintf("%d:init", utils.InitBalance)}, utils.ReadState(t, db2)[utils.LKey(utils.BankTable, utils.AcctKey(0))])
}

// TestSimulatedCrashKeepsAcknowledgedCommits (from the root's durable_test.go,
// the first crash test, before the suites above) crashes the whole engine
// (vfs.NewCrashableMem + CrashClone) at random points of a transfer
// workload, reopens the clone and checks every acknowledged commit against
// a ledger: the bank total is conserved and each account holds the value of
// its last acknowledged transfer or of a later one that was in flight.
func TestSimulatedCrashKeepsAcknowledgedCommits(t *testing.T) {
	const accounts, initial = 10, 100
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	for crash := 0; crash < 20; crash++ {
		fs := vfs.NewCrashableMem()
		db, err := tupled.Open("db", &tupled.Options{FS: fs, VacuumInterval: -1})
		require.NoError(t, err)
		require.NoError(t, db.CreateTable(bg, "t"))
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for i := 0; i < accounts; i++ {
				if err := tx.Insert(bg, "t", utils.Key(i), []byte(fmt.Sprint(initial))); err != nil {
					return err
				}
			}
			return nil
		}))
		acked := map[int]int{}
		for i := 0; i < accounts; i++ {
			acked[i] = initial
		}
		steps := rng.IntN(200)
		for s := 0; s < steps; s++ {
			a, b := rng.IntN(accounts), rng.IntN(accounts)
			if a == b {
				continue
			}
			amt := rng.IntN(10)
			err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				if err := tx.Update(bg, "t", utils.Key(a), []byte(fmt.Sprint(acked[a]-amt))); err != nil {
					return err
				}
				return tx.Update(bg, "t", utils.Key(b), []byte(fmt.Sprint(acked[b]+amt)))
			})
			require.NoError(t, err)
			acked[a] -= amt
			acked[b] += amt
			if rng.IntN(50) == 0 {
				require.NoError(t, db.Checkpoint())
			}
		}
		clone := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: rng.IntN(101), RNG: rand.New(rand.NewPCG(seed, uint64(crash)))})
		require.NoError(t, db.Close())
		db2, err := tupled.Open("db", &tupled.Options{FS: clone, VacuumInterval: -1})
		require.NoError(t, err, "seed %d crash %d", seed, crash)
		total := 0
		for i := 0; i < accounts; i++ {
			v, ok := utils.Get(t, db2, string(utils.Key(i)))
			require.True(t, ok)
			var n int
			fmt.Sscan(v, &n)
			require.Equal(t, acked[i], n, "seed %d crash %d account %d", seed, crash, i)
			total += n
		}
		require.Equal(t, accounts*initial, total)
		rl, err := db2.RowLocks(bg, "t")
		require.NoError(t, err)
		require.Empty(t, rl)
		require.NoError(t, db2.Close())
	}
}
