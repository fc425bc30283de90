package wal

import (
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// BenchmarkRecovery100MB measures Open (which reads and checks every
// segment) plus a Replay of every record, over 100 MB of WAL in 1 KiB
// records and 64 MiB segments on the real disk (the page cache is warm:
// it was just written).
//
//	go test ./wal -run '^$' -bench Recovery100MB -benchtime 5x
func BenchmarkRecovery100MB(b *testing.B) {
	const total = 100 << 20
	dir := b.TempDir() + "/wal"
	w, err := Open(Options{FS: vfs.Default, Dir: dir})
	require.NoError(b, err)
	rec := Record{Type: 1, Data: make([]byte, 1024)}
	batch := make([]Record, 64)
	for i := range batch {
		batch[i] = rec
	}
	records := 0
	for w.Stats().Bytes < total {
		_, err := w.Append(batch...)
		require.NoError(b, err)
		records += len(batch)
	}
	require.NoError(b, w.Sync(context.Background(), w.EndLSN()))
	require.NoError(b, w.Close())
	b.SetBytes(total)
	b.ResetTimer()
	var openTime time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		w, err := Open(Options{FS: vfs.Default, Dir: dir})
		require.NoError(b, err)
		openTime += time.Since(start)
		n := 0
		require.NoError(b, w.Replay(0, func(LSN, Record) error { n++; return nil }))
		require.Equal(b, records, n)
		require.NoError(b, w.Close())
	}
	b.ReportMetric(float64(openTime.Milliseconds())/float64(b.N), "open-ms/100MB")
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "open+replay-ms/100MB")
}
