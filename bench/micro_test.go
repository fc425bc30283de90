package tupled_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// The micro-benchmarks behind the design budget: an uncontended row lock is
// an xmax write (compare BenchmarkLockFastPath with BenchmarkGet: one
// transaction each, same row); a second sharer costs a multixact.

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

func BenchmarkLockFastPath(b *testing.B) {
	db := benchDB(b)
	b.ReportAllocs()
	for b.Loop() {
		tx, _ := db.Begin(bg, nil)
		if _, err := tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait); err != nil {
			b.Fatal(err)
		}
		_ = tx.Commit()
	}
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
	holder := begin(b, db, nil)
	_, err := holder.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		tx, _ := db.Begin(bg, nil)
		if _, err := tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait); err != nil {
			b.Fatal(err)
		}
		_ = tx.Commit()
	}
}

// BenchmarkLockFastPathOff forces a multixact for every lock
// (Options.ShareFastPathOff), the pre-9.3 situation.
func BenchmarkLockFastPathOff(b *testing.B) {
	db := openDB(b, &tupled.Options{VacuumInterval: -1, ShareFastPathOff: true}, map[string]string{"a": "1"})
	b.ReportAllocs()
	for b.Loop() {
		tx, _ := db.Begin(bg, nil)
		if _, err := tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait); err != nil {
			b.Fatal(err)
		}
		_ = tx.Commit()
	}
}

// BenchmarkLocks1000Waiters: DB.Locks() while 1000 transactions wait for
// one row.
func BenchmarkLocks1000Waiters(b *testing.B) {
	db := benchDB(b)
	holder := begin(b, db, nil)
	_, err := holder.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(b, err)
	const waiters = 1000
	var wg sync.WaitGroup
	for i := 0; i < waiters; i++ {
		tx := begin(b, db, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = tx.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
			_ = tx.Rollback()
		}()
	}
	eventually(b, "1000 waiters", func() bool {
		n := 0
		for _, l := range db.Locks() {
			if !l.Granted {
				n++
			}
		}
		return n >= waiters
	})
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
