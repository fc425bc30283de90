package tupled_test

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// openKind opens a database of one kind: "memory", "pebble", "bbolt" (on
// disk in a temporary directory).
func openKind(t *testing.T, kind string, cacheRows int) (*tupled.DB, string) {
	t.Helper()
	opts := &tupled.Options{VacuumInterval: -1, CacheRows: cacheRows, CheckpointInterval: time.Hour}
	dir := ""
	switch kind {
	case "pebble":
		dir = t.TempDir()
	case "bbolt":
		dir = t.TempDir()
		opts.Backend = tupled.Bbolt
	}
	db, err := tupled.Open(dir, opts)
	require.NoError(t, err)
	return db, dir
}

func fill(t *testing.T, db *tupled.DB, table string, n int) {
	t.Helper()
	tx := begin(t, db, nil)
	for i := 0; i < n; i++ {
		require.NoError(t, tx.Insert(bg, table, rowKey(i), rowValue(i)))
	}
	require.NoError(t, tx.Commit())
}

func countRows(t *testing.T, db *tupled.DB, table string) (int, error) {
	t.Helper()
	tx := begin(t, db, nil)
	defer tx.Rollback()
	n := 0
	err := tx.Scan(bg, table, tupled.ScanOptions{}, func(k, v []byte) error { n++; return nil })
	return n, err
}

// TestDropTable: DropTable removes a table and its rows, a recreated table
// of the same name is empty, missing tables fail with 42P01 unless
// IfExists, CreateTable keeps 42P07 and CreateTableIfNotExists is a no-op,
// names are checked as CreateTable checks them — on every backend.
func TestDropTable(t *testing.T) {
	for _, kind := range []string{"memory", "pebble", "bbolt"} {
		t.Run(kind, func(t *testing.T) {
			db, _ := openKind(t, kind, 0)
			defer db.Close()
			require.NoError(t, db.CreateTable(bg, "t"))
			require.NoError(t, db.CreateTable(bg, "u"))
			err := db.CreateTable(bg, "t")
			require.Equal(t, "42P07", tupled.SQLState(err))
			require.NoError(t, db.CreateTableIfNotExists(bg, "t"))
			require.NoError(t, db.CreateTableWith(bg, "t", &tupled.CreateTableOptions{IfNotExists: true}))
			require.Equal(t, "42P07", tupled.SQLState(db.CreateTableWith(bg, "t", nil)))
			fill(t, db, "t", 300)
			if kind != "memory" {
				require.NoError(t, db.Checkpoint()) // rows in the backend too
			}
			names, err := db.ListTables(bg)
			require.NoError(t, err)
			require.Equal(t, []string{"t", "u"}, names)

			require.NoError(t, db.DropTable(bg, "t", nil))
			names, err = db.ListTables(bg)
			require.NoError(t, err)
			require.Equal(t, []string{"u"}, names)
			_, err = countRows(t, db, "t")
			require.Equal(t, "42P01", tupled.SQLState(err))
			require.True(t, errors.Is(err, tupled.ErrNoTable))
			require.Equal(t, "42P01", tupled.SQLState(db.DropTable(bg, "t", nil)))
			require.NoError(t, db.DropTable(bg, "t", &tupled.DropTableOptions{IfExists: true}))

			require.NoError(t, db.CreateTable(bg, "t"))
			n, err := countRows(t, db, "t")
			require.NoError(t, err)
			require.Zero(t, n, "a recreated table shows the dropped table's rows")
			tx := begin(t, db, nil)
			_, err = tx.Get(bg, "t", rowKey(7))
			require.ErrorIs(t, err, tupled.ErrNotFound)
			require.NoError(t, tx.Commit())

			// Names at and one past the limit.
			long := strings.Repeat("n", tupled.MaxTableNameLen)
			require.NoError(t, db.CreateTable(bg, long))
			fill(t, db, long, 3)
			require.NoError(t, db.DropTable(bg, long, nil))
			require.Equal(t, "42622", tupled.SQLState(db.DropTable(bg, long+"n", nil)))
			require.Equal(t, "42622", tupled.SQLState(db.CreateTableIfNotExists(bg, long+"n")))
			require.Equal(t, "22023", tupled.SQLState(db.CreateTableIfNotExists(bg, "")))
		})
	}
}

