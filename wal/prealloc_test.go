package wal

import (
	"bytes"
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// writeSynced appends records from..to-1 (testRecord), each synced.
func writeSynced(t *testing.T, w *WAL, from, to int) []entry {
	t.Helper()
	var out []entry
	for i := from; i < to; i++ {
		e := appendAll(t, w, []Record{testRecord(i, 120)})
		require.NoError(t, w.Sync(context.Background(), e[0].LSN))
		out = append(out, e...)
	}
	return out
}

// TestPreallocateBetweenOpens switches Preallocate between opens: a log
// written without it gets its last segment preallocated at the next Open,
// and one written with it opens without it; records survive every switch.
func TestPreallocateBetweenOpens(t *testing.T) {
	fs := vfs.NewMem()
	const segSize = 2048
	var all []entry
	for round, prealloc := range []bool{false, true, false, true, true} {
		w, err := Open(Options{FS: fs, Dir: testDir, SegmentSize: segSize, Preallocate: prealloc, zeroFill: true})
		require.NoError(t, err)
		requireSameEntries(t, all, replayAll(t, w, 0))
		all = append(all, writeSynced(t, w, round*30, round*30+30)...)
		last := w.segs[len(w.segs)-1]
		require.NoError(t, w.Close())
		size := len(readFileT(t, fs, testDir+"/"+segmentName(last)))
		if prealloc {
			require.Equal(t, segSize, size, "round %d: the last segment has its room", round)
		}
	}
	w, err := Open(Options{FS: fs, Dir: testDir, SegmentSize: segSize})
	require.NoError(t, err)
	defer w.Close()
	requireSameEntries(t, all, replayAll(t, w, 0))
}

// TestPreallocatedRoomIsNotDamage: a torn record in a preallocated
// segment's room is cut and the room given back; damage inside a sealed
// segment followed by zeros is still corruption when its successor
// starts elsewhere (TestMidLogCorruptionIsAnError covers the rest).
func TestPreallocatedRoomIsNotDamage(t *testing.T) {
	fs := vfs.NewMem()
	const segSize = 2048
	o := Options{FS: fs, Dir: testDir, SegmentSize: segSize, Preallocate: true, zeroFill: true}
	w, err := Open(o)
	require.NoError(t, err)
	all := writeSynced(t, w, 0, 50)
	require.NoError(t, w.Close())

	bases := segmentFiles(t, fs)
	last := bases[len(bases)-1]
	name := testDir + "/" + segmentName(last)
	data := readFileT(t, fs, name)
	require.Len(t, data, segSize)
	end := int(all[len(all)-1].LSN - last)
	torn := appendRecord(nil, all[len(all)-1].LSN, all[len(all)-1].LSN, testRecord(999, 120))
	copy(data[end:], torn[:len(torn)-2])
	writeFileT(t, fs, name, data)

	w, err = Open(o)
	require.NoError(t, err)
	requireSameEntries(t, all, replayAll(t, w, 0))
	require.Equal(t, all[len(all)-1].LSN, w.EndLSN())
	require.NoError(t, w.Close())
	data = readFileT(t, fs, name)
	require.Len(t, data, segSize, "the cut segment is preallocated again")
	require.True(t, allZero(data[end:]), "the torn record is gone")
}

func TestAllZero(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 3 * 4096, 3*4096 + 5} {
		b := make([]byte, n)
		require.True(t, allZero(b), n)
		for _, at := range []int{0, n / 2, n - 1} {
			if n == 0 {
				continue
			}
			b[at] = 1
			require.False(t, allZero(b), "n=%d at=%d", n, at)
			b[at] = 0
		}
	}
}

// TestPreallocationGrowsByStep: a segment is preallocated a step ahead of
// its last record, not whole (Open reads a segment's room to check it):
// its file is never shorter than its records nor longer than a step past
// them, and every step leaves the records intact.
func TestPreallocationGrowsByStep(t *testing.T) {
	fs := vfs.NewMem()
	const segSize, step = 64 << 10, 4096
	o := Options{FS: fs, Dir: testDir, SegmentSize: segSize, Preallocate: true, zeroFill: true, preallocStep: step}
	w, err := Open(o)
	require.NoError(t, err)
	var all []entry
	sizes := map[int]bool{}
	for i := 0; i < 1500; i++ {
		all = append(all, writeSynced(t, w, i, i+1)...)
		last := w.segs[len(w.segs)-1]
		size := len(readFileT(t, fs, testDir+"/"+segmentName(last)))
		end := int(all[len(all)-1].LSN - last)
		require.GreaterOrEqual(t, size, end)
		require.LessOrEqual(t, size, min(segSize, end+step+recHeaderSize+120), "record %d", i)
		sizes[size] = true
	}
	require.Greater(t, w.Stats().Segments, 1)
	require.Greater(t, len(sizes), 10, "the file grew in steps")
	require.NoError(t, w.Close())
	w, err = Open(o)
	require.NoError(t, err)
	defer w.Close()
	requireSameEntries(t, all, replayAll(t, w, 0))
}

// TestOpenStreamsIntactSegments: Open reads an intact segment as a stream,
// not whole, so that reopening a log of many megabytes leaves no copy of
// it behind as garbage; every record is still there, with or without the
// preallocated room after them.
func TestOpenStreamsIntactSegments(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		fs := vfs.NewMem()
		o := Options{FS: fs, Dir: testDir, SegmentSize: 64 << 20, Preallocate: prealloc, zeroFill: true}
		w, err := Open(o)
		require.NoError(t, err)
		var all []entry
		for i := 0; i < 200; i++ {
			all = append(all, appendAll(t, w, []Record{{Type: 1, Data: bytes.Repeat([]byte{byte(i)}, 64<<10)}})...)
		}
		require.NoError(t, w.Sync(context.Background(), all[len(all)-1].LSN))
		require.NoError(t, w.Close())
		size := len(readFileT(t, fs, testDir+"/"+segmentName(0)))
		require.Greater(t, size, 12<<20, "prealloc=%v", prealloc)

		before := totalAlloc()
		w, err = Open(o)
		require.NoError(t, err)
		got := totalAlloc() - before
		require.Less(t, got, uint64(size/4), "prealloc=%v: Open allocated %d bytes for a %d-byte segment", prealloc, got, size)
		requireSameEntries(t, all, replayAll(t, w, 0))
		require.Equal(t, all[len(all)-1].LSN, w.EndLSN())
		require.NoError(t, w.Close())
	}
}
