package wal

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// appendAll appends recs one Append per record and returns the entries as
// Replay must report them.
func appendAll(t testing.TB, w *WAL, recs []Record) []entry {
	t.Helper()
	out := make([]entry, 0, len(recs))
	for _, r := range recs {
		lsn, err := w.Append(r)
		require.NoError(t, err)
		out = append(out, entry{lsn, r})
	}
	return out
}

func testRecords(from, n, maxLen int) []Record {
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = testRecord(from+i, maxLen)
	}
	return recs
}

func TestRoundTripAndReopen(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewMem()
	w := openT(t, fs, 0)
	require.Equal(t, LSN(segHeaderSize), w.EndLSN(), "a fresh log ends after the first segment header")
	require.Equal(t, w.EndLSN(), w.FlushedLSN())

	want := appendAll(t, w, testRecords(0, 1000, 300))
	// A batch of records in one Append: LSN of the last.
	batch := testRecords(1000, 5, 300)
	lsn, err := w.Append(batch...)
	require.NoError(t, err)
	end := want[len(want)-1].LSN
	for _, r := range batch {
		end += LSN(recHeaderSize + len(r.Data))
		want = append(want, entry{end, r})
	}
	require.Equal(t, end, lsn)
	require.Equal(t, lsn, w.EndLSN())
	// An empty record is fine.
	lsn, err = w.Append(Record{Type: 9})
	require.NoError(t, err)
	want = append(want, entry{lsn, Record{Type: 9, Data: []byte{}}})

	require.Less(t, w.FlushedLSN(), lsn, "Append alone does not make records durable")
	require.NoError(t, w.Sync(ctx, lsn))
	require.Equal(t, lsn, w.FlushedLSN())
	requireSameEntries(t, want, replayAll(t, w, 0))

	st := w.Stats()
	require.Equal(t, uint64(1002), st.Appends)
	require.Equal(t, uint64(len(want)), st.Records)
	require.Equal(t, uint64(lsn-segHeaderSize), st.Bytes)
	require.Equal(t, 1, st.Segments)
	require.NoError(t, w.Close())

	w = openT(t, fs, 0)
	require.Equal(t, lsn, w.EndLSN())
	require.Equal(t, lsn, w.FlushedLSN())
	requireSameEntries(t, want, replayAll(t, w, 0))
	// Appending continues where the log ended.
	more := appendAll(t, w, testRecords(2000, 10, 300))
	require.Equal(t, lsn+LSN(recHeaderSize+len(more[0].Rec.Data)), more[0].LSN)
	want = append(want, more...)
	require.NoError(t, w.Close())

	w = openT(t, fs, 0)
	defer w.Close()
	requireSameEntries(t, want, replayAll(t, w, 0))
}

func TestManySegments(t *testing.T) {
	const segSize = 1024
	fs := vfs.NewMem()
	w := openT(t, fs, segSize)
	var want []entry
	for i := 0; i < 50; i++ {
		want = append(want, appendAll(t, w, testRecords(i*40, 40, 200))...)
		require.NoError(t, w.Sync(context.Background(), want[len(want)-1].LSN))
	}
	st := w.Stats()
	require.Greater(t, st.Segments, 100)
	bases := segmentFiles(t, fs)
	require.Len(t, bases, st.Segments)
	// The chain: each segment starts where the previous one ends and none
	// is bigger than SegmentSize.
	for i, b := range bases {
		fi, err := fs.Stat(w.segPath(b))
		require.NoError(t, err)
		require.LessOrEqual(t, fi.Size(), int64(segSize))
		if i+1 < len(bases) {
			require.Equal(t, bases[i+1], b+LSN(fi.Size()), "segment %d", i)
		}
	}
	// No record spans segments: each record lies within one segment.
	for i, e := range want {
		start := e.LSN - LSN(recHeaderSize+len(e.Rec.Data))
		j := len(bases) - 1
		for bases[j] > start {
			j--
		}
		require.GreaterOrEqual(t, start, bases[j]+segHeaderSize, "record %d starts inside a segment header", i)
		if j+1 < len(bases) {
			require.LessOrEqual(t, e.LSN, bases[j+1], "record %d spans segments", i)
		}
	}
	requireSameEntries(t, want, replayAll(t, w, 0))
	require.NoError(t, w.Close())

	w = openT(t, fs, segSize)
	defer w.Close()
	requireSameEntries(t, want, replayAll(t, w, 0))
	require.Equal(t, len(bases), w.Stats().Segments)
}

