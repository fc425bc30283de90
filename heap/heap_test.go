package heap_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// env is a heap with one table "t" and helpers to make transactions with a
// known fate and rows with hand-built tuple headers.
type env struct {
	t   *testing.T
	x   *xact.Manager
	ms  *multixact.Store
	h   *heap.Heap
	tbl *heap.Table

	mu      sync.Mutex
	changes []seen // every Change the hook saw

	// onChange, if set, runs in the hook after the change is recorded
	// (under the row latch, like the future WAL writer).
	onChange func(*heap.Change)
}

type seen struct {
	table, key string
	kind       heap.ChangeKind
	c          *heap.Change
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, x: xact.NewManager(), ms: multixact.NewStore()}
	e.h = heap.New(e.x, e.ms, func(table string, key []byte, c *heap.Change) {
		e.mu.Lock()
		e.changes = append(e.changes, seen{table, string(key), c.Kind, c})
		fn := e.onChange
		e.mu.Unlock()
		if fn != nil {
			fn(c)
		}
	})
	tbl, err := e.h.CreateTable("t")
	require.NoError(t, err)
	e.tbl = tbl
	return e
}

func (e *env) committed() uint64 {
	x := e.x.Begin()
	e.x.Commit(x)
	return x.ID()
}

func (e *env) aborted() uint64 {
	x := e.x.Begin()
	e.x.Abort(x)
	return x.ID()
}

func (e *env) seenKinds() []heap.ChangeKind {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []heap.ChangeKind
	for _, s := range e.changes {
		out = append(out, s.kind)
	}
	return out
}

// insert adds v as a new version of key through Table.Apply.
func (e *env) insert(key string, v *heap.Tuple) *heap.Row {
	r := e.tbl.RowForInsert([]byte(key))
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: v.Xmin(), New: v})
	r.Unlock()
	return r
}

// versions returns a copy of the row's version list (nil if no row).
func (e *env) versions(key string) []*heap.Tuple {
	r := e.tbl.Row([]byte(key))
	if r == nil {
		return nil
	}
	r.Lock()
	defer r.Unlock()
	return append([]*heap.Tuple(nil), r.Versions()...)
}

func live(xmin uint64) *heap.Tuple {
	return heap.MakeTuple(heap.TupleHeader{Xmin: xmin, Infomask: heap.XmaxInvalid})
}

func TestCatalog(t *testing.T) {
	e := newEnv(t)
	_, err := e.h.CreateTable("t")
	assert.ErrorIs(t, err, heap.ErrTableExists)
	_, err = e.h.Table("nope")
	assert.ErrorIs(t, err, heap.ErrNoTable)
	b, err := e.h.CreateTable("b")
	require.NoError(t, err)
	got, err := e.h.Table("t")
	require.NoError(t, err)
	assert.Same(t, e.tbl, got)
	assert.Equal(t, []*heap.Table{b, e.tbl}, e.h.Tables(), "by name")
}

func TestApplyInsert(t *testing.T) {
	e := newEnv(t)
	x := e.committed()
	v := live(x)
	r := e.insert("k", v)

	assert.Equal(t, []byte("k"), r.Key())
	assert.Same(t, r, e.tbl.Row([]byte("k")))
	assert.Equal(t, []*heap.Tuple{v}, e.versions("k"))
	assert.Equal(t, 1, e.tbl.CachedRows())
	assert.Equal(t, int64(1), e.h.TuplesLive())

	// A second chain in the same row (delete, then insert again).
	w := live(e.committed())
	e.insert("k", w)
	assert.Equal(t, []*heap.Tuple{v, w}, e.versions("k"), "oldest first")
	assert.Equal(t, 1, e.tbl.CachedRows())
	assert.Equal(t, int64(2), e.h.TuplesLive())

	require.Len(t, e.changes, 2)
	assert.Equal(t, seen{"t", "k", heap.ChangeInsert, e.changes[0].c}, e.changes[0])
	assert.Same(t, v, e.changes[0].c.New)
	assert.Same(t, w, e.changes[1].c.New)
}