// TestDropTableInUse: DropTable refuses, with 55006, a table on which a
// running transaction has an uncommitted write or a row lock, and leaves it
// whole; once that transaction ends it drops, and the transaction's later
// calls on the table fail with 42P01.
func TestDropTableInUse(t *testing.T) {
	for _, kind := range []string{"memory", "pebble"} {
		t.Run(kind, func(t *testing.T) {
			db, _ := openKind(t, kind, 0)
			defer db.Close()
			require.NoError(t, db.CreateTable(bg, "t"))
			fill(t, db, "t", 10)

			w := begin(t, db, nil)
			require.NoError(t, w.Insert(bg, "t", []byte("new"), []byte("v")))
			err := db.DropTable(bg, "t", nil)
			require.Equal(t, "55006", tupled.SQLState(err))
			require.ErrorIs(t, err, tupled.ErrObjectInUse)
			require.NoError(t, w.Commit())
			n, err := countRows(t, db, "t")
			require.NoError(t, err)
			require.Equal(t, 11, n)

			l := begin(t, db, nil)
			_, err = l.Lock(bg, "t", rowKey(3), tupled.ForKeyShare, tupled.Wait)
			require.NoError(t, err)
			require.Equal(t, "55006", tupled.SQLState(db.DropTable(bg, "t", nil)))
			require.NoError(t, l.Rollback())

			r := begin(t, db, nil) // a reader that holds no lock
			_, err = r.Get(bg, "t", rowKey(3))
			require.NoError(t, err)
			require.NoError(t, db.DropTable(bg, "t", nil))
			_, err = r.Get(bg, "t", rowKey(3))
			require.Equal(t, "42P01", tupled.SQLState(err))
			require.NoError(t, r.Rollback())
		})
	}
}

// TestDropTableDuringScan: dropping a table while other transactions scan
// and write it concurrently neither corrupts nor panics; every call fails
// cleanly (42P01 or 55006) or succeeds, and the table is gone at the end.
func TestDropTableDuringScan(t *testing.T) {
	db, _ := openKind(t, "pebble", 50)
	defer db.Close()
	require.NoError(t, db.CreateTable(bg, "t"))
	fill(t, db, "t", 500)
	require.NoError(t, db.Checkpoint())
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				tx, err := db.Begin(bg, nil)
				if err != nil {
					errs <- err
					return
				}
				err = tx.Scan(bg, "t", tupled.ScanOptions{}, func(k, v []byte) error { return nil })
				if err == nil && g%2 == 0 {
					err = tx.Update(bg, "t", rowKey(g*10+i), []byte("x"))
				}
				if err == nil {
					err = tx.Commit()
				} else {
					_ = tx.Rollback()
				}
				if err != nil && tupled.SQLState(err) != "42P01" {
					errs <- err
					return
				}
			}
		}(g)
	}
	var dropErr error
	for {
		dropErr = db.DropTable(bg, "t", nil)
		if tupled.SQLState(dropErr) != "55006" {
			break
		}
	}
	require.NoError(t, dropErr)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	names, err := db.ListTables(bg)
	require.NoError(t, err)
	require.Empty(t, names)
	require.NoError(t, db.Checkpoint())
}

// TestDropTableCrash: a crash after DropTable returned leaves the table
// gone (also after a clean reopen, and whether its rows were in the backend
// or only in the WAL); a crash before leaves it whole. Pebble and bbolt.
func TestDropTableCrash(t *testing.T) {
	for _, be := range []tupled.Backend{tupled.Pebble, tupled.Bbolt} {
		for _, ckpt := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/checkpointed=%v", be, ckpt), func(t *testing.T) {
				c := openCrashable(t, be)
				require.NoError(t, c.db.CreateTable(bg, "t"))
				require.NoError(t, c.db.CreateTable(bg, "keep"))
				fill(t, c.db, "t", 200)
				fill(t, c.db, "keep", 5)
				if ckpt {
					require.NoError(t, c.db.Checkpoint())
				}
				c.crash() // before the drop: whole
				n, err := countRows(t, c.db, "t")
				require.NoError(t, err)
				require.Equal(t, 200, n)

				require.NoError(t, c.db.DropTable(bg, "t", nil))
				c.crash()
				names, err := c.db.ListTables(bg)
				require.NoError(t, err)
				require.Equal(t, []string{"keep"}, names, "the dropped table came back")
				require.NoError(t, c.db.CreateTable(bg, "t"))
				n, err = countRows(t, c.db, "t")
				require.NoError(t, err)
				require.Zero(t, n, "rows of the dropped table came back")
				fill(t, c.db, "t", 2)
				c.crash()
				n, err = countRows(t, c.db, "t")
				require.NoError(t, err)
				require.Equal(t, 2, n)
				c.reopen()
				n, err = countRows(t, c.db, "t")
				require.NoError(t, err)
				require.Equal(t, 2, n)
				n, err = countRows(t, c.db, "keep")
				require.NoError(t, err)
				require.Equal(t, 5, n)
				require.NoError(t, c.db.Close())
			})
		}
	}
}

