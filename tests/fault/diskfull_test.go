package fault_test

// Disk full (issue 10, finding 8): with SyncCommit on, a commit that finds
// no space fails with 53100, reads go on, and writes resume by themselves
// once space is freed; with SyncCommit off a failed WAL write fails the
// database, reads included, as PostgreSQL PANICs, so that no one sees an
// acknowledged commit that the reopen will not bring back.

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/tests/utils"
)

func requireDiskFull(t testing.TB, err error, what string) {
	t.Helper()
	require.ErrorIs(t, err, tupled.ErrDiskFull, what)
	require.Equal(t, "53100", tupled.SQLState(err), what)
}

// commitOne inserts key -> val in a transaction of its own.
func commitOne(db *tupled.DB, table, key, val string) error {
	tx, err := db.Begin(bg, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.Insert(bg, table, []byte(key), []byte(val)); err != nil {
		return err
	}
	return tx.Commit()
}

// readAll returns the rows of table as key -> value.
func readAll(t testing.TB, db *tupled.DB, table string) map[string]string {
	t.Helper()
	got := map[string]string{}
	tx, err := db.Begin(bg, &tupled.TxOptions{ReadOnly: true})
	require.NoError(t, err)
	defer tx.Rollback()
	require.NoError(t, tx.Scan(bg, table, tupled.ScanOptions{}, func(k, v []byte) error {
		got[string(k)] = string(v)
		return nil
	}))
	return got
}

// TestDiskFullWAL: the WAL's writes fail with ENOSPC (whole or short).
func TestDiskFullWAL(t *testing.T) {
	for _, be := range utils.Backends {
		for _, short := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/short=%v", be.Name, short), func(t *testing.T) {
				f := newFaultFS()
				dir := "db"
				if be.B == tupled.Bbolt {
					dir = t.TempDir() // see fault_test.go
				}
				opts := &tupled.Options{FS: f, Backend: be.B, VacuumInterval: -1, CheckpointInterval: time.Hour}
				db, err := tupled.Open(dir, opts)
				require.NoError(t, err)
				defer func() { _ = db.Close() }()
				require.NoError(t, db.CreateTable(bg, "t"))
				want := map[string]string{}
				for i := range 10 {
					k := fmt.Sprintf("k%02d", i)
					require.NoError(t, commitOne(db, "t", k, "v"+k))
					want[k] = "v" + k
				}

				if short {
					p := "/wal/"
					f.short.Store(&p)
				} else {
					r := onPath("/wal/", syscall.ENOSPC, faultWriteOps...)
					f.rule.Store(&r)
				}
				for i := 10; i < 20; i++ {
					k := fmt.Sprintf("k%02d", i)
					requireDiskFull(t, commitOne(db, "t", k, "v"+k), "commit on a full disk")
				}
				requireDiskFull(t, db.CreateTable(bg, "u"), "CREATE TABLE on a full disk")
				// Reads go on, and see exactly the acknowledged commits.
				require.Equal(t, want, readAll(t, db, "t"))
				require.NoError(t, db.Checkpoint(), "the backend has space: a checkpoint works")

				f.disarm() // space is freed: writes resume by themselves
				require.NoError(t, commitOne(db, "t", "k20", "vk20"))
				want["k20"] = "vk20"
				require.NoError(t, db.CreateTable(bg, "u"))
				require.Equal(t, want, readAll(t, db, "t"))
				require.NoError(t, db.Close())

				for _, fs := range []vfs.FS{f.mem.CrashClone(vfs.CrashCloneCfg{}), f} {
					db2, err := tupled.Open(dir, utils.ReopenOpts(fs, be.B))
					require.NoError(t, err)
					require.Equal(t, want, readAll(t, db2, "t"), "after reopen: the acknowledged commits, none of the failed ones")
					require.Empty(t, readAll(t, db2, "u"))
					require.NoError(t, db2.Close())
					if be.B == tupled.Bbolt {
						break // one data file on disk: the crash clone already recovered into it
					}
				}
			})
		}
	}
}

