package tupled_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

var backends = []struct {
	name string
	b    tupled.Backend
}{{"pebble", tupled.Pebble}, {"bbolt", tupled.Bbolt}}

func get(t testing.TB, db *tupled.DB, k string) (string, bool) {
	t.Helper()
	tx := begin(t, db, nil)
	defer tx.Rollback()
	v, err := tx.Get(bg, "t", []byte(k))
	if err == tupled.ErrNotFound {
		return "", false
	}
	require.NoError(t, err)
	return string(v), true
}

// TestPersistenceAcrossReopen: committed writes survive Close and Open on
// both backends; rolled-back and uncommitted ones don't; row locks don't;
// transaction ids keep growing.
func TestPersistenceAcrossReopen(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := &tupled.Options{Backend: be.b}
			db, err := tupled.Open(dir, opts)
			require.NoError(t, err)
			require.NoError(t, db.CreateTable(bg, "t"))
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				for i := 0; i < 100; i++ {
					if err := tx.Insert(bg, "t", key(i), []byte(fmt.Sprint(i))); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, db.Checkpoint())
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				if err := tx.Update(bg, "t", key(1), []byte("one")); err != nil {
					return err
				}
				if err := tx.Delete(bg, "t", key(2)); err != nil {
					return err
				}
				return tx.Insert(bg, "t", []byte("new"), []byte("n"))
			}))
			rolled := begin(t, db, nil)
			require.NoError(t, rolled.Update(bg, "t", key(3), []byte("rolled back")))
			require.NoError(t, rolled.Rollback())
			locker := begin(t, db, nil)
			_, err = locker.Lock(bg, "t", key(4), tupled.ForUpdate, tupled.Wait)
			require.NoError(t, err)
			sharer := begin(t, db, nil) // two FOR SHARE lockers of key(5) make a multixact
			_, err = sharer.Lock(bg, "t", key(5), tupled.ForShare, tupled.Wait)
			require.NoError(t, err)
			sharer2 := begin(t, db, nil)
			_, err = sharer2.Lock(bg, "t", key(5), tupled.ForShare, tupled.Wait)
			require.NoError(t, err)
			lastMulti := db.Stats().NextMultiXactID
			require.Greater(t, lastMulti, uint64(1))
			lastID := sharer2.ID()
			require.NoError(t, db.Close())

			db, err = tupled.Open(dir, opts)
			require.NoError(t, err)
			defer db.Close()
			require.ErrorIs(t, db.CreateTable(bg, "t"), tupled.ErrTableExists)
			v, ok := get(t, db, string(key(1)))
			require.True(t, ok)
			require.Equal(t, "one", v)
			_, ok = get(t, db, string(key(2)))
			require.False(t, ok)
			v, _ = get(t, db, string(key(3)))
			require.Equal(t, "3", v)
			v, _ = get(t, db, "new")
			require.Equal(t, "n", v)
			rl, err := db.RowLocks(bg, "t")
			require.NoError(t, err)
			require.Empty(t, rl)
			n := 0
			tx := begin(t, db, nil)
			require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error { n++; return nil }))
			require.Equal(t, 100, n) // 100 - key(2) + "new"
			require.Greater(t, tx.ID(), lastID, "transaction ids never go backwards")
			require.Greater(t, db.Stats().NextMultiXactID, lastMulti, "multixact ids never go backwards")
		})
	}
}

// TestLockOnlyCommitsDoNotFsync: a transaction that only locked rows writes
// no WAL record and waits for no fsync, even with SyncCommit on.
func TestLockOnlyCommitsDoNotFsync(t *testing.T) {
	db, err := tupled.Open(t.TempDir(), nil)
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(bg, "t"))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Insert(bg, "t", []byte("a"), []byte("1")) }))
	before := db.Stats()
	for i := 0; i < 100; i++ {
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			_, err := tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
			return err
		}))
	}
	after := db.Stats()
	require.Equal(t, before.WALRecords, after.WALRecords)
	require.Equal(t, before.WALFsyncs, after.WALFsyncs)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Update(bg, "t", []byte("a"), []byte("2")) }))
	require.Greater(t, db.Stats().WALFsyncs, after.WALFsyncs, "a writing commit is made durable")
}

// TestEvictionKeepsLocksAndWrites: with a tiny row cache, clean rows are
// evicted and reloaded from the backend while transactions lock, update and
// scan them concurrently; no lock or write is lost to an eviction.
func TestEvictionKeepsLocksAndWrites(t *testing.T) {
	const rows = 300
	db, err := tupled.Open(t.TempDir(), &tupled.Options{CacheRows: 10, VacuumInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(bg, "t"))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for i := 0; i < rows; i++ {
			if err := tx.Insert(bg, "t", key(i), []byte("0")); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Checkpoint())
	db.Vacuum() // freeze, so rows become evictable

	// A lock taken on a row must hold even if the row's cache entry churns.
	holder := begin(t, db, nil)
	_, err = holder.Lock(bg, "t", key(7), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)

	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := key((w*97 + i*13) % rows)
				if string(k) == string(key(7)) {
					continue
				}
				err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
					v, err := tx.Lock(bg, "t", k, tupled.ForUpdate, tupled.Wait)
					if err != nil {
						return err
					}
					var n int
					fmt.Sscan(string(v), &n)
					return tx.Update(bg, "t", k, []byte(fmt.Sprint(n+1)))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	wg.Wait()
	other := begin(t, db, nil)
	_, err = other.Lock(bg, "t", key(7), tupled.ForShare, tupled.NoWait)
	require.ErrorIs(t, err, tupled.ErrLockNotAvailable, "the lock on an untouched row survives cache churn")
	require.NoError(t, holder.Commit())
	require.NoError(t, db.Checkpoint())
	eventually(t, "clean rows are evicted down to the cache size", func() bool {
		db.Vacuum()
		return db.Stats().TuplesLive <= 20
	})

	sum := 0
	tx := begin(t, db, nil)
	require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error {
		var n int
		fmt.Sscan(string(v), &n)
		sum += n
		return nil
	}))
	require.Equal(t, 4*200-countKey7(), sum, "every increment is kept")
}

// countKey7 is how many of the workers' picks were key 7 (skipped).
func countKey7() int {
	n := 0
	for w := 0; w < 4; w++ {
		for i := 0; i < 200; i++ {
			if (w*97+i*13)%300 == 7 {
				n++
			}
		}
	}
	return n
}
