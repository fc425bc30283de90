package tupled_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// Tx.BulkLoad: COPY FREEZE into a table only the loading transaction uses.

// bulkRows is n rows from first on: keys rowKey(i), values rowValue(i).
func bulkRows(first, n int) (keys, vals [][]byte) {
	for i := first; i < first+n; i++ {
		keys = append(keys, rowKey(i))
		vals = append(vals, rowValue(i))
	}
	return keys, vals
}

// rows counts table's rows visible to a new transaction.
func rows(t *testing.T, db *tupled.DB, table string) int {
	t.Helper()
	n, err := countRows(t, db, table)
	require.NoError(t, err)
	return n
}

// bulkDBs opens the database kinds a load goes different ways in: rows
// in memory, in an arena, in pebble and in bbolt.
func bulkDBs(t *testing.T, fn func(t *testing.T, db *tupled.DB, kind string)) {
	for _, kind := range []string{"memory", "arena", "pebble", "bbolt"} {
		t.Run(kind, func(t *testing.T) {
			var db *tupled.DB
			switch kind {
			case "memory", "arena":
				db = openDB(t, &tupled.Options{MemoryArena: kind == "arena"}, nil)
			default:
				be := tupled.Pebble
				if kind == "bbolt" {
					be = tupled.Bbolt
				}
				var err error
				db, err = tupled.Open(t.TempDir(), &tupled.Options{Backend: be})
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, db.Close()) })
				require.NoError(t, db.CreateTable(bg, "t"))
			}
			fn(t, db, kind)
		})
	}
}

// TestBulkLoad: rows loaded in increasing order and then out of order are
// the transaction's at once, another transaction waits for the table
// (it shows in Locks()) and sees every row once the load commits; the
// rows then behave as any other (updated, deleted, checked for
// duplicates by Insert).
func TestBulkLoad(t *testing.T) {
	bulkDBs(t, func(t *testing.T, db *tupled.DB, kind string) {
		tx := begin(t, db, nil)
		keys, vals := bulkRows(1000, 5000) // in order, above everything
		n, err := tx.BulkLoad(bg, "t", keys, vals)
		require.NoError(t, err)
		require.Equal(t, 5000, n)
		keys, vals = bulkRows(0, 1000) // below the first load: looked up
		keys[0], keys[999], vals[0], vals[999] = keys[999], keys[0], vals[999], vals[0]
		_, err = tx.BulkLoad(bg, "t", keys, vals)
		require.NoError(t, err)
		v, err := tx.Get(bg, "t", rowKey(4321))
		require.NoError(t, err)
		require.Equal(t, rowValue(4321), v, "the loading transaction sees its rows")

		other := begin(t, db, nil)
		got := async(func() error {
			_, err := other.Get(bg, "t", rowKey(7))
			return err
		})
		eventually(t, "the reader waits for the loaded table", func() bool { return waitingOn(db, other) })
		require.NoError(t, tx.Commit())
		require.NoError(t, <-got)
		require.NoError(t, other.Commit())
		require.Equal(t, 6000, rows(t, db, "t"))

		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			if err := tx.Update(bg, "t", rowKey(5), []byte("five")); err != nil {
				return err
			}
			if err := tx.Delete(bg, "t", rowKey(6)); err != nil {
				return err
			}
			return nil
		}))
		err = db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Insert(bg, "t", rowKey(7), []byte("x")) })
		require.ErrorIs(t, err, tupled.ErrDuplicateKey, "a loaded row is a row")
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			v, err = tx.Get(bg, "t", rowKey(5))
			return err
		}))
		require.Equal(t, []byte("five"), v)
		require.Equal(t, 5999, rows(t, db, "t"))
	})
}

