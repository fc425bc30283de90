package crash_test

// Suite 1 on the bbolt backend. bbolt does its own file I/O, so its file
// cannot be on a vfs.MemFS; the database's WAL is (Options.FS), at the same
// absolute path as bbolt's directory on the real disk. A crash image is a
// CrashClone of the MemFS plus a copy of bbolt's file, and that is sound
// only under two conditions this test enforces:
//
//   - bbolt's file is written by recovery (at Open, before the workload)
//     and by checkpoints only, and every bbolt commit is fsynced before it
//     returns; with background checkpoints out of the way
//     (CheckpointInterval 1h; the 64 MiB WAL trigger is out of reach of a
//     short run) and the workload's checkpoints serialized with the crash
//     points by ckptMu, no bbolt write is in progress at a crash point, so
//     the file's bytes are exactly what a crash would leave (all synced).
//   - The WAL clone and the file copy are taken at one instant: both under
//     ckptMu and the frozen ledger, so no checkpoint (which writes bbolt,
//     then removes WAL segments) falls between them.
//
// A crash in the middle of a bbolt commit is not simulated here; that is
// bbolt's own atomicity, covered by the process kills of kill_test.go (and
// storage's kill test), which crash at any moment.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/tests/utils"
)

func TestCrashRandomPointsBbolt(t *testing.T) {
	seed := utils.CrashSeed(t)
	total := *flagCrashPoints / 4
	if testing.Short() && raceEnabled {
		total /= 4
	}
	const perRun = 25
	points := 0
	start := time.Now()
	for run := 0; points < total && !t.Failed(); run++ {
		rng := rand.New(rand.NewPCG(seed, 1000+uint64(run)))
		n := min(perRun, total-points)
		crashRunBbolt(t, seed, run, rng, n)
		points += n
	}
	t.Logf("%d crash points in %v", points, time.Since(start))
}

type bboltPoint struct {
	clone *vfs.MemFS
	file  string // copy of bbolt's file, on disk (it is 16 MiB or more)
	s     utils.Snapshot
	what  string
}

func crashRunBbolt(t *testing.T, seed uint64, run int, rng *rand.Rand, points int) {
	mem := vfs.NewCrashableMem()
	dir := filepath.Join(t.TempDir(), "db")
	copies := t.TempDir()
	file := filepath.Join(dir, "data", storage.BboltFile)
	db, err := tupled.Open(dir, utils.CrashOpts(mem, tupled.Bbolt, rng))
	require.NoError(t, err)
	utils.SetupTables(t, db)
	l := utils.NewLedger()
	l.SetInitial()
	var ckptMu sync.Mutex
	w := &utils.Workload{DB: db, L: l, Seed: rng.Uint64(), CkptEvery: time.Duration(1+rng.IntN(20)) * time.Millisecond, CkptMu: &ckptMu}
	stop := w.Run(context.Background(), 3, 2, 2, 1)
	var taken []bboltPoint
	for p := 0; p < points; p++ {
		time.Sleep(time.Duration(rng.IntN(4000)) * time.Microsecond)
		cfg := randomCloneCfg(rng)
		var bp bboltPoint
		ckptMu.Lock()
		bp.file = filepath.Join(copies, fmt.Sprint(p))
		bp.s = l.CrashPoint(func() {
			bp.clone = mem.CrashClone(cfg)
			err = copyFile(bp.file, file)
		})
		ckptMu.Unlock()
		require.NoError(t, err)
		bp.what = fmt.Sprintf("seed %d bbolt run %d point %d (unsynced %d%%)", seed, run, p, cfg.UnsyncedDataPercent)
		taken = append(taken, bp)
	}
	stop()
	require.NoError(t, w.Err(), "seed %d bbolt run %d: workload", seed, run)
	require.Positive(t, l.NAcked, "seed %d bbolt run %d: the workload committed nothing", seed, run)
	require.NoError(t, db.Close())
	for _, bp := range taken {
		require.NoError(t, copyFile(file, bp.file))
		require.NoError(t, os.Remove(bp.file))
		utils.VerifyClone(t, bp.clone, dir, tupled.Bbolt, bp.s, bp.what)
		if t.Failed() {
			return
		}
	}
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