func TestReplayFromTheMiddle(t *testing.T) {
	fs := vfs.NewMem()
	w := openT(t, fs, 2048)
	defer w.Close()
	want := appendAll(t, w, testRecords(0, 500, 150))
	// Replay sees records that were appended but not synced yet.
	requireSameEntries(t, want, replayAll(t, w, 0))
	for _, k := range []int{0, 1, 7, 100, 250, 498, 499} {
		// From a record's LSN: the records after it.
		requireSameEntries(t, want[k+1:], replayAll(t, w, want[k].LSN))
		// From inside a record: that record is not wholly before from.
		requireSameEntries(t, want[k:], replayAll(t, w, want[k].LSN-1))
	}
	require.Empty(t, replayAll(t, w, w.EndLSN()))
	require.Empty(t, replayAll(t, w, w.EndLSN()+1000))

	// fn's error stops Replay and comes back unchanged.
	stop := errors.New("stop")
	n := 0
	err := w.Replay(0, func(LSN, Record) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	require.Same(t, stop, err)
	require.Equal(t, 10, n)
}

func TestRemoveBefore(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	w := openT(t, fs, 1024)
	want := appendAll(t, w, testRecords(0, 600, 150))
	require.NoError(t, w.Sync(ctx, w.EndLSN()))
	before := segmentFiles(t, fs)
	require.Greater(t, len(before), 20)

	mid := want[300].LSN
	require.NoError(t, w.RemoveBefore(mid))
	after := segmentFiles(t, fs)
	require.Equal(t, after, w.segs)
	require.Len(t, after, w.Stats().Segments)
	// Exactly the segments wholly before mid are gone.
	for i, b := range before {
		gone := i+1 < len(before) && before[i+1] <= mid
		require.Equal(t, !gone, contains(after, b), "segment %x", b)
	}
	require.LessOrEqual(t, after[0], mid)
	requireSameEntries(t, want[301:], replayAll(t, w, mid))
	err := w.Replay(0, func(LSN, Record) error { return nil })
	require.ErrorIs(t, err, ErrRemoved)

	// Removal is durable: a crash right now does not bring segments back,
	// and the log still opens.
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	require.Equal(t, after, segmentFiles(t, crashed))
	cw := openT(t, crashed, 1024)
	requireSameEntries(t, want[301:], replayAll(t, cw, mid))
	require.NoError(t, cw.Close())

	// The segment being written is never removed, even past the end.
	require.NoError(t, w.RemoveBefore(w.EndLSN()+1))
	require.Len(t, segmentFiles(t, fs), 1)
	last := want[len(want)-1].LSN
	requireSameEntries(t, nil, replayAll(t, w, last))
	// And appending goes on.
	more := appendAll(t, w, testRecords(600, 30, 150))
	require.NoError(t, w.Close())
	w = openT(t, fs, 1024)
	defer w.Close()
	got := replayAll(t, w, w.segs[0])
	all := append(want, more...)
	require.Greater(t, len(got), len(more))
	requireSameEntries(t, all[len(all)-len(got):], got)
}

func contains(s []LSN, v LSN) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestAppendValidation(t *testing.T) {
	const segSize = 512
	w := openT(t, vfs.NewMem(), segSize)
	defer w.Close()
	end := w.EndLSN()
	_, err := w.Append(Record{Type: 1, Data: []byte("ok")}, Record{Type: 0})
	require.ErrorIs(t, err, ErrInvalidRecord)
	maxPayload := segSize - segHeaderSize - recHeaderSize
	_, err = w.Append(Record{Type: 1, Data: make([]byte, maxPayload+1)})
	require.ErrorIs(t, err, ErrRecordTooLarge)
	require.Equal(t, end, w.EndLSN(), "a rejected Append appends nothing")
	require.Zero(t, w.Stats().Records)

	// The largest record fills a segment by itself.
	lsn, err := w.Append(Record{Type: 1, Data: []byte("x")}, Record{Type: 2, Data: make([]byte, maxPayload)})
	require.NoError(t, err)
	require.Equal(t, end+LSN(recHeaderSize+1)+segSize, lsn, "the second record starts a segment and fills it")
	require.NoError(t, w.Sync(context.Background(), lsn))
	require.Equal(t, 2, w.Stats().Segments)
	got := replayAll(t, w, 0)
	require.Len(t, got, 2)
	require.Len(t, got[1].Rec.Data, maxPayload)

	// Empty Append: nothing appended, EndLSN returned.
	lsn2, err := w.Append()
	require.NoError(t, err)
	require.Equal(t, lsn, lsn2)
	require.Equal(t, uint64(1), w.Stats().Appends)

	require.ErrorIs(t, w.Sync(context.Background(), lsn+1), ErrBeyondEnd)
}

func TestClose(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	w := openT(t, fs, 4096)
	want := appendAll(t, w, testRecords(0, 100, 100))
	require.NoError(t, w.Close())
	// Close made everything durable: a crash right after keeps it all.
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	cw := openT(t, crashed, 4096)
	requireSameEntries(t, want, replayAll(t, cw, 0))
	require.NoError(t, cw.Close())

	_, err := w.Append(testRecord(1, 10))
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, w.Sync(ctx, want[50].LSN), "a durable LSN stays durable")
	require.ErrorIs(t, w.Replay(0, func(LSN, Record) error { return nil }), ErrClosed)
	require.ErrorIs(t, w.RemoveBefore(want[50].LSN), ErrClosed)
	require.ErrorIs(t, w.Close(), ErrClosed)
}