// TestBulkLoadAbortEmpties: a duplicate (in the table, or earlier in the
// rows) aborts the transaction and names the row; a transaction that
// loaded and rolled back, or failed, leaves the table empty, and a new one
// can load it again.
func TestBulkLoadAbortEmpties(t *testing.T) {
	bulkDBs(t, func(t *testing.T, db *tupled.DB, kind string) {
		tx := begin(t, db, nil)
		keys, vals := bulkRows(0, 100)
		_, err := tx.BulkLoad(bg, "t", keys, vals)
		require.NoError(t, err)
		require.NoError(t, tx.Rollback())
		require.Equal(t, 0, rows(t, db, "t"), "a rolled-back load leaves nothing")

		tx = begin(t, db, nil)
		_, err = tx.BulkLoad(bg, "t", keys, vals)
		require.NoError(t, err)
		again, _ := bulkRows(50, 10)
		n, err := tx.BulkLoad(bg, "t", again, vals[:10])
		require.ErrorIs(t, err, tupled.ErrDuplicateKey)
		require.Equal(t, 0, n, "the first row of the call is the duplicate")
		require.ErrorIs(t, tx.Commit(), tupled.ErrTxAborted)
		require.Equal(t, 0, rows(t, db, "t"), "a failed load leaves nothing")

		tx = begin(t, db, nil)
		keys, vals = bulkRows(0, 20)
		keys = append(keys, rowKey(3)) // a duplicate within the call
		vals = append(vals, []byte("dup"))
		n, err = tx.BulkLoad(bg, "t", keys, vals)
		require.ErrorIs(t, err, tupled.ErrDuplicateKey)
		require.Equal(t, 20, n)
		require.NoError(t, tx.Rollback())
		require.Equal(t, 0, rows(t, db, "t"))

		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			_, err := tx.BulkLoad(bg, "t", keys[:20], vals[:20])
			return err
		}))
		require.Equal(t, 20, rows(t, db, "t"))
	})
}

// TestBulkLoadRefused: what cannot be undone or would skip a check is
// refused with ErrBulkRefused, and the transaction stays usable.
func TestBulkLoadRefused(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	keys, vals := bulkRows(0, 3)
	refused := func(tx *tupled.Tx, table, why string) {
		t.Helper()
		_, err := tx.BulkLoad(bg, table, keys, vals)
		require.ErrorIs(t, err, tupled.ErrBulkRefused, why)
		var pe *tupled.Error
		require.True(t, errors.As(err, &pe))
		require.Equal(t, "55000", pe.Code)
		_, err = tx.Get(bg, "t", []byte("a"))
		require.NoError(t, err, "%s: the transaction is usable", why)
	}
	tx := begin(t, db, nil)
	refused(tx, "t", "a table with rows")

	require.NoError(t, db.CreateTable(bg, "u"))
	require.NoError(t, tx.Savepoint("s"))
	refused(tx, "u", "under a savepoint")
	require.NoError(t, tx.Release("s"))

	require.NoError(t, tx.Insert(bg, "u", []byte("x"), nil))
	refused(tx, "u", "a table the transaction inserted into")
	require.NoError(t, tx.Rollback())

	require.NoError(t, db.CreateTable(bg, "w"))
	tx = begin(t, db, nil)
	_, err := tx.BulkLoad(bg, "w", keys[:1], vals[:1])
	require.NoError(t, err)
	require.NoError(t, tx.Update(bg, "w", keys[0], []byte("changed")))
	refused(tx, "w", "a table written since its load")
	require.NoError(t, tx.Commit())

	require.NoError(t, db.CreateTable(bg, "ix"))
	require.NoError(t, db.CreateIndex(bg, "ix", "ix_v", tupled.IndexOptions{Key: func(_, v []byte) ([]byte, bool) { return v, true }}))
	tx = begin(t, db, nil)
	refused(tx, "ix", "a table with an index")

	_, err = tx.BulkLoad(bg, "t", keys, vals[:1])
	require.ErrorIs(t, err, tupled.ErrInvalid, "as many values as keys")
}

// TestBulkLoadCrash: rows loaded by a transaction that did not commit are
// gone after a crash, a checkpoint during the load notwithstanding; rows of
// one that committed survive it.
func TestBulkLoadCrash(t *testing.T) {
	for name, be := range map[string]tupled.Backend{"pebble": tupled.Pebble, "bbolt": tupled.Bbolt} {
		t.Run(name, func(t *testing.T) {
			c := openCrashable(t, be)
			require.NoError(t, c.db.CreateTable(bg, "t"))
			require.NoError(t, c.db.CreateTable(bg, "u"))
			require.NoError(t, c.db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				keys, vals := bulkRows(0, 3000)
				_, err := tx.BulkLoad(bg, "t", keys, vals)
				return err
			}))
			tx, err := c.db.Begin(bg, nil)
			require.NoError(t, err)
			keys, vals := bulkRows(0, 2000)
			_, err = tx.BulkLoad(bg, "u", keys[:1000], vals[:1000])
			require.NoError(t, err)
			require.NoError(t, c.db.Checkpoint())
			_, err = tx.BulkLoad(bg, "u", keys[1000:], vals[1000:])
			require.NoError(t, err)
			c.crash() // tx never committed
			require.Equal(t, 3000, rows(t, c.db, "t"), "the committed load survives")
			require.Equal(t, 0, rows(t, c.db, "u"), "the uncommitted load is gone")
			c.reopen()
			require.Equal(t, 3000, rows(t, c.db, "t"))
			require.Equal(t, 0, rows(t, c.db, "u"))
			require.NoError(t, c.db.Close())
		})
	}
}

