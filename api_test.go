package tupled_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
	"github.com/tupled/tupled/deadlock"
)

func TestCRUDAndSnapshots(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	tx := begin(t, db, nil)
	v, err := tx.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	_, err = tx.Get(bg, "t", []byte("zz"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	require.NoError(t, tx.Insert(bg, "t", []byte("b"), []byte("2")))
	require.NoError(t, tx.Update(bg, "t", []byte("a"), []byte("10")))

	// Another transaction sees neither change until commit.
	other := begin(t, db, nil)
	v, err = other.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	_, err = other.Get(bg, "t", []byte("b"))
	require.ErrorIs(t, err, tupled.ErrNotFound)

	rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err = rr.Get(bg, "t", []byte("a")) // snapshot taken here
	require.NoError(t, err)

	require.NoError(t, tx.Commit())
	v, err = other.Get(bg, "t", []byte("a")) // READ COMMITTED: new snapshot
	require.NoError(t, err)
	require.Equal(t, "10", string(v))
	v, err = rr.Get(bg, "t", []byte("a")) // REPEATABLE READ: old snapshot
	require.NoError(t, err)
	require.Equal(t, "1", string(v))

	require.NoError(t, other.Delete(bg, "t", []byte("b")))
	require.NoError(t, other.Commit())
	check := begin(t, db, nil)
	_, err = check.Get(bg, "t", []byte("b"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	// A deleted key may be inserted again.
	require.NoError(t, check.Insert(bg, "t", []byte("b"), []byte("3")))
	require.NoError(t, check.Commit())
}

func TestRepeatableReadSnapshotAtFirstOperation(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	// A commit after Begin but before the first operation is visible.
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Update(bg, "t", []byte("a"), []byte("2")) }))
	v, err := rr.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "2", string(v))
}

func TestErrorsAndStates(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	require.ErrorIs(t, db.CreateTable(bg, "t"), tupled.ErrTableExists)
	require.Equal(t, "42P07", tupled.SQLState(db.CreateTable(bg, "t")))

	tx := begin(t, db, nil)
	err := tx.Insert(bg, "t", []byte("a"), []byte("x"))
	require.ErrorIs(t, err, tupled.ErrDuplicateKey)
	require.Equal(t, "23505", tupled.SQLState(err))
	// The transaction is aborted now.
	_, err = tx.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxAborted)
	require.Equal(t, "25P02", tupled.SQLState(err))
	require.ErrorIs(t, tx.Commit(), tupled.ErrTxAborted)
	require.NoError(t, tx.Rollback())
	_, err = tx.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxDone)

	tx = begin(t, db, nil)
	_, err = tx.Get(bg, "nope", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrNoTable)
	require.Equal(t, "42P01", tupled.SQLState(err))

	ro := begin(t, db, &tupled.TxOptions{ReadOnly: true})
	_, err = ro.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
	require.ErrorIs(t, err, tupled.ErrReadOnly)
	require.Equal(t, "25006", tupled.SQLState(err))

	// NotFound does not abort.
	tx = begin(t, db, nil)
	require.ErrorIs(t, tx.Update(bg, "t", []byte("zz"), nil), tupled.ErrNotFound)
	_, err = tx.Lock(bg, "t", []byte("zz"), tupled.ForUpdate, tupled.Wait)
	require.ErrorIs(t, err, tupled.ErrNotFound)
	require.NoError(t, tx.Commit())
	require.ErrorIs(t, tx.Commit(), tupled.ErrTxDone)

	require.Equal(t, "", tupled.SQLState(nil))
	require.Equal(t, "", tupled.SQLState(errors.New("x")))
	require.True(t, tupled.IsRetryable(tupled.ErrDeadlock))
	require.True(t, tupled.IsRetryable(tupled.ErrSerialization))
	require.False(t, tupled.IsRetryable(tupled.ErrLockTimeout))

	bad := begin(t, db, nil)
	_, err = bad.Lock(bg, "t", []byte("a"), tupled.LockStrength(9), tupled.Wait)
	require.Error(t, err)
	_, err = db.Begin(bg, &tupled.TxOptions{Isolation: 7})
	require.Error(t, err)
	_, err = tupled.Open("", &tupled.Options{DeadlockStrategy: "bogus"})
	require.Error(t, err)
}

// The root's strategy names are the detector's, and each opens a DB.
func TestDeadlockStrategiesAreTheDetectors(t *testing.T) {
	require.Equal(t, deadlock.Strategies(), tupled.DeadlockStrategies())
	for _, s := range tupled.DeadlockStrategies() {
		db, err := tupled.Open("", &tupled.Options{DeadlockStrategy: s})
		require.NoError(t, err, s)
		require.NoError(t, db.Close())
	}
}

