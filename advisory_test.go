package tupled_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// advWaiting reports whether session (or, with session 0, transaction txID)
// shows waiting on key in db.Locks().
func advWaiting(db *tupled.DB, key tupled.AdvisoryKey, session, txID uint64) bool {
	for _, l := range db.Locks() {
		if !l.Granted && l.Tag == key.String() && (session == 0 || l.Session == session) && (txID == 0 || l.TxID == txID) {
			return true
		}
	}
	return false
}

func advHolders(db *tupled.DB, key tupled.AdvisoryKey) []tupled.LockInfo {
	var out []tupled.LockInfo
	for _, l := range db.Locks() {
		if l.Granted && l.Tag == key.String() {
			out = append(out, l)
		}
	}
	return out
}

func TestAdvisoryKeys(t *testing.T) {
	require.Equal(t, "advisory 1", tupled.AdvisoryKeyInt64(1).String())
	require.Equal(t, "advisory 0,1", tupled.AdvisoryKeyPair(0, 1).String())
	require.Equal(t, "advisory -5,7", tupled.AdvisoryKeyPair(-5, 7).String())
	require.NotEqual(t, tupled.AdvisoryKeyInt64(1), tupled.AdvisoryKeyPair(0, 1))

	db := openDB(t, nil, nil)
	s := db.NewSession()
	defer s.Close()
	// The bigint key 1 and the pair (0, 1) are different locks.
	other := db.NewSession()
	defer other.Close()
	require.NoError(t, s.AdvisoryLock(bg, tupled.AdvisoryKeyInt64(1), false))
	ok, err := other.TryAdvisoryLock(bg, tupled.AdvisoryKeyPair(0, 1), false)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = other.TryAdvisoryLock(bg, tupled.AdvisoryKeyInt64(1), true)
	require.NoError(t, err)
	require.False(t, ok)

	var zero tupled.AdvisoryKey
	err = s.AdvisoryLock(bg, zero, false)
	require.ErrorIs(t, err, tupled.ErrInvalid)
	require.Equal(t, "22023", tupled.SQLState(err))
}

// Session locks survive commit and rollback and are counted; transaction
// locks end with their transaction; unlock of a lock not held is false.
func TestAdvisorySessionLifetime(t *testing.T) {
	db := openDB(t, nil, nil)
	k := tupled.AdvisoryKeyInt64(10)
	s := db.NewSession()
	tx, err := s.Begin(bg, nil)
	require.NoError(t, err)
	require.NoError(t, s.AdvisoryLock(bg, k, false))
	require.NoError(t, s.AdvisoryLock(bg, k, false))
	require.NoError(t, tx.AdvisoryLock(bg, k, false)) // the session's own: no conflict
	hs := advHolders(db, k)
	require.Len(t, hs, 1)
	require.Equal(t, s.ID(), hs[0].Session)
	require.Equal(t, tx.ID(), hs[0].TxID)
	require.Equal(t, "ExclusiveLock", hs[0].Mode)
	require.NoError(t, tx.Rollback())
	require.Len(t, advHolders(db, k), 1, "session lock gone at rollback")
	require.Zero(t, advHolders(db, k)[0].TxID)

	// Only the session-level counts: two unlocks, then false.
	for _, want := range []bool{true, true, false} {
		ok, err := s.AdvisoryUnlock(k, false)
		require.NoError(t, err)
		require.Equal(t, want, ok)
	}
	require.Empty(t, advHolders(db, k))
	ok, err := s.AdvisoryUnlock(k, true)
	require.NoError(t, err)
	require.False(t, ok)

	// A transaction lock cannot be unlocked, and goes at commit.
	tx, err = s.Begin(bg, nil)
	require.NoError(t, err)
	require.NoError(t, tx.AdvisoryLock(bg, k, true))
	ok, err = s.AdvisoryUnlock(k, true)
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, advHolders(db, k), 1)
	_, err = s.Begin(bg, nil)
	require.ErrorIs(t, err, tupled.ErrTxBusy)
	require.NoError(t, tx.Commit())
	require.Empty(t, advHolders(db, k))

	// Close releases session locks (unlock_all too).
	require.NoError(t, s.AdvisoryLock(bg, k, true))
	require.NoError(t, s.AdvisoryLock(bg, tupled.AdvisoryKeyPair(1, 2), false))
	require.NoError(t, s.AdvisoryUnlockAll())
	require.Empty(t, advHolders(db, k))
	require.NoError(t, s.AdvisoryLock(bg, k, true))
	require.NoError(t, s.Close())
	require.Empty(t, advHolders(db, k))
	require.ErrorIs(t, s.AdvisoryLock(bg, k, true), tupled.ErrInvalid)
}

