package wal

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

func readFileT(t testing.TB, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	require.NoError(t, err)
	defer f.Close()
	data, err := io.ReadAll(f)
	require.NoError(t, err)
	return data
}

func writeFileT(t testing.TB, fs vfs.FS, name string, data []byte) {
	t.Helper()
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.WriteAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
}

// fileSnapshot is every file of the test directory and its contents.
func fileSnapshot(t testing.TB, fs vfs.FS) map[string][]byte {
	t.Helper()
	names, err := fs.List(testDir)
	require.NoError(t, err)
	m := map[string][]byte{}
	for _, n := range names {
		if n == lockName {
			continue
		}
		m[n] = readFileT(t, fs, fs.PathJoin(testDir, n))
	}
	return m
}

// builtLog is a closed log of several segments, each record synced on its
// own (so later records vouch for earlier ones).
type builtLog struct {
	fs      *vfs.MemFS
	entries []entry
	bases   []LSN
}

const tornSegSize = 2048

func buildLog(t *testing.T, n int) builtLog {
	t.Helper()
	fs := vfs.NewMem()
	w := openT(t, fs, tornSegSize)
	var entries []entry
	for i := 0; i < n; i++ {
		e := appendAll(t, w, []Record{testRecord(i, 120)})
		require.NoError(t, w.Sync(context.Background(), e[0].LSN))
		entries = append(entries, e...)
	}
	require.NoError(t, w.Close())
	return builtLog{fs: fs, entries: entries, bases: segmentFiles(t, fs)}
}

func (b builtLog) lastSeg() (LSN, string) {
	base := b.bases[len(b.bases)-1]
	return base, testDir + "/" + segmentName(base)
}

// start is the file offset of entry i's header in its segment, base its segment.
func (b builtLog) start(i int) (base LSN, off int64) {
	e := b.entries[i]
	s := e.LSN - LSN(recHeaderSize+len(e.Rec.Data))
	for j := len(b.bases) - 1; j >= 0; j-- {
		if b.bases[j] <= s {
			return b.bases[j], int64(s - b.bases[j])
		}
	}
	panic("no segment")
}

func TestTornTailIsCut(t *testing.T) {
	const n = 120
	next := testRecord(n, 120)
	cases := []struct {
		name string
		// damage changes the last segment's contents; it returns how many
		// of the n records must survive.
		damage func(b builtLog, data []byte, base LSN) ([]byte, int)
	}{
		{"partial header", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			rec := appendRecord(nil, base+LSN(len(data)), b.entries[n-1].LSN, next)
			return append(data, rec[:recHeaderSize/2]...), n
		}},
		{"partial payload", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			rec := appendRecord(nil, base+LSN(len(data)), b.entries[n-1].LSN, next)
			return append(data, rec[:len(rec)-3]...), n
		}},
		{"flipped CRC byte", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			_, off := b.start(n - 1)
			data[off+1] ^= 0x40
			return data, n - 1
		}},
		{"flipped payload byte", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			_, off := b.start(n - 1)
			data[off+recHeaderSize+5] ^= 0x01
			return data, n - 1
		}},
		{"zero fill after the end", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			return append(data, make([]byte, 4096)...), n
		}},
		{"last record zeroed", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			_, off := b.start(n - 1)
			clear(data[off:])
			return data, n - 1
		}},
		{"stale record from an earlier use of the file", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			// A perfectly valid record, CRC and all, but framed for another
			// position: what a recycled or preallocated file would hold.
			rec := appendRecord(nil, base+LSN(len(data))-64, 0, next)
			return append(data, rec...), n
		}},
		{"garbage", func(b builtLog, data []byte, base LSN) ([]byte, int) {
			return append(data, bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 100)...), n
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := buildLog(t, n)
			base, name := b.lastSeg()
			data, keep := tc.damage(b, readFileT(t, b.fs, name), base)
			writeFileT(t, b.fs, name, data)
			checkCut(t, b, keep)
		})
	}

	// A segment whose creation was torn: its header is partial or missing.
	for _, size := range []int{0, 10, segHeaderSize - 1} {
		t.Run(fmt.Sprintf("torn new segment header of %d bytes", size), func(t *testing.T) {
			b := buildLog(t, n)
			base, name := b.lastSeg()
			next := base + LSN(len(readFileT(t, b.fs, name)))
			writeFileT(t, b.fs, testDir+"/"+segmentName(next), encodeSegmentHeader(next)[:size])
			b.bases = append(b.bases, next)
			checkCut(t, b, n)
			require.Equal(t, []LSN(b.bases), segmentFiles(t, b.fs), "the torn segment gets a fresh header")
		})
	}
}

