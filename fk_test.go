package tupled_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// childRef: a child row's value is its parent's key ("" is NULL).
func childRef(_, v []byte) ([]byte, bool) { return v, len(v) > 0 }

// setRef rewrites a child to reference newRef (Cascade), nothing (SetNull)
// or "p0" (SetDefault).
func setRef(_, _ []byte, a tupled.FKAction, newRef []byte) ([]byte, error) {
	switch a {
	case tupled.SetNull:
		return []byte{}, nil
	case tupled.SetDefault:
		return []byte("p0"), nil
	}
	return newRef, nil
}

// fkDB opens a database with parents p1, p2, p3 in "parent" and an empty
// "child" table under foreign key fk (fk.Name, Table, RefTable, Ref and
// SetRef filled in when empty).
func fkDB(t *testing.T, fk tupled.ForeignKey) *tupled.DB {
	t.Helper()
	db := openDB(t, nil, nil)
	require.NoError(t, db.CreateTable(bg, "parent"))
	require.NoError(t, db.CreateTable(bg, "child"))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		for _, k := range []string{"p1", "p2", "p3"} {
			if err := tx.Insert(bg, "parent", []byte(k), []byte("v")); err != nil {
				return err
			}
		}
		return nil
	}))
	fk.Name, fk.Table, fk.RefTable = "child_fkey", "child", "parent"
	fk.Ref, fk.SetRef = childRef, setRef
	require.NoError(t, db.AddForeignKey(bg, fk))
	return db
}

func TestForeignKeyChecks(t *testing.T) {
	db := fkDB(t, tupled.ForeignKey{})
	tx := begin(t, db, nil)
	require.NoError(t, tx.Insert(bg, "child", []byte("c1"), []byte("p1")))
	require.NoError(t, tx.Insert(bg, "child", []byte("c0"), nil), "a NULL reference is not checked")
	require.NoError(t, tx.Commit())

	tx = begin(t, db, nil)
	err := tx.Insert(bg, "child", []byte("c2"), []byte("p9"))
	require.Equal(t, "23503", tupled.SQLState(err))
	require.ErrorIs(t, err, tupled.ErrForeignKeyViolation)
	var fe *tupled.ForeignKeyError
	require.True(t, errors.As(err, &fe))
	require.False(t, fe.Referenced)
	require.Equal(t, "p9", string(fe.Ref))
	require.Equal(t, `insert or update on table "child" violates foreign key constraint "child_fkey"`, fe.Error())
	require.NoError(t, tx.Rollback())

	tx = begin(t, db, nil)
	require.Equal(t, "23503", tupled.SQLState(tx.Update(bg, "child", []byte("c1"), []byte("p9"))), "an update to a missing parent")
	require.NoError(t, tx.Rollback())

	tx = begin(t, db, nil)
	err = tx.Delete(bg, "parent", []byte("p1"))
	require.True(t, errors.As(err, &fe))
	require.True(t, fe.Referenced)
	require.Equal(t, "c1", string(fe.ChildKey))
	require.Equal(t, `update or delete on table "parent" violates foreign key constraint "child_fkey" on table "child"`, fe.Error())
	require.NoError(t, tx.Rollback())
	tx = begin(t, db, nil)
	require.Equal(t, "23503", tupled.SQLState(tx.UpdateKey(bg, "parent", []byte("p1"), []byte("p7"), []byte("v"))), "a key change under NO ACTION")
	require.NoError(t, tx.Rollback())
	tx = begin(t, db, nil)
	require.NoError(t, tx.Update(bg, "parent", []byte("p1"), []byte("w")), "a non-key update of a referenced parent")
	require.NoError(t, tx.Delete(bg, "parent", []byte("p2")), "an unreferenced parent")
	require.NoError(t, tx.Commit())

	// DDL.
	require.Equal(t, "2BP01", tupled.SQLState(db.DropTable(bg, "parent", nil)))
	require.Equal(t, "42710", tupled.SQLState(db.AddForeignKey(bg, tupled.ForeignKey{Name: "child_fkey", Table: "child", RefTable: "parent", Ref: childRef})))
	require.Equal(t, "22023", tupled.SQLState(db.AddForeignKey(bg, tupled.ForeignKey{Name: "x", Table: "child", RefTable: "parent"})))
	require.Equal(t, "22023", tupled.SQLState(db.AddForeignKey(bg, tupled.ForeignKey{Name: "x", Table: "child", RefTable: "parent", Ref: childRef, OnDelete: tupled.SetNull})))
	require.Equal(t, "42P01", tupled.SQLState(db.AddForeignKey(bg, tupled.ForeignKey{Name: "x", Table: "nope", RefTable: "parent", Ref: childRef})))
	require.NoError(t, db.DropForeignKey(bg, "child_fkey", false))
	require.Equal(t, "42704", tupled.SQLState(db.DropForeignKey(bg, "child_fkey", false)))
	require.NoError(t, db.DropForeignKey(bg, "child_fkey", true))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		return tx.Insert(bg, "child", []byte("c9"), []byte("p9"))
	}))
	err = db.AddForeignKey(bg, tupled.ForeignKey{Name: "child_fkey", Table: "child", RefTable: "parent", Ref: childRef})
	require.True(t, errors.As(err, &fe), "an existing orphan: %v", err)
	require.Equal(t, "c9", string(fe.Key))
	require.Empty(t, db.ForeignKeys(""), "the failed declaration left nothing")
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Delete(bg, "child", []byte("c9")) }))
	require.NoError(t, db.AddForeignKey(bg, tupled.ForeignKey{Name: "child_fkey", Table: "child", RefTable: "parent", Ref: childRef}))
	require.Len(t, db.ForeignKeys("parent"), 1)
	require.NoError(t, db.DropTable(bg, "child", nil))
	require.Empty(t, db.ForeignKeys(""), "dropping the child dropped its foreign key")
	require.NoError(t, db.DropTable(bg, "parent", nil))
}

