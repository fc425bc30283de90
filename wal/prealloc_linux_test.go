package wal

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPreallocatedSegmentsOnDisk runs the log on the real file system with
// Preallocate: every segment file has its full size (and its blocks) from
// its creation, records overwrite its zeros, a sealed segment's zero room
// is no damage, Open neither cuts nor shrinks anything, and every record
// replays after a reopen.
func TestPreallocatedSegmentsOnDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wal")
	const segSize = 8192
	o := Options{Dir: dir, SegmentSize: segSize, Preallocate: true}
	w, err := Open(o)
	require.NoError(t, err)
	probe := filepath.Join(dir, segmentName(0))
	fi, err := os.Stat(probe)
	require.NoError(t, err)
	if fi.Size() != segSize {
		t.Fatalf("first segment is %d bytes, want %d: fallocate failed on this file system (see the log)", fi.Size(), segSize)
	}
	require.GreaterOrEqual(t, fi.Sys().(*syscall.Stat_t).Blocks*512, int64(segSize), "the segment's blocks are allocated")

	all := writeSynced(t, w, 0, 400)
	require.Greater(t, w.Stats().Segments, 3)
	require.NoError(t, w.Close())
	for _, base := range segmentFilesOS(t, dir) {
		fi, err := os.Stat(filepath.Join(dir, segmentName(base)))
		require.NoError(t, err)
		require.Equal(t, int64(segSize), fi.Size(), "segment %d keeps its preallocated size", base)
	}

	w, err = Open(o)
	require.NoError(t, err)
	requireSameEntries(t, all, replayAll(t, w, 0))
	all = append(all, writeSynced(t, w, 400, 460)...)
	require.NoError(t, w.Close())

	// Without the option the same files open as they are, and the log goes on.
	o.Preallocate = false
	w, err = Open(o)
	require.NoError(t, err)
	requireSameEntries(t, all, replayAll(t, w, 0))
	require.NoError(t, w.Close())
}

func segmentFilesOS(t *testing.T, dir string) []LSN {
	t.Helper()
	names, err := os.ReadDir(dir)
	require.NoError(t, err)
	var bases []LSN
	for _, n := range names {
		if b, ok := parseSegmentName(n.Name()); ok {
			bases = append(bases, b)
		}
	}
	return bases
}
