package wal

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// slowSyncFS is a MemFS whose data fsyncs take d, like a disk's.
func slowSyncFS(d time.Duration) vfs.FS {
	return errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSyncData {
			time.Sleep(d)
		}
		return nil
	}))
}

// commitConcurrently runs commits commits (Append of one record, then Sync
// of its LSN) from writers goroutines and returns the fsyncs they caused.
func commitConcurrently(t testing.TB, w *WAL, writers, commits int) uint64 {
	before := w.Stats().Fsyncs
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	rec := Record{Type: 1, Data: make([]byte, 100)}
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(commits) {
				lsn, err := w.Append(rec)
				if err == nil {
					err = w.Sync(context.Background(), lsn)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	return w.Stats().Fsyncs - before
}

func TestGroupCommit(t *testing.T) {
	const commits = 600
	// One writer: every commit needs its own fsync.
	w := openT(t, slowSyncFS(200*time.Microsecond), 0)
	fsyncs := commitConcurrently(t, w, 1, 100)
	require.Equal(t, uint64(100), fsyncs)
	require.NoError(t, w.Close())

	// Thirty writers share them.
	w = openT(t, slowSyncFS(time.Millisecond), 0)
	defer w.Close()
	fsyncs = commitConcurrently(t, w, 30, commits)
	st := w.Stats()
	t.Logf("30 writers: %d commits, %d fsyncs (%.3f fsyncs/commit), %d Sync calls waited", commits, fsyncs, float64(fsyncs)/commits, st.SyncWaits)
	require.Less(t, fsyncs, uint64(commits))
	require.Less(t, fsyncs*4, uint64(commits), "group commit must share fsyncs among concurrent committers")
	require.Equal(t, uint64(commits), st.SyncCalls)
	require.Equal(t, w.EndLSN(), w.FlushedLSN())
	require.Len(t, replayAll(t, w, 0), commits)
}

// BenchmarkGroupCommit reports fsyncs per commit at 1, 8 and 30 concurrent
// committers, on the real disk (b.TempDir) and on a MemFS whose fsync
// takes 1ms.
//
//	go test ./wal -run '^$' -bench GroupCommit -benchtime 2000x
func BenchmarkGroupCommit(b *testing.B) {
	for _, fsName := range []string{"disk", "mem-1ms-fsync"} {
		for _, writers := range []int{1, 8, 30} {
			b.Run(fmt.Sprintf("fs=%s/writers=%d", fsName, writers), func(b *testing.B) {
				opts := Options{FS: vfs.Default, Dir: b.TempDir() + "/wal"}
				if fsName != "disk" {
					opts = Options{FS: slowSyncFS(time.Millisecond), Dir: testDir}
				}
				w, err := Open(opts)
				require.NoError(b, err)
				defer w.Close()
				b.ResetTimer()
				start := time.Now()
				fsyncs := commitConcurrently(b, w, writers, b.N)
				elapsed := time.Since(start)
				b.StopTimer()
				b.ReportMetric(float64(fsyncs)/float64(b.N), "fsyncs/commit")
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "commits/s")
			})
		}
	}
}

func TestSyncContextCancelled(t *testing.T) {
	f := newFaultFS()
	w := openT(t, f, 0)
	defer w.Close()
	durable, err := w.Append(testRecord(0, 50))
	require.NoError(t, err)
	require.NoError(t, w.Sync(context.Background(), durable))

	// An fsync that hangs until released.
	release := make(chan struct{})
	f.arm(func(op errorfs.Op) error {
		if op.Kind == errorfs.OpFileSyncData {
			<-release
		}
		return nil
	})
	lsn, err := w.Append(testRecord(1, 50))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	require.ErrorIs(t, w.Sync(ctx, lsn), context.Canceled)
	require.Less(t, w.FlushedLSN(), lsn, "the fsync has not finished")

	tctx, tcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer tcancel()
	require.ErrorIs(t, w.Sync(tctx, lsn), context.DeadlineExceeded)

	// An already-cancelled context: nil for what is durable, ctx.Err()
	// without queueing for what is not.
	waits := w.Stats().SyncWaits
	require.NoError(t, w.Sync(ctx, durable))
	require.ErrorIs(t, w.Sync(ctx, lsn), context.Canceled)
	require.Equal(t, waits, w.Stats().SyncWaits)

	// The writer goes on: once the disk answers, the record is durable
	// without anyone having waited for it.
	close(release)
	require.Eventually(t, func() bool { return w.FlushedLSN() >= lsn }, 5*time.Second, time.Millisecond)
	f.disarm()
	require.NoError(t, w.Sync(context.Background(), lsn))
}