// TestDropTableVerify: after a drop the backend holds none of the table's
// rows and tupled verify passes.
func TestDropTableVerify(t *testing.T) {
	for _, kind := range []string{"pebble", "bbolt"} {
		t.Run(kind, func(t *testing.T) {
			db, dir := openKind(t, kind, 0)
			require.NoError(t, db.CreateTable(bg, "t"))
			require.NoError(t, db.CreateTable(bg, "keep"))
			fill(t, db, "t", 100)
			fill(t, db, "keep", 3)
			require.NoError(t, db.Checkpoint())
			require.NoError(t, db.DropTable(bg, "t", nil))
			require.NoError(t, db.Close())
			res, err := tupled.Verify(dir, io.Discard)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"keep": 3}, res.Rows)
		})
	}
}

// TestLocksHidesCheckpoint: the checkpoint's internal transaction never
// shows in Locks() while checkpoints run concurrently: the only
// transaction there is the one user transaction open.
func TestLocksHidesCheckpoint(t *testing.T) {
	db, _ := openKind(t, "pebble", 0)
	defer db.Close()
	require.NoError(t, db.CreateTable(bg, "t"))
	fill(t, db, "t", 2000)
	user := begin(t, db, nil)
	_, err := user.Get(bg, "t", rowKey(1))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < 300 && err == nil; i++ {
			err = db.Checkpoint()
		}
		done <- err
	}()
	for running := true; running; {
		select {
		case err := <-done:
			require.NoError(t, err)
			running = false
		default:
		}
		ls := db.Locks()
		// the user's transaction and its table lock (AccessShareLock of
		// its Get), nothing of the checkpoint's
		require.Len(t, ls, 2, "%v", ls)
		for _, l := range ls {
			require.Equal(t, user.ID(), l.TxID, "%v", ls)
		}
	}
	require.NoError(t, user.Rollback())
}

// TestRowLocksCache: RowLocks on a persistent table larger than the cache
// reports the locks held and does not load the table into memory.
func TestRowLocksCache(t *testing.T) {
	db, dir := openKind(t, "pebble", 100)
	require.NoError(t, db.CreateTable(bg, "t"))
	fill(t, db, "t", 3000)
	require.NoError(t, db.Close())
	// Reopened, the rows are in the backend only (recovery loads nothing).
	db, err := tupled.Open(dir, &tupled.Options{VacuumInterval: -1, CacheRows: 100, CheckpointInterval: time.Hour})
	require.NoError(t, err)
	defer db.Close()
	l := begin(t, db, nil)
	_, err = l.Lock(bg, "t", rowKey(2500), tupled.ForShare, tupled.Wait)
	require.NoError(t, err)
	before := db.Stats().TuplesLive
	require.LessOrEqual(t, before, uint64(200))
	rl, err := db.RowLocks(bg, "t")
	require.NoError(t, err)
	require.Len(t, rl, 1)
	require.Equal(t, rowKey(2500), rl[0].Key)
	require.Equal(t, []uint64{l.ID()}, rl[0].Lockers)
	require.Equal(t, before, db.Stats().TuplesLive, "RowLocks loaded rows into the cache")
	require.NoError(t, l.Rollback())
}

// TestDropTableVerifyWAL: tupled verify and salvage read a WAL holding a
// DROP TABLE record (an image taken while the database was open after the
// drop): verify passes and salvage leaves the table out.
func TestDropTableVerifyWAL(t *testing.T) {
	for _, kind := range []string{"pebble", "bbolt"} {
		t.Run(kind, func(t *testing.T) {
			db, dir := openKind(t, kind, 0)
			defer db.Close()
			require.NoError(t, db.CreateTable(bg, "t"))
			require.NoError(t, db.CreateTable(bg, "keep"))
			fill(t, db, "t", 50)
			fill(t, db, "keep", 3)
			require.NoError(t, db.DropTable(bg, "t", nil))
			img := filepath.Join(t.TempDir(), "img")
			require.NoError(t, copyTree(img, dir)) // an image of the open database
			res, err := tupled.Verify(img, io.Discard)
			require.NoError(t, err)
			require.Positive(t, res.WALRecords)
			out := filepath.Join(t.TempDir(), "out")
			_, err = tupled.Salvage(img, out, io.Discard)
			require.NoError(t, err)
			sdb, err := tupled.Open(out, &tupled.Options{Backend: db2backend(kind), VacuumInterval: -1})
			require.NoError(t, err)
			defer sdb.Close()
			names, err := sdb.ListTables(bg)
			require.NoError(t, err)
			require.Equal(t, []string{"keep"}, names)
			n, err := countRows(t, sdb, "keep")
			require.NoError(t, err)
			require.Equal(t, 3, n)
		})
	}
}

func db2backend(kind string) tupled.Backend {
	if kind == "bbolt" {
		return tupled.Bbolt
	}
	return tupled.Pebble
}