// A plain Tx's advisory lock blocks another, shown in Locks(), and is
// released at its end; a try fails without aborting; lock timeout and
// cancellation give 55P03 and 57014 and abort the waiter's transaction.
func TestAdvisoryTxBlocking(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	k := tupled.AdvisoryKeyPair(3, 4)
	t1 := begin(t, db, nil)
	require.NoError(t, t1.AdvisoryLock(bg, k, false))

	t2 := begin(t, db, nil)
	ok, err := t2.TryAdvisoryLock(bg, k, true)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = t2.Get(bg, "t", []byte("a"))
	require.NoError(t, err, "a failed try left the transaction usable")
	done := async(func() error { return t2.AdvisoryLock(bg, k, true) })
	eventually(t, "t2 waits", func() bool { return advWaiting(db, k, 0, t2.ID()) })
	require.NoError(t, t1.Commit())
	require.NoError(t, <-done)
	require.NoError(t, t2.Rollback())
	require.Empty(t, advHolders(db, k))

	holder := begin(t, db, nil)
	require.NoError(t, holder.AdvisoryLock(bg, k, true))
	t3 := begin(t, db, &tupled.TxOptions{LockTimeout: time.Millisecond})
	err = t3.AdvisoryLock(bg, k, false)
	require.ErrorIs(t, err, tupled.ErrLockTimeout)
	require.Equal(t, "55P03", tupled.SQLState(err))
	_, err = t3.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxAborted)

	t4 := begin(t, db, nil)
	ctx, cancel := context.WithCancel(bg)
	done = async(func() error { return t4.AdvisoryLock(ctx, k, false) })
	eventually(t, "t4 waits", func() bool { return advWaiting(db, k, 0, t4.ID()) })
	cancel()
	err = <-done
	require.Equal(t, "57014", tupled.SQLState(err))
	require.True(t, errors.Is(err, context.Canceled))
	require.False(t, advWaiting(db, k, 0, 0))
}

// A deadlock through an advisory lock and a row lock: session S1 holds an
// advisory lock and its transaction waits for a row that T2 holds; T2's
// session asks for the advisory lock. One of them gets 40P01 and the other
// proceeds, as in PostgreSQL.
func TestAdvisoryRowDeadlock(t *testing.T) {
	db := openDB(t, &tupled.Options{DeadlockTimeout: 20 * time.Millisecond}, map[string]string{"r": "1"})
	k := tupled.AdvisoryKeyInt64(1)
	s1, s2 := db.NewSession(), db.NewSession()
	defer s1.Close()
	defer s2.Close()
	tx1, err := s1.Begin(bg, nil)
	require.NoError(t, err)
	tx2, err := s2.Begin(bg, nil)
	require.NoError(t, err)
	require.NoError(t, s1.AdvisoryLock(bg, k, false))
	_, err = tx2.Lock(bg, "t", []byte("r"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	row := async(func() error {
		_, err := tx1.Lock(bg, "t", []byte("r"), tupled.ForUpdate, tupled.Wait)
		return err
	})
	eventually(t, "tx1 waits for the row", func() bool { return waitingOn(db, tx1) })
	adv := async(func() error { return tx2.AdvisoryLock(bg, k, false) })
	var rowErr, advErr error
	select {
	case rowErr = <-row:
		require.NoError(t, tx1.Rollback())
		s1.Close() // the row victim's session lock stays until released
		advErr = <-adv
	case advErr = <-adv:
		require.NoError(t, tx2.Rollback())
		rowErr = <-row
	}
	if rowErr != nil {
		require.ErrorIs(t, rowErr, tupled.ErrDeadlock)
		require.NoError(t, advErr)
	} else {
		require.ErrorIs(t, advErr, tupled.ErrDeadlock)
		require.Equal(t, "40P01", tupled.SQLState(advErr))
	}
}

// A Session outlives its DB gracefully: Close after the DB's Close releases
// nothing twice and panics not; calls fail with ErrClosed.
func TestAdvisorySessionAfterDBClose(t *testing.T) {
	db, err := tupled.Open("", nil)
	require.NoError(t, err)
	s := db.NewSession()
	tx, err := s.Begin(bg, nil)
	require.NoError(t, err)
	require.NoError(t, s.AdvisoryLock(bg, tupled.AdvisoryKeyInt64(1), false))
	require.NoError(t, tx.AdvisoryLock(bg, tupled.AdvisoryKeyInt64(2), true))
	require.NoError(t, db.Close())
	require.ErrorIs(t, s.AdvisoryLock(bg, tupled.AdvisoryKeyInt64(3), false), tupled.ErrClosed)
	require.NoError(t, s.Close())
	require.NoError(t, s.Close())
}