// checkCut opens a damaged log and checks that exactly keep records
// survive, the file was cut to them, and the log goes on cleanly.
func checkCut(t *testing.T, b builtLog, keep int) {
	t.Helper()
	w := openT(t, b.fs, tornSegSize)
	requireSameEntries(t, b.entries[:keep], replayAll(t, w, 0))
	end := w.EndLSN()
	base, name := b.lastSeg()
	if want := b.entries[keep-1].LSN; want > base {
		require.Equal(t, want, end)
	} else {
		require.Equal(t, base+segHeaderSize, end, "a segment without records ends after its header")
	}
	// Zeros past the end are free room (a preallocated segment's), left in
	// place; anything else of the torn tail is gone from the file.
	data := readFileT(t, b.fs, name)
	require.GreaterOrEqual(t, len(data), int(end-base))
	require.True(t, allZero(data[end-base:]), "the torn tail is gone from the file")
	names, err := b.fs.List(testDir)
	require.NoError(t, err)
	for _, n := range names {
		require.NotContains(t, n, tmpSuffix)
	}

	// New records go where the cut was; nothing of the old tail comes back.
	more := appendAll(t, w, []Record{testRecord(1000, 120), testRecord(1001, 10)})
	require.NoError(t, w.Sync(context.Background(), more[1].LSN))
	require.NoError(t, w.Close())
	w = openT(t, b.fs, tornSegSize)
	defer w.Close()
	requireSameEntries(t, append(append([]entry{}, b.entries[:keep]...), more...), replayAll(t, w, 0))
}

