package tupled_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

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
