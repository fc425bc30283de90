package tupled_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/tupled/tupled"
)

func valueIndex(_, v []byte) ([]byte, bool) { return v, len(v) > 0 }

// TestIndexAPI pins the API's SQLSTATEs and IndexScan/IndexGet.
func TestIndexAPI(t *testing.T) {
	ctx := context.Background()
	db, err := tupled.Open("", nil)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, "42P01", tupled.SQLState(db.CreateIndex(ctx, "t", "i", tupled.IndexOptions{Key: valueIndex})))
	require.NoError(t, db.CreateTable(ctx, "t"))
	require.NoError(t, db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		for _, k := range []string{"1", "2", "3"} {
			if err := tx.Insert(ctx, "t", []byte(k), []byte("v")); err != nil {
				return err
			}
		}
		return tx.Insert(ctx, "t", []byte("4"), []byte("w"))
	}))
	err = db.CreateIndex(ctx, "t", "t_u", tupled.IndexOptions{Unique: true, Key: valueIndex})
	require.Equal(t, "23505", tupled.SQLState(err))
	require.Empty(t, db.Indexes("t"))
	require.NoError(t, db.CreateIndex(ctx, "t", "t_i", tupled.IndexOptions{Key: valueIndex}))
	require.Equal(t, "42P07", tupled.SQLState(db.CreateIndex(ctx, "t", "t_i", tupled.IndexOptions{Key: valueIndex})))
	require.Equal(t, "22023", tupled.SQLState(db.CreateIndex(ctx, "t", "x", tupled.IndexOptions{})))
	require.Equal(t, []tupled.IndexInfo{{Name: "t_i", Table: "t"}}, db.Indexes("t"))
	tables, err := db.ListTables(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"t"}, tables)

	tx, err := db.Begin(ctx, nil)
	require.NoError(t, err)
	var keys []string
	require.NoError(t, tx.IndexScan(ctx, "t_i", []byte("v"), tupled.ScanOptions{Lock: tupled.ForShare, Limit: 2}, func(k, _ []byte) error {
		keys = append(keys, string(k))
		return nil
	}))
	require.Equal(t, []string{"1", "2"}, keys)
	k, v, err := tx.IndexGet(ctx, "t_i", []byte("w"), tupled.NoLock)
	require.NoError(t, err)
	require.Equal(t, "4 w", string(k)+" "+string(v))
	_, _, err = tx.IndexGet(ctx, "t_i", []byte("zz"), tupled.NoLock)
	require.ErrorIs(t, err, tupled.ErrNotFound)
	_, _, err = tx.IndexGet(ctx, "nope", []byte("zz"), tupled.NoLock)
	require.Equal(t, "42704", tupled.SQLState(err))
	require.NoError(t, tx.Rollback())
	require.Equal(t, "42704", tupled.SQLState(db.DropIndex(ctx, "nope", false)))
	require.NoError(t, db.DropIndex(ctx, "t_i", false))
	require.Empty(t, db.Indexes(""))
}

// TestIndexModel: random inserts, updates, deletes, savepoint rollbacks,
// commits and rollbacks on a table with a unique and a non-unique index;
// after each transaction every row has exactly one entry in each index
// (found by a lookup of its index key) and the lookups find no other row,
// and the unique index never holds two rows with one key.
func TestIndexModel(t *testing.T) {
	ctx := context.Background()
	rapid.Check(t, func(rt *rapid.T) {
		db, err := tupled.Open("", &tupled.Options{VacuumInterval: -1})
		require.NoError(rt, err)
		defer db.Close()
		require.NoError(rt, db.CreateTable(ctx, "t"))
		first := func(_, v []byte) ([]byte, bool) { return v[:1], len(v) > 0 }
		require.NoError(rt, db.CreateIndex(ctx, "t", "u", tupled.IndexOptions{Unique: true, Key: valueIndex}))
		require.NoError(rt, db.CreateIndex(ctx, "t", "n", tupled.IndexOptions{Key: first}))
		for range rapid.IntRange(1, 8).Draw(rt, "txs") {
			tx, err := db.Begin(ctx, nil)
			require.NoError(rt, err)
			sp := false
			for range rapid.IntRange(1, 8).Draw(rt, "ops") {
				k := []byte{rapid.ByteRange('a', 'e').Draw(rt, "key")}
				v := []byte{rapid.ByteRange('p', 'r').Draw(rt, "v1"), rapid.ByteRange('x', 'z').Draw(rt, "v2")}
				switch rapid.IntRange(0, 4).Draw(rt, "op") {
				case 0:
					err = tx.Insert(ctx, "t", k, v)
				case 1:
					err = tx.Update(ctx, "t", k, v)
				case 2:
					err = tx.Delete(ctx, "t", k)
				case 3:
					err = tx.Savepoint("s")
					sp = err == nil
				case 4:
					if sp {
						err = tx.RollbackTo("s")
					}
				}
				if err != nil && !errors.Is(err, tupled.ErrNotFound) {
					if !sp || tx.RollbackTo("s") != nil {
						break
					}
				}
			}
			if rapid.Bool().Draw(rt, "commit") {
				_ = tx.Commit()
			} else {
				_ = tx.Rollback()
			}
			checkIndexes(rt, db, map[string]func(k, v []byte) ([]byte, bool){"u": valueIndex, "n": first})
		}
	})
}

func checkIndexes(rt *rapid.T, db *tupled.DB, indexes map[string]func(k, v []byte) ([]byte, bool)) {
	ctx := context.Background()
	require.NoError(rt, db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
		for name, key := range indexes {
			rows := map[string]bool{}
			ikeys := map[string]bool{}
			if err := tx.Scan(ctx, "t", tupled.ScanOptions{}, func(k, v []byte) error {
				ik, _ := key(k, v)
				rows[string(k)], ikeys[string(ik)] = true, true
				return nil
			}); err != nil {
				return err
			}
			found := map[string]int{}
			for ik := range ikeys {
				if err := tx.IndexScan(ctx, name, []byte(ik), tupled.ScanOptions{}, func(k, v []byte) error {
					found[string(k)]++
					return nil
				}); err != nil {
					return err
				}
			}
			for k := range rows {
				require.Equal(rt, 1, found[k], "index %s, row %q", name, k)
			}
			require.Len(rt, found, len(rows), "index %s", name)
		}
		return nil
	}))
}
