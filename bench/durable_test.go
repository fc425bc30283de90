package bench_test

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// Durability figures of issue 3, on the real filesystem (b.TempDir()).

func openDisk(b *testing.B, opts *tupled.Options, rows int) *tupled.DB {
	b.Helper()
	db, err := tupled.Open(b.TempDir(), opts)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, db.Close()) })
	require.NoError(b, db.CreateTable(bg, "t"))
	for i := 0; i < rows; i += 1000 {
		require.NoError(b, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for j := i; j < i+1000 && j < rows; j++ {
				if err := tx.Insert(bg, "t", []byte(fmt.Sprintf("k%08d", j)), []byte("0")); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	return db
}

// runClients runs b.N transactions of fn spread over n goroutines.
func runClients(b *testing.B, n int, fn func(client, i int) error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := 0; c < n; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				if err := fn(c, i); err != nil {
					b.Error(err)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	b.StopTimer()
}

// BenchmarkFsyncsPerCommit: writing transactions (one update each, of a
// row of their own) at 1, 8 and 30 concurrent writers; group commit shares
// fsyncs. Metric fsyncs/commit (goal at 30 writers: <= 0.2).
func BenchmarkFsyncsPerCommit(b *testing.B) {
	for _, writers := range []int{1, 8, 30} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			db := openDisk(b, &tupled.Options{VacuumInterval: -1}, writers)
			before := db.Stats()
			runClients(b, writers, func(c, i int) error {
				return db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					return tx.Update(bg, "t", []byte(fmt.Sprintf("k%08d", c)), []byte(fmt.Sprint(i)))
				})
			})
			after := db.Stats()
			b.ReportMetric(float64(after.WALFsyncs-before.WALFsyncs)/float64(b.N), "fsyncs/commit")
		})
	}
}

// BenchmarkForShareSyncCommit: FOR SHARE-only transactions (3 random rows
// of 100k, 30 clients) with SyncCommit on and off. Lock-only commits write
// no WAL, so the two should not differ.
func BenchmarkForShareSyncCommit(b *testing.B) {
	const rows = 100_000
	for _, sync := range []bool{true, false} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			db := openDisk(b, &tupled.Options{SyncCommit: &sync}, rows)
			before := db.Stats()
			runClients(b, 30, func(c, i int) error {
				return db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					for j := 0; j < 3; j++ {
						k := []byte(fmt.Sprintf("k%08d", (i*7919+j*104729+c)%rows))
						if _, err := tx.Lock(bg, "t", k, tupled.ForShare, tupled.Wait); err != nil {
							return err
						}
					}
					return nil
				})
			})
			b.ReportMetric(float64(db.Stats().WALFsyncs-before.WALFsyncs)/float64(b.N), "fsyncs/tx")
		})
	}
}

// BenchmarkOpenLargeTable: open time and Go heap after opening a table of
// many rows and locking 10k of them (rows are read from the backend on
// demand). -bench OpenLargeTable -benchtime 1x; TUPLED_ROWS sets the size.
func BenchmarkOpenLargeTable(b *testing.B) {
	rows := 1_000_000
	if testing.Short() {
		rows = 100_000
	}
	if n, err := strconv.Atoi(os.Getenv("TUPLED_ROWS")); err == nil && n > 0 {
		rows = n
	}
	for _, be := range []struct {
		name string
		b    tupled.Backend
	}{{"pebble", tupled.Pebble}, {"bbolt", tupled.Bbolt}} {
		b.Run(be.name, func(b *testing.B) {
			dir := b.TempDir()
			db, err := tupled.Open(dir, &tupled.Options{Backend: be.b})
			require.NoError(b, err)
			require.NoError(b, db.CreateTable(bg, "t"))
			val := make([]byte, 100)
			for i := 0; i < rows; i += 10000 {
				require.NoError(b, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					for j := i; j < i+10000 && j < rows; j++ {
						if err := tx.Insert(bg, "t", []byte(fmt.Sprintf("k%08d", j)), val); err != nil {
							return err
						}
					}
					return nil
				}))
			}
			require.NoError(b, db.Close())
			runtime.GC()
			var m0 runtime.MemStats
			runtime.ReadMemStats(&m0)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				db, err := tupled.Open(dir, &tupled.Options{Backend: be.b, CacheRows: 100_000})
				require.NoError(b, err)
				openTime := time.Since(start)
				tx, err := db.Begin(bg, nil)
				require.NoError(b, err)
				for j := 0; j < 10000; j++ {
					if _, err := tx.Lock(bg, "t", []byte(fmt.Sprintf("k%08d", (j*7919)%rows)), tupled.ForShare, tupled.Wait); err != nil {
						b.Fatal(err)
					}
				}
				require.NoError(b, tx.Commit())
				runtime.GC()
				var m1 runtime.MemStats
				runtime.ReadMemStats(&m1)
				b.ReportMetric(float64(openTime.Milliseconds()), "open-ms")
				b.ReportMetric(float64(m1.HeapAlloc)/1e6, "heap-MB")
				b.ReportMetric(float64(rows*(100+9))/1e6, "data-MB")
				require.NoError(b, db.Close())
			}
		})
	}
}

// BenchmarkRecovery100MB: Open after a crash that left ~100 MB of WAL since
// the last checkpoint (pebble backend, in-memory crashable filesystem, so
// the figure is the engine's replay cost, not the disk's). Metric ms/100MB.
func BenchmarkRecovery100MB(b *testing.B) {
	fs := vfs.NewCrashableMem()
	opts := &tupled.Options{FS: fs, VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1}
	db, err := tupled.Open("db", opts)
	require.NoError(b, err)
	require.NoError(b, db.CreateTable(bg, "t"))
	val := make([]byte, 1000)
	const commits = 100_000 // ~100 MB of commit records
	for i := 0; i < commits; i += 100 {
		require.NoError(b, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for j := i; j < i+100; j++ {
				k := []byte(fmt.Sprintf("k%08d", j%50_000))
				if j < 50_000 {
					if err := tx.Insert(bg, "t", k, val); err != nil {
						return err
					}
				} else if err := tx.Update(bg, "t", k, val); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(b, db.Close())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		clone := crashed.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
		start := time.Now()
		db2, err := tupled.Open("db", &tupled.Options{FS: clone, VacuumInterval: -1})
		require.NoError(b, err)
		el := time.Since(start)
		b.StopTimer()
		require.NoError(b, db2.Close())
		b.StartTimer()
		b.ReportMetric(float64(el.Milliseconds()), "open-ms")
	}
}