func TestApplyUpdate(t *testing.T) {
	e := newEnv(t)
	x1 := e.committed()
	old := heap.MakeTuple(heap.TupleHeader{Xmin: x1, Infomask: heap.XminCommitted | heap.Updated | heap.XmaxInvalid})
	r := e.insert("k", old)

	upd := e.x.Begin()
	m, err := e.ms.Create([]multixact.Member{{Xid: 99, Status: multixact.ForKeyShare}, {Xid: upd.ID(), Status: multixact.Update}})
	require.NoError(t, err)
	nv := heap.MakeTuple(heap.TupleHeader{Xmin: upd.ID(), Infomask: heap.Updated | heap.XmaxInvalid, Value: []byte("v2")})
	r.Lock()
	e.tbl.Apply(r, heap.Change{
		Kind: heap.ChangeUpdate, Xid: upd.ID(), Old: old, New: nv,
		Xmax: m.ID(), Multi: m,
		// Only the xmax bits and KEYS_UPDATED are applied: the xmin
		// hint bit in this Change must not reach the tuple.
		Infomask:  heap.XmaxIsMulti | heap.XmaxExclLock | heap.XminInvalid,
		Infomask2: heap.KeysUpdated | 0x0007,
	})
	r.Unlock()

	assert.Equal(t, m.ID(), old.Xmax())
	assert.Same(t, m, old.Multi())
	assert.Equal(t, heap.XminCommitted|heap.Updated|heap.XmaxIsMulti|heap.XmaxExclLock, old.Infomask(),
		"xmax bits replaced (XMAX_INVALID cleared), other bits kept")
	assert.Equal(t, heap.KeysUpdated, old.Infomask2())
	assert.Same(t, nv, old.Next(), "t_ctid points to the new version")
	assert.Equal(t, []*heap.Tuple{old, nv}, e.versions("k"))
	assert.Equal(t, int64(2), e.h.TuplesLive())
	assert.Equal(t, []heap.ChangeKind{heap.ChangeInsert, heap.ChangeUpdate}, e.seenKinds())
	assert.Same(t, nv, e.changes[1].c.New)
	assert.Same(t, old, e.changes[1].c.Old)

	// Replacing the xmax again clears KEYS_UPDATED when the change has none.
	r.Lock()
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: upd.ID(), Old: old, Xmax: upd.ID()})
	r.Unlock()
	assert.Zero(t, old.Infomask2())
	assert.Nil(t, old.Multi())
	assert.Equal(t, heap.XminCommitted|heap.Updated, old.Infomask())
}

// TestApplyInsertPrunesDeadVersions: a key deleted and inserted again over
// and over (a queue, the storm's contended unique inserts) keeps only the
// versions a snapshot may still need: each insert prunes the deleted ones
// below the prune horizon, as an update does.
func TestApplyInsertPrunesDeadVersions(t *testing.T) {
	e := newEnv(t)
	var last *heap.Tuple
	for i := 0; i < 100; i++ {
		x := e.x.Begin()
		last = heap.MakeTuple(heap.TupleHeader{Xmin: x.ID(), Xmax: x.ID(), Infomask2: heap.KeysUpdated}) // inserted and deleted by x
		e.insert("k", last)
		e.x.Commit(x)
		e.h.SetPruneHorizon(e.x.Horizon())
	}
	assert.Equal(t, []*heap.Tuple{last}, e.versions("k"), "only the newest (dead but unpruned) version is left")
	assert.Equal(t, uint64(99), e.h.TuplesReclaimed())

	// A version a snapshot may still see is kept.
	reader := e.x.Begin()
	e.x.TakeSnapshot(reader)
	x := e.x.Begin()
	v := heap.MakeTuple(heap.TupleHeader{Xmin: x.ID(), Xmax: x.ID(), Infomask2: heap.KeysUpdated})
	e.insert("k", v)
	e.x.Commit(x)
	e.h.SetPruneHorizon(e.x.Horizon())
	e.insert("k", live(e.committed()))
	assert.Len(t, e.versions("k"), 2, "v was deleted after the oldest snapshot was taken: not prunable yet")
	e.x.Commit(reader)
}

func TestApplyUpdatePrunesDeadVersions(t *testing.T) {
	e := newEnv(t)
	x1, x2 := e.committed(), e.x.Begin()
	v1 := heap.MakeTuple(heap.TupleHeader{Xmin: x1, Xmax: x2.ID()})
	e.insert("k", v1)
	v2 := live(x2.ID())
	r := e.tbl.Row([]byte("k"))
	r.Lock()
	heap.SetNext(v1, v2)
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, New: v2})
	r.Unlock()
	e.x.Commit(x2)
	e.h.SetPruneHorizon(e.x.Horizon())

	// An update of v2 prunes v1, whose updater committed below the horizon.
	x3 := e.x.Begin()
	v3 := live(x3.ID())
	r.Lock()
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeUpdate, Xid: x3.ID(), Old: v2, New: v3, Xmax: x3.ID()})
	r.Unlock()
	assert.Equal(t, []*heap.Tuple{v2, v3}, e.versions("k"))
	assert.Equal(t, int64(2), e.h.TuplesLive())
	assert.Equal(t, uint64(1), e.h.TuplesReclaimed())
	assert.Equal(t, []heap.ChangeKind{heap.ChangeInsert, heap.ChangeInsert, heap.ChangeUpdate, heap.ChangeVacuum}, e.seenKinds(),
		"the update is seen, then the pruning it triggers")
	assert.Same(t, v3, v2.Next())
}

func TestApplyXmax(t *testing.T) {
	e := newEnv(t)
	x1 := e.committed()
	v := live(x1)
	r := e.insert("k", v)
	locker := e.x.Begin()

	// A lock: xmax and lock bits.
	r.Lock()
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: locker.ID(), Old: v, Xmax: locker.ID(),
		Infomask: heap.XmaxLockOnly | heap.XmaxExclLock, Infomask2: heap.KeysUpdated})
	r.Unlock()
	assert.Equal(t, locker.ID(), v.Xmax())
	assert.Equal(t, heap.XmaxLockOnly|heap.XmaxExclLock, v.Infomask())
	assert.Equal(t, heap.KeysUpdated, v.Infomask2())
	assert.Equal(t, []*heap.Tuple{v}, e.versions("k"), "no new version")
	assert.Equal(t, int64(1), e.h.TuplesLive())

	// A version whose update aborted still links to the dead successor; a
	// lock-only xmax written over it resets t_ctid.
	dead := heap.MakeTuple(heap.TupleHeader{Xmin: e.aborted(), Infomask: heap.XmaxInvalid})
	heap.SetNext(v, dead)
	r.Lock()
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: locker.ID(), Old: v, Xmax: locker.ID(),
		Infomask: heap.XmaxLockOnly | heap.XmaxKeyShrLock})
	r.Unlock()
	assert.Nil(t, v.Next(), "a lock-only xmax never keeps a ctid link")
	assert.Zero(t, v.Infomask2())

	// So does a delete (heap_delete sets t_ctid = t_self): once it
	// commits, the row reads as deleted, not updated.
	heap.SetNext(v, dead)
	r.Lock()
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeXmax, Xid: locker.ID(), Old: v, Xmax: locker.ID(), Infomask2: heap.KeysUpdated})
	r.Unlock()
	assert.Nil(t, v.Next(), "a delete never keeps a ctid link")
	assert.Equal(t, uint16(0), v.Infomask()&heap.XmaxBits)
	assert.Equal(t, heap.KeysUpdated, v.Infomask2())

	// ChangeVacuum through Apply only reaches the hook.
	r.Lock()
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeVacuum})
	r.Unlock()
	assert.Equal(t, []*heap.Tuple{v}, e.versions("k"))
	assert.Equal(t, []heap.ChangeKind{heap.ChangeInsert, heap.ChangeXmax, heap.ChangeXmax, heap.ChangeXmax, heap.ChangeVacuum}, e.seenKinds(),
		"the hook sees every change")
	for _, s := range e.changes {
		assert.Equal(t, "t", s.table)
		assert.Equal(t, "k", s.key)
	}
}

