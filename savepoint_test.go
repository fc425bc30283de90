package tupled_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/tupled/tupled"
)

func rowModes(t *testing.T, db *tupled.DB, k string) map[uint64][]tupled.LockStrength {
	t.Helper()
	rl, err := db.RowLocks(bg, "t")
	require.NoError(t, err)
	out := map[uint64][]tupled.LockStrength{}
	for _, r := range rl {
		if string(r.Key) == k {
			for i, id := range r.Lockers {
				out[id] = append(out[id], r.Modes[i])
			}
		}
	}
	return out
}

// aborted-keyrevoke's core: a lock made stronger under a savepoint that
// rolls back leaves the weaker lock from before the savepoint.
func TestSavepointRollbackKeepsTheWeakerOuterLock(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	t1 := begin(t, db, nil)
	_, err := t1.Lock(bg, "t", []byte("a"), tupled.ForKeyShare, tupled.Wait)
	require.NoError(t, err)
	require.NoError(t, t1.Savepoint("s"))
	_, err = t1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	require.ElementsMatch(t, []tupled.LockStrength{tupled.ForKeyShare, tupled.ForUpdate}, rowModes(t, db, "a")[t1.ID()])

	// Under the savepoint's FOR UPDATE another transaction cannot take FOR NO KEY UPDATE.
	t2 := begin(t, db, nil)
	_, err = t2.Lock(bg, "t", []byte("a"), tupled.ForNoKeyUpdate, tupled.NoWait)
	require.ErrorIs(t, err, tupled.ErrLockNotAvailable)
	require.NoError(t, t2.Rollback())

	require.NoError(t, t1.RollbackTo("s"))
	require.Equal(t, []tupled.LockStrength{tupled.ForKeyShare}, rowModes(t, db, "a")[t1.ID()])
	t3 := begin(t, db, nil)
	require.NoError(t, t3.Update(bg, "t", []byte("a"), []byte("2")), "FOR KEY SHARE does not block a non-key update")
	require.NoError(t, t3.Commit())
	// The key-share lock went with the row to its new version: a delete waits for t1.
	t4 := begin(t, db, nil)
	done := async(func() error { return t4.Delete(bg, "t", []byte("a")) })
	eventually(t, "the delete waits for the outer FOR KEY SHARE", func() bool { return waitingOn(db, t4) })
	require.NoError(t, t1.Commit())
	require.NoError(t, <-done)
	require.NoError(t, t4.Commit())
}

