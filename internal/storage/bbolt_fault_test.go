package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// bboltWithRows makes a bbolt store of n rows at path, closed, and returns
// the file's size.
func bboltWithRows(t *testing.T, path string, n int) int64 {
	t.Helper()
	b, err := OpenBbolt(path, Options{})
	require.NoError(t, err)
	bt := b.NewBatch()
	for i := range n {
		bt.Set(fmt.Appendf(nil, "row/%06d", i), make([]byte, 200))
	}
	require.NoError(t, b.Commit(bt, true))
	require.NoError(t, b.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fi.Size()
}

// TestBboltTruncatedFileIsCorrupt: bbolt maps more than its file, so a page
// past the end of a truncated file is a read the kernel answers with
// SIGBUS, which used to kill the process (CI saw it in tests/corrupt's
// TestCorruptionMatrix, a bbolt file truncated). Open now refuses a file
// shorter than its meta page says, with ErrCorrupted.
func TestBboltTruncatedFileIsCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	size := bboltWithRows(t, path, 2000) // 400 KB of values
	// bbolt grows its file ahead of its pages: cut into the pages.
	for _, keep := range []int64{256 << 10, 64 << 10, 16 << 10} {
		require.NoError(t, os.Truncate(path, keep))
		_, err := OpenBbolt(path, Options{})
		require.ErrorIs(t, err, ErrCorrupted, "truncated to %d of %d bytes", keep, size)
		_, err = OpenBbolt(path, Options{ReadOnly: true})
		require.ErrorIs(t, err, ErrCorrupted, "read-only, truncated to %d of %d bytes", keep, size)
	}
}

// TestBboltFileTruncatedWhileOpenFailsReads: a file cut short under an open
// store (another process, a damaged disk) faults on the next read of a page
// past its end. The read returns ErrCorrupted and fails the backend; the
// process lives.
func TestBboltFileTruncatedWhileOpenFailsReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db")
	bboltWithRows(t, path, 2000)
	b, err := OpenBbolt(path, Options{})
	require.NoError(t, err)
	require.NoError(t, os.Truncate(path, 16<<10)) // the meta pages and a few more
	_, _, err = b.Get([]byte("row/001999"))
	require.ErrorIs(t, err, ErrCorrupted)
	err = b.Scan(nil, nil, func(k, v []byte) error { return nil })
	require.ErrorIs(t, err, ErrCorrupted, "the backend is failed")
	require.ErrorIs(t, b.Close(), ErrCorrupted)
}

// TestBboltCommitOutOfKeyOrder: Commit applies a batch of Sets and Deletes
// in key order (bbolt's in-memory node shifts its later entries for every
// key put before them: a checkpoint whose tables' rows came out of key
// order took 48 s), and the outcome is the batch's own: operations on one
// key keep their order, and a batch with a DeleteRange keeps its order.
func TestBboltCommitOutOfKeyOrder(t *testing.T) {
	b, err := OpenBbolt(filepath.Join(t.TempDir(), "db"), Options{})
	require.NoError(t, err)
	defer b.Close()
	bt := b.NewBatch()
	bt.Set([]byte("z"), []byte("1"))
	bt.Set([]byte("a"), []byte("1"))
	bt.Delete([]byte("z"))
	bt.Set([]byte("m"), []byte("1"))
	bt.Set([]byte("a"), []byte("2"))
	bt.Delete([]byte("m"))
	bt.Set([]byte("m"), []byte("3"))
	require.NoError(t, b.Commit(bt, true))
	got := map[string]string{}
	require.NoError(t, b.Scan(nil, nil, func(k, v []byte) error { got[string(k)] = string(v); return nil }))
	require.Equal(t, map[string]string{"a": "2", "m": "3"}, got)

	bt = b.NewBatch()
	bt.Set([]byte("q"), []byte("kept")) // after the range below in key order, before it in the batch
	bt.DeleteRange([]byte("a"), []byte("n"))
	bt.Set([]byte("b"), []byte("after the range"))
	require.NoError(t, b.Commit(bt, true))
	got = map[string]string{}
	require.NoError(t, b.Scan(nil, nil, func(k, v []byte) error { got[string(k)] = string(v); return nil }))
	require.Equal(t, map[string]string{"b": "after the range", "q": "kept"}, got)
}
