package tupled_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

func TestUpdateKey(t *testing.T) {
	db := openDB(t, nil, map[string]string{"1": "one", "3": "three", "5": "five"})
	tx := begin(t, db, nil)
	require.NoError(t, tx.UpdateKey(bg, "t", []byte("3"), []byte("4"), []byte("four")))
	_, err := tx.Get(bg, "t", []byte("3"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	v, err := tx.Get(bg, "t", []byte("4"))
	require.NoError(t, err)
	require.Equal(t, "four", string(v))
	require.NoError(t, tx.UpdateKey(bg, "t", []byte("4"), []byte("4"), []byte("four again")), "equal keys: an Update")
	require.ErrorIs(t, tx.UpdateKey(bg, "t", []byte("9"), []byte("8"), nil), tupled.ErrNotFound)
	require.NoError(t, tx.Commit())

	tx = begin(t, db, nil)
	err = tx.UpdateKey(bg, "t", []byte("4"), []byte("5"), []byte("x"))
	require.ErrorIs(t, err, tupled.ErrDuplicateKey)
	require.Equal(t, "23505", tupled.SQLState(err))
	require.NoError(t, tx.Rollback())
	require.Equal(t, map[string]string{"1": "one", "4": "four again", "5": "five"}, dump(t, db), "the failed key update left both rows")

	// A key update takes FOR UPDATE strength: it waits for FOR KEY SHARE.
	ks := begin(t, db, nil)
	_, err = ks.Lock(bg, "t", []byte("4"), tupled.ForKeyShare, tupled.Wait)
	require.NoError(t, err)
	mover := begin(t, db, nil)
	res := async(func() error { return mover.UpdateKey(bg, "t", []byte("4"), []byte("6"), []byte("six")) })
	eventually(t, "the key update waits for FOR KEY SHARE", func() bool { return waitingOn(db, mover) })
	require.NoError(t, ks.Commit())
	require.NoError(t, <-res)
	require.NoError(t, mover.Commit())
}

// TestUpdateKeyIndexes: a key update moves the row's index entries to the
// new key (a unique index keeps its key, now pointing at the new row).
func TestUpdateKeyIndexes(t *testing.T) {
	db := openDB(t, nil, map[string]string{"1": "one", "3": "three"})
	require.NoError(t, db.CreateIndex(bg, "t", "t_v", tupled.IndexOptions{Unique: true, Key: valueIndex}))
	tx := begin(t, db, nil)
	require.NoError(t, tx.UpdateKey(bg, "t", []byte("3"), []byte("4"), []byte("three")))
	k, _, err := tx.IndexGet(bg, "t_v", []byte("three"), tupled.NoLock)
	require.NoError(t, err)
	require.Equal(t, "4", string(k), "the entry follows the row in the mover's transaction")
	require.NoError(t, tx.Commit())
	tx = begin(t, db, nil)
	k, _, err = tx.IndexGet(bg, "t_v", []byte("three"), tupled.NoLock)
	require.NoError(t, err)
	require.Equal(t, "4", string(k))
	require.ErrorIs(t, tx.Insert(bg, "t", []byte("9"), []byte("three")), tupled.ErrDuplicateKey, "one row holds the unique key")
	require.NoError(t, tx.Rollback())
}

// TestUpdateKeyFollowed: a READ COMMITTED locking scan that waits on a row
// whose key another transaction changes follows it to its new key once the
// change commits, rechecking Where and the range there; REPEATABLE READ
// fails; a plain delete or a rolled-back key update is not followed.
// testdata/isolation/keyupdate-follow.spec pins the same cases in SQL
// against PostgreSQL 15.
func TestUpdateKeyFollowed(t *testing.T) {
	rows := map[string]string{"1": "one", "3": "three", "5": "five"}
	scan := func(tx *tupled.Tx, opts tupled.ScanOptions) <-chan []string {
		ch := make(chan []string, 1)
		go func() {
			var got []string
			err := tx.Scan(bg, "t", opts, func(k, v []byte) error { got = append(got, string(k)+"="+string(v)); return nil })
			if err != nil {
				got = append(got, "error: "+err.Error())
			}
			ch <- got
		}()
		return ch
	}
	run := func(t *testing.T, change func(tx *tupled.Tx) error, end func(tx *tupled.Tx) error, opts tupled.ScanOptions, iso tupled.IsolationLevel) []string {
		db := openDB(t, nil, rows)
		s1 := begin(t, db, nil)
		require.NoError(t, change(s1))
		s2 := begin(t, db, &tupled.TxOptions{Isolation: iso})
		got := scan(s2, opts)
		eventually(t, "s2 waits for s1", func() bool { return waitingOn(db, s2) })
		require.NoError(t, end(s1))
		return <-got
	}
	move := func(tx *tupled.Tx) error { return tx.UpdateKey(bg, "t", []byte("3"), []byte("4"), []byte("three")) }
	commit := func(tx *tupled.Tx) error { return tx.Commit() }
	rollback := func(tx *tupled.Tx) error { return tx.Rollback() }
	all := tupled.ScanOptions{Lock: tupled.ForKeyShare}

	require.Equal(t, []string{"1=one", "4=three", "5=five"}, run(t, move, commit, all, tupled.ReadCommitted))
	require.Equal(t, []string{"5=five", "4=three", "1=one"}, run(t, move, commit, tupled.ScanOptions{Lock: tupled.ForShare, Reverse: true}, tupled.ReadCommitted))
	require.Equal(t, []string{"1=one", "3=three", "5=five"}, run(t, move, rollback, all, tupled.ReadCommitted))
	del := func(tx *tupled.Tx) error { return tx.Delete(bg, "t", []byte("3")) }
	require.Equal(t, []string{"1=one", "5=five"}, run(t, del, commit, all, tupled.ReadCommitted))
	require.Equal(t, []string{"1=one"}, run(t, move, commit, tupled.ScanOptions{Lock: tupled.ForUpdate, End: []byte("4")}, tupled.ReadCommitted), "the new key is outside the range")
	moveSet := func(tx *tupled.Tx) error { return tx.UpdateKey(bg, "t", []byte("3"), []byte("4"), []byte("four")) }
	three := func(k, v []byte) bool { return string(v) == "three" }
	require.Empty(t, run(t, moveSet, commit, tupled.ScanOptions{Lock: tupled.ForShare, Where: three}, tupled.ReadCommitted), "the new version fails Where")
	got := run(t, move, commit, all, tupled.RepeatableRead)
	require.Len(t, got, 2)
	require.Contains(t, got[1], "could not serialize access due to concurrent update")
}
