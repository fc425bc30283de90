package crash_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/tests/utils"
)

// crashableDB is an on-disk database whose state can be cut as a crash
// would cut it. Its WAL (and pebble's files) live on a crashable MemFS; a
// bbolt file lives on the real disk at the same path, and since only
// recovery and checkpoints write it — and this database never checkpoints
// on its own — a copy of it is what a crash would leave.
type crashableDB struct {
	t    *testing.T
	be   tupled.Backend
	mem  *vfs.MemFS
	dir  string
	opts *tupled.Options
	db   *tupled.DB
}

func openCrashable(t *testing.T, be tupled.Backend) *crashableDB {
	c := &crashableDB{t: t, be: be, mem: vfs.NewCrashableMem(), dir: filepath.Join(t.TempDir(), "db")}
	c.opts = &tupled.Options{Backend: be, FS: c.mem, VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1}
	db, err := tupled.Open(c.dir, c.opts)
	require.NoError(t, err)
	c.db = db
	return c
}

// crash takes the image of a crash now (everything fsynced survives,
// nothing else), closes the database and opens the image.
func (c *crashableDB) crash() {
	t := c.t
	clone := c.mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	bbolt := filepath.Join(c.dir, "data", storage.BboltFile)
	saved := filepath.Join(t.TempDir(), "bbolt.copy")
	if c.be == tupled.Bbolt {
		require.NoError(t, copyFile(saved, bbolt))
	}
	require.NoError(t, c.db.Close())
	if c.be == tupled.Bbolt {
		require.NoError(t, copyFile(bbolt, saved))
		require.NoError(t, os.Remove(saved))
	}
	c.mem = clone
	c.opts.FS = clone
	db, err := tupled.Open(c.dir, c.opts)
	require.NoError(t, err, "open after the crash")
	c.db = db
}

// reopen closes the database cleanly (a checkpoint) and opens it again.
func (c *crashableDB) reopen() {
	require.NoError(c.t, c.db.Close())
	db, err := tupled.Open(c.dir, c.opts)
	require.NoError(c.t, err, "open after Close")
	c.db = db
}

// bigValue is n bytes that differ from those of any other seed.
func bigValue(n int, seed byte) []byte {
	v := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		v[i] = seed + byte(i>>12)
	}
	v[n-1] = seed
	return v
}

func rowKey(i int) []byte   { return []byte(fmt.Sprintf("r%07d", i)) }
func rowValue(i int) []byte { return []byte(fmt.Sprintf("%080d", i)) } // 80 bytes

// TestLargeTransactions: transactions whose commit record cannot fit in
// one WAL segment (64 MiB) commit, stay readable, leave the database
// usable, and survive a crash (recovery replays the streamed commit) and a
// clean reopen (the checkpoint writes them to the backend in chunks), on
// both backends. Before, they failed at Commit with "record larger than a
// segment can hold" and every later read and write failed with 58030.
func TestLargeTransactions(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of MB per case; runs in the full tier (go test without -short)")
	}
	const rows = 1_000_000
	cases := []struct {
		name  string
		write func(tx *tupled.Tx) error
		check func(t *testing.T, db *tupled.DB, full bool)
	}{
		{"100 MB value", func(tx *tupled.Tx) error {
			return tx.Insert(bg, "t", []byte("big"), bigValue(100<<20, 7))
		}, func(t *testing.T, db *tupled.DB, full bool) {
			tx := utils.Begin(t, db, nil)
			v, err := tx.Get(bg, "t", []byte("big"))
			require.NoError(t, err)
			require.True(t, bytes.Equal(bigValue(100<<20, 7), v), "the 100 MB value came back different")
			require.NoError(t, tx.Commit())
		}},
		{"1M rows of 80 bytes", func(tx *tupled.Tx) error {
			for i := 0; i < rows; i++ {
				if err := tx.Insert(bg, "t", rowKey(i), rowValue(i)); err != nil {
					return err
				}
			}
			return nil
		}, func(t *testing.T, db *tupled.DB, full bool) {
			tx := utils.Begin(t, db, nil)
			if !full { // every 997th row
				for i := 0; i < rows; i += 997 {
					v, err := tx.Get(bg, "t", rowKey(i))
					require.NoError(t, err)
					require.Equal(t, rowValue(i), v)
				}
				require.NoError(t, tx.Commit())
				return
			}
			n := 0
			require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{End: []byte("s")}, func(k, v []byte) error {
				if !bytes.Equal(k, rowKey(n)) || !bytes.Equal(v, rowValue(n)) {
					return fmt.Errorf("row %d: got %q=%q", n, k, v)
				}
				n++
				return nil
			}))
			require.Equal(t, rows, n)
			require.NoError(t, tx.Commit())
		}},
	}
	for _, be := range utils.Backends {
		for _, c := range cases {
			t.Run(be.Name+"/"+c.name, func(t *testing.T) {
				cdb := openCrashable(t, be.B)
				defer func() { require.NoError(t, cdb.db.Close()) }()
				require.NoError(t, cdb.db.CreateTable(bg, "t"))
				before := cdb.db.Stats().WALRecords
				tx := utils.Begin(t, cdb.db, nil)
				require.NoError(t, c.write(tx))
				require.NoError(t, tx.Commit())
				require.Greater(t, cdb.db.Stats().WALRecords-before, uint64(2), "the commit should have been logged as a stream")
				// Still usable: a small transaction commits after it.
				require.NoError(t, cdb.db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					return tx.Insert(bg, "t", []byte("zafter"), []byte("a"))
				}))

				cdb.crash()
				c.check(t, cdb.db, true)
				require.Equal(t, "a", mustGet(t, cdb.db, "zafter"))
				cdb.reopen()
				c.check(t, cdb.db, false)
				require.Equal(t, "a", mustGet(t, cdb.db, "zafter"))
			})
		}
	}
}

