package wal

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/stretchr/testify/require"
)

var (
	flagCrashes = flag.Int("wal.crashes", 300, "crash points of TestCrashRandomPoints (the every-write tests add their own)")
	flagSeed    = flag.Uint64("wal.seed", 0, "seed of the crash tests (0: from the clock)")
)

func testSeed(t *testing.T) uint64 {
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -wal.seed=%d)", seed, seed)
	return seed
}

// crashPoint is a file system as a crash left it, with the ids of the
// records whose Sync had returned nil before the crash.
type crashPoint struct {
	fs    *vfs.MemFS
	acked map[[2]uint64]bool
	desc  string
}

// ledger tracks acknowledged records across goroutines.
type ledger struct {
	mu    sync.Mutex
	acked map[[2]uint64]bool
}

func newLedger() *ledger { return &ledger{acked: map[[2]uint64]bool{}} }

func (l *ledger) ack(recs ...Record) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		l.acked[recordID(r)] = true
	}
}

func (l *ledger) snapshot() map[[2]uint64]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[[2]uint64]bool, len(l.acked))
	for k := range l.acked {
		m[k] = true
	}
	return m
}

// crash takes a crash clone of fs: with probability one half exactly what
// was synced, otherwise with a random percentage of the unsynced blocks and
// directory entries kept (out-of-order writeback). The ledger is read
// before the clone, so every record it lists was durable at the crash.
func crash(fs *vfs.MemFS, l *ledger, rng *rand.Rand, rngMu *sync.Mutex, what string) crashPoint {
	acked := l.snapshot()
	rngMu.Lock()
	cfg := vfs.CrashCloneCfg{}
	if rng.IntN(2) == 1 {
		cfg.UnsyncedDataPercent = 1 + rng.IntN(100)
		cfg.RNG = rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
	}
	rngMu.Unlock()
	return crashPoint{
		fs:    fs.CrashClone(cfg),
		acked: acked,
		desc:  fmt.Sprintf("%s, %d%% of unsynced data kept", what, cfg.UnsyncedDataPercent),
	}
}

// verifyCrash opens the log a crash left and checks it against the full
// log the WAL wrote: it opens; its records are a prefix of the full log (no
// holes, no garbage, nothing reordered); every acknowledged record is
// there; the torn tail is gone from the file; and the log goes on: a record
// appended and synced after recovery survives the next crash right behind
// the recovered records.
func verifyCrash(t *testing.T, cp crashPoint, full []entry, o Options) {
	t.Helper()
	o.FS, o.Dir = cp.fs, testDir
	w, err := Open(o)
	require.NoError(t, err, cp.desc)
	got := replayAll(t, w, 0)
	requirePrefix(t, full, got)
	present := make(map[[2]uint64]bool, len(got))
	for _, e := range got {
		present[recordID(e.Rec)] = true
	}
	for id := range cp.acked {
		if !present[id] {
			t.Fatalf("%s: acknowledged record %v lost (%d of %d records recovered)", cp.desc, id, len(got), len(full))
		}
	}
	end := w.EndLSN()
	require.Equal(t, end, w.FlushedLSN(), cp.desc)
	last := w.segs[len(w.segs)-1]
	data := readFileT(t, cp.fs, w.segPath(last))
	require.GreaterOrEqual(t, len(data), int(end-last), cp.desc)
	require.True(t, allZero(data[end-last:]), "%s: the torn tail must be cut from the file (zeros past the end are a preallocated segment's room)", cp.desc)
	if o.Preallocate {
		require.Equal(t, max(o.SegmentSize, int64(end-last)), int64(len(data)), "%s: the last segment is preallocated after recovery", cp.desc)
	}

	marker := Record{Type: 254, Data: []byte(fmt.Sprintf("marker %d %d", 1<<62, len(got)))}
	lsn, err := w.Append(marker)
	require.NoError(t, err)
	require.NoError(t, w.Sync(context.Background(), lsn))
	again := cp.fs.CrashClone(vfs.CrashCloneCfg{})
	require.NoError(t, w.Close())
	o.FS = again
	w, err = Open(o)
	require.NoError(t, err, cp.desc)
	defer w.Close()
	got2 := replayAll(t, w, 0)
	require.Len(t, got2, len(got)+1, cp.desc)
	requireSameEntries(t, got, got2[:len(got)])
	require.Equal(t, marker, got2[len(got)].Rec, cp.desc)
}

