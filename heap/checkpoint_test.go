package heap_test

import (
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/storage"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// TestCheckpointRowsKeepsRowsDirtyUntilDurable: the rows a checkpoint reads
// stay dirty (so they are neither evicted nor unlinked by vacuum, and never
// loaded again from the backend's older copy) until the checkpoint's batch
// is durable and the caller calls clean; a row written again meanwhile stays
// dirty. CheckpointRows used to mark rows clean while it filled the batch:
// in the window before the backend commit, vacuum could unlink a deleted row
// and a read then loaded the deleted value back from the backend (seen with
// bbolt in tests/crash's TestCrashRandomPointsBbolt).
func TestCheckpointRowsKeepsRowsDirtyUntilDurable(t *testing.T) {
	x, _, _, tbl := persistentTable(t)
	require.True(t, tbl.Persistent())
	insert := func(key string) {
		tx := x.Begin()
		r := tbl.RowForInsert([]byte(key))
		tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: tx.ID(), New: heap.MakeTuple(heap.TupleHeader{Xmin: tx.ID(), Value: []byte("v"), Infomask: heap.XmaxInvalid})})
		r.Unlock()
		x.Commit(tx)
	}
	insert("a")
	insert("b")
	require.Equal(t, 2, tbl.DirtyRows())

	reader := x.Begin()
	snap := x.TakeSnapshot(reader)
	puts := 0
	clean, err := tbl.CheckpointRows(snap, func(key, value []byte, ok bool) error { puts++; return nil })
	require.NoError(t, err)
	x.Abort(reader)
	require.Equal(t, 2, puts)
	require.Equal(t, 2, tbl.DirtyRows(), "rows are clean only once the checkpoint is durable")

	// b is written again before the checkpoint is durable: it stays dirty.
	tx := x.Begin()
	r := tbl.RowForInsert([]byte("b"))
	tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: tx.ID(), Old: r.Versions()[0], Xmax: tx.ID()})
	r.Unlock()
	x.Commit(tx)

	clean()
	require.Equal(t, 1, tbl.DirtyRows(), "a (settled, unchanged) is clean; b was written again")
}

// persistentTable is table "t" of a heap whose backend is a pebble store in
// memory (closed when the test ends).
func persistentTable(t *testing.T) (*xact.Manager, *heap.Heap, storage.Backend, *heap.Table) {
	t.Helper()
	x, ms := xact.NewManager(), multixact.NewStore()
	h := heap.New(x, ms, nil)
	be, err := storage.OpenPebble("db", storage.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	t.Cleanup(func() { be.Close() })
	h.SetBackend(be)
	tbl, err := h.CreateTable("t")
	require.NoError(t, err)
	return x, h, be, tbl
}
