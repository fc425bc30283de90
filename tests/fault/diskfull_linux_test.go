package fault_test

// The disk-full test on a real file system: a small tmpfs (Linux, as root,
// as in CI). See diskfull_test.go for the others.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/tests/utils"
)

// mountTmpfs mounts a tmpfs of size bytes at a new directory and returns
// it; the test is skipped if mounting is not permitted (not root).
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mnt")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("disk-full test needs to mount a small tmpfs (as root, as in CI): %v", err)
	}
	t.Cleanup(func() { require.NoError(t, syscall.Unmount(dir, 0)) })
	return dir
}

// TestDiskFullTmpfs fills a real (small tmpfs) disk: commits fail with
// 53100 and reads go on; once a ballast file is removed, commits and
// checkpoints work again, and a reopen finds exactly the acknowledged rows.
func TestDiskFullTmpfs(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a tmpfs; runs in the normal tier")
	}
	for _, be := range utils.Backends {
		t.Run(be.Name, func(t *testing.T) {
			// The ballast is freed later: enough for the WAL's queue and a
			// checkpoint of everything the WAL holds (see checkpointSpace).
			mnt := mountTmpfs(t, 96<<20)
			ballast := filepath.Join(mnt, "ballast")
			require.NoError(t, os.WriteFile(ballast, make([]byte, 80<<20), 0o600))
			dir := filepath.Join(mnt, "db")
			opts := &tupled.Options{Backend: be.B, VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1}
			db, err := tupled.Open(dir, opts)
			require.NoError(t, err)
			defer func() { _ = db.Close() }()
			require.NoError(t, db.CreateTable(bg, "t"))
			val := bytes.Repeat([]byte("x"), 64<<10)
			want := map[string]string{}
			failed := 0
			for i := 0; failed < 5; i++ {
				require.Less(t, i, 1000, "the disk never filled")
				k := fmt.Sprintf("k%04d", i)
				err := commitOne(db, "t", k, string(val))
				if err == nil {
					require.Zero(t, failed, "a commit succeeded on a full disk")
					want[k] = string(val)
					continue
				}
				requireDiskFull(t, err, "commit on a full disk")
				failed++
			}
			t.Logf("%d commits acknowledged before the disk filled", len(want))
			require.Equal(t, len(want), len(readAll(t, db, "t")), "reads go on")
			requireDiskFull(t, db.Checkpoint(), "checkpoint on a full disk")

			require.NoError(t, os.Remove(ballast))
			var lastErr error
			resumed := false
			for i := 0; i < 3 && !resumed; i++ { // the first attempts may still find too little space
				lastErr = commitOne(db, "t", "after", "v")
				resumed = lastErr == nil
			}
			require.NoError(t, lastErr, "writes resume once space is freed")
			want["after"] = "v"
			require.NoError(t, db.Checkpoint())
			require.NoError(t, db.Close())

			db2, err := tupled.Open(dir, &tupled.Options{Backend: be.B, VacuumInterval: -1})
			require.NoError(t, err)
			defer func() { require.NoError(t, db2.Close()) }()
			got := readAll(t, db2, "t")
			require.Equal(t, len(want), len(got))
			for k := range want {
				require.Equal(t, want[k], got[k], k)
			}
			require.NoError(t, commitOne(db2, "t", "reopened", "v"))
		})
	}
}