func TestSavepointWritesRollBackAndRelease(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	tx := begin(t, db, nil)
	require.NoError(t, tx.Insert(bg, "t", []byte("b"), []byte("2")))
	require.NoError(t, tx.Savepoint("s1"))
	require.NoError(t, tx.Insert(bg, "t", []byte("c"), []byte("3")))
	require.NoError(t, tx.Update(bg, "t", []byte("a"), []byte("10")))
	require.NoError(t, tx.Savepoint("s2"))
	require.NoError(t, tx.Insert(bg, "t", []byte("d"), []byte("4")))
	require.NoError(t, tx.Release("s2")) // d now belongs to s1
	v, err := tx.Get(bg, "t", []byte("d"))
	require.NoError(t, err)
	require.Equal(t, "4", string(v))
	require.NoError(t, tx.RollbackTo("s1"))
	for _, k := range []string{"c", "d"} {
		_, err := tx.Get(bg, "t", []byte(k))
		require.ErrorIs(t, err, tupled.ErrNotFound, k)
	}
	v, err = tx.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v), "the update under s1 is undone")
	require.ErrorIs(t, tx.Release("s2"), tupled.ErrNoSavepoint, "s2 went with the rollback to s1")
	// An unknown name is an error like any other: aborted down to s1.
	_, err = tx.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxAborted)
	require.Equal(t, "3B001", tupled.SQLState(tx.RollbackTo("nope")))
	require.NoError(t, tx.RollbackTo("s1"))
	require.NoError(t, tx.Insert(bg, "t", []byte("c"), []byte("33")), "s1 stays established; a new subtransaction writes")
	require.NoError(t, tx.Commit())

	r := begin(t, db, nil)
	for k, want := range map[string]string{"a": "1", "b": "2", "c": "33"} {
		v, err := r.Get(bg, "t", []byte(k))
		require.NoError(t, err, k)
		require.Equal(t, want, string(v), k)
	}
	_, err = r.Get(bg, "t", []byte("d"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	require.NoError(t, r.Commit())
}

func TestErrorUnderSavepointIsRecoverable(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1", "b": "2"})
	holder := begin(t, db, nil)
	_, err := holder.Lock(bg, "t", []byte("b"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)

	tx := begin(t, db, nil)
	_, err = tx.Lock(bg, "t", []byte("a"), tupled.ForShare, tupled.Wait)
	require.NoError(t, err)
	require.NoError(t, tx.Savepoint("s"))
	_, err = tx.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	_, err = tx.Lock(bg, "t", []byte("b"), tupled.ForShare, tupled.NoWait)
	require.ErrorIs(t, err, tupled.ErrLockNotAvailable)
	// Aborted down to s: its FOR UPDATE is gone at once, the outer FOR SHARE stays.
	require.Equal(t, []tupled.LockStrength{tupled.ForShare}, rowModes(t, db, "a")[tx.ID()])
	_, err = tx.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxAborted)
	require.ErrorIs(t, tx.Savepoint("t"), tupled.ErrTxAborted)
	require.ErrorIs(t, tx.Release("s"), tupled.ErrTxAborted)
	require.NoError(t, tx.RollbackTo("s"))
	v, err := tx.Get(bg, "t", []byte("a"))
	require.NoError(t, err)
	require.Equal(t, "1", string(v))
	require.NoError(t, tx.Commit())
	require.NoError(t, holder.Rollback())

	// Without a savepoint an error aborts the transaction for good.
	tx2 := begin(t, db, nil)
	require.ErrorIs(t, tx2.Insert(bg, "t", []byte("a"), nil), tupled.ErrDuplicateKey)
	require.ErrorIs(t, tx2.RollbackTo("s"), tupled.ErrNoSavepoint, "as PostgreSQL: no such savepoint")
	_, err = tx2.Get(bg, "t", []byte("a"))
	require.ErrorIs(t, err, tupled.ErrTxAborted)
	require.ErrorIs(t, tx2.Commit(), tupled.ErrTxAborted)

	// Commit of a transaction aborted under a savepoint rolls it all back.
	tx3 := begin(t, db, nil)
	require.NoError(t, tx3.Insert(bg, "t", []byte("x"), nil))
	require.NoError(t, tx3.Savepoint("s"))
	require.ErrorIs(t, tx3.Insert(bg, "t", []byte("a"), nil), tupled.ErrDuplicateKey)
	require.ErrorIs(t, tx3.Commit(), tupled.ErrTxAborted)
	r := begin(t, db, nil)
	_, err = r.Get(bg, "t", []byte("x"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	require.NoError(t, r.Commit())
}

// A waiter on a savepoint's lock goes on when the savepoint rolls back,
// while its transaction is still running.
func TestWaiterOnSubtransactionWakesAtRollbackTo(t *testing.T) {
	db := openDB(t, nil, map[string]string{"a": "1"})
	t1 := begin(t, db, nil)
	require.NoError(t, t1.Savepoint("s"))
	_, err := t1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	t2 := begin(t, db, nil)
	done := async(func() error {
		_, err := t2.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
		return err
	})
	eventually(t, "t2 waits", func() bool { return waitingOn(db, t2) })
	require.NoError(t, t1.RollbackTo("s"))
	require.NoError(t, <-done)
	require.Equal(t, []tupled.LockStrength{tupled.ForUpdate}, rowModes(t, db, "a")[t2.ID()])
	require.Empty(t, rowModes(t, db, "a")[t1.ID()])
	require.NoError(t, t1.Commit())
	require.NoError(t, t2.Commit())
}

// The deadlock detector sees a wait for a subtransaction's xid as a wait
// for its transaction.
func TestDeadlockThroughSubtransaction(t *testing.T) {
	db := openDB(t, &tupled.Options{DeadlockTimeout: 20 * time.Millisecond}, map[string]string{"a": "1", "b": "2"})
	t1, t2 := begin(t, db, nil), begin(t, db, nil)
	require.NoError(t, t1.Savepoint("s"))
	_, err := t1.Lock(bg, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	require.NoError(t, t2.Savepoint("s"))
	_, err = t2.Lock(bg, "t", []byte("b"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	e1 := async(func() error {
		_, err := t1.Lock(bg, "t", []byte("b"), tupled.ForUpdate, tupled.Wait)
		return err
	})
	eventually(t, "t1 waits", func() bool { return waitingOn(db, t1) })
	ctx, cancel := context.WithTimeout(bg, 10*time.Second)
	defer cancel()
	_, err2 := t2.Lock(ctx, "t", []byte("a"), tupled.ForUpdate, tupled.Wait)
	err1 := <-e1
	// One of the two is the victim (whose check ran first); its error
	// rolled back its savepoint's lock, so the other went on.
	if errors.Is(err1, tupled.ErrDeadlock) {
		require.NoError(t, err2)
		require.NoError(t, t1.RollbackTo("s"))
	} else {
		require.NoError(t, err1)
		require.ErrorIs(t, err2, tupled.ErrDeadlock)
		require.NoError(t, t2.RollbackTo("s"))
	}
	require.NoError(t, t2.Commit())
	require.NoError(t, t1.Commit())
}

func TestSavepointOnDiskCommitRecordsOnlyKeptWrites(t *testing.T) {
	dir := t.TempDir()
	db, err := tupled.Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(bg, "t"))
	tx := begin(t, db, nil)
	require.NoError(t, tx.Insert(bg, "t", []byte("keep"), []byte("1")))
	require.NoError(t, tx.Savepoint("s"))
	require.NoError(t, tx.Insert(bg, "t", []byte("gone"), []byte("2")))
	require.NoError(t, tx.Update(bg, "t", []byte("keep"), []byte("changed")))
	require.NoError(t, tx.RollbackTo("s"))
	require.NoError(t, tx.Savepoint("s2"))
	require.NoError(t, tx.Insert(bg, "t", []byte("released"), []byte("3")))
	require.NoError(t, tx.Release("s2"))
	require.NoError(t, tx.Commit())
	require.NoError(t, db.Close())

	db, err = tupled.Open(dir, nil)
	require.NoError(t, err)
	defer db.Close()
	r := begin(t, db, nil)
	for k, want := range map[string]string{"keep": "1", "released": "3"} {
		v, err := r.Get(bg, "t", []byte(k))
		require.NoError(t, err, k)
		require.Equal(t, want, string(v), k)
	}
	_, err = r.Get(bg, "t", []byte("gone"))
	require.True(t, errors.Is(err, tupled.ErrNotFound))
	require.NoError(t, r.Commit())
}

// TestRowLockModelWithSavepoints is TestRowLockModel with savepoints that
// are established, released and rolled back at random: the model keeps,
// per transaction, one map of locks per level (level 0 before the first
// savepoint), and a lock is held at the strongest strength of any level.
// A rollback to savepoint j drops levels j and up; a release merges them
// into level j-1; a NOWAIT failure under a savepoint drops the innermost
// level and leaves the transaction aborted until a rollback to.
func TestRowLockModelWithSavepoints(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		keys := []string{"a", "b", "c"}
		db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
		require.NoError(rt, err)
		defer db.Close()
		require.NoError(rt, db.CreateTable(bg, "t"))
		require.NoError(rt, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			for _, k := range keys {
				if err := tx.Insert(bg, "t", []byte(k), []byte("v"+k)); err != nil {
					return err
				}
			}
			return nil
		}))
		type txState struct {
			tx      *tupled.Tx
			levels  []map[string]tupled.LockStrength
			aborted bool
		}
		held := func(s *txState, k string) tupled.LockStrength {
			var m tupled.LockStrength
			for _, l := range s.levels {
				m = max(m, l[k])
			}
			return m
		}
		spName := func(j int) string { return fmt.Sprintf("sp%d", j) }
		const slots = 3
		txs := make([]*txState, slots)
		check := func() {
			open := make([]*tupled.Tx, slots)
			model := make([]map[string]tupled.LockStrength, slots)
			for i, s := range txs {
				if s == nil {
					continue
				}
				open[i], model[i] = s.tx, map[string]tupled.LockStrength{}
				for _, k := range keys {
					if h := held(s, k); h > 0 {
						model[i][k] = h
					}
				}
			}
			checkRowLocks(rt, db, open, model)
		}
		for range rapid.IntRange(1, 80).Draw(rt, "steps") {
			i := rapid.IntRange(0, slots-1).Draw(rt, "slot")
			s := txs[i]
			if s == nil {
				tx, err := db.Begin(bg, nil)
				require.NoError(rt, err)
				txs[i] = &txState{tx: tx, levels: []map[string]tupled.LockStrength{{}}}
				continue
			}
			depth := len(s.levels) - 1 // open savepoints
			op := rapid.IntRange(0, 7).Draw(rt, "op")
			if s.aborted && op != 1 {
				op = 4 // only a rollback to (or a rollback) helps
			}
			switch op {
			case 0:
				require.NoError(rt, s.tx.Commit())
				txs[i] = nil
			case 1:
				require.NoError(rt, s.tx.Rollback())
				txs[i] = nil
			case 2:
				require.NoError(rt, s.tx.Savepoint(spName(depth+1)))
				s.levels = append(s.levels, map[string]tupled.LockStrength{})
			case 3:
				if depth == 0 {
					continue
				}
				j := rapid.IntRange(1, depth).Draw(rt, "release")
				require.NoError(rt, s.tx.Release(spName(j)))
				for _, l := range s.levels[j:] {
					for k, st := range l {
						s.levels[j-1][k] = max(s.levels[j-1][k], st)
					}
				}
				s.levels = s.levels[:j]
			case 4:
				if depth == 0 {
					require.NoError(rt, s.tx.Rollback())
					txs[i] = nil
					break
				}
				j := rapid.IntRange(1, depth).Draw(rt, "rollbackTo")
				require.NoError(rt, s.tx.RollbackTo(spName(j)))
				s.levels = append(s.levels[:j], map[string]tupled.LockStrength{})
				s.aborted = false
			default:
				k := rapid.SampledFrom(keys).Draw(rt, "key")
				st := tupled.LockStrength(rapid.IntRange(1, 4).Draw(rt, "strength"))
				want := true
				for j, o := range txs {
					if j != i && o != nil && conflicts(held(o, k), st) && held(o, k) > 0 {
						want = false
					}
				}
				_, err := s.tx.Lock(bg, "t", []byte(k), st, tupled.NoWait)
				if want {
					require.NoError(rt, err, "slot %d lock %s %v", i, k, st)
					if held(s, k) < st {
						cur := s.levels[depth]
						cur[k] = max(cur[k], st)
					}
					break
				}
				require.ErrorIs(rt, err, tupled.ErrLockNotAvailable, "slot %d lock %s %v", i, k, st)
				if depth == 0 {
					require.NoError(rt, s.tx.Rollback())
					txs[i] = nil
					break
				}
				s.levels[depth] = map[string]tupled.LockStrength{}
				s.aborted = true
				_, err = s.tx.Get(bg, "t", []byte(k))
				require.ErrorIs(rt, err, tupled.ErrTxAborted)
			}
			check()
		}
		for i, s := range txs {
			if s != nil {
				require.NoError(rt, s.tx.Rollback())
				txs[i] = nil
			}
		}
		check()
	})
}