// TestCrashRandomPoints runs concurrent writers (append, sometimes without
// a Sync, sometimes several records at once) on a crashable file system
// and takes crash clones at random moments while they run.
func TestCrashRandomPoints(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 0x3a1))
	total := *flagCrashes
	const perRound = 20
	done := 0
	for round := 0; done < total; round++ {
		n := min(perRound, total-done)
		segSize := []int64{512, 1024, 4096, 64 << 10}[rng.IntN(4)]
		writers := 1 + rng.IntN(8)
		o := Options{SegmentSize: segSize, Preallocate: rng.IntN(2) == 0, zeroFill: true}
		t.Run(fmt.Sprintf("round%d-seg%d-writers%d-prealloc%v", round, segSize, writers, o.Preallocate), func(t *testing.T) {
			crashRound(t, rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())), o, writers, n)
		})
		done += n
		if t.Failed() {
			return
		}
	}
}

func crashRound(t *testing.T, rng *rand.Rand, o Options, writers, crashes int) {
	fs := vfs.NewCrashableMem()
	segSize := o.SegmentSize
	wo := o
	wo.FS, wo.Dir = fs, testDir
	w, err := Open(wo)
	require.NoError(t, err)
	l := newLedger()
	var rngMu sync.Mutex
	var stop atomic.Bool
	var wg sync.WaitGroup
	maxLen := int(min(segSize-segHeaderSize-recHeaderSize, 200))
	for i := 0; i < writers; i++ {
		wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; !stop.Load(); {
				recs := make([]Record, 1+wrng.IntN(3)/2)
				for j := range recs {
					recs[j] = randRecord(wrng, i, seq, maxLen)
					seq++
				}
				lsn, err := w.Append(recs...)
				if err != nil {
					t.Error(err)
					return
				}
				if wrng.IntN(4) == 0 {
					continue // acknowledged without durability, never in the ledger
				}
				if err := w.Sync(context.Background(), lsn); err != nil {
					t.Error(err)
					return
				}
				l.ack(recs...)
			}
		}()
	}
	var points []crashPoint
	for i := 0; i < crashes; i++ {
		time.Sleep(time.Duration(rng.IntN(400)) * time.Microsecond)
		points = append(points, crash(fs, l, rng, &rngMu, fmt.Sprintf("crash %d", i)))
	}
	stop.Store(true)
	wg.Wait()
	full := replayAll(t, w, 0)
	require.NoError(t, w.Close())
	t.Logf("%d records, %d segments, %d crash points", len(full), w.Stats().Segments, len(points))
	for _, cp := range points {
		verifyCrash(t, cp, full, o)
		if t.Failed() {
			return
		}
	}
}

// cloningFS takes a crash clone before every write-side operation (write,
// fsync, create, rename, remove, close, mkdir, lock) that reaches the file
// system while it is armed.
type cloningFS struct {
	mem    *vfs.MemFS
	l      *ledger
	rng    *rand.Rand
	rngMu  sync.Mutex
	armed  atomic.Bool
	mu     sync.Mutex
	points []crashPoint
}

func newCloningFS(mem *vfs.MemFS, l *ledger, seed uint64) (*cloningFS, vfs.FS) {
	c := &cloningFS{mem: mem, l: l, rng: rand.New(rand.NewPCG(seed, 7))}
	return c, errorfs.Wrap(mem, errorfs.InjectorFunc(func(op errorfs.Op) error {
		if op.Kind.ReadOrWrite() == errorfs.OpIsWrite && c.armed.Load() {
			cp := crash(c.mem, c.l, c.rng, &c.rngMu, fmt.Sprintf("before op %d (kind %d on %s)", len(c.points), op.Kind, op.Path))
			c.mu.Lock()
			c.points = append(c.points, cp)
			c.mu.Unlock()
		}
		return nil
	}))
}

