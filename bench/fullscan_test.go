package bench_test

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/heap"
)

var (
	flagScanRows = flag.Int("scanrows", 1_000_000, "BenchmarkFullScan: rows of 100-byte values in the table")
	flagScanDir  = flag.String("scandir", "", "BenchmarkFullScan: keep the loaded database here and reuse it (default: a temporary directory)")
)

var (
	scanDirOnce sync.Once
	scanDir     string
	scanDirErr  error
)

// fullScanDB is an on-disk database whose table kv holds -scanrows rows
// (8-byte keys, 100-byte values), loaded once per process and closed.
func fullScanDB(b *testing.B) string {
	b.Helper()
	scanDirOnce.Do(func() {
		scanDir = *flagScanDir
		if scanDir == "" {
			scanDir, scanDirErr = os.MkdirTemp("", "fullscan")
			if scanDirErr != nil {
				return
			}
		} else if _, err := os.Stat(filepath.Join(scanDir, "control")); err == nil {
			return // loaded by an earlier run
		}
		scanDirErr = loadFullScan(scanDir, *flagScanRows)
	})
	require.NoError(b, scanDirErr)
	return scanDir
}

func loadFullScan(dir string, rows int) error {
	db, err := tupled.Open(dir, nil)
	if err != nil {
		return err
	}
	if err := db.CreateTableIfNotExists(bg, "kv"); err != nil {
		db.Close()
		return err
	}
	for lo := 0; lo < rows; lo += 10_000 {
		err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for i := lo; i < min(lo+10_000, rows); i++ {
				v := make([]byte, 100)
				for j := range v {
					v[j] = byte('a' + (i+j)%26)
				}
				var k [8]byte
				binary.BigEndian.PutUint64(k[:], uint64(i))
				if err := tx.Insert(bg, "kv", k[:], v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			db.Close()
			return err
		}
	}
	return db.Close()
}

// BenchmarkFullScan is issue 12's full-scan goal on disk: a read-only
// transaction's Scan of every row of a 1M-row table, against pebble's own
// iteration of the same keys in the same files (the table's key range of
// tupled's pebble directory, opened read-only with tupled's default block
// cache). Each op runs both, alternated, each in a freshly opened store,
// and reports their times (tupled-s, pebble-s) and the op's ratio
// (tupled/pebble); ns/op is the pair's. -count gives more rounds:
//
//	go test ./bench -run XXX -bench FullScan -benchtime 5x -count 3 -scandir /tmp/fullscan
//
// bench/RESULTS.md has the figures.
func BenchmarkFullScan(b *testing.B) {
	dir := fullScanDB(b)
	rows := *flagScanRows
	lo := heap.RowKey("kv", nil)
	hi := append([]byte(nil), lo...)
	hi[len(hi)-1]++ // past "kv"'s prefix: no other table's key lies between
	var tupledT, pebbleT time.Duration
	var ratios []float64
	for i := 0; b.Loop(); i++ {
		var t [2]time.Duration
		for j := range 2 {
			// Alternate which goes first.
			if (i+j)%2 == 0 {
				t[0] = scanTupled(b, dir, rows)
			} else {
				t[1] = scanPebbleFiles(b, dir, lo, hi, rows)
			}
		}
		tupledT += t[0]
		pebbleT += t[1]
		ratios = append(ratios, t[0].Seconds()/t[1].Seconds())
	}
	slices.Sort(ratios)
	n := float64(len(ratios))
	b.ReportMetric(tupledT.Seconds()/n, "tupled-s")
	b.ReportMetric(pebbleT.Seconds()/n, "pebble-s")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(ratios[0], "min-ratio")
	b.ReportMetric(ratios[len(ratios)-1], "max-ratio")
}

// scanTupled opens the database, times one full Scan of kv, closes it.
func scanTupled(b *testing.B, dir string, rows int) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	db, err := tupled.Open(dir, nil)
	require.NoError(b, err)
	defer func() { require.NoError(b, db.Close()) }()
	b.StartTimer()
	start := time.Now()
	tx, err := db.Begin(bg, &tupled.TxOptions{ReadOnly: true})
	require.NoError(b, err)
	n := 0
	require.NoError(b, tx.Scan(bg, "kv", tupled.ScanOptions{}, func(k, v []byte) error { n++; return nil }))
	require.NoError(b, tx.Rollback())
	took := time.Since(start)
	b.StopTimer()
	require.Equal(b, rows, n)
	return took
}

// scanPebbleFiles opens tupled's pebble directory read-only and times one
// iteration of [lo, hi).
func scanPebbleFiles(b *testing.B, dir string, lo, hi []byte, rows int) time.Duration {
	b.StopTimer()
	defer b.StartTimer()
	pdb, err := pebble.Open(filepath.Join(dir, "data"), &pebble.Options{ReadOnly: true, CacheSize: 64 << 20,
		FormatMajorVersion: pebble.FormatNewest, Logger: quietPebble{}})
	require.NoError(b, err)
	defer func() { require.NoError(b, pdb.Close()) }()
	b.StartTimer()
	start := time.Now()
	it, err := pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	require.NoError(b, err)
	n := 0
	for it.First(); it.Valid(); it.Next() {
		if len(it.Value()) > 0 {
			n++
		}
	}
	require.NoError(b, it.Close())
	took := time.Since(start)
	b.StopTimer()
	require.Equal(b, rows, n)
	return took
}

// quietPebble drops pebble's informational log lines.
type quietPebble struct{}

func (quietPebble) Infof(string, ...any)           {}
func (quietPebble) Errorf(string, ...any)          {}
func (quietPebble) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }
