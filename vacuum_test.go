package tupled_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// TestPlainLocksLeaveRowsToTheNextVisitor: a FOR SHARE (or any single
// locker's) lock on a settled row does not put the row back on vacuum's
// worklist — the finished locker's xid is harmless, as in PostgreSQL, where
// the next visitor sets the hint bit. A multixact does put it there (vacuum
// must let go of the set). On disk, such rows stay evictable once their
// locker has ended.
func TestPlainLocksLeaveRowsToTheNextVisitor(t *testing.T) {
	const rows = 200
	for _, disk := range []bool{false, true} {
		t.Run(map[bool]string{false: "memory", true: "disk"}[disk], func(t *testing.T) {
			dir, opts := "", &tupled.Options{VacuumInterval: -1}
			if disk {
				dir, opts = t.TempDir(), &tupled.Options{CacheRows: 10, VacuumInterval: 5 * time.Millisecond}
			}
			db, err := tupled.Open(dir, opts)
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.CreateTable(bg, "t"))
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				for i := 0; i < rows; i++ {
					if err := tx.Insert(bg, "t", key(i), []byte("v")); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, db.Checkpoint())
			db.Vacuum()
			db.Vacuum() // frozen: nothing left to do

			locker := begin(t, db, nil)
			for i := 0; i < rows; i++ {
				_, err := locker.Lock(bg, "t", key(i), tupled.ForShare, tupled.Wait)
				require.NoError(t, err)
			}
			require.NoError(t, locker.Commit())
			if !disk {
				require.Zero(t, db.Vacuum().Rows, "plain locks give vacuum nothing to do")

				a, b := begin(t, db, nil), begin(t, db, nil)
				for _, tx := range []*tupled.Tx{a, b} {
					_, err := tx.Lock(bg, "t", key(3), tupled.ForKeyShare, tupled.Wait)
					require.NoError(t, err)
				}
				require.NoError(t, a.Commit())
				require.NoError(t, b.Commit())
				require.Equal(t, 1, db.Vacuum().Rows, "the row whose xmax is a multixact")

				// The finished lockers' xids, read after the clog dropped
				// them, still mean "not running": a new lock, a writer
				// and a reader all go ahead.
				require.Zero(t, db.Stats().LockWaits)
				w := begin(t, db, &tupled.TxOptions{LockTimeout: time.Second})
				require.NoError(t, w.Update(bg, "t", key(5), []byte("w")))
				require.NoError(t, w.Commit())
				r := begin(t, db, nil)
				v, err := r.Get(bg, "t", key(5))
				require.NoError(t, err)
				require.Equal(t, "w", string(v))
				require.NoError(t, r.Commit())
				return
			}
			eventually(t, "rows whose locker ended are evicted down to the cache size", func() bool {
				return db.Stats().TuplesLive <= 10
			})
		})
	}
}