func TestLockWaitShowsInLocksAndRollbackReleases(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	t1 := begin(t, db, nil)
	_, err := t1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	rl, err := db.RowLocks(bg, "t")
	require.NoError(t, err)
	require.Equal(t, []tupled.RowLock{{Key: []byte("a"), Lockers: []uint64{t1.ID()}, Modes: []tupled.LockStrength{tupled.ForUpdate}}}, rl)

	t2 := begin(t, db, nil)
	done := async(func() error {
		_, err := t2.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
		return err
	})
	eventually(t, "t2 waits", func() bool { return waitingOn(db, t2) })
	var waitInfo tupled.LockInfo
	for _, l := range db.Locks() {
		if !l.Granted && l.TxID == t2.ID() {
			waitInfo = l
		}
	}
	require.False(t, waitInfo.WaitStart.IsZero())
	require.NoError(t, t1.Rollback())
	require.NoError(t, <-done)
	require.False(t, waitingOn(db, t2))
	rl, err = db.RowLocks(bg, "t")
	require.NoError(t, err)
	require.Equal(t, []tupled.LockStrength{tupled.ForShare}, rl[0].Modes)
	require.NoError(t, t2.Commit())
	rl, err = db.RowLocks(bg, "t")
	require.NoError(t, err)
	require.Empty(t, rl)
}

func TestNoWaitSkipLockedTimeoutAndCancel(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1", "b": "2"})
	t1 := begin(t, db, nil)
	_, err := t1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)

	t2 := begin(t, db, nil)
	_, err = t2.Lock(bg, "t", []byte("a"), tupled.ForKeyShare, tupled.SkipLocked)
	require.ErrorIs(t, err, tupled.ErrSkipped)
	var got []string
	require.NoError(t, t2.Scan(bg, "t", tupled.ScanOptions{Lock: tupled.ForUpdate, Wait: tupled.SkipLocked, Limit: 1}, func(k, v []byte) error {
		got = append(got, string(k))
		return nil
	}))
	require.Equal(t, []string{"b"}, got)
	_, err = t2.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.NoWait)
	require.ErrorIs(t, err, tupled.ErrLockNotAvailable)
	require.Equal(t, "55P03", tupled.SQLState(err))
	require.Equal(t, `could not obtain lock on row in relation "t"`, err.Error())

	t3 := begin(t, db, &tupled.TxOptions{LockTimeout: 50 * time.Millisecond})
	_, err = t3.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
	require.ErrorIs(t, err, tupled.ErrLockTimeout)
	require.Equal(t, "55P03", tupled.SQLState(err))
	require.False(t, waitingOn(db, t3))

	t4 := begin(t, db, nil)
	ctx, cancel := context.WithCancel(bg)
	done := async(func() error {
		_, err := t4.Lock(ctx, "t", []byte("a"), tupled.ForShare, tupled.Wait)
		return err
	})
	eventually(t, "t4 waits", func() bool { return waitingOn(db, t4) })
	cancel()
	err = <-done
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, "57014", tupled.SQLState(err))
	eventually(t, "t4's wait is gone", func() bool { return !waitingOn(db, t4) })
	_, err = t4.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxAborted)
}

func TestFastPathAndMultiXactStats(t *testing.T) {
	for _, off := range []bool{false, true} {
		db := openDB(t, &tupled.Options{ShareFastPathOff: off}, map[string]string{"a": "1"})
		base := db.Stats()
		t1 := begin(t, db, nil)
		_, err := t1.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
		require.NoError(t, err)
		s := db.Stats()
		if off {
			require.Equal(t, base.LocksMultiXact+1, s.LocksMultiXact)
		} else {
			require.Equal(t, base.LocksSingleXid+1, s.LocksSingleXid, "one FOR SHARE locker is a plain xid")
			require.Equal(t, base.MultiXactsCreated, s.MultiXactsCreated)
		}
		t2 := begin(t, db, nil)
		_, err = t2.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
		require.NoError(t, err)
		s2 := db.Stats()
		require.Greater(t, s2.MultiXactsCreated, s.MultiXactsCreated, "a second sharer makes a multixact")
		rl, err := db.RowLocks(bg, "t")
		require.NoError(t, err)
		require.True(t, rl[0].Multi)
		require.ElementsMatch(t, []uint64{t1.ID(), t2.ID()}, rl[0].Lockers)
		// Re-locking at an equal or weaker strength writes nothing.
		_, err = t1.Lock(bg, "t", []byte("a"), tupled.ForKeyShare, tupled.Wait)
		require.NoError(t, err)
		require.Equal(t, s2.MultiXactsCreated, db.Stats().MultiXactsCreated)
		require.NoError(t, t1.Commit())
		require.NoError(t, t2.Commit())
		rl, err = db.RowLocks(bg, "t")
		require.NoError(t, err)
		require.Empty(t, rl, "locks die with their transactions")
	}
}