func TestForeignKeyActions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fk        tupled.ForeignKey
		updateKey bool
		want      map[string]string
		err       string
	}{
		{"delete cascade", tupled.ForeignKey{OnDelete: tupled.Cascade}, false, map[string]string{"c3": "p3"}, ""},
		{"delete set null", tupled.ForeignKey{OnDelete: tupled.SetNull}, false, map[string]string{"c1": "", "c2": "", "c3": "p3"}, ""},
		{"delete restrict", tupled.ForeignKey{OnDelete: tupled.Restrict}, false, nil, "23503"},
		{"delete set default, default missing", tupled.ForeignKey{OnDelete: tupled.SetDefault}, false, nil, "23503"},
		{"update cascade", tupled.ForeignKey{OnUpdate: tupled.Cascade}, true, map[string]string{"c1": "p7", "c2": "p7", "c3": "p3"}, ""},
		{"update set null", tupled.ForeignKey{OnUpdate: tupled.SetNull}, true, map[string]string{"c1": "", "c2": "", "c3": "p3"}, ""},
		{"update no action", tupled.ForeignKey{OnUpdate: tupled.NoAction, OnDelete: tupled.Cascade}, true, nil, "23503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := fkDB(t, tc.fk)
			require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				for k, v := range map[string]string{"c1": "p1", "c2": "p1", "c3": "p3"} {
					if err := tx.Insert(bg, "child", []byte(k), []byte(v)); err != nil {
						return err
					}
				}
				return nil
			}))
			err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
				if tc.updateKey {
					return tx.UpdateKey(bg, "parent", []byte("p1"), []byte("p7"), []byte("v"))
				}
				return tx.Delete(bg, "parent", []byte("p1"))
			})
			if tc.err != "" {
				require.Equal(t, tc.err, tupled.SQLState(err), "%v", err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, dumpTable(t, db, "child"))
		})
	}
	t.Run("set default", func(t *testing.T) {
		db := fkDB(t, tupled.ForeignKey{OnDelete: tupled.SetDefault})
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			if err := tx.Insert(bg, "parent", []byte("p0"), []byte("default")); err != nil {
				return err
			}
			return tx.Insert(bg, "child", []byte("c1"), []byte("p1"))
		}))
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Delete(bg, "parent", []byte("p1")) }))
		require.Equal(t, map[string]string{"c1": "p0"}, dumpTable(t, db, "child"))
	})
	t.Run("cascade through two levels", func(t *testing.T) {
		db := fkDB(t, tupled.ForeignKey{OnDelete: tupled.Cascade})
		require.NoError(t, db.CreateTable(bg, "grandchild"))
		require.NoError(t, db.AddForeignKey(bg, tupled.ForeignKey{Name: "g_fkey", Table: "grandchild", RefTable: "child", Ref: childRef, OnDelete: tupled.Cascade}))
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
			if err := tx.Insert(bg, "child", []byte("c1"), []byte("p1")); err != nil {
				return err
			}
			return tx.Insert(bg, "grandchild", []byte("g1"), []byte("c1"))
		}))
		require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Delete(bg, "parent", []byte("p1")) }))
		require.Empty(t, dumpTable(t, db, "child"))
		require.Empty(t, dumpTable(t, db, "grandchild"))
	})
}