// TestCrashAtEveryWrite crashes before every write-side file system
// operation of a short run, from the creation of the directory on: a
// writer appends one or two records at a time and syncs most of them, in
// segments small enough to rotate often.
func TestCrashAtEveryWrite(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) { crashAtEveryWrite(t, prealloc) })
	}
}

func crashAtEveryWrite(t *testing.T, prealloc bool) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 1))
	const segSize = 512
	l := newLedger()
	c, fs := newCloningFS(vfs.NewCrashableMem(), l, seed)
	c.armed.Store(true)
	o := Options{FS: fs, Dir: testDir, SegmentSize: segSize, Preallocate: prealloc, zeroFill: true}
	w, err := Open(o)
	require.NoError(t, err)
	for seq := 0; seq < 80; {
		recs := make([]Record, 1+rng.IntN(2))
		for j := range recs {
			recs[j] = randRecord(rng, 0, seq, 150)
			seq++
		}
		lsn, err := w.Append(recs...)
		require.NoError(t, err)
		if rng.IntN(5) == 0 {
			continue
		}
		require.NoError(t, w.Sync(context.Background(), lsn))
		l.ack(recs...)
	}
	require.NoError(t, w.Close())
	c.armed.Store(false)
	// The full log, read without crashing.
	w, err = Open(o)
	require.NoError(t, err)
	full := replayAll(t, w, 0)
	require.NoError(t, w.Close())
	require.Greater(t, w.Stats().Segments, 5)
	t.Logf("%d records, %d segments, %d crash points", len(full), w.Stats().Segments, len(c.points))
	require.Greater(t, len(c.points), 150)
	for _, cp := range c.points {
		verifyCrash(t, cp, full, o)
		if t.Failed() {
			return
		}
	}
}

// TestCrashDuringRecovery crashes before every write-side operation of an
// Open that must cut a torn tail (and of the appends after it): the cut is
// itself crash-safe.
func TestCrashDuringRecovery(t *testing.T) {
	for _, prealloc := range []bool{false, true} {
		t.Run(fmt.Sprintf("prealloc=%v", prealloc), func(t *testing.T) { crashDuringRecovery(t, prealloc) })
	}
}

func crashDuringRecovery(t *testing.T, prealloc bool) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	const segSize = 1024
	mem := vfs.NewCrashableMem()
	o := Options{FS: mem, Dir: testDir, SegmentSize: segSize, Preallocate: prealloc, zeroFill: true}
	w, err := Open(o)
	require.NoError(t, err)
	l := newLedger()
	for seq := 0; seq < 40; seq++ {
		r := randRecord(rng, 0, seq, 100)
		lsn, err := w.Append(r)
		require.NoError(t, err)
		require.NoError(t, w.Sync(context.Background(), lsn))
		l.ack(r)
	}
	full := replayAll(t, w, 0)
	require.NoError(t, w.Close())
	// Tear the tail by hand: half a record after the last one.
	bases := segmentFiles(t, mem)
	name := testDir + "/" + segmentName(bases[len(bases)-1])
	data := readFileT(t, mem, name)
	end := int(full[len(full)-1].LSN - bases[len(bases)-1])
	torn := appendRecord(nil, full[len(full)-1].LSN, full[len(full)-1].LSN, randRecord(rng, 0, 1000, 100))
	if end+len(torn)/2 <= len(data) {
		copy(data[end:], torn[:len(torn)/2]) // into a preallocated segment's room
	} else {
		data = append(data[:end], torn[:len(torn)/2]...)
	}
	writeFileT(t, mem, name, data)

	c, fs := newCloningFS(mem, l, seed)
	c.armed.Store(true)
	o.FS = fs
	w, err = Open(o)
	require.NoError(t, err)
	more := randRecord(rng, 0, 2000, 100)
	lsn, err := w.Append(more)
	require.NoError(t, err)
	require.NoError(t, w.Sync(context.Background(), lsn))
	l.ack(more)
	require.NoError(t, w.Close())
	c.armed.Store(false)
	full = append(full, entry{lsn, more})
	t.Logf("%d crash points", len(c.points))
	require.Greater(t, len(c.points), 8)
	for _, cp := range c.points {
		verifyCrash(t, cp, full, o)
		if t.Failed() {
			return
		}
	}
}