func TestMidLogCorruptionIsAnError(t *testing.T) {
	const n = 120
	cases := []struct {
		name   string
		damage func(t *testing.T, b builtLog)
	}{
		{"flipped byte in an early segment", func(t *testing.T, b builtLog) {
			base, off := b.start(3)
			name := testDir + "/" + segmentName(base)
			data := readFileT(t, b.fs, name)
			data[off+recHeaderSize] ^= 0x80
			writeFileT(t, b.fs, name, data)
		}},
		{"zeroed record in a middle segment", func(t *testing.T, b builtLog) {
			base, off := b.start(n / 2)
			require.NotEqual(t, b.bases[len(b.bases)-1], base)
			name := testDir + "/" + segmentName(base)
			data := readFileT(t, b.fs, name)
			clear(data[off : off+recHeaderSize])
			writeFileT(t, b.fs, name, data)
		}},
		{"bad header of an early segment", func(t *testing.T, b builtLog) {
			name := testDir + "/" + segmentName(b.bases[1])
			data := readFileT(t, b.fs, name)
			data[0] = 'X'
			writeFileT(t, b.fs, name, data)
		}},
		{"trailing bytes in a sealed segment", func(t *testing.T, b builtLog) {
			name := testDir + "/" + segmentName(b.bases[0])
			writeFileT(t, b.fs, name, append(readFileT(t, b.fs, name), 0, 0, 7, 0))
		}},
		{"sealed segment's last record zeroed", func(t *testing.T, b builtLog) {
			// Zeros after the records are a preallocated segment's room,
			// but the successor still starts where the record ended.
			name := testDir + "/" + segmentName(b.bases[1])
			data := readFileT(t, b.fs, name)
			base, off := b.start(0)
			for i := range b.entries {
				if bb, o := b.start(i); bb == b.bases[1] {
					base, off = bb, o
				}
			}
			require.Equal(t, b.bases[1], base)
			clear(data[off:])
			writeFileT(t, b.fs, name, data)
		}},
		{"missing segment", func(t *testing.T, b builtLog) {
			require.NoError(t, b.fs.Remove(testDir+"/"+segmentName(b.bases[2])))
		}},
		{"damage in the last segment before records synced after it", func(t *testing.T, b builtLog) {
			// Each record was synced before the next was appended, so the
			// last record vouches that this one was durable.
			base, off := b.start(n - 3)
			require.Equal(t, b.bases[len(b.bases)-1], base, "test needs the record in the last segment")
			name := testDir + "/" + segmentName(base)
			data := readFileT(t, b.fs, name)
			data[off+recHeaderSize+2] ^= 0x10
			writeFileT(t, b.fs, name, data)
		}},
		{"last segment header damaged under durable records", func(t *testing.T, b builtLog) {
			base, _ := b.lastSeg()
			name := testDir + "/" + segmentName(base)
			data := readFileT(t, b.fs, name)
			require.Greater(t, len(data), segHeaderSize+recHeaderSize, "test needs records in the last segment")
			data[20] ^= 0x01
			writeFileT(t, b.fs, name, data)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := buildLog(t, n)
			require.Greater(t, len(b.bases), 4)
			tc.damage(t, b)
			before := fileSnapshot(t, b.fs)
			_, err := Open(Options{FS: b.fs, Dir: testDir, SegmentSize: tornSegSize})
			require.ErrorIs(t, err, ErrCorrupt)
			t.Log(err)
			require.Equal(t, before, fileSnapshot(t, b.fs), "a refused Open changes nothing")
			// The directory is not left locked.
			_, err = Open(Options{FS: b.fs, Dir: testDir, SegmentSize: tornSegSize})
			require.ErrorIs(t, err, ErrCorrupt)
		})
	}
}

// Damage to records that no later record vouches for is indistinguishable
// from a torn write of unsynced data: it is cut like one.
func TestUnvouchedDamageInLastSegmentIsCut(t *testing.T) {
	fs := vfs.NewMem()
	w := openT(t, fs, 0)
	first := appendAll(t, w, testRecords(0, 10, 100))
	require.NoError(t, w.Sync(context.Background(), first[9].LSN))
	// One batch, one Sync: none of these records says another one of them
	// was durable.
	batch := appendAll(t, w, testRecords(10, 10, 100))
	require.NoError(t, w.Close())
	name := testDir + "/" + segmentName(0)
	data := readFileT(t, fs, name)
	off := int64(batch[2].LSN) - int64(len(batch[2].Rec.Data)) - recHeaderSize
	data[off+recHeaderSize] ^= 0xff
	writeFileT(t, fs, name, data)

	w = openT(t, fs, 0)
	defer w.Close()
	requireSameEntries(t, append(first, batch[:2]...), replayAll(t, w, 0))
}

// Replay checks every record it hands out: damage after Open is reported.
func TestReplayDetectsLaterDamage(t *testing.T) {
	fs := vfs.NewMem()
	w := openT(t, fs, 0)
	defer w.Close()
	es := appendAll(t, w, testRecords(0, 20, 100))
	require.NoError(t, w.Sync(context.Background(), es[19].LSN))
	name := testDir + "/" + segmentName(0)
	data := readFileT(t, fs, name)
	off := int64(es[5].LSN) - 3
	data[off] ^= 1
	f, err := fs.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.WriteAt(data[off:off+1], off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	n := 0
	err = w.Replay(0, func(LSN, Record) error { n++; return nil })
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, 5, n, "the records before the damage were delivered")
	// Records wholly before from are skipped without their CRC, but the
	// chain of headers is still checked.
	require.NoError(t, w.Replay(es[5].LSN, func(LSN, Record) error { return nil }))
}