func mustGet(t *testing.T, db *tupled.DB, k string) string {
	t.Helper()
	v, ok := utils.Get(t, db, k)
	require.True(t, ok, "key %q", k)
	return v
}

// copyTree copies the directory src to dst: with no checkpoint running and
// every commit fsynced, the image of a crash.
func copyTree(dst, src string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		return copyFile(filepath.Join(dst, rel), path)
	})
}

// peakHeap samples the heap in use until stop is called and returns the
// largest value seen.
func peakHeap() (stop func() uint64) {
	done, res := make(chan struct{}), make(chan uint64)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-done:
				res <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-res }
}

// BenchmarkCommit1GB commits one transaction of 1 GiB (16384 rows of 64
// KiB), closes (the checkpoint writes it to the backend) and recovers it
// from the WAL of a crash image taken before the Close; and, as the second
// case, one value of exactly MaxValueSize. It is a benchmark, not a test,
// because each run moves gigabytes; run it with
//
//	go test -run '^$' -bench Commit1GB -benchtime 1x .
//
// and read the phases it reports (seconds, peak heap in MiB).
func BenchmarkCommit1GB(b *testing.B) {
	shapes := []struct {
		name       string
		rows, size int
	}{{"16384x64KiB", 16384, 64 << 10}, {"1xMaxValueSize", 1, tupled.MaxValueSize}}
	for _, be := range utils.Backends {
		for _, sh := range shapes {
			b.Run(be.Name+"/"+sh.name, func(b *testing.B) {
				for range b.N {
					bench1GB(b, be.B, sh.rows, sh.size)
				}
			})
		}
	}
}

func bench1GB(b *testing.B, be tupled.Backend, rows, size int) {
	dir := filepath.Join(b.TempDir(), "db")
	opts := &tupled.Options{Backend: be, VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1}
	db, err := tupled.Open(dir, opts)
	require.NoError(b, err)
	require.NoError(b, db.CreateTable(bg, "t"))
	val := func(i int) []byte {
		v := make([]byte, size)
		for j := 0; j < size; j += 4096 {
			v[j] = byte(i + j>>12)
		}
		return v
	}
	runtime.GC()
	start := time.Now()
	tx, err := db.Begin(bg, nil)
	require.NoError(b, err)
	for i := 0; i < rows; i++ {
		require.NoError(b, tx.Insert(bg, "t", rowKey(i), val(i)))
	}
	b.ReportMetric(time.Since(start).Seconds(), "insert-s")
	// Allocation (not heap in use, which GC slack blurs) says how many
	// copies of the write set each phase makes.
	phase := func(name string, f func()) {
		runtime.GC()
		alloc := totalAlloc()
		stopPeak := peakHeap()
		start := time.Now()
		f()
		b.ReportMetric(time.Since(start).Seconds(), name+"-s")
		b.ReportMetric(float64((totalAlloc()-alloc)>>20), name+"-alloc-MiB")
		b.ReportMetric(float64(stopPeak()>>20), name+"-peak-MiB")
	}
	phase("commit", func() { require.NoError(b, tx.Commit()) })
	crashed := filepath.Join(b.TempDir(), "crashed")
	require.NoError(b, copyTree(crashed, dir))
	phase("checkpoint", func() { require.NoError(b, db.Close()) }) // writes it to the backend
	phase("recover", func() {
		db, err = tupled.Open(crashed, opts) // replays the 1 GiB commit
		require.NoError(b, err)
	})
	tx, err = db.Begin(bg, nil)
	require.NoError(b, err)
	n := 0
	require.NoError(b, tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error {
		if n == 0 || n == rows-1 {
			require.True(b, bytes.Equal(val(n), v), "row %d", n)
		}
		n++
		return nil
	}))
	require.Equal(b, rows, n)
	require.NoError(b, tx.Commit())
	require.NoError(b, db.Close())
	db, err = tupled.Open(crashed, opts)
	require.NoError(b, err)
	require.NoError(b, db.Close())
}

func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}