// TestForeignKeyLocks: the FOR KEY SHARE lock a child insert takes on its
// parent, seen through waiters in db.Locks().
func TestForeignKeyLocks(t *testing.T) {
	db := fkDB(t, tupled.ForeignKey{})

	// A child insert waits for the parent's FOR UPDATE, and then fails
	// when the locker deleted the parent.
	locker := begin(t, db, nil)
	_, err := locker.Lock(bg, "parent", []byte("p3"), tupled.ForUpdate, tupled.Wait)
	require.NoError(t, err)
	ins := begin(t, db, nil)
	res := async(func() error { return ins.Insert(bg, "child", []byte("c3"), []byte("p3")) })
	eventually(t, "the child insert waits for FOR UPDATE", func() bool { return waitingOn(db, ins) })
	require.NoError(t, locker.Delete(bg, "parent", []byte("p3")))
	require.NoError(t, locker.Commit())
	require.Equal(t, "23503", tupled.SQLState(<-res))
	require.NoError(t, ins.Rollback())

	// A non-key update of the parent neither waits for nor blocks child
	// inserters.
	ins = begin(t, db, nil)
	require.NoError(t, ins.Insert(bg, "child", []byte("c1"), []byte("p1")))
	upd := begin(t, db, nil)
	require.NoError(t, upd.Update(bg, "parent", []byte("p1"), []byte("w")))
	ins2 := begin(t, db, nil)
	require.NoError(t, ins2.Insert(bg, "child", []byte("c2"), []byte("p1")))
	require.NoError(t, upd.Commit())
	require.NoError(t, ins2.Commit())

	// A parent delete waits for the child inserter, then fails.
	del := begin(t, db, nil)
	res = async(func() error { return del.Delete(bg, "parent", []byte("p1")) })
	eventually(t, "the parent delete waits for the child inserter", func() bool { return waitingOn(db, del) })
	require.NoError(t, ins.Commit())
	require.Equal(t, "23503", tupled.SQLState(<-res))
	require.NoError(t, del.Rollback())

	// A child insert rolled back with its savepoint releases the parent.
	sp := begin(t, db, nil)
	require.NoError(t, sp.Savepoint("s"))
	require.NoError(t, sp.Insert(bg, "child", []byte("c9"), []byte("p2")))
	require.NoError(t, sp.RollbackTo("s"))
	del = begin(t, db, nil)
	require.NoError(t, del.Delete(bg, "parent", []byte("p2")), "the savepoint's FOR KEY SHARE is gone")
	require.NoError(t, del.Commit())
	require.NoError(t, sp.Commit())
}

// TestForeignKeyRepeatableRead: the check uses the snapshot; the search
// for children a fresh one.
func TestForeignKeyRepeatableRead(t *testing.T) {
	db := fkDB(t, tupled.ForeignKey{})
	rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err := rr.Get(bg, "parent", []byte("p1"))
	require.NoError(t, err)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		if err := tx.Insert(bg, "parent", []byte("p5"), []byte("v")); err != nil {
			return err
		}
		return tx.Insert(bg, "child", []byte("c1"), []byte("p1"))
	}))
	require.Equal(t, "23503", tupled.SQLState(rr.Insert(bg, "child", []byte("c5"), []byte("p5"))), "a parent inserted after the snapshot is missing")
	require.NoError(t, rr.Rollback())
	rr = begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err = rr.Get(bg, "parent", []byte("p2"))
	require.NoError(t, err)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Insert(bg, "child", []byte("c2"), []byte("p2")) }))
	require.Equal(t, "23503", tupled.SQLState(rr.Delete(bg, "parent", []byte("p2"))), "a child committed after the snapshot counts")
	require.NoError(t, rr.Rollback())
	rr = begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err = rr.Get(bg, "child", []byte("c2"))
	require.NoError(t, err)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Delete(bg, "child", []byte("c2")) }))
	require.NoError(t, rr.Delete(bg, "parent", []byte("p2")), "a child deleted after the snapshot no longer counts")
	require.NoError(t, rr.Commit())
}

