package heap_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
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

// TestInsertAboveTheBackendsKeysSkipsTheGet: a new key above every key
// the backend holds for the table (a bulk load's, a serial's) is known
// new without a backend Get, while a key at or below the largest one is
// still read (a checkpointed, evicted row is found, not shadowed by a
// second insert), also for a table opened over an existing backend.
func TestInsertAboveTheBackendsKeysSkipsTheGet(t *testing.T) {
	e := newPersistentEnv(t)
	var gets atomic.Int32
	heap.SetAfterBackendGet(e.h, func([]byte) { gets.Add(1) })
	for _, k := range []string{"a", "b", "c"} {
		require.True(t, e.write(k, []byte("v"+k), true))
	}
	require.Zero(t, gets.Load(), "an empty table's backend holds no key: no Get for its first inserts")
	e.checkpoint()
	e.settle(0)
	require.Zero(t, e.tbl.CachedRows())

	for _, k := range []string{"d", "e", "f"} {
		require.True(t, e.write(k, []byte("v"+k), true))
	}
	require.Zero(t, gets.Load(), "keys above the checkpointed c: no Get")

	e.write("b", []byte("again"), true) // an update of the checkpointed b
	require.Equal(t, int32(1), gets.Load(), "b is below the backend's largest key: read")
	r := e.tbl.PinRow([]byte("a"))
	require.NotNil(t, r, "a checkpointed, evicted row below the ceiling is found")
	r.Unpin()

	// The checkpoint raises the ceiling before it writes: f, evicted, is found.
	e.checkpoint()
	e.settle(0)
	before := gets.Load()
	r = e.tbl.PinRow([]byte("f"))
	require.NotNil(t, r)
	r.Unpin()
	require.Equal(t, before+1, gets.Load())

	// A heap opened over the same backend finds the ceiling by a reverse
	// seek: e is found, g is new without a Get.
	x2, ms2 := xact.NewManager(), multixact.NewStore()
	h2 := heap.New(x2, ms2, nil)
	h2.SetBackend(e.be)
	t2, err := h2.CreateTable("t")
	require.NoError(t, err)
	var gets2 atomic.Int32
	heap.SetAfterBackendGet(h2, func([]byte) { gets2.Add(1) })
	r = t2.PinRow([]byte("e"))
	require.NotNil(t, r, "a row of the backend, below its largest key")
	r.Unpin()
	require.Equal(t, int32(1), gets2.Load())
	require.Nil(t, t2.PinRow([]byte("g")))
	require.Equal(t, int32(1), gets2.Load(), "g is above every backend key: no Get")
}
