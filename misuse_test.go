package tupled_test

// API misuse (issue 10, findings 8 and 9): a Tx used from several
// goroutines, Close while calls wait, a panicking RunTx, and a Scan callback
// writing into what it was given. Each is an error or harmless, never lost
// or changed data, a hang or a leaked lock.

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// TestTxConcurrentUseRefused: a call on a Tx while another call on it runs
// fails at once with ErrTxBusy (55000) and leaves the running call and the
// transaction as they were.
func TestTxConcurrentUseRefused(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	holder := begin(t, db, nil)
	_, err := holder.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)

	tx := begin(t, db, nil)
	waitErr := async(func() error {
		_, err := tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
		return err
	})
	eventually(t, "tx waits for the row lock", func() bool { return waitingOn(db, tx) })

	busy := func(err error) {
		t.Helper()
		require.ErrorIs(t, err, tupled.ErrTxBusy)
		require.Equal(t, "55000", tupled.SQLState(err))
	}
	busy(tx.Insert(bg, "t", []byte("b"), []byte("2")))
	_, err = tx.Get(bg, "t", []byte("a"))
	busy(err)
	busy(tx.Update(bg, "t", []byte("a"), []byte("x")))
	busy(tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error { return nil }))
	busy(tx.Commit())
	busy(tx.Rollback())
	require.True(t, waitingOn(db, tx), "the refused calls did not disturb the waiting one")

	require.NoError(t, holder.Commit())
	require.NoError(t, <-waitErr)
	// The transaction is intact: its lock is held and it can write and commit.
	require.NoError(t, tx.Insert(bg, "t", []byte("b"), []byte("2")))
	require.NoError(t, tx.Commit())
	check := begin(t, db, nil)
	v, err := check.Get(bg, "t", []byte("b"))
	require.NoError(t, err)
	require.Equal(t, "2", string(v))
}

// TestTxConcurrentInsertsDurable is the finding's scenario: one Tx, four
// goroutines inserting. Every Insert that returned nil is committed and
// survives a crash; the others failed with ErrTxBusy. (Before, all returned
// nil, the race detector reported races on the write set, and hundreds of
// acknowledged rows were missing after the crash.)
func TestTxConcurrentInsertsDurable(t *testing.T) {
	const goroutines, per = 4, 2000
	mem := vfs.NewCrashableMem()
	db, err := tupled.Open("db", &tupled.Options{FS: mem, VacuumInterval: -1})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(bg, "t"))
	tx, err := db.Begin(bg, nil)
	require.NoError(t, err)
	var mu sync.Mutex
	var ok []string
	busy := 0
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				k := fmt.Sprintf("g%d-%05d", g, i)
				err := tx.Insert(bg, "t", []byte(k), []byte(k))
				mu.Lock()
				switch {
				case err == nil:
					ok = append(ok, k)
				case errors.Is(err, tupled.ErrTxBusy):
					busy++
				default:
					t.Errorf("insert %s: %v", k, err)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.NoError(t, tx.Commit())
	t.Logf("%d inserts acknowledged, %d refused as concurrent", len(ok), busy)

	count := func(db *tupled.DB) map[string]bool {
		got := map[string]bool{}
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			return tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error {
				require.Equal(t, string(k), string(v))
				got[string(k)] = true
				return nil
			})
		}))
		return got
	}
	require.Len(t, count(db), len(ok), "visible after Commit")
	crashed := mem.CrashClone(vfs.CrashCloneCfg{})
	db2, err := tupled.Open("db", &tupled.Options{FS: crashed, VacuumInterval: -1})
	require.NoError(t, err)
	defer func() { require.NoError(t, db2.Close()) }()
	got := count(db2)
	for _, k := range ok {
		require.True(t, got[k], "acknowledged insert %s lost in the crash", k)
	}
	require.Len(t, got, len(ok))
}

// TestCloseWakesWaiters: Close ends every lock wait with an error matching
// ErrClosed (SQLSTATE 57P01), leaves no waiter in Locks(), and later calls
// fail with ErrClosed.
func TestCloseWakesWaiters(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1", "b": "2"})
	holder := begin(t, db, nil)
	_, err := holder.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	require.NoError(t, holder.Update(bg, "t", []byte("b"), []byte("3")))

	w1, w2 := begin(t, db, nil), begin(t, db, nil)
	e1 := async(func() error {
		_, err := w1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
		return err
	})
	e2 := async(func() error { return w2.Delete(bg, "t", []byte("b")) })
	eventually(t, "both wait", func() bool { return waitingOn(db, w1) && waitingOn(db, w2) })

	closed := async(db.Close)
	for i, ch := range []<-chan error{e1, e2} {
		select {
		case err := <-ch:
			require.ErrorIs(t, err, tupled.ErrClosed, "waiter %d", i)
			require.Equal(t, "57P01", tupled.SQLState(err), "waiter %d", i)
		case <-time.After(10 * time.Second):
			t.Fatalf("waiter %d not woken by Close:\n%s", i, dumpLocks(db))
		}
	}
	require.NoError(t, <-closed)
	for _, l := range db.Locks() {
		require.True(t, l.Granted, "a waiter is still listed after Close: %+v", l)
	}
	_, err = holder.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrClosed)
	_, err = w1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.ErrorIs(t, err, tupled.ErrClosed)
	require.ErrorIs(t, db.CreateTable(bg, "u"), tupled.ErrClosed)
	require.ErrorIs(t, db.Checkpoint(), tupled.ErrClosed)
	_, err = db.RowLocks(bg, "t")
	require.ErrorIs(t, err, tupled.ErrClosed)
}