// TestBulkLoadVerifyAndSalvage: the image of a crash while a bulk load is
// uncommitted verifies clean, and salvage leaves the loading table empty
// (as recovery does) and the committed load whole.
func TestBulkLoadVerifyAndSalvage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	db, err := tupled.Open(dir, &tupled.Options{VacuumInterval: -1, CheckpointInterval: time.Hour, CheckpointWALSize: -1})
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	require.NoError(t, db.CreateTable(bg, "u"))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		keys, vals := bulkRows(0, 3000)
		_, err := tx.BulkLoad(bg, "t", keys, vals)
		return err
	}))
	tx, err := db.Begin(bg, nil)
	require.NoError(t, err)
	keys, vals := bulkRows(0, 1000)
	_, err = tx.BulkLoad(bg, "u", keys, vals)
	require.NoError(t, err)
	img := filepath.Join(t.TempDir(), "img")
	require.NoError(t, copyTree(img, dir)) // every commit and load synced: a crash's image
	require.NoError(t, tx.Rollback())
	require.NoError(t, db.Close())

	vr, err := tupled.Verify(img, io.Discard)
	require.NoError(t, err)
	require.Empty(t, vr.Problems)
	out := filepath.Join(t.TempDir(), "out")
	_, err = tupled.Salvage(img, out, io.Discard)
	require.NoError(t, err)
	sdb, err := tupled.Open(out, nil)
	require.NoError(t, err)
	defer sdb.Close()
	require.Equal(t, 3000, rows(t, sdb, "t"))
	require.Equal(t, 0, rows(t, sdb, "u"), "the uncommitted load is not salvaged")
}

// TestBulkLoadWaitsForTheTable: a load waits for the ACCESS EXCLUSIVE
// lock while another transaction uses the table (the wait shows in
// Locks()), and its context ends the wait.
func TestBulkLoadWaitsForTheTable(t *testing.T) {
	db := openDB(t, nil, nil)
	reader := begin(t, db, nil)
	_, err := reader.Get(bg, "t", []byte("x"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	loader := begin(t, db, nil)
	ctx, cancel := context.WithCancel(bg)
	keys, vals := bulkRows(0, 10)
	done := async(func() error {
		_, err := loader.BulkLoad(ctx, "t", keys, vals)
		return err
	})
	eventually(t, "the load waits for the reader", func() bool { return waitingOn(db, loader) })
	cancel()
	err = <-done
	require.Error(t, err)
	var pe *tupled.Error
	require.True(t, errors.As(err, &pe))
	require.Equal(t, "57014", pe.Code)
	require.NoError(t, reader.Commit())
	require.Equal(t, 0, rows(t, db, "t"))
}

// TestBulkLoadLimits: a key at MaxKeySize loads, one byte more is 54000
// and aborts the transaction (the table is left empty); the empty key is
// a key, as for Insert; the rows count in Stats while in memory or in the
// arena.
func TestBulkLoadLimits(t *testing.T) {
	bulkDBs(t, func(t *testing.T, db *tupled.DB, kind string) {
		long := bytes.Repeat([]byte("k"), tupled.MaxKeySize)
		tx := begin(t, db, nil)
		_, err := tx.BulkLoad(bg, "t", [][]byte{{}, []byte("a"), long}, [][]byte{[]byte("empty"), nil, []byte("v")})
		require.NoError(t, err)
		require.NoError(t, tx.Commit())
		require.Equal(t, 3, rows(t, db, "t"))

		require.NoError(t, db.CreateTable(bg, "u"))
		for _, bad := range [][]byte{append(long, 'k')} {
			tx = begin(t, db, nil)
			_, err = tx.BulkLoad(bg, "u", [][]byte{[]byte("a"), bad}, [][]byte{nil, nil})
			require.Error(t, err, "key of %d bytes", len(bad))
			require.ErrorIs(t, tx.Commit(), tupled.ErrTxAborted)
			require.Equal(t, 0, rows(t, db, "u"))
		}
		if kind == "memory" || kind == "arena" {
			require.Equal(t, uint64(3), db.Stats().TuplesLive)
		}
	})
}
