package heap_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

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

// TestCheckpointRowsSkipsKeysTheBackendNeverHeld: a row with no version
// visible to the checkpoint's snapshot is a delete for the backend only if
// the backend may hold its key. A bulk load's rows, in progress during a
// checkpoint, are not written at all (they were written as deletes of keys
// that exist nowhere, every checkpoint of the load, each a tombstone for
// the backend to compact); nor is the key of an aborted insert. A deleted
// row that was checkpointed is still deleted, and rows come in key order.
func TestCheckpointRowsSkipsKeysTheBackendNeverHeld(t *testing.T) {
	x, _, _, tbl := persistentTable(t)
	type put struct {
		key string
		ok  bool
	}
	checkpoint := func() []put {
		t.Helper()
		reader := x.Begin()
		defer x.Abort(reader)
		var puts []put
		clean, err := tbl.CheckpointRows(x.TakeSnapshot(reader), func(key, _ []byte, ok bool) error {
			puts = append(puts, put{string(key), ok})
			return nil
		})
		require.NoError(t, err)
		clean()
		return puts
	}
	insert := func(tx *xact.Xact, key string) {
		r := tbl.RowForInsert([]byte(key))
		tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: tx.ID(), New: heap.NewTuple(tx.ID(), []byte("v"), false)})
		r.Unlock()
	}

	load := x.Begin()
	for _, k := range []string{"b", "a", "c"} {
		insert(load, k)
	}
	require.Empty(t, checkpoint(), "the load is in progress and its keys are nowhere")
	require.Equal(t, 3, tbl.DirtyRows(), "still dirty: not settled")
	x.Commit(load)
	require.Equal(t, []put{{"a", true}, {"b", true}, {"c", true}}, checkpoint())
	require.Zero(t, tbl.DirtyRows())

	del := x.Begin()
	r := tbl.RowForInsert([]byte("b"))
	tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: del.ID(), Old: r.Versions()[0], Xmax: del.ID()})
	r.Unlock()
	x.Commit(del)
	aborted := x.Begin()
	insert(aborted, "d")
	x.Abort(aborted)
	require.Equal(t, []put{{"b", false}}, checkpoint(), "b's delete is written; d never existed")
	require.Zero(t, tbl.DirtyRows())
}

// TestCheckpointRowsUnderConcurrentWrites: checkpoints run while a writer
// inserts and updates rows in random key order, committing some at once
// and leaving others in progress across checkpoints. Every checkpoint
// passes each row once, in key order (the dirty list's kept, sorted
// leftovers merged with what was written since), and when the writer
// stops, what the checkpoints put equals the committed state and no row
// stays dirty.
func TestCheckpointRowsUnderConcurrentWrites(t *testing.T) {
	x, _, _, tbl := persistentTable(t)
	backend := map[string]string{}
	checkpoint := func() {
		reader := x.Begin()
		defer x.Abort(reader)
		var last string
		first := true
		clean, err := tbl.CheckpointRows(x.TakeSnapshot(reader), func(key, value []byte, ok bool) error {
			if !first && string(key) <= last {
				t.Errorf("checkpoint put %q after %q", key, last)
			}
			first, last = false, string(key)
			if ok {
				backend[string(key)] = string(value)
			} else {
				delete(backend, string(key))
			}
			return nil
		})
		require.NoError(t, err)
		clean()
	}

	want := map[string]string{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		rng := rand.New(rand.NewPCG(1, 2))
		var open *xact.Xact // a transaction left in progress for a while
		var openWrites map[string]string
		for i := 0; ; i++ {
			select {
			case <-stop:
				if open != nil {
					x.Commit(open)
					copyInto(want, openWrites)
				}
				return
			default:
			}
			tx := x.Begin()
			key := fmt.Sprintf("%04d", rng.IntN(2000))
			val := fmt.Sprint(i)
			r := tbl.RowForInsert([]byte(key))
			if _, live := want[key]; live {
				old := r.Versions()[len(r.Versions())-1]
				tbl.Apply(r, heap.Change{Kind: heap.ChangeUpdate, Xid: tx.ID(), Old: old, Xmax: tx.ID(), New: heap.NewTuple(tx.ID(), []byte(val), true)})
				r.Unlock()
				x.Commit(tx)
				want[key] = val
				continue
			}
			if _, pending := openWrites[key]; pending {
				r.Unlock()
				x.Abort(tx)
				continue
			}
			if open == nil && rng.IntN(4) == 0 {
				x.Abort(tx)
				open, openWrites = x.Begin(), map[string]string{}
				tx = open
			}
			tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: tx.ID(), New: heap.NewTuple(tx.ID(), []byte(val), false)})
			r.Unlock()
			if tx == open {
				openWrites[key] = val
				if len(openWrites) > 50 {
					x.Commit(open)
					copyInto(want, openWrites)
					open, openWrites = nil, nil
				}
				continue
			}
			x.Commit(tx)
			want[key] = val
		}
	}()
	for range 40 {
		checkpoint()
		time.Sleep(time.Millisecond)
	}
	close(stop)
	<-done
	checkpoint()
	require.Zero(t, tbl.DirtyRows(), "every row settled and clean")
	require.Equal(t, want, backend)
}

func copyInto(dst, src map[string]string) {
	for k, v := range src {
		dst[k] = v
	}
}
