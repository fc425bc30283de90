package tupled

// A DB.Begin transaction's record (engine.Tx, with its Xact and Proc) comes
// from the DB's pool and goes back to it when Commit or Rollback ends the
// transaction (Tx.release): the caller keeps only the small Tx handle.
// These tests hold the handle of an ended transaction while its record
// serves the next one, and check that the old handle cannot reach it.

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func poolDB(t *testing.T) *DB {
	t.Helper()
	db, err := Open("", &Options{VacuumInterval: -1})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	ctx := context.Background()
	require.NoError(t, db.CreateTable(ctx, "t"))
	require.NoError(t, db.RunTx(ctx, nil, func(tx *Tx) error {
		return tx.Insert(ctx, "t", []byte("k"), []byte("v"))
	}))
	return db
}

// TestEndedHandleDoesNotReachReusedRecord: tx1 commits, its record goes
// to the pool, tx2 begins on it (the same record). Every call on tx1
// fails as on an ended transaction — Rollback is the no-op, Commit
// ErrTxDone, the rest ErrTxDone and ErrClosed after Close — and none of
// them touches tx2, which locks, writes and commits as if tx1 had never
// been kept. tx1's ID stays its own.
func TestEndedHandleDoesNotReachReusedRecord(t *testing.T) {
	ctx := context.Background()
	db := poolDB(t)
	// sync.Pool may drop what it is given (at a GC, and at random under
	// the race detector): try until tx2 begins on tx1's record.
	var tx1, tx2 *Tx
	var id1 uint64
	var err error
	for range 100 {
		tx1, err = db.Begin(ctx, nil)
		require.NoError(t, err)
		rec1 := tx1.t
		id1 = tx1.ID()
		_, err = tx1.Lock(ctx, "t", []byte("k"), ForUpdate, Wait)
		require.NoError(t, err)
		require.NoError(t, tx1.Commit())
		require.Nil(t, tx1.t, "the ended handle kept its record")
		tx2, err = db.Begin(ctx, nil)
		require.NoError(t, err)
		if tx2.t == rec1 {
			break
		}
		require.NoError(t, tx2.Rollback())
		tx2 = nil
	}
	require.NotNil(t, tx2, "no DB.Begin reused the ended transaction's record")
	require.Greater(t, tx2.ID(), id1)
	_, err = tx2.Lock(ctx, "t", []byte("k"), ForUpdate, Wait)
	require.NoError(t, err)

	require.Equal(t, id1, tx1.ID())
	_, err = tx1.Get(ctx, "t", []byte("k"))
	require.ErrorIs(t, err, ErrTxDone)
	require.ErrorIs(t, tx1.Update(ctx, "t", []byte("k"), []byte("stale")), ErrTxDone)
	require.ErrorIs(t, tx1.Scan(ctx, "t", ScanOptions{}, func(_, _ []byte) error { return nil }), ErrTxDone)
	require.ErrorIs(t, tx1.Commit(), ErrTxDone)
	require.NoError(t, tx1.Rollback())

	// tx2 still holds its lock and its transaction: tx1's calls reached
	// nothing of it.
	locks := db.Locks()
	held := false
	for _, l := range locks {
		if l.TxID == tx2.ID() && l.Granted {
			held = true
		}
	}
	require.True(t, held, "tx2's lock is gone: %+v", locks)
	require.NoError(t, tx2.Update(ctx, "t", []byte("k"), []byte("v2")))
	require.NoError(t, tx2.Commit())
	tx3, err := db.Begin(ctx, nil)
	require.NoError(t, err)
	got, err := tx3.Get(ctx, "t", []byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v2", string(got))
	require.NoError(t, tx3.Rollback())

	require.NoError(t, db.Close())
	_, err = tx1.Get(ctx, "t", []byte("k"))
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, tx1.Commit(), ErrTxDone)
	require.NoError(t, tx1.Rollback())
	db2, err := Open("", nil) // Cleanup closes db again: Close is idempotent
	require.NoError(t, err)
	require.NoError(t, db2.Close())
}

// TestScanCallbackEndsTransaction: a Scan callback may call the Tx's
// methods, Commit included; the scan still holds the record then, so it
// must not go to the pool for another transaction to begin on. The scan
// fails with ErrTxDone at its next row, and the next DB.Begin gets a
// record of its own.
func TestScanCallbackEndsTransaction(t *testing.T) {
	ctx := context.Background()
	db := poolDB(t)
	require.NoError(t, db.RunTx(ctx, nil, func(tx *Tx) error {
		return tx.Insert(ctx, "t", []byte("l"), []byte("w"))
	}))
	tx, err := db.Begin(ctx, nil)
	require.NoError(t, err)
	rec := tx.t
	rows := 0
	err = tx.Scan(ctx, "t", ScanOptions{}, func(_, _ []byte) error {
		rows++
		return tx.Commit()
	})
	require.Equal(t, 1, rows)
	require.ErrorIs(t, err, ErrTxDone, "the scan went on after its callback's Commit")
	for range 10 {
		next, err := db.Begin(ctx, nil)
		require.NoError(t, err)
		require.NotSame(t, rec, next.t, "a record a scan still held was handed to a new transaction")
		require.NoError(t, next.Rollback())
	}
	require.ErrorIs(t, tx.Commit(), ErrTxDone)
	require.NoError(t, tx.Rollback())
}
