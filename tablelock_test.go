package tupled_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tupled/tupled"
)

// TestLockTable: LockTable's errors with their SQLSTATEs, the lock shown in
// Locks until the transaction ends, and a conflicting NOWAIT request.
func TestLockTable(t *testing.T) {
	db := openDB(t, nil, map[string]string{"1": "a"})
	tx := begin(t, db, nil)
	err := tx.LockTable(bg, "nosuch", tupled.AccessExclusive, false)
	require.True(t, errors.Is(err, tupled.ErrNoTable), "%v", err)
	require.Equal(t, "42P01", tupled.SQLState(err))
	require.NoError(t, tx.Rollback())

	tx = begin(t, db, nil)
	require.NoError(t, tx.LockTable(bg, "t", tupled.Share, false))
	found := false
	for _, l := range db.Locks() {
		found = found || (l.Tag == "relation t" && l.Mode == "ShareLock" && l.Granted && l.TxID == tx.ID())
	}
	require.True(t, found, "%v", db.Locks())

	tx2 := begin(t, db, nil)
	_, err = tx2.Get(bg, "t", []byte("1")) // AccessShare: compatible with Share
	require.NoError(t, err)
	err = tx2.LockTable(bg, "t", tupled.RowExclusive, true)
	require.True(t, errors.Is(err, tupled.ErrLockNotAvailable), "%v", err)
	require.Equal(t, "55P03", tupled.SQLState(err))
	require.Contains(t, err.Error(), `could not obtain lock on relation "t"`)
	require.NoError(t, tx2.Rollback())

	err = tx.LockTable(bg, "t", tupled.TableLockMode(9), false)
	require.Equal(t, "22023", tupled.SQLState(err))
	require.NoError(t, tx.Rollback())
	for _, l := range db.Locks() {
		require.NotEqual(t, "relation t", l.Tag, "left after the transactions ended: %v", l)
	}
}

// TestTxDeadlockTimeout: among two transactions deadlocked on two tables,
// the victim is the one with the short DeadlockTimeout, even though it
// began waiting last; a negative one is refused.
func TestTxDeadlockTimeout(t *testing.T) {
	db := openDB(t, &tupled.Options{DeadlockTimeout: time.Hour}, map[string]string{"1": "a"})
	require.NoError(t, db.CreateTable(bg, "u"))
	_, err := db.Begin(bg, &tupled.TxOptions{DeadlockTimeout: -1})
	require.Equal(t, "22023", tupled.SQLState(err))
	tx1 := begin(t, db, nil)
	tx2 := begin(t, db, &tupled.TxOptions{DeadlockTimeout: time.Millisecond})
	require.NoError(t, tx1.LockTable(bg, "t", tupled.AccessExclusive, false))
	require.NoError(t, tx2.LockTable(bg, "u", tupled.AccessExclusive, false))
	done := make(chan error, 1)
	go func() { done <- tx1.LockTable(bg, "u", tupled.AccessExclusive, false) }()
	require.Eventually(t, func() bool {
		for _, l := range db.Locks() {
			if l.Tag == "relation u" && !l.Granted && l.TxID == tx1.ID() {
				return true
			}
		}
		return false
	}, 20*time.Second, time.Millisecond)
	err = tx2.LockTable(bg, "t", tupled.AccessExclusive, false)
	require.True(t, errors.Is(err, tupled.ErrDeadlock), "%v", err)
	require.NoError(t, tx2.Rollback())
	require.NoError(t, <-done)
	require.NoError(t, tx1.Commit())
}