func TestOneOpenAtATime(t *testing.T) {
	fs := vfs.NewMem()
	w := openT(t, fs, 0)
	_, err := Open(Options{FS: fs, Dir: testDir})
	require.Error(t, err, "a second Open of a directory in use must fail")
	require.NoError(t, w.Close())
	w = openT(t, fs, 0)
	require.NoError(t, w.Close())
}

func TestOptions(t *testing.T) {
	_, err := Open(Options{FS: vfs.NewMem()})
	require.Error(t, err)
	_, err = Open(Options{FS: vfs.NewMem(), Dir: testDir, SegmentSize: 100})
	require.Error(t, err)
	// The real file system by default.
	dir := t.TempDir() + "/wal"
	w, err := Open(Options{Dir: dir, SegmentSize: 4096})
	require.NoError(t, err)
	want := appendAll(t, w, testRecords(0, 200, 100))
	require.NoError(t, w.Sync(context.Background(), w.EndLSN()))
	require.NoError(t, w.Close())
	w, err = Open(Options{Dir: dir})
	require.NoError(t, err)
	requireSameEntries(t, want, replayAll(t, w, 0))
	require.NoError(t, w.Close())
}

func TestSyncInterval(t *testing.T) {
	w, err := Open(Options{FS: vfs.NewMem(), Dir: testDir, SyncInterval: 2 * time.Millisecond})
	require.NoError(t, err)
	defer w.Close()
	lsn, err := w.Append(testRecord(1, 100))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return w.FlushedLSN() >= lsn }, 5*time.Second, time.Millisecond,
		"the writer fsyncs on its own within SyncInterval")
	require.Zero(t, w.Stats().SyncCalls)
}

func TestBigBufferIsWrittenWithoutSync(t *testing.T) {
	w := openT(t, vfs.NewMem(), 0)
	defer w.Close()
	rec := Record{Type: 1, Data: make([]byte, 64<<10)}
	var lsn LSN
	for i := 0; i < 2*writeThreshold/len(rec.Data); i++ {
		var err error
		lsn, err = w.Append(rec)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return LSN(w.written.Load()) >= lsn-writeThreshold }, 5*time.Second, time.Millisecond,
		"more than writeThreshold buffered bytes are written out without a Sync")
	require.Less(t, w.FlushedLSN(), lsn, "but not fsynced")
}

// A process crash keeps written-but-unsynced data in the page cache, where
// the next Open reads it as valid. Open must fsync it (file and directory
// entry) before the engine acts on it, or a power loss right after could
// take away records the engine already redid.
func TestOpenMakesWhatItFindsDurable(t *testing.T) {
	fs := vfs.NewMem()
	w := openT(t, fs, 0)
	want := appendAll(t, w, testRecords(0, 50, 100))
	require.NoError(t, w.Close())
	data := readFileT(t, fs, testDir+"/"+segmentName(0))

	// What the dead process left: the directory was made durably long ago,
	// the segment was written but neither it nor its entry was fsynced.
	crashable := vfs.NewCrashableMem()
	require.NoError(t, crashable.MkdirAll(testDir, 0o755))
	for _, d := range []string{"/", "/db", testDir} {
		f, err := crashable.OpenDir(d)
		require.NoError(t, err)
		require.NoError(t, f.Sync())
		require.NoError(t, f.Close())
	}
	f, err := crashable.Create(testDir+"/"+segmentName(0), vfs.WriteCategoryUnspecified)
	require.NoError(t, err)
	_, err = f.WriteAt(data, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Empty(t, segmentFiles(t, crashable.CrashClone(vfs.CrashCloneCfg{})), "test setup: nothing durable yet")

	w2 := openT(t, crashable, 0)
	requireSameEntries(t, want, replayAll(t, w2, 0))
	require.Equal(t, want[len(want)-1].LSN, w2.FlushedLSN())
	// The machine dies right after Open.
	afterPowerLoss := crashable.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, w2.Close())
	w3 := openT(t, afterPowerLoss, 0)
	defer w3.Close()
	requireSameEntries(t, want, replayAll(t, w3, 0))
}

// The WAL's directory is created durably: its parent is fsynced.
func TestNewDirectorySurvivesCrash(t *testing.T) {
	fs := vfs.NewCrashableMem()
	w := openT(t, fs, 0)
	lsn, err := w.Append(testRecord(1, 10))
	require.NoError(t, err)
	require.NoError(t, w.Sync(context.Background(), lsn))
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, w.Close())
	cw := openT(t, crashed, 0)
	defer cw.Close()
	require.Len(t, replayAll(t, cw, 0), 1)
}
