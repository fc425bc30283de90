package tupled_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// TestSessionReusesEndedTx: a Session's next transaction is its previous
// one's Tx, reused once that has ended, and until then a call on the
// ended one fails as on any ended Tx. A transaction aborted by an error
// and not yet rolled back is not reused.
func TestSessionReusesEndedTx(t *testing.T) {
	db := openDB(t, nil, map[string]string{"k": "v"})
	s := db.NewSession()
	defer s.Close()
	tx1, err := s.Begin(bg, nil)
	require.NoError(t, err)
	id1 := tx1.ID()
	require.NoError(t, tx1.Commit())
	require.ErrorIs(t, tx1.Commit(), tupled.ErrTxDone)
	_, err = tx1.Get(bg, "t", []byte("k"))
	require.ErrorIs(t, err, tupled.ErrTxDone)

	tx2, err := s.Begin(bg, nil)
	require.NoError(t, err)
	require.Same(t, tx1, tx2, "the session did not reuse its ended Tx")
	require.Greater(t, tx2.ID(), id1)
	v, err := tx2.Get(bg, "t", []byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(v))

	// Aborted by an error (no such table), not rolled back: a new Tx.
	_, err = tx2.Get(bg, "nope", []byte("k"))
	require.ErrorIs(t, err, tupled.ErrNoTable)
	tx3, err := s.Begin(bg, nil)
	require.NoError(t, err)
	require.NotSame(t, tx2, tx3)
	require.NoError(t, tx3.Rollback())
}

// TestSessionReuseUnderWaiters: a session's transactions lock a row FOR
// UPDATE one after another in one reused Tx while other transactions
// queue for the same row. Each waiter waits for the transaction that held
// the row when it looked — it wakes when that one ends, not when the
// reused record's later transaction does — and every lock is granted
// exactly once at a time: the counter each holder increments in the row
// ends at the number of transactions (run with -race). The deadlock
// timeout is tiny, so the detector walks the lock's holders — Procs the
// sessions go on reusing — while they begin again.
func TestSessionReuseUnderWaiters(t *testing.T) {
	db := openDB(t, &tupled.Options{DeadlockTimeout: time.Microsecond}, map[string]string{"n": "0"})
	const rounds, waiters = 200, 4
	incr := func(tx *tupled.Tx) error {
		v, err := tx.Lock(bg, "t", []byte("n"), tupled.ForUpdate, tupled.Wait)
		if err != nil {
			return err
		}
		n, err := strconv.Atoi(string(v))
		if err != nil {
			return err
		}
		return tx.Update(bg, "t", []byte("n"), []byte(strconv.Itoa(n+1)))
	}
	var wg sync.WaitGroup
	errc := make(chan error, waiters+1)
	wg.Add(1)
	go func() { // the session, reusing its Tx
		defer wg.Done()
		s := db.NewSession()
		defer s.Close()
		var prev *tupled.Tx
		for range rounds {
			tx, err := s.Begin(bg, nil)
			if err != nil {
				errc <- err
				return
			}
			if prev != nil && tx != prev {
				errc <- errors.New("session did not reuse its Tx")
				return
			}
			prev = tx
			if err := incr(tx); err != nil {
				errc <- err
				return
			}
			if err := tx.Commit(); err != nil {
				errc <- err
				return
			}
		}
	}()
	for i := range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%2 == 0 { // DB.Begin transactions, never reused
				for range rounds {
					if err := db.RunTx(bg, nil, incr); err != nil {
						errc <- err
						return
					}
				}
				return
			}
			s := db.NewSession() // and sessions, reusing theirs
			defer s.Close()
			for range rounds {
				tx, err := s.Begin(bg, nil)
				if err == nil {
					if err = incr(tx); err == nil {
						err = tx.Commit()
					} else {
						_ = tx.Rollback()
					}
				}
				if err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		require.NoError(t, err)
	}
	tx := begin(t, db, nil)
	v, err := tx.Get(bg, "t", []byte("n"))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(rounds*(waiters+1)), string(v))
	require.NoError(t, tx.Commit())
}
