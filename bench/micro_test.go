package bench_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// The micro-benchmarks behind the design budget: an uncontended row lock is
// an xmax write (compare BenchmarkLockFastPath with BenchmarkGet: one
// transaction each, same row); a second sharer costs a multixact.

var bg = context.Background()

// openDB opens an in-memory database with table "t" holding rows.
func openDB(b *testing.B, opts *tupled.Options, rows map[string]string) *tupled.DB {
	b.Helper()
	db, err := tupled.Open("", opts)
	require.NoError(b, err)
	b.Cleanup(func() { require.NoError(b, db.Close()) })
	require.NoError(b, db.CreateTable(bg, "t"))
	require.NoError(b, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for k, v := range rows {
			if err := tx.Insert(bg, "t", []byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	}))
	return db
}

func begin(b *testing.B, db *tupled.DB) *tupled.Tx {
	b.Helper()
	tx, err := db.Begin(bg, nil)
	require.NoError(b, err)
	b.Cleanup(func() { _ = tx.Rollback() })
	return tx
}

func benchDB(b *testing.B) *tupled.DB {
	return openDB(b, &tupled.Options{VacuumInterval: -1}, map[string]string{"a": "1"})
}

func BenchmarkGet(b *testing.B) {
	db := benchDB(b)
	b.ReportAllocs()
	for b.Loop() {
		tx, _ := db.Begin(bg, nil)
		if _, err := tx.Get(bg, "t", []byte("a")); err != nil {
			b.Fatal(err)
		}
		_ = tx.Commit()
	}
}

// shareLockLoop runs one transaction per iteration that locks row "a" FOR
// SHARE and commits.
func shareLockLoop(b *testing.B, db *tupled.DB) {
	b.ReportAllocs()
	for b.Loop() {
		tx, _ := db.Begin(bg, nil)
		if _, err := tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait); err != nil {
			b.Fatal(err)
		}
		_ = tx.Commit()
	}
}

func BenchmarkLockFastPath(b *testing.B) {
	db := benchDB(b)
	shareLockLoop(b, db)
	b.StopTimer()
	s := db.Stats()
	if s.MultiXactsCreated != 0 {
		b.Fatalf("fast path made %d multixacts", s.MultiXactsCreated)
	}
}

// BenchmarkLockMultiXact: a long-running transaction holds FOR SHARE, so
// every other sharer extends a multixact (the 2012 seed's slow path).
func BenchmarkLockMultiXact(b *testing.B) {
	db := benchDB(b)
	holder := begin(b, db)
	_, err := holder.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
	require.NoError(b, err)
	shareLockLoop(b, db)
}

// BenchmarkLockFastPathOff forces a multixact for every lock
// (Options.ShareFastPathOff), the pre-9.3 situation.
func BenchmarkLockFastPathOff(b *testing.B) {
	db := openDB(b, &tupled.Options{VacuumInterval: -1, ShareFastPathOff: true}, map[string]string{"a": "1"})
	shareLockLoop(b, db)
}

// BenchmarkLocks1000Waiters: DB.Locks() while 1000 transactions wait for
// one row.
func BenchmarkLocks1000Waiters(b *testing.B) {
	db := benchDB(b)
	holder := begin(b, db)
	_, err := holder.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(b, err)
	const waiters = 1000
	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		tx := begin(b, db)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = tx.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
			_ = tx.Rollback()
		}()
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := 0
		for _, l := range db.Locks() {
			if !l.Granted {
				n++
			}
		}
		if n >= waiters {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %d of %d waiters showed up", n, waiters)
		}
		time.Sleep(time.Millisecond)
	}
	b.ResetTimer()
	for b.Loop() {
		if len(db.Locks()) < waiters {
			b.Fatal("waiters vanished")
		}
	}
	b.StopTimer()
	require.NoError(b, holder.Rollback())
	wg.Wait()
}