// TestCloseWaitsForRunningCalls: Close returns only after a running call has
// returned (here a Scan whose callback is still running), and that call
// ends with ErrClosed rather than reading closed storage.
func TestCloseWaitsForRunningCalls(t *testing.T) {
	db, err := tupled.Open(t.TempDir(), nil)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for i := range 10 {
			if err := tx.Insert(bg, "t", key(i), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}))
	tx, err := db.Begin(bg, nil)
	require.NoError(t, err)
	inside, release := make(chan struct{}), make(chan struct{})
	rows := 0
	scanErr := async(func() error {
		return tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error {
			rows++
			if rows == 1 {
				close(inside)
				<-release
			}
			return nil
		})
	})
	<-inside
	closeErr := make(chan error, 1)
	var closeDone sync.WaitGroup
	closeDone.Add(1)
	go func() { defer closeDone.Done(); closeErr <- db.Close() }()
	eventually(t, "Close refuses new calls", func() bool {
		_, err := db.Begin(bg, nil)
		return errors.Is(err, tupled.ErrClosed)
	})
	select {
	case err := <-closeErr:
		t.Fatalf("Close returned (%v) while a Scan callback was still running", err)
	default:
	}
	close(release)
	require.ErrorIs(t, <-scanErr, tupled.ErrClosed)
	require.Equal(t, 1, rows, "no row is read once Close began")
	closeDone.Wait()
	require.NoError(t, <-closeErr)
}

// TestRunTxPanicRollsBack: a panic in fn rolls the transaction back
// (releasing its row lock) and goes on to the caller.
func TestRunTxPanicRollsBack(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	var id uint64
	require.PanicsWithValue(t, "boom", func() {
		_ = db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			id = tx.ID()
			if _, err := tx.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait); err != nil {
				return err
			}
			if err := tx.Update(bg, "t", []byte("a"), []byte("2")); err != nil {
				return err
			}
			panic("boom")
		})
	})
	for _, l := range db.Locks() {
		require.NotEqual(t, id, l.TxID, "the panicked transaction is still running: %+v", l)
	}
	other := begin(t, db, nil)
	v, err := other.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.NoWait)
	require.NoError(t, err, "the row lock was released")
	require.Equal(t, "1", string(v), "the update was rolled back")
}

// TestScanNeverExposesStoredMemory: writing into the key and value a Scan
// callback (or Get, or Lock) was given changes nothing stored.
func TestScanNeverExposesStoredMemory(t *testing.T) {
	for _, lock := range []tupled.LockStrength{tupled.NoLock, tupled.ForShare} {
		t.Run(lock.String(), func(t *testing.T) {
			db := openDB(t, nil, map[string]string{"a": "value-a", "b": "value-b"})
			tx := begin(t, db, nil)
			require.NoError(t, tx.Scan(bg, "t", tupled.ScanOptions{Lock: lock}, func(k, v []byte) error {
				for i := range v {
					v[i] = 'X'
				}
				k[0] = 'Z'
				return nil
			}))
			v, err := tx.Get(bg, "t", []byte("a"))
			require.NoError(t, err)
			v[0] = 'Y'
			v, err = tx.Lock(bg, "t", []byte("b"), tupled.ForKeyShare, tupled.Wait)
			require.NoError(t, err)
			v[0] = 'Y'
			require.NoError(t, tx.Commit())
			check := begin(t, db, nil)
			var keys, vals []string
			require.NoError(t, check.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error {
				keys, vals = append(keys, string(k)), append(vals, string(v))
				return nil
			}))
			require.Equal(t, []string{"a", "b"}, keys)
			require.Equal(t, []string{"value-a", "value-b"}, vals)
		})
	}
}

// TestScanStopsWhenCallbackEndsTx: a Scan callback may call the Tx's
// methods; if it ends the transaction, the Scan stops at once instead of
// locking more rows for a finished transaction.
func TestScanStopsWhenCallbackEndsTx(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1", "b": "2", "c": "3"})
	tx := begin(t, db, nil)
	n := 0
	err := tx.Scan(bg, "t", tupled.ScanOptions{Lock: tupled.ForUpdate}, func(k, v []byte) error {
		n++
		require.NoError(t, tx.Update(bg, "t", k, []byte("x")), "the callback may write through tx")
		return tx.Commit()
	})
	require.ErrorIs(t, err, tupled.ErrTxDone)
	require.Equal(t, 1, n)
	other := begin(t, db, nil)
	for _, k := range []string{"b", "c"} {
		_, err := other.Lock(bg, "t", []byte(k), tupled.ForUpdate, tupled.NoWait)
		require.NoError(t, err, "row %s is not locked by the finished transaction", k)
	}
	v, err := other.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "x", string(v))
}
