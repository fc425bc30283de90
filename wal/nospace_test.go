package wal

import (
	"context"
	"syscall"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

// TestNoSpaceRetry: under RetryNoSpace a write that fails with ENOSPC (a
// write of records, a short write, or the creation of the next segment)
// voids the records not written — their Syncs fail with ErrNoSpace, for
// ever, and Replay never shows them — and the log goes on by itself once
// space is freed. Records synced before and after are all there, after a
// reopen and after a crash.
func TestNoSpaceRetry(t *testing.T) {
	cases := []struct {
		name    string
		segSize int64
		arm     func(f *faultFS)
		n       int
	}{
		{"write fails", 0, func(f *faultFS) { f.arm(onSegment(syscall.ENOSPC, errorfs.OpFileWriteAt)) }, 3},
		{"short write", 0, func(f *faultFS) { f.short.Store(true) }, 3},
		{"no space for the next segment", 512, func(f *faultFS) { f.arm(onSegment(syscall.ENOSPC, errorfs.OpCreate)) }, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			f := newFaultFS()
			w, err := Open(Options{FS: f, Dir: testDir, SegmentSize: tc.segSize, RetryNoSpace: true})
			require.NoError(t, err)
			acked := appendAll(t, w, testRecords(0, 10, 100))
			require.NoError(t, w.Sync(ctx, acked[len(acked)-1].LSN))

			tc.arm(f)
			lost := appendAll(t, w, testRecords(10, tc.n, 100))
			err = w.Sync(ctx, lost[len(lost)-1].LSN)
			require.ErrorIs(t, err, ErrNoSpace)
			require.ErrorIs(t, err, syscall.ENOSPC)
			require.NotErrorIs(t, err, ErrFatal)
			// Appended while the disk is full: voided as well.
			lost2 := appendAll(t, w, testRecords(100, 2, 100))
			require.ErrorIs(t, w.Sync(ctx, lost2[1].LSN), ErrNoSpace)
			require.NoError(t, w.Sync(ctx, acked[len(acked)-1].LSN), "what was durable stays so")

			// Records that got out before the failure (a rotation sealed
			// them) are durable; the others are void.
			voided := 0
			for _, e := range lost {
				if err := w.Sync(ctx, e.LSN); err == nil {
					acked = append(acked, e)
				} else {
					require.ErrorIs(t, err, ErrNoSpace)
					voided++
				}
			}
			require.NotZero(t, voided)

			f.disarm() // space is freed
			more := appendAll(t, w, testRecords(200, tc.n, 100))
			require.NoError(t, w.Sync(ctx, more[len(more)-1].LSN), "writes resume by themselves")
			for _, e := range append(lost[len(lost)-voided:], lost2...) {
				require.ErrorIs(t, w.Sync(ctx, e.LSN), ErrNoSpace, "a voided record never becomes durable")
			}
			acked = append(acked, more...)
			requireSameEntries(t, acked, replayAll(t, w, 0))
			require.NoError(t, w.Close())
			for _, fs := range []vfs.FS{f.mem.CrashClone(vfs.CrashCloneCfg{}), f.mem} {
				w := openT(t, fs, tc.segSize)
				requireSameEntries(t, acked, replayAll(t, w, 0))
				require.NoError(t, w.Close())
			}
		})
	}
}

// TestNoSpaceFsyncStaysFatal: RetryNoSpace never retries an fsync.
func TestNoSpaceFsyncStaysFatal(t *testing.T) {
	ctx := context.Background()
	f := newFaultFS()
	w, err := Open(Options{FS: f, Dir: testDir, RetryNoSpace: true})
	require.NoError(t, err)
	acked := appendAll(t, w, testRecords(0, 5, 100))
	require.NoError(t, w.Sync(ctx, acked[4].LSN))
	f.arm(onSegment(syscall.ENOSPC, errorfs.OpFileSyncData, errorfs.OpFileSync))
	more := appendAll(t, w, testRecords(5, 3, 100))
	require.ErrorIs(t, w.Sync(ctx, more[2].LSN), ErrFatal)
	f.disarm()
	requireDead(t, w, syscall.ENOSPC, acked[4].LSN)
	requireRecovers(t, f, acked, 0)
}

// TestNoSpaceBoundsQueue: while writes fail for lack of space, Append
// refuses once maxStalled bytes are queued instead of growing for ever.
func TestNoSpaceBoundsQueue(t *testing.T) {
	ctx := context.Background()
	f := newFaultFS()
	w, err := Open(Options{FS: f, Dir: testDir, RetryNoSpace: true})
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Close()) }()
	f.arm(onSegment(syscall.ENOSPC, errorfs.OpFileWriteAt))
	lsn, err := w.Append(Record{Type: 1, Data: make([]byte, 100)})
	require.NoError(t, err)
	require.ErrorIs(t, w.Sync(ctx, lsn), ErrNoSpace)
	big := Record{Type: 1, Data: make([]byte, 64<<10)}
	refused := false
	for i := 0; i < 2*maxStalled/len(big.Data) && !refused; i++ {
		_, err := w.Append(big)
		if err != nil {
			require.ErrorIs(t, err, ErrNoSpace)
			refused = true
		}
	}
	require.True(t, refused, "Append queued more than maxStalled bytes on a full disk")
	f.disarm()
	// The refusal kicked the writer: once it wrote the queue, appends go on.
	// A record appended while the writer's last failing write was still in
	// flight (it failed before the disarm) is voided with that round, as
	// stall documents, so the first append may be refused or voided; a
	// later one becomes durable.
	require.Eventually(t, func() bool {
		last, err := w.Append(Record{Type: 2, Data: []byte("after")})
		if err != nil {
			require.ErrorIs(t, err, ErrNoSpace)
			return false
		}
		if err := w.Sync(ctx, last); err != nil {
			require.ErrorIs(t, err, ErrNoSpace)
			return false
		}
		return true
	}, 10e9, 1e6)
}