func key(i int) string { return fmt.Sprintf("k%04d", i) }

func TestAscendOrderRangeAndStop(t *testing.T) {
	e := newEnv(t)
	x := e.committed()
	for i := 0; i < 300; i += 2 {
		e.insert(key(i), live(x))
	}

	var got []string
	e.tbl.Ascend(nil, nil, func(r *heap.Row) bool { got = append(got, string(r.Key())); return true })
	require.Len(t, got, 150, "every row, across three batches of 64")
	for i, k := range got {
		assert.Equal(t, key(2*i), k)
	}

	got = got[:0]
	e.tbl.Ascend([]byte(key(11)), []byte(key(250)), func(r *heap.Row) bool { got = append(got, string(r.Key())); return true })
	require.NotEmpty(t, got)
	assert.Equal(t, key(12), got[0], "start is inclusive, and need not exist")
	assert.Equal(t, key(248), got[len(got)-1], "end is exclusive")
	assert.Len(t, got, (248-12)/2+1)

	got = got[:0]
	e.tbl.Ascend([]byte(key(10)), []byte(key(12)), func(r *heap.Row) bool { got = append(got, string(r.Key())); return true })
	assert.Equal(t, []string{key(10)}, got)

	n := 0
	e.tbl.Ascend(nil, nil, func(*heap.Row) bool { n++; return n < 70 })
	assert.Equal(t, 70, n, "returning false stops the scan, also inside the second batch")
}

// TestAscendWhileInserting scans while another goroutine inserts rows (run
// with -race): every row present before the scan is visited once, in strict
// key order, within the range. The callback itself inserts too, which would
// deadlock if the store were locked while it runs.
func TestAscendWhileInserting(t *testing.T) {
	e := newEnv(t)
	x := e.committed()
	for i := 0; i < 400; i += 4 {
		e.insert(key(i), live(x))
	}
	start, end := key(20), key(380)

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 1; i < 400; i += 2 {
			select {
			case <-done:
				return
			default:
			}
			e.insert(key(i), live(x))
		}
	})
	var got []string
	e.tbl.Ascend([]byte(start), []byte(end), func(r *heap.Row) bool {
		k := string(r.Key())
		got = append(got, k)
		if k == key(100) {
			e.insert(key(102), live(x)) // into a batch not yet collected
		}
		return true
	})
	close(done)
	wg.Wait()

	have := map[string]bool{}
	for i, k := range got {
		assert.GreaterOrEqual(t, k, start)
		assert.Less(t, k, end)
		if i > 0 {
			require.Less(t, got[i-1], k, "strictly increasing, no duplicates")
		}
		have[k] = true
	}
	for i := 20; i < 380; i += 4 {
		assert.True(t, have[key(i)], "pre-existing row %s visited", key(i))
	}
	assert.Greater(t, len(got), 64, "the scan spans several batches")
}

// TestAscendResumesAfterRemovedBatchEnd removes the last row of the first
// batch while the callback runs: the next batch must start with the row
// after it, not skip that one.
func TestAscendResumesAfterRemovedBatchEnd(t *testing.T) {
	e := newEnv(t)
	x := e.committed()
	for i := range 100 {
		v := live(x)
		if i == 63 {
			v = live(e.aborted()) // dead: vacuum unlinks the row
		}
		e.insert(key(i), v)
	}
	var got []string
	e.tbl.Ascend(nil, nil, func(r *heap.Row) bool {
		got = append(got, string(r.Key()))
		if string(r.Key()) == key(63) {
			res := e.tbl.Vacuum(e.x.Horizon(), 0)
			require.Equal(t, 1, res.RowsUnlinked)
			require.Nil(t, e.tbl.Row([]byte(key(63))))
		}
		return true
	})
	require.Len(t, got, 100)
	for i, k := range got {
		assert.Equal(t, key(i), k)
	}
}
