package tupled_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// TestDeleteOverAbortedUpdateReadsAsDelete: a row whose update aborted and
// which another transaction then deleted is a deleted row, as in
// PostgreSQL (heap_delete resets t_ctid, so the aborted update's link is
// gone): REPEATABLE READ fails "due to concurrent delete", exactly as for a
// row that was never updated. The version's link to the aborted update
// once survived the delete, so the in-memory heap said "concurrent update"
// while an on-disk database, reopened in between (which forgets the
// aborted version), said "concurrent delete"; tests/metamorphic found it
// (seed 777, step 83633).
func TestDeleteOverAbortedUpdateReadsAsDelete(t *testing.T) {
	for _, before := range []string{"nothing", "an aborted update", "an aborted savepoint's update", "an aborted lock"} {
		for _, op := range []string{"Delete", "Update", "Lock"} {
			t.Run(before+"/"+op, func(t *testing.T) {
				db := openDB(t, &tupled.Options{VacuumInterval: -1}, map[string]string{"k": "v1"})
				k := []byte("k")
				x := begin(t, db, nil)
				switch before {
				case "an aborted update":
					require.NoError(t, x.Update(bg, "t", k, []byte("v2")))
				case "an aborted savepoint's update":
					require.NoError(t, x.Savepoint("s"))
					require.NoError(t, x.Update(bg, "t", k, []byte("v2")))
					require.NoError(t, x.RollbackTo("s"))
				case "an aborted lock":
					_, err := x.Lock(bg, "t", k, tupled.ForUpdate, tupled.NoWait)
					require.NoError(t, err)
				}
				if before == "an aborted savepoint's update" {
					require.NoError(t, x.Commit()) // the savepoint's update aborted; x commits
				} else {
					require.NoError(t, x.Rollback())
				}

				rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
				_, err := rr.Get(bg, "t", k) // the snapshot sees the row
				require.NoError(t, err)
				del := begin(t, db, nil)
				require.NoError(t, del.Delete(bg, "t", k))
				require.NoError(t, del.Commit())

				switch op {
				case "Delete":
					err = rr.Delete(bg, "t", k)
				case "Update":
					err = rr.Update(bg, "t", k, []byte("v3"))
				case "Lock":
					_, err = rr.Lock(bg, "t", k, tupled.ForUpdate, tupled.NoWait)
				}
				require.ErrorIs(t, err, tupled.ErrSerialization)
				if op != "Lock" { // Lock's 40001 has one text for both
					require.EqualError(t, err, "could not serialize access due to concurrent delete")
				}

				// READ COMMITTED finds no row.
				rc := begin(t, db, nil)
				_, err = rc.Lock(bg, "t", k, tupled.ForUpdate, tupled.NoWait)
				require.ErrorIs(t, err, tupled.ErrNotFound)
			})
		}
	}
}
