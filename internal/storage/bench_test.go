package storage

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Benchmarks on the OS filesystem (b.TempDir()), through Open as the engine
// will use it:
//
//	go test ./storage -run '^$' -bench . -benchtime 2s

func benchOpen(b *testing.B, kind string) Backend {
	b.Helper()
	be, err := Open(kind, b.TempDir(), Options{Logger: quietLogger()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	return be
}

// BenchmarkPointGet: random Gets of existing keys in a 100k-key store
// (16-byte keys, 100-byte values), after a reopen so that pebble reads
// from its tables and block cache, not from the memtable.
func BenchmarkPointGet(b *testing.B) {
	const n = 100_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "tuple/%010d", i)
	}
	value := make([]byte, 100)
	for _, kind := range []string{KindPebble, KindBbolt} {
		b.Run(kind, func(b *testing.B) {
			dir := b.TempDir()
			be, err := Open(kind, dir, Options{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			for start := 0; start < n; start += 10_000 {
				bt := be.NewBatch()
				for _, k := range keys[start : start+10_000] {
					bt.Set(k, value)
				}
				if err := be.Commit(bt, false); err != nil {
					b.Fatal(err)
				}
			}
			if err := be.Close(); err != nil {
				b.Fatal(err)
			}
			be, err = Open(kind, dir, Options{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			rng := rand.New(rand.NewPCG(1, 2))
			b.ReportAllocs()
			for b.Loop() {
				_, ok, err := be.Get(keys[rng.IntN(n)])
				if err != nil || !ok {
					b.Fatal(ok, err)
				}
			}
		})
	}
}

// BenchmarkCommit: one batch of 10 Sets (16-byte keys, 100-byte values)
// per op, without and with sync, and a checkpoint-sized synced batch of
// 1000 Sets. fsyncs/op comes from Stats.Fsyncs.
func BenchmarkCommit(b *testing.B) {
	value := make([]byte, 100)
	type variant struct {
		name string
		sync bool
		sets int
	}
	variants := []variant{{"nosync", false, 10}, {"sync", true, 10}, {"sync-batch1000", true, 1000}}
	for _, kind := range []string{KindPebble, KindBbolt} {
		for _, v := range variants {
			sync := v.sync
			b.Run(kind+"/"+v.name, func(b *testing.B) {
				be := benchOpen(b, kind)
				bt := be.NewBatch()
				i := 0
				before := be.Stats()
				b.ReportAllocs()
				for b.Loop() {
					bt.Reset()
					for range v.sets {
						bt.Set(fmt.Appendf(nil, "tuple/%010d", i), value)
						i++
					}
					if err := be.Commit(bt, sync); err != nil {
						b.Fatal(err)
					}
				}
				after := be.Stats()
				b.ReportMetric(float64(after.Fsyncs-before.Fsyncs)/float64(b.N), "fsyncs/op")
				b.ReportMetric(float64(after.BytesWritten-before.BytesWritten)/float64(b.N), "bytes-written/op")
			})
		}
	}
}