func TestRunTxRetriesDeadlocks(t *testing.T) {
	db := openDB(t, &tupled.Options{DeadlockTimeout: 20 * time.Millisecond}, map[string]string{"a": "0", "b": "0"})
	ready := make(chan struct{}, 2)
	run := func(first, second string) <-chan error {
		attempt := 0
		return async(func() error {
			return db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				attempt++
				if _, err := tx.Lock(bg, "t", []byte(first), tupled.ForUpdate, tupled.Wait); err != nil {
					return err
				}
				if attempt == 1 {
					ready <- struct{}{}
					for len(ready) < 2 && attempt == 1 {
						time.Sleep(time.Millisecond)
					}
				}
				_, err := tx.Lock(bg, "t", []byte(second), tupled.ForUpdate, tupled.Wait)
				return err
			})
		})
	}
	e1, e2 := run("a", "b"), run("b", "a")
	require.NoError(t, <-e1)
	require.NoError(t, <-e2)
	require.GreaterOrEqual(t, db.Stats().DeadlocksFound, uint64(1))
}

func TestScanRangeLimitAndLocks(t *testing.T) {
	rows := map[string]string{}
	for i := 0; i < 10; i++ {
		rows[string(key(i))] = "v"
	}
	db := openDB(t, nil, rows)
	tx := begin(t, db, nil)
	var keys []string
	require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{Start: key(2), End: key(7), Limit: 3}, func(k, v []byte) error {
		keys = append(keys, string(k))
		return nil
	}))
	require.Equal(t, []string{"k00002", "k00003", "k00004"}, keys)
	stop := errors.New("stop")
	require.ErrorIs(t, tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error { return stop }), stop)
	n := 0
	require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{Lock: tupled.ForKeyShare}, func(k, v []byte) error { n++; return nil }))
	require.Equal(t, 10, n)
	rl, err := db.RowLocks(bg, "t")
	require.NoError(t, err)
	require.Len(t, rl, 10)
}

func TestClosedDB(t *testing.T) {
	db, err := tupled.Open("", nil)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	tx, err := db.Begin(bg, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.NoError(t, db.Close())
	_, err = db.Begin(bg, nil)
	require.ErrorIs(t, err, tupled.ErrClosed)
	_, err = tx.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrClosed)
}

// TestDeadlockThroughTupleLocks: a cycle that alternates waits on tuple
// locks (held by waiters queued first) and waits on transactions. The waits
// are spaced more than DeadlockTimeout apart, so the transaction that closes
// the cycle is the victim.
func TestDeadlockThroughTupleLocks(t *testing.T) {
	const timeout = 50 * time.Millisecond
	db := openDB(t, &tupled.Options{DeadlockTimeout: timeout}, map[string]string{"a": "1", "b": "2"})
	lock := func(tx *tupled.Tx, k string) error {
		_, err := tx.Lock(bg, "t", []byte(k), tupled.ForUpdate, tupled.Wait)
		return err
	}
	h1, h2, q1, q2 := begin(t, db, nil), begin(t, db, nil), begin(t, db, nil), begin(t, db, nil)
	require.NoError(t, lock(h1, "a"))
	require.NoError(t, lock(h2, "b"))
	spaced := func(tx *tupled.Tx, k string) <-chan error {
		ch := async(func() error { return lock(tx, k) })
		eventually(t, "waits", func() bool { return waitingOn(db, tx) })
		time.Sleep(2 * timeout)
		return ch
	}
	e1 := spaced(q1, "a")                              // holds tuple lock a, waits for h1
	e2 := spaced(q2, "b")                              // holds tuple lock b, waits for h2
	e3 := spaced(h1, "b")                              // queues on tuple lock b behind q2
	e4 := async(func() error { return lock(h2, "a") }) // queues on tuple lock a: closes the cycle
	select {
	case err := <-e4:
		require.ErrorIs(t, err, tupled.ErrDeadlock, "the transaction closing the cycle is the victim")
	case <-time.After(10 * time.Second):
		t.Fatalf("deadlock not detected:\n%s", dumpLocks(db))
	}
	require.NoError(t, <-e2) // h2 is gone
	require.NoError(t, q2.Rollback())
	require.NoError(t, <-e3)
	require.NoError(t, h1.Rollback())
	require.NoError(t, <-e1)
}
