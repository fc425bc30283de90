package tupled_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled"
)

// TestBlockCacheSize: the pebble backend's block cache is the caller's to
// size. Negative is refused with ErrInvalid (22023) before anything is
// created; the smallest cache (1 byte: every read goes to the files) and a
// large one both serve every row, across a reopen with the row cache
// emptied (CacheRows 1), on both backends (bbolt ignores it).
func TestBlockCacheSize(t *testing.T) {
	ctx := context.Background()
	_, err := tupled.Open(t.TempDir(), &tupled.Options{BlockCacheSize: -1})
	require.ErrorIs(t, err, tupled.ErrInvalid)
	require.Equal(t, "22023", tupled.SQLState(err))

	for _, be := range backends {
		for _, size := range []int64{1, 512 << 20} {
			dir := t.TempDir()
			opts := &tupled.Options{Backend: be.b, BlockCacheSize: size, CacheRows: 1}
			db, err := tupled.Open(dir, opts)
			require.NoError(t, err)
			require.NoError(t, db.CreateTable(ctx, "t"))
			require.NoError(t, db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
				for i := range 500 {
					if err := tx.Insert(ctx, "t", []byte{byte(i >> 8), byte(i)}, []byte{byte(i)}); err != nil {
						return err
					}
				}
				return nil
			}))
			require.NoError(t, db.Close())
			db, err = tupled.Open(dir, opts)
			require.NoError(t, err)
			require.NoError(t, db.RunTx(ctx, nil, func(tx *tupled.Tx) error {
				for i := range 500 {
					v, err := tx.Lock(ctx, "t", []byte{byte(i >> 8), byte(i)}, tupled.ForShare, tupled.Wait)
					if err != nil {
						return err
					}
					require.Equal(t, []byte{byte(i)}, v, "%s, cache %d: row %d", be.name, size, i)
				}
				return nil
			}))
			require.NoError(t, db.Close())
		}
	}
}