// TestForeignKeyWorkload: clients insert children of random parents (some
// under a savepoint they roll back, some in transactions they roll back)
// while others update the parents' non-key value, delete parents (NO
// ACTION: refused while referenced) and insert them again, all at once;
// afterwards, and under -race, no child is an orphan, and every failure was
// an expected one (23503 for a missing parent, a deadlock or
// serialization failure retried).
func TestForeignKeyWorkload(t *testing.T) {
	for _, action := range []tupled.FKAction{tupled.NoAction, tupled.Cascade} {
		t.Run(action.String(), func(t *testing.T) {
			db := fkDB(t, tupled.ForeignKey{OnDelete: action})
			const parents, workers, perWorker = 6, 6, 150
			pkey := func(i int) []byte { return []byte(fmt.Sprintf("p%d", i%parents)) }
			var wg sync.WaitGroup
			var inserted atomic.Int64 // children committed
			errc := make(chan error, workers)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					for i := 0; i < perWorker; i++ {
						p := pkey(rng.IntN(parents))
						err := db.RunTx(bg, nil, func(tx *tupled.Tx) error {
							switch w % 3 {
							case 0, 1: // child inserters
								ck := []byte(fmt.Sprintf("c%d-%d", w, i))
								if rng.IntN(4) == 0 {
									if err := tx.Savepoint("s"); err != nil {
										return err
									}
									if err := tx.Insert(bg, "child", ck, p); err != nil {
										return err
									}
									return tx.RollbackTo("s")
								}
								if err := tx.Insert(bg, "child", ck, p); err != nil {
									return err
								}
								if rng.IntN(5) == 0 {
									return errRollback
								}
								return nil
							default: // parent updates, deletes and re-inserts
								switch rng.IntN(3) {
								case 0:
									return tx.Update(bg, "parent", p, []byte(fmt.Sprint(i)))
								case 1:
									return tx.Delete(bg, "parent", p)
								default:
									return tx.Insert(bg, "parent", p, []byte("again"))
								}
							}
						})
						if err == nil && w%3 != 2 {
							inserted.Add(1)
						}
						switch {
						case err == nil, errors.Is(err, errRollback), errors.Is(err, tupled.ErrNotFound):
						case errors.Is(err, tupled.ErrDuplicateKey), errors.Is(err, tupled.ErrForeignKeyViolation):
						case tupled.SQLState(err) == "40P01" || tupled.SQLState(err) == "40001":
						default:
							errc <- fmt.Errorf("worker %d: %w", w, err)
							return
						}
					}
				}(w)
			}
			wg.Wait()
			close(errc)
			for err := range errc {
				t.Fatal(err)
			}
			ps := dumpTable(t, db, "parent")
			cs := dumpTable(t, db, "child")
			for k, v := range cs {
				if _, ok := ps[v]; !ok {
					t.Fatalf("child %s references %s, which does not exist: an orphan (parents %v)", k, v, ps)
				}
			}
			require.Positive(t, inserted.Load(), "no child insert committed: the workload tested nothing")
			if action == tupled.NoAction {
				require.NotEmpty(t, cs, "NO ACTION keeps every committed child")
			}
		})
	}
}

var errRollback = errors.New("rollback")

// TestForeignKeyRepeatableReadParentChanged: under REPEATABLE READ, a
// parent updated (not its key) since the snapshot still takes the child's
// FOR KEY SHARE (heap_lock_tuple locks a KEY SHARE over a committed no-key
// update); a parent deleted since is a serialization failure.
func TestForeignKeyRepeatableReadParentChanged(t *testing.T) {
	db := fkDB(t, tupled.ForeignKey{})
	rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err := rr.Get(bg, "t", []byte("x"))
	require.ErrorIs(t, err, tupled.ErrNotFound)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		if err := tx.Update(bg, "parent", []byte("p1"), []byte("new")); err != nil {
			return err
		}
		return tx.Delete(bg, "parent", []byte("p2"))
	}))
	require.NoError(t, rr.Insert(bg, "child", []byte("c1"), []byte("p1")), "a no-key update since the snapshot")
	require.Equal(t, "40001", tupled.SQLState(rr.Insert(bg, "child", []byte("c2"), []byte("p2"))), "a delete since the snapshot")
}

