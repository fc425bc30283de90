package heap_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
)

// TestLoadDoesNotResurrectAnOlderValue: a load reads a row's value from
// the backend while the row is out of memory. If, before it inserts what it
// read, another caller loads the row, updates it, a checkpoint writes the
// new value and the row is frozen and evicted again, the value read is
// older than the row: inserting it would bring the old value back as a
// frozen version, visible to everyone. load must see that a row left memory
// meanwhile and read again.
func TestLoadDoesNotResurrectAnOlderValue(t *testing.T) {
	e := newPersistentEnv(t)
	x, h, tbl := e.x, e.h, e.tbl
	checkpoint := e.checkpoint
	settle := func() { e.settle(0) }

	tx := x.Begin()
	r := tbl.RowForInsert([]byte("k"))
	tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: tx.ID(), New: heap.NewTuple(tx.ID(), []byte("v1"), false)})
	r.Unlock()
	x.Commit(tx)
	checkpoint()
	settle()
	require.Zero(t, tbl.CachedRows())

	// The first load stops right after reading v1 from the backend; the
	// row then goes through a whole life in memory and leaves it again.
	var calls atomic.Int32
	heap.SetAfterBackendGet(h, func(key []byte) {
		if calls.Add(1) != 1 {
			return
		}
		r := tbl.PinRow([]byte("k")) // a second load: v1, frozen
		require.NotNil(t, r)
		up := x.Begin()
		r.Lock()
		old := r.Versions()[len(r.Versions())-1]
		tbl.Apply(r, heap.Change{Kind: heap.ChangeUpdate, Xid: up.ID(), Old: old, Xmax: up.ID(), New: heap.NewTuple(up.ID(), []byte("v2"), true)})
		r.Unlock()
		r.Unpin()
		x.Commit(up)
		checkpoint()
		settle()
		require.Zero(t, tbl.CachedRows(), "the updated row was evicted again")
	})

	r = tbl.PinRow([]byte("k"))
	require.NotNil(t, r)
	defer r.Unpin()
	reader := x.Begin()
	snap := x.TakeSnapshot(reader)
	defer x.Abort(reader)
	r.Lock()
	var got []byte
	for _, v := range r.Versions() {
		if h.SatisfiesMVCC(v, snap) {
			got = v.Value()
		}
	}
	r.Unlock()
	require.Equal(t, "v2", string(got), "the load read v1 before the update; it must not bring it back")
	require.GreaterOrEqual(t, calls.Load(), int32(2))
}