// TestDiskFullSyncCommitOff: with SyncCommit off, acknowledged commits may
// not be durable when the WAL fails; the database then refuses every call,
// reads included (58030), even once the disk is back, until it is reopened.
func TestDiskFullSyncCommitOff(t *testing.T) {
	off := false
	f := newFaultFS()
	db, err := tupled.Open("db", &tupled.Options{FS: f, SyncCommit: &off, VacuumInterval: -1, CheckpointInterval: time.Hour})
	require.NoError(t, err)
	defer func() { _ = db.Close() }()
	require.NoError(t, db.CreateTable(bg, "t"))
	for i := range 10 {
		require.NoError(t, commitOne(db, "t", fmt.Sprintf("k%02d", i), "v"))
	}
	require.NoError(t, db.Checkpoint()) // makes them durable
	r := onPath("/wal/", syscall.ENOSPC, faultWriteOps...)
	f.rule.Store(&r)
	// Acknowledged at once; the WAL writer's periodic write then fails.
	require.NoError(t, commitOne(db, "t", "lost?", "v"))
	utils.Eventually(t, "the WAL writer hits the full disk", func() bool { return f.hits.Load() > 0 })
	readFails := func() bool {
		tx, err := db.Begin(bg, nil)
		if err != nil {
			return true
		}
		defer tx.Rollback()
		_, err = tx.Get(bg, "t", []byte("lost?"))
		return err != nil
	}
	utils.Eventually(t, "reads fail once the WAL failed", readFails)
	f.disarm()
	tx, err := db.Begin(bg, nil)
	if err == nil {
		_, err = tx.Get(bg, "t", []byte("k00"))
		tx.Rollback()
	}
	require.ErrorIs(t, err, tupled.ErrIO, "the database stays failed until reopened")
	_ = db.Close()

	db2, err := tupled.Open("db", utils.ReopenOpts(f, tupled.Pebble))
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	got := readAll(t, db2, "t")
	for i := range 10 {
		require.Contains(t, got, fmt.Sprintf("k%02d", i), "commits made durable before the failure survive")
	}
	require.NoError(t, commitOne(db2, "t", "after", "v"))
}

// TestDiskFullCheckpoint: a checkpoint the backend may not have room for
// is refused with 53100 before the backend is touched (a backend that runs
// out of space mid-commit is failed for good); commits go on in the WAL,
// and a later checkpoint, or the reopen after a Close that could not
// checkpoint, writes everything.
func TestDiskFullCheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	avail := func(n uint64) {
		mem.TestingSetDiskUsage(vfs.DiskUsage{AvailBytes: n, TotalBytes: 1 << 40, UsedBytes: 1<<40 - n})
	}
	avail(1 << 20)
	opts := &tupled.Options{FS: mem, VacuumInterval: -1, CheckpointInterval: time.Hour}
	db, err := tupled.Open("db", opts)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	want := map[string]string{}
	for i := range 20 {
		k := fmt.Sprintf("k%02d", i)
		require.NoError(t, commitOne(db, "t", k, k))
		want[k] = k
	}
	requireDiskFull(t, db.Checkpoint(), "checkpoint with too little space")
	require.NoError(t, commitOne(db, "t", "more", "v"), "commits go on")
	want["more"] = "v"
	require.Equal(t, want, readAll(t, db, "t"))
	avail(1 << 30)
	require.NoError(t, db.Checkpoint(), "space is back")
	require.NoError(t, commitOne(db, "t", "last", "v"))
	want["last"] = "v"
	avail(1 << 20)
	requireDiskFull(t, db.Close(), "Close cannot checkpoint")

	avail(1 << 30)
	db2, err := tupled.Open("db", utils.ReopenOpts(mem, tupled.Pebble))
	require.NoError(t, err)
	require.Equal(t, want, readAll(t, db2, "t"), "the WAL kept what the last checkpoint did not write")
	require.NoError(t, db2.Close())
}

// TestDiskFullClose: Close on a disk still full reports 53100 (it could
// not write the voided records of failed commits) and loses nothing
// acknowledged.
func TestDiskFullClose(t *testing.T) {
	f := newFaultFS()
	db, err := tupled.Open("db", &tupled.Options{FS: f, VacuumInterval: -1, CheckpointInterval: time.Hour})
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	want := map[string]string{}
	for i := range 5 {
		k := fmt.Sprintf("k%d", i)
		require.NoError(t, commitOne(db, "t", k, k))
		want[k] = k
	}
	r := onPath("/wal/", syscall.ENOSPC, faultWriteOps...)
	f.rule.Store(&r)
	requireDiskFull(t, commitOne(db, "t", "failed", "v"), "commit on a full disk")
	requireDiskFull(t, db.Close(), "Close on a full disk")
	f.disarm()
	db2, err := tupled.Open("db", utils.ReopenOpts(f, tupled.Pebble))
	require.NoError(t, err)
	require.Equal(t, want, readAll(t, db2, "t"))
	require.NoError(t, db2.Close())
}