// TestForeignKeyRefIndex: a foreign key to a unique index of the parent
// (REFERENCES parent (code)), its children found through a child index: an
// update that changes the parent's indexed code is its key change (ON
// UPDATE), one that does not is not; the child's FOR KEY SHARE blocks the
// code change but not other updates.
func TestForeignKeyRefIndex(t *testing.T) {
	db := openDB(t, nil, nil)
	for _, tb := range []string{"parent", "child"} {
		require.NoError(t, db.CreateTable(bg, tb))
	}
	// parent value: "code/payload"; the unique index is the code.
	code := func(_, v []byte) ([]byte, bool) {
		if i := bytes.IndexByte(v, '/'); i > 0 {
			return v[:i], true
		}
		return nil, false
	}
	require.NoError(t, db.CreateIndex(bg, "parent", "parent_code", tupled.IndexOptions{Unique: true, Key: code}))
	require.NoError(t, db.CreateIndex(bg, "child", "child_ref", tupled.IndexOptions{Key: childRef}))
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		if err := tx.Insert(bg, "parent", []byte("p1"), []byte("A/x")); err != nil {
			return err
		}
		return tx.Insert(bg, "parent", []byte("p2"), []byte("B/x"))
	}))
	fk := tupled.ForeignKey{Name: "child_code_fkey", Table: "child", RefTable: "parent", RefIndex: "parent_code", ChildIndex: "child_ref",
		Ref: childRef, SetRef: setRef, OnUpdate: tupled.Cascade}
	require.Equal(t, "22023", tupled.SQLState(db.AddForeignKey(bg, tupled.ForeignKey{Name: "x", Table: "child", RefTable: "parent", RefIndex: "child_ref", Ref: childRef})), "not a unique index of the parent")
	require.Equal(t, "42704", tupled.SQLState(db.AddForeignKey(bg, tupled.ForeignKey{Name: "x", Table: "child", RefTable: "parent", RefIndex: "nope", Ref: childRef})))
	require.NoError(t, db.AddForeignKey(bg, fk))

	tx := begin(t, db, nil)
	require.Equal(t, "23503", tupled.SQLState(tx.Insert(bg, "child", []byte("c0"), []byte("p1"))), "the reference is the code, not the key")
	require.NoError(t, tx.Rollback())
	ins := begin(t, db, nil)
	require.NoError(t, ins.Insert(bg, "child", []byte("c1"), []byte("A")))
	require.NoError(t, ins.Insert(bg, "child", []byte("c2"), []byte("A")))
	upd := begin(t, db, nil)
	require.NoError(t, upd.Update(bg, "parent", []byte("p1"), []byte("A/y")), "the code unchanged: not blocked by FOR KEY SHARE")
	require.NoError(t, upd.Commit())
	mover := begin(t, db, nil)
	res := async(func() error { return mover.Update(bg, "parent", []byte("p1"), []byte("Z/y")) })
	eventually(t, "the code change waits for the children's FOR KEY SHARE", func() bool { return waitingOn(db, mover) })
	require.NoError(t, ins.Commit())
	require.NoError(t, <-res)
	require.NoError(t, mover.Commit())
	require.Equal(t, map[string]string{"c1": "Z", "c2": "Z"}, dumpTable(t, db, "child"), "ON UPDATE CASCADE through the child index")
}

// TestForeignKeyCascadeRepeatableRead: under REPEATABLE READ a cascade
// that reaches a child the snapshot does not see — inserted, or given its
// key, after it — is a serialization failure (PostgreSQL 15's
// isolationtester agrees).
func TestForeignKeyCascadeRepeatableRead(t *testing.T) {
	db := fkDB(t, tupled.ForeignKey{OnDelete: tupled.Cascade})
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error { return tx.Insert(bg, "child", []byte("c2"), []byte("p2")) }))
	rr := begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err := rr.Get(bg, "parent", []byte("p1"))
	require.NoError(t, err)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		if err := tx.Insert(bg, "child", []byte("o1"), []byte("p1")); err != nil {
			return err
		}
		return tx.UpdateKey(bg, "child", []byte("c2"), []byte("c2x"), []byte("p2"))
	}))
	require.Equal(t, "40001", tupled.SQLState(rr.Delete(bg, "parent", []byte("p1"))))
	require.NoError(t, rr.Rollback())
	rr = begin(t, db, &tupled.TxOptions{Isolation: tupled.RepeatableRead})
	_, err = rr.Get(bg, "parent", []byte("p1"))
	require.NoError(t, err)
	require.NoError(t, db.RunTx(bg, nil, func(tx *tupled.Tx) error {
		return tx.UpdateKey(bg, "child", []byte("c2x"), []byte("c2y"), []byte("p2"))
	}))
	require.Equal(t, "40001", tupled.SQLState(rr.Delete(bg, "parent", []byte("p2"))), "a child given its key after the snapshot")
	require.NoError(t, rr.Rollback())
	require.NoError(t, db.RunTx(bg, &tupled.TxOptions{Isolation: tupled.RepeatableRead}, func(tx *tupled.Tx) error { return tx.Delete(bg, "parent", []byte("p2")) }))
	require.Equal(t, map[string]string{"o1": "p1"}, dumpTable(t, db, "child"))
}
