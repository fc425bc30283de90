package engine

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/internal/errs"
	"github.com/tupled/tupled/internal/tuplemode"
)

// The engine is exercised through package tupled's tests; these pin the
// contracts the facade adds itself.

var ctx = context.Background()

func open(t *testing.T, dir string, fs vfs.FS, bbolt bool) *Engine {
	t.Helper()
	e, err := Open(Config{Dir: dir, FS: fs, Bbolt: bbolt, SyncCommit: true, DeadlockTimeout: time.Second,
		CheckpointInterval: time.Hour, CheckpointWALSize: -1, CacheRows: 1 << 10, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return e
}

// TestCloseWaitsForCalls: Close does not close the storage under a call
// counted with Enter; it returns once the call exits, and later calls see
// Closing.
func TestCloseWaitsForCalls(t *testing.T) {
	e := open(t, "", nil, false)
	e.Enter(7)
	closed := make(chan error, 1)
	go func() { closed <- e.Close() }()
	require.Eventually(t, e.Closing, 5*time.Second, time.Millisecond)
	select {
	case <-closed:
		t.Fatal("Close returned while a call was running")
	default:
	}
	e.Exit(7)
	require.NoError(t, <-closed)
	require.NoError(t, e.Close(), "a second Close returns the first one's result")
}

// TestArgumentsCheckedAfterTheTransaction: an invalid lock mode or wait
// policy is ErrInvalid and aborts the transaction, but a finished
// transaction reports that first, as every operation does.
func TestArgumentsCheckedAfterTheTransaction(t *testing.T) {
	e := open(t, "", nil, false)
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	tx, err := e.Begin(TxOptions{})
	require.NoError(t, err)
	_, err = tx.Lock(ctx, "t", []byte("k"), tuplemode.NumModes, Block)
	require.ErrorIs(t, err, errs.ErrInvalid)
	_, err = tx.Get(ctx, "t", []byte("k"))
	require.ErrorIs(t, err, errs.ErrTxAborted)
	tx.Rollback()
	_, err = tx.Lock(ctx, "t", []byte("k"), tuplemode.NumModes, -1)
	require.ErrorIs(t, err, errs.ErrTxDone)
	tx, err = e.Begin(TxOptions{})
	require.NoError(t, err)
	require.ErrorIs(t, tx.Write(ctx, "t", []byte("k"), nil, true, -1), errs.ErrInvalid)
	require.ErrorIs(t, tx.Commit(), errs.ErrTxAborted)
}

// TestDurableBothBackends: a commit survives a reopen on either backend,
// and a dropped table stays dropped.
func TestDurableBothBackends(t *testing.T) {
	for _, bbolt := range []bool{false, true} {
		dir := t.TempDir()
		e := open(t, dir, nil, bbolt)
		require.NoError(t, e.CreateTable("t"))
		require.NoError(t, e.CreateTable("gone"))
		tx, err := e.Begin(TxOptions{})
		require.NoError(t, err)
		require.NoError(t, tx.Insert(ctx, "t", []byte("k"), []byte("v")))
		require.NoError(t, tx.Commit())
		require.NoError(t, e.DropTable("gone", false))
		require.NoError(t, e.Close())

		e = open(t, dir, nil, bbolt)
		require.Equal(t, []string{"t"}, e.Tables())
		tx, err = e.Begin(TxOptions{RepeatableRead: true})
		require.NoError(t, err)
		v, err := tx.Get(ctx, "t", []byte("k"))
		require.NoError(t, err)
		require.Equal(t, "v", string(v))
		tx.Rollback()
		require.NoError(t, e.Close())
	}
}

// TestCallerMayReuseValueBuffers: Insert and Write keep no reference to
// the caller's value, so a caller scribbling over its buffer after the
// call changes nothing stored, whatever the value's size or the engine's
// kind (a store that copies values itself, as issue 28's value slab did,
// must keep it so).
func TestCallerMayReuseValueBuffers(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		e := open(t, dir, nil, false)
		require.NoError(t, e.CreateTable("t"))
		for _, size := range []int{1, 100, 4096, 4097, 10000} {
			buf := make([]byte, size)
			fill := func(b byte) {
				for i := range buf {
					buf[i] = b
				}
			}
			want := func(b byte) []byte {
				w := make([]byte, size)
				for i := range w {
					w[i] = b
				}
				return w
			}
			key := []byte{byte(size), byte(size >> 8)}
			tx, err := e.Begin(TxOptions{})
			require.NoError(t, err)
			fill('a')
			require.NoError(t, tx.Insert(ctx, "t", key, buf))
			fill('x')
			got, err := tx.GetNoCopy(ctx, "t", key)
			require.NoError(t, err)
			require.Equal(t, want('a'), got, "insert of %d bytes, dir %q", size, dir)
			fill('b')
			require.NoError(t, tx.Write(ctx, "t", key, buf, false, Block))
			fill('y')
			require.NoError(t, tx.Commit())
			tx, err = e.Begin(TxOptions{})
			require.NoError(t, err)
			got, err = tx.Get(ctx, "t", key)
			require.NoError(t, err)
			require.Equal(t, want('b'), got, "update of %d bytes, dir %q", size, dir)
			tx.Rollback()
		}
		require.NoError(t, e.Close())
	}
}
