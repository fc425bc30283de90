package storage

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestIngest: pairs ingested under checksums read back as Set's would,
// are durable at once (a crash that keeps nothing unsynced keeps them),
// sit beside keys written by batches, and input out of order or with a
// bad key is refused without harm.
func TestIngest(t *testing.T) {
	fs := vfs.NewCrashableMem()
	be := WithChecksums(openPebbleFS(t, fs))
	require.True(t, CanIngest(be))
	b := be.NewBatch()
	b.Set([]byte("a"), []byte("batch"))
	require.NoError(t, be.Commit(b, true))
	var keys, vals [][]byte
	for i := range 5000 {
		keys = append(keys, []byte(fmt.Sprintf("k%06d", i)))
		vals = append(vals, []byte(fmt.Sprintf("value %d", i)))
	}
	ing := be.(Ingester)
	require.NoError(t, ing.Ingest(keys, vals))
	require.Error(t, ing.Ingest([][]byte{[]byte("z2"), []byte("z1")}, [][]byte{nil, nil}), "keys out of order")
	require.Error(t, ing.Ingest([][]byte{{}}, [][]byte{nil}), "an empty key")
	require.Error(t, ing.Ingest(keys[:1], nil), "as many values as keys")

	check := func(be Backend) {
		t.Helper()
		n := 0
		require.NoError(t, be.Scan([]byte("k"), []byte("l"), func(k, v []byte) error {
			require.Equal(t, fmt.Sprintf("value %d", n), string(v))
			n++
			return nil
		}))
		require.Equal(t, 5000, n)
		v, ok, err := be.Get([]byte("a"))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "batch", string(v))
		_, ok, err = be.Get([]byte("z1"))
		require.NoError(t, err)
		require.False(t, ok, "a refused ingest wrote nothing")
	}
	check(be)
	crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 0})
	require.NoError(t, be.Close())
	rb := WithChecksums(openPebbleFS(t, crashed))
	defer rb.Close()
	check(rb)
}
