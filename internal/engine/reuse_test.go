package engine

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/internal/tuplemode"
)

// TestReuseZeroesEveryField: a Tx begun again after its end (what package
// tupled's Session does) starts from a zero Tx but for the records a late
// holder may read (xrec, prec: reset by their own packages) and its
// mutex; its slices may keep their capacity, but hold nothing. A field
// added to Tx without a line in reuse fails here.
func TestReuseZeroesEveryField(t *testing.T) {
	e := open(t, "", nil, false) // on disk: the write set is used
	defer e.Close()
	require.NoError(t, e.CreateTable("t"))
	s := e.NewSession()
	defer s.Close()
	tx := new(Tx)
	require.NoError(t, s.BeginIn(tx, TxOptions{RepeatableRead: true, ReadOnly: false, LockTimeout: 7}))
	first := tx.ID()
	require.NoError(t, tx.Insert(ctx, "t", []byte("k"), []byte("v")))
	require.NoError(t, tx.Savepoint("a"))
	_, err := tx.AdvisoryLock(ctx, AdvisoryKeyInt64(1), false, false)
	require.NoError(t, err)
	_, err = tx.Lock(ctx, "t", []byte("k"), tuplemode.Share, Block)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.True(t, tx.Finished())

	tx.reuse()
	v := reflect.ValueOf(tx).Elem()
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		switch name {
		case "xrec", "prec", "mu":
			continue
		}
		if f.Kind() == reflect.Slice {
			require.Zero(t, f.Len(), "field %s keeps %d elements", name, f.Len())
			for j := range f.Cap() {
				require.True(t, f.Slice(0, f.Cap()).Index(j).IsZero(), "field %s keeps a reference at %d", name, j)
			}
			continue
		}
		require.True(t, f.IsZero(), "field %s not zeroed by reuse", name)
	}

	// And it begins again as a new transaction with the new options
	// (BeginIn calls reuse itself, after the session has seen its
	// previous transaction ended: put that back).
	tx.state = txDone
	require.NoError(t, s.BeginIn(tx, TxOptions{}))
	require.Greater(t, tx.ID(), first)
	require.False(t, tx.rr)
	got, err := tx.Get(ctx, "t", []byte("k"))
	require.NoError(t, err)
	require.Equal(t, "v", string(got))
	require.NoError(t, tx.Commit())
}
