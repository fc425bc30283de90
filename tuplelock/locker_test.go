package tuplelock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a Locker over a real heap, transaction manager, multixact store
// and lock manager, with one table "t".
type rig struct {
	t   *testing.T
	x   *xact.Manager
	ms  *multixact.Store
	h   *heap.Heap
	lm  *lockmgr.Manager
	e   *Locker
	tbl *heap.Table
	ctx context.Context

	mu      sync.Mutex
	changes []heap.ChangeKind // what the heap's hook saw
}

func newRig(t *testing.T) *rig {
	r := &rig{t: t, x: xact.NewManager(), ms: multixact.NewStore()}
	r.h = heap.New(r.x, r.ms, func(_ string, _ []byte, c *heap.Change) {
		r.mu.Lock()
		r.changes = append(r.changes, c.Kind)
		r.mu.Unlock()
	})
	lm, err := lockmgr.New(lockmgr.Options{DeadlockTimeout: 50 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(lm.Close)
	r.lm = lm
	r.e = NewLocker(r.h, r.x, r.ms, lm, false)
	r.tbl, err = r.h.CreateTable("t")
	require.NoError(t, err)
	// A wait that never ends fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	r.ctx = ctx
	return r
}

func (r *rig) begin() *Txn {
	x := r.x.Begin()
	return func() *Txn { t := NewTxn(x, r.lm.NewProc(x.ID()), 0); return &t }()
}

func (r *rig) commit(tx *Txn) { r.x.Commit(tx.x) }
func (r *rig) abort(tx *Txn)  { r.x.Abort(tx.x) }

func (r *rig) numChanges() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.changes)
}

// committedRow inserts key by a transaction that commits, and returns the
// row and its version.
func (r *rig) committedRow(key string) (*heap.Row, *heap.Tuple) {
	tx := r.begin()
	require.NoError(r.t, r.e.Insert(r.ctx, tx, r.tbl, []byte(key), []byte("v1")))
	r.commit(tx)
	row := r.tbl.Row([]byte(key))
	vs := r.versions(row)
	return row, vs[len(vs)-1]
}

func (r *rig) versions(row *heap.Row) []*heap.Tuple {
	row.Lock()
	defer row.Unlock()
	return append([]*heap.Tuple(nil), row.Versions()...)
}

// header is a copy of a version's xmax fields, read under the row latch.
type header struct {
	xmax    uint64
	multi   *multixact.MultiXact
	im, im2 uint16
}

func (r *rig) header(row *heap.Row, tup *heap.Tuple) header {
	row.Lock()
	defer row.Unlock()
	return header{tup.Xmax(), tup.Multi(), tup.Infomask() & heap.XmaxBits, tup.Infomask2() & heap.KeysUpdated}
}

func (h header) bits() string { return formatBits(h.im, h.im2) }

// waitingFor reports whether waiter shows in Locks() as waiting for the
// transaction awaited.
func (r *rig) waitingFor(waiter, awaited *Txn) bool {
	for _, li := range r.lm.Locks() {
		if !li.Granted && li.Xid == waiter.ID() && li.Tag.Kind == lockmgr.TagTransaction && li.Tag.Xid == awaited.ID() {
			return true
		}
	}
	return false
}

// eventually polls observable state until cond holds (or fails the test).
func (r *rig) eventually(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out waiting until %s; locks: %v", what, r.lm.Locks())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// async runs fn in a goroutine; the returned channel yields its result.
func async[T any](fn func() T) <-chan T {
	ch := make(chan T, 1)
	go func() { ch <- fn() }()
	return ch
}

type tmResult struct {
	res heap.TMResult
	err error
}

func pending[T any](ch <-chan T) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

func receive[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not finish")
		panic("unreachable")
	}
}

func (r *rig) lock(tx *Txn, row *heap.Row, tup *heap.Tuple, mode tuplemode.Mode) heap.TMResult {
	r.t.Helper()
	res, err := r.e.LockTuple(r.ctx, tx, r.tbl, row, tup, mode, Block, true)
	require.NoError(r.t, err)
	return res
}

func TestLockTupleAlreadyHeldWritesNothing(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	t1 := r.begin()

	require.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.Share))
	h := r.header(row, v)
	assert.Equal(t, t1.ID(), h.xmax)
	assert.Equal(t, "XMAX_LOCK_ONLY XMAX_SHR_LOCK", h.bits())

	n := r.numChanges()
	for _, m := range []tuplemode.Mode{tuplemode.KeyShare, tuplemode.Share} {
		assert.Equal(t, heap.TMOk, r.lock(t1, row, v, m), "%v under our own FOR SHARE", m)
		assert.Equal(t, n, r.numChanges(), "%v: nothing written", m)
		assert.Equal(t, h, r.header(row, v))
	}

	// A stronger request over our own lock is written (no wait: we are the
	// only locker), and then held.
	assert.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.Exclusive))
	assert.Equal(t, n+1, r.numChanges())
	h = r.header(row, v)
	assert.Equal(t, t1.ID(), h.xmax, "still a single xid")
	assert.Equal(t, "XMAX_LOCK_ONLY XMAX_EXCL_LOCK KEYS_UPDATED", h.bits())
	for _, m := range []tuplemode.Mode{tuplemode.KeyShare, tuplemode.Share, tuplemode.NoKeyExclusive, tuplemode.Exclusive} {
		assert.Equal(t, heap.TMOk, r.lock(t1, row, v, m))
	}
	assert.Equal(t, n+1, r.numChanges(), "FOR UPDATE covers every mode")

	// In a multixact: a member at least as strong as the request.
	row2, v2 := r.committedRow("m")
	t2, t3 := r.begin(), r.begin()
	require.Equal(t, heap.TMOk, r.lock(t2, row2, v2, tuplemode.Share))
	require.Equal(t, heap.TMOk, r.lock(t3, row2, v2, tuplemode.KeyShare))
	h = r.header(row2, v2)
	require.NotNil(t, h.multi)
	n = r.numChanges()
	assert.Equal(t, heap.TMOk, r.lock(t2, row2, v2, tuplemode.Share))
	assert.Equal(t, heap.TMOk, r.lock(t2, row2, v2, tuplemode.KeyShare))
	assert.Equal(t, heap.TMOk, r.lock(t3, row2, v2, tuplemode.KeyShare))
	assert.Equal(t, n, r.numChanges(), "members already hold these")
	assert.Equal(t, h, r.header(row2, v2))
	assert.Zero(t, r.lm.Stats().LockWaits)
}

func TestSecondSharerCreatesMultixact(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	t1, t2, t3 := r.begin(), r.begin(), r.begin()

	require.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.Share))
	single, multi := r.e.Counters()
	assert.Equal(t, uint64(1), single)
	assert.Zero(t, multi)

	require.Equal(t, heap.TMOk, r.lock(t2, row, v, tuplemode.Share))
	h := r.header(row, v)
	require.NotNil(t, h.multi)
	assert.Equal(t, h.multi.ID(), h.xmax)
	assert.Equal(t, []multixact.Member{{Xid: t1.ID(), Status: multixact.ForShare}, {Xid: t2.ID(), Status: multixact.ForShare}}, h.multi.Members())
	assert.Equal(t, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_SHR_LOCK", h.bits())

	require.Equal(t, heap.TMOk, r.lock(t3, row, v, tuplemode.KeyShare))
	h = r.header(row, v)
	assert.Len(t, h.multi.Members(), 3)
	assert.Equal(t, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_SHR_LOCK", h.bits(), "the strongest member decides the bits")

	single, multi = r.e.Counters()
	assert.Equal(t, uint64(1), single)
	assert.Equal(t, uint64(2), multi)
	assert.Zero(t, r.lm.Stats().LockWaits, "sharers never wait for each other")
	assert.Empty(t, r.lm.Locks(), "a granted row lock leaves nothing in the lock manager")

	// When the lockers end, the next locker starts over with a plain xid.
	r.commit(t1)
	r.commit(t2)
	r.abort(t3)
	t4 := r.begin()
	require.Equal(t, heap.TMOk, r.lock(t4, row, v, tuplemode.NoKeyExclusive))
	h = r.header(row, v)
	assert.Equal(t, t4.ID(), h.xmax)
	assert.Nil(t, h.multi)
	assert.Equal(t, "XMAX_LOCK_ONLY XMAX_EXCL_LOCK", h.bits())
}

// TestKeyShareOverInProgressNonKeyUpdate: FOR KEY SHARE does not conflict
// with a non-key update, so it locks the old version and the new one
// (heap_lock_updated_tuple) without waiting; a later DELETE of the new
// version then waits for the key-share locker (lock-update-traversal).
func TestKeyShareOverInProgressNonKeyUpdate(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	t1, t2 := r.begin(), r.begin()

	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	vs := r.versions(row)
	require.Len(t, vs, 2)
	v2 := vs[1]
	require.Same(t, v2, v1.Next())

	require.Equal(t, heap.TMOk, r.lock(t2, row, v1, tuplemode.KeyShare))
	assert.Zero(t, r.lm.Stats().LockWaits, "no wait")
	require.Same(t, v2, v1.Next(), "a lock beside the running update keeps its ctid link")

	h1 := r.header(row, v1)
	require.NotNil(t, h1.multi, "the old version keeps the updater beside the locker")
	assert.Equal(t, []multixact.Member{{Xid: t1.ID(), Status: multixact.NoKeyUpdate}, {Xid: t2.ID(), Status: multixact.ForKeyShare}}, h1.multi.Members())
	assert.Equal(t, "XMAX_IS_MULTI XMAX_EXCL_LOCK", h1.bits())
	h2 := r.header(row, v2)
	assert.Equal(t, t2.ID(), h2.xmax, "the new version is locked too")
	assert.Equal(t, "XMAX_LOCK_ONLY XMAX_KEYSHR_LOCK", h2.bits())

	// Locking again finds both already held and writes nothing.
	n := r.numChanges()
	require.Equal(t, heap.TMOk, r.lock(t2, row, v1, tuplemode.KeyShare))
	assert.Equal(t, n, r.numChanges())

	r.commit(t1)
	t3 := r.begin()
	done := async(func() tmResult {
		res, err := r.e.Update(r.ctx, t3, r.tbl, row, v2, nil, true)
		return tmResult{res, err}
	})
	r.eventually("the deleter waits for the key-share locker", func() bool { return r.waitingFor(t3, t2) })
	assert.True(t, pending(done))
	r.commit(t2)
	got := receive(t, done)
	require.NoError(t, got.err)
	assert.Equal(t, heap.TMOk, got.res)
	h2 = r.header(row, v2)
	assert.Equal(t, t3.ID(), h2.xmax)
	assert.Equal(t, "KEYS_UPDATED", h2.bits(), "a plain deleter (the locker is gone)")
}

func TestKeyShareOverCommittedNonKeyUpdate(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	t1 := r.begin()
	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	r.commit(t1)
	v2 := r.versions(row)[1]

	t2 := r.begin()
	assert.Equal(t, heap.TMUpdated, r.lock(t2, row, v1, tuplemode.Share), "FOR SHARE conflicts with the committed update")
	assert.Equal(t, heap.TMOk, r.lock(t2, row, v1, tuplemode.KeyShare), "FOR KEY SHARE does not")
	h1 := r.header(row, v1)
	require.NotNil(t, h1.multi)
	assert.Equal(t, []multixact.Member{{Xid: t1.ID(), Status: multixact.NoKeyUpdate}, {Xid: t2.ID(), Status: multixact.ForKeyShare}}, h1.multi.Members(),
		"the committed updater is preserved in the multixact")
	assert.Equal(t, t2.ID(), r.header(row, v2).xmax)
	assert.Same(t, v2, r.e.LatestVersion(row, v1))
}

// TestUpdateKeepsKeyShareLocker: a non-key update proceeds over a key-share
// locker without waiting, and the new version carries the lock, so a later
// delete of the new version waits for the locker (propagate-lock-delete).
func TestUpdateKeepsKeyShareLocker(t *testing.T) {
	t.Run("single locker", func(t *testing.T) {
		r := newRig(t)
		row, v1 := r.committedRow("k")
		locker, updater := r.begin(), r.begin()
		require.Equal(t, heap.TMOk, r.lock(locker, row, v1, tuplemode.KeyShare))

		res, err := r.e.Update(r.ctx, updater, r.tbl, row, v1, []byte("v2"), false)
		require.NoError(t, err)
		require.Equal(t, heap.TMOk, res)
		assert.Zero(t, r.lm.Stats().LockWaits, "no wait for a key-share locker")

		h1 := r.header(row, v1)
		require.NotNil(t, h1.multi)
		assert.Equal(t, []multixact.Member{{Xid: locker.ID(), Status: multixact.ForKeyShare}, {Xid: updater.ID(), Status: multixact.NoKeyUpdate}}, h1.multi.Members())
		assert.Equal(t, "XMAX_IS_MULTI XMAX_EXCL_LOCK", h1.bits())

		v2 := r.versions(row)[1]
		assert.Equal(t, updater.ID(), v2.Xmin())
		assert.Equal(t, []byte("v2"), v2.Value())
		h2 := r.header(row, v2)
		assert.Equal(t, locker.ID(), h2.xmax, "the locker is carried to the new version")
		assert.Equal(t, "XMAX_LOCK_ONLY XMAX_KEYSHR_LOCK", h2.bits())

		r.commit(updater)
		deleter := r.begin()
		done := async(func() tmResult {
			res, err := r.e.Update(r.ctx, deleter, r.tbl, row, v2, nil, true)
			return tmResult{res, err}
		})
		r.eventually("the delete waits for the key-share locker", func() bool { return r.waitingFor(deleter, locker) })
		assert.True(t, pending(done))
		r.commit(locker)
		got := receive(t, done)
		require.NoError(t, got.err)
		assert.Equal(t, heap.TMOk, got.res)
		assert.Equal(t, deleter.ID(), r.header(row, v2).xmax)
		assert.Empty(t, r.lm.Locks(), "the tuple lock is released")
	})

	t.Run("multixact of lockers", func(t *testing.T) {
		r := newRig(t)
		row, v1 := r.committedRow("k")
		l1, l2, updater := r.begin(), r.begin(), r.begin()
		require.Equal(t, heap.TMOk, r.lock(l1, row, v1, tuplemode.KeyShare))
		require.Equal(t, heap.TMOk, r.lock(l2, row, v1, tuplemode.KeyShare))
		lockers := r.header(row, v1).multi
		require.NotNil(t, lockers)

		res, err := r.e.Update(r.ctx, updater, r.tbl, row, v1, []byte("v2"), false)
		require.NoError(t, err)
		require.Equal(t, heap.TMOk, res)
		assert.Zero(t, r.lm.Stats().LockWaits)
		assert.Len(t, r.header(row, v1).multi.Members(), 3)

		h2 := r.header(row, r.versions(row)[1])
		assert.Same(t, lockers, h2.multi, "the new version carries the lockers' multixact")
		assert.Equal(t, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_KEYSHR_LOCK", h2.bits())
	})
}

// TestInsertWaitsForInProgressInserter: the unique check waits for the
// other inserter of the key, then reports a duplicate if it committed and
// inserts if it rolled back.
func TestInsertWaitsForInProgressInserter(t *testing.T) {
	for _, commit := range []bool{true, false} {
		name := map[bool]string{true: "inserter commits", false: "inserter rolls back"}[commit]
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			t1, t2 := r.begin(), r.begin()
			require.NoError(t, r.e.Insert(r.ctx, t1, r.tbl, []byte("k"), []byte("a")))

			done := async(func() error { return r.e.Insert(r.ctx, t2, r.tbl, []byte("k"), []byte("b")) })
			r.eventually("the second inserter waits for the first", func() bool { return r.waitingFor(t2, t1) })
			assert.True(t, pending(done))

			if commit {
				r.commit(t1)
				assert.ErrorIs(t, receive(t, done), ErrDuplicateKey)
				assert.Len(t, r.versions(r.tbl.Row([]byte("k"))), 1)
				return
			}
			r.abort(t1)
			require.NoError(t, receive(t, done))
			vs := r.versions(r.tbl.Row([]byte("k")))
			require.Len(t, vs, 1, "the aborted insert's version is pruned by the next insert")
			assert.Equal(t, t2.ID(), vs[0].Xmin())
			assert.Equal(t, []byte("b"), vs[0].Value())
		})
	}
}

// TestInsertersQueueOnTheKey: several transactions insert a key whose
// inserter is still running. Only the first waits for that xid; the others
// queue behind it on the key's tuple lock, and each end wakes one of them,
// in order of arrival. (PostgreSQL's waiters all wait for the xid, wake
// together, and all but the winner wait again.)
func TestInsertersQueueOnTheKey(t *testing.T) {
	r := newRig(t)
	t1 := r.begin()
	require.NoError(t, r.e.Insert(r.ctx, t1, r.tbl, []byte("k"), []byte("a")))
	tag := lockmgr.Tag{Kind: lockmgr.TagTuple, Rel: "t", Key: "k"}
	queued := func(tx *Txn) bool {
		for _, li := range r.lm.Locks() {
			if !li.Granted && li.Xid == tx.ID() && li.Tag == tag {
				return true
			}
		}
		return false
	}
	waiters := []*Txn{r.begin(), r.begin(), r.begin()}
	var done []<-chan error
	for i, w := range waiters {
		done = append(done, async(func() error { return r.e.Insert(r.ctx, w, r.tbl, []byte("k"), []byte{'b' + byte(i)}) }))
		if i == 0 {
			r.eventually("the first waiter waits for the inserter", func() bool { return r.waitingFor(w, t1) })
		} else {
			r.eventually("a later waiter queues on the key", func() bool { return queued(w) })
		}
	}
	assert.False(t, r.waitingFor(waiters[1], t1), "only the head of the line waits for the xid")
	assert.False(t, r.waitingFor(waiters[2], t1))

	// Each abort lets exactly the next one in line insert.
	r.abort(t1)
	require.NoError(t, receive(t, done[0]))
	r.eventually("the second waiter waits for the first", func() bool { return r.waitingFor(waiters[1], waiters[0]) })
	assert.True(t, queued(waiters[2]))
	r.abort(waiters[0])
	require.NoError(t, receive(t, done[1]))
	r.eventually("the third waiter waits for the second", func() bool { return r.waitingFor(waiters[2], waiters[1]) })

	// A commit makes the last one a duplicate.
	r.commit(waiters[1])
	assert.ErrorIs(t, receive(t, done[2]), ErrDuplicateKey)
	assert.Empty(t, r.lm.Locks(), "the tuple lock is released however the insert ends")
	assert.LessOrEqual(t, r.lm.Stats().LockWaits, uint64(5), "one xid wait per waiter plus the queue")
}

func TestInsertDuplicateAndReinsert(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	t1 := r.begin()
	assert.ErrorIs(t, r.e.Insert(r.ctx, t1, r.tbl, []byte("k"), nil), ErrDuplicateKey, "a live committed version")

	// A locked version is still live.
	require.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.Exclusive))
	t2 := r.begin()
	assert.ErrorIs(t, r.e.Insert(r.ctx, t2, r.tbl, []byte("k"), nil), ErrDuplicateKey)

	// Our own delete makes room for our own insert.
	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v, nil, true)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	require.NoError(t, r.e.Insert(r.ctx, t1, r.tbl, []byte("k"), []byte("again")))
	assert.ErrorIs(t, r.e.Insert(r.ctx, t1, r.tbl, []byte("k"), nil), ErrDuplicateKey, "our own insert is live")
	assert.Zero(t, r.lm.Stats().LockWaits)
}

// TestLockTupleSleepsBehindConflictingLocker shows the waiting protocol:
// the waiter holds the tuple lock (its place in line) and waits for the
// locker's transaction; when that ends it writes its lock and releases the
// tuple lock.
func TestLockTupleSleepsBehindConflictingLocker(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	t1, t2 := r.begin(), r.begin()
	require.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.Exclusive))

	done := async(func() tmResult {
		res, err := r.e.LockTuple(r.ctx, t2, r.tbl, row, v, tuplemode.Share, Block, true)
		return tmResult{res, err}
	})
	r.eventually("T2 waits for T1", func() bool { return r.waitingFor(t2, t1) })
	holdsTupleLock := false
	for _, li := range r.lm.Locks() {
		if li.Granted && li.Xid == t2.ID() && li.Tag == (lockmgr.Tag{Kind: lockmgr.TagTuple, Rel: "t", Key: "k"}) {
			assert.Equal(t, lockmgr.RowShareLock, li.Mode)
			holdsTupleLock = true
		}
	}
	assert.True(t, holdsTupleLock, "the sleeper holds the tuple lock: %v", r.lm.Locks())

	r.commit(t1)
	got := receive(t, done)
	require.NoError(t, got.err)
	assert.Equal(t, heap.TMOk, got.res)
	h := r.header(row, v)
	assert.Equal(t, t2.ID(), h.xmax, "T1's lock is gone: a plain xid")
	assert.Equal(t, "XMAX_LOCK_ONLY XMAX_SHR_LOCK", h.bits())
	assert.Empty(t, r.lm.Locks(), "tuple lock released")
}

func TestLockTupleNoWaitAndSkipLocked(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	t1, t2 := r.begin(), r.begin()
	require.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.NoKeyExclusive))
	before := r.header(row, v)

	for _, p := range []WaitPolicy{Error, Skip} {
		res, err := r.e.LockTuple(r.ctx, t2, r.tbl, row, v, tuplemode.Share, p, true)
		require.NoError(t, err)
		assert.Equal(t, heap.TMWouldBlock, res)
		assert.Empty(t, r.lm.Locks(), "nothing left held or queued")
	}
	assert.Equal(t, before, r.header(row, v))
	assert.Equal(t, heap.TMOk, r.lock(t2, row, v, tuplemode.KeyShare), "FOR KEY SHARE does not conflict with FOR NO KEY UPDATE")
}

func TestUpdateResults(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	t1 := r.begin()
	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)

	res, err = r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("v3"), false)
	require.NoError(t, err)
	assert.Equal(t, heap.TMInvisible, res, "a version we updated ourselves")
	r.commit(t1)

	t2 := r.begin()
	res, err = r.e.Update(r.ctx, t2, r.tbl, row, v1, []byte("v3"), false)
	require.NoError(t, err)
	assert.Equal(t, heap.TMUpdated, res, "updated by a committed transaction")

	v2 := r.e.LatestVersion(row, v1)
	res, err = r.e.Update(r.ctx, t2, r.tbl, row, v2, nil, true)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	r.commit(t2)

	t3 := r.begin()
	res, err = r.e.Update(r.ctx, t3, r.tbl, row, v2, nil, true)
	require.NoError(t, err)
	assert.Equal(t, heap.TMDeleted, res)
	assert.Equal(t, heap.TMDeleted, r.lock(t3, row, v2, tuplemode.KeyShare), "a committed delete conflicts with every lock")
}

// TestInsertOverDeletedKey: an in-progress delete is waited for; a delete
// that committed frees the key, one that aborted leaves the row live.
func TestInsertOverDeletedKey(t *testing.T) {
	for _, commit := range []bool{true, false} {
		name := map[bool]string{true: "deleter commits", false: "deleter rolls back"}[commit]
		t.Run(name, func(t *testing.T) {
			r := newRig(t)
			row, v := r.committedRow("k")
			deleter, inserter := r.begin(), r.begin()
			res, err := r.e.Update(r.ctx, deleter, r.tbl, row, v, nil, true)
			require.NoError(t, err)
			require.Equal(t, heap.TMOk, res)

			done := async(func() error { return r.e.Insert(r.ctx, inserter, r.tbl, []byte("k"), []byte("new")) })
			r.eventually("the inserter waits for the deleter", func() bool { return r.waitingFor(inserter, deleter) })
			assert.True(t, pending(done))
			if commit {
				r.commit(deleter)
				require.NoError(t, receive(t, done))
				assert.Len(t, r.versions(row), 2)
				return
			}
			r.abort(deleter)
			assert.ErrorIs(t, receive(t, done), ErrDuplicateKey)
		})
	}
}

// TestLockUpdatedTupleSkipsVersionWeHold: following the update chain past
// a version we already locked writes nothing to it.
func TestLockUpdatedTupleSkipsVersionWeHold(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	t1 := r.begin()
	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	r.commit(t1)
	v2 := r.versions(row)[1]

	t2 := r.begin()
	require.Equal(t, heap.TMOk, r.lock(t2, row, v2, tuplemode.KeyShare))
	h2 := r.header(row, v2)
	n := r.numChanges()
	require.Equal(t, heap.TMOk, r.lock(t2, row, v1, tuplemode.KeyShare))
	assert.Equal(t, n+1, r.numChanges(), "only the old version is written")
	assert.Equal(t, h2, r.header(row, v2))
	assert.NotNil(t, r.header(row, v1).multi)
}

// TestLockTupleTriesNotToSleep covers step 3 of heap_lock_tuple with
// NOWAIT, so a request that would sleep shows as TM_WouldBlock.
func TestLockTupleTriesNotToSleep(t *testing.T) {
	for _, c := range []struct {
		name   string
		held   []tuplemode.Mode // one running transaction per lock, in order
		mode   tuplemode.Mode
		want   heap.TMResult
		member multixact.Status // the requester's status in the resulting multixact
	}{
		{"FOR NO KEY UPDATE over one key-share locker", []tuplemode.Mode{tuplemode.KeyShare}, tuplemode.NoKeyExclusive, heap.TMOk, multixact.ForNoKeyUpdate},
		{"FOR NO KEY UPDATE over a multixact of key-share lockers", []tuplemode.Mode{tuplemode.KeyShare, tuplemode.KeyShare}, tuplemode.NoKeyExclusive, heap.TMOk, multixact.ForNoKeyUpdate},
		{"FOR SHARE over lock-only sharers", []tuplemode.Mode{tuplemode.KeyShare, tuplemode.Share}, tuplemode.Share, heap.TMOk, multixact.ForShare},
		{"FOR KEY SHARE over FOR NO KEY UPDATE", []tuplemode.Mode{tuplemode.NoKeyExclusive}, tuplemode.KeyShare, heap.TMOk, multixact.ForKeyShare},
		{"FOR SHARE over FOR NO KEY UPDATE must sleep", []tuplemode.Mode{tuplemode.NoKeyExclusive}, tuplemode.Share, heap.TMWouldBlock, 0},
		{"FOR NO KEY UPDATE over a sharer must sleep", []tuplemode.Mode{tuplemode.KeyShare, tuplemode.Share}, tuplemode.NoKeyExclusive, heap.TMWouldBlock, 0},
		{"FOR KEY SHARE over FOR UPDATE must sleep", []tuplemode.Mode{tuplemode.Exclusive}, tuplemode.KeyShare, heap.TMWouldBlock, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t)
			row, v := r.committedRow("k")
			for _, m := range c.held {
				require.Equal(t, heap.TMOk, r.lock(r.begin(), row, v, m))
			}
			before := r.header(row, v)
			me := r.begin()
			res, err := r.e.LockTuple(r.ctx, me, r.tbl, row, v, c.mode, Error, true)
			require.NoError(t, err)
			require.Equal(t, c.want, res)
			h := r.header(row, v)
			if c.want != heap.TMOk {
				assert.Equal(t, before, h, "nothing written")
				return
			}
			require.NotNil(t, h.multi)
			assert.Contains(t, h.multi.Members(), multixact.Member{Xid: me.ID(), Status: c.member})
			assert.Len(t, h.multi.Members(), len(c.held)+1, "every locker kept")
		})
	}
}

// TestLockOverMultixactWithCommittedUpdater: a committed updater in a
// multixact conflicts with FOR NO KEY UPDATE (TM_Updated, no sleep) but not
// with FOR KEY SHARE.
func TestLockOverMultixactWithCommittedUpdater(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	locker, updater := r.begin(), r.begin()
	require.Equal(t, heap.TMOk, r.lock(locker, row, v1, tuplemode.KeyShare))
	res, err := r.e.Update(r.ctx, updater, r.tbl, row, v1, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	r.commit(updater)

	me := r.begin()
	before := r.header(row, v1)
	for _, m := range []tuplemode.Mode{tuplemode.Share, tuplemode.NoKeyExclusive, tuplemode.Exclusive} {
		res, err = r.e.LockTuple(r.ctx, me, r.tbl, row, v1, m, Error, true)
		require.NoError(t, err)
		assert.Equal(t, heap.TMUpdated, res, "%v", m)
	}
	assert.Equal(t, before, r.header(row, v1))
	res, err = r.e.LockTuple(r.ctx, me, r.tbl, row, v1, tuplemode.KeyShare, Error, true)
	require.NoError(t, err)
	assert.Equal(t, heap.TMOk, res)
	assert.Len(t, r.header(row, v1).multi.Members(), 3)

	res, err = r.e.Update(r.ctx, me, r.tbl, row, v1, []byte("v3"), false)
	require.NoError(t, err)
	assert.Equal(t, heap.TMUpdated, res, "an update of the old version fails too")
}

// TestSleepWaitsOnlyForConflictingMembers: over a multixact, a sleeper
// waits for the members whose lock conflicts with its mode
// (MultiXactIdWait); the others survive beside it.
func TestSleepWaitsOnlyForConflictingMembers(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	keyShare, share, me := r.begin(), r.begin(), r.begin()
	require.Equal(t, heap.TMOk, r.lock(keyShare, row, v, tuplemode.KeyShare))
	require.Equal(t, heap.TMOk, r.lock(share, row, v, tuplemode.Share))

	done := async(func() tmResult {
		res, err := r.e.LockTuple(r.ctx, me, r.tbl, row, v, tuplemode.NoKeyExclusive, Block, true)
		return tmResult{res, err}
	})
	r.eventually("the sleeper waits for the FOR SHARE member", func() bool { return r.waitingFor(me, share) })
	require.False(t, r.waitingFor(me, keyShare), "FOR KEY SHARE does not conflict with FOR NO KEY UPDATE")

	r.commit(share)
	got := receive(t, done)
	require.NoError(t, got.err)
	require.Equal(t, heap.TMOk, got.res)
	h := r.header(row, v)
	require.NotNil(t, h.multi)
	assert.Equal(t, []multixact.Member{{Xid: keyShare.ID(), Status: multixact.ForKeyShare}, {Xid: me.ID(), Status: multixact.ForNoKeyUpdate}}, h.multi.Members(),
		"the finished sharer is pruned, the running key-share locker kept")
	assert.Equal(t, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_EXCL_LOCK", h.bits())
}

// TestConcurrentLockersNeverConflict is the safety property of row locks:
// transactions lock one row concurrently, in random modes, sometimes
// upgrading; whenever one holds its lock, the running transactions
// recorded in xmax hold pairwise compatible locks and it is one of them,
// at least as strong as it asked. Run with -race.
func TestConcurrentLockersNeverConflict(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")

	check := func(tx *Txn, mode tuplemode.Mode) {
		row.Lock()
		defer row.Unlock()
		var live []multixact.Member
		for _, mb := range memberList(v) {
			if r.x.IsInProgress(mb.Xid) {
				live = append(live, mb)
			}
		}
		held := false
		for i, a := range live {
			if a.Xid == tx.ID() && a.Status.LockMode() >= mode {
				held = true
			}
			for _, b := range live[i+1:] {
				if a.Xid != b.Xid && conflicts(a.Status.LockMode(), b.Status.LockMode()) {
					t.Errorf("running %v and %v both hold the row", a, b)
				}
			}
		}
		if !held {
			t.Errorf("T%d was granted %v but xmax records %v", tx.ID(), mode, live)
		}
	}

	const workers, each = 4, 60
	var wg sync.WaitGroup
	var deadlocks, granted sync.Map
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				tx := r.begin()
				mode := tuplemode.Mode((w + i*7) % 4)
				ok := true
				for step := 0; ok && step < 1+i%3/2; step++ { // a third of them upgrade once
					if step == 1 {
						if mode == tuplemode.Exclusive {
							break
						}
						mode++
					}
					res, err := r.e.LockTuple(r.ctx, tx, r.tbl, row, v, mode, Block, true)
					switch {
					case errors.Is(err, lockmgr.ErrDeadlock):
						deadlocks.Store(tx.ID(), true)
						ok = false
					case err != nil || res != heap.TMOk:
						t.Errorf("T%d %v: %v %v", tx.ID(), mode, res, err)
						ok = false
					default:
						granted.Store(tx.ID(), true)
						check(tx, mode)
						time.Sleep(20 * time.Microsecond) // hold it while others try
						check(tx, mode)
					}
				}
				if ok && i%4 == 0 {
					r.abort(tx)
				} else {
					r.commit(tx)
				}
			}
		})
	}
	wg.Wait()
	n := 0
	granted.Range(func(any, any) bool { n++; return true })
	assert.Greater(t, n, workers*each/2, "most transactions got their lock")
	assert.Positive(t, r.lm.Stats().LockWaits, "there was contention")
	_, multis := r.e.Counters()
	assert.Positive(t, multis, "compatible lockers shared the row")
	assert.Empty(t, r.lm.Locks(), "nothing left in the lock manager")
}

// TestConcurrentLockersAndUpdatersNeverConflict mixes non-key updates into
// the lockers, working as READ COMMITTED does (retry on the newest version
// after TM_Updated): on every version of the row, the running transactions
// in xmax — lockers and updater alike — are pairwise compatible.
func TestConcurrentLockersAndUpdatersNeverConflict(t *testing.T) {
	r := newRig(t)
	row, _ := r.committedRow("k")

	check := func() {
		row.Lock()
		defer row.Unlock()
		for _, v := range row.Versions() {
			var live []multixact.Member
			for _, mb := range memberList(v) {
				if r.x.IsInProgress(mb.Xid) {
					live = append(live, mb)
				}
			}
			for i, a := range live {
				for _, b := range live[i+1:] {
					if a.Xid != b.Xid && conflicts(a.Status.LockMode(), b.Status.LockMode()) {
						t.Errorf("running %v and %v both hold a version", a, b)
					}
				}
			}
		}
	}
	// newest returns the newest version whose inserter committed or is tx.
	newest := func(tx *Txn) *heap.Tuple {
		row.Lock()
		vs := row.Versions()
		var first *heap.Tuple
		for _, v := range vs {
			if st, _ := r.x.Status(v.Xmin()); st == xact.Committed || v.Xmin() == tx.ID() {
				first = v
				break
			}
		}
		row.Unlock()
		return r.e.LatestVersion(row, first)
	}

	const workers, each = 4, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				tx := r.begin()
				op := (w*3 + i*5) % 5 // 0..3 lock modes, 4 non-key update
				failed := false
				for attempt := 0; ; attempt++ {
					v := newest(tx)
					var res heap.TMResult
					var err error
					if op == 4 {
						res, err = r.e.Update(r.ctx, tx, r.tbl, row, v, []byte("u"), false)
					} else {
						res, err = r.e.LockTuple(r.ctx, tx, r.tbl, row, v, tuplemode.Mode(op), Block, true)
					}
					if errors.Is(err, lockmgr.ErrDeadlock) {
						failed = true
						break
					}
					if err != nil {
						t.Errorf("T%d op %d: %v", tx.ID(), op, err)
						failed = true
						break
					}
					if res == heap.TMOk {
						break
					}
					if res != heap.TMUpdated && res != heap.TMInvisible || attempt > 1000 {
						t.Errorf("T%d op %d: %v", tx.ID(), op, res)
						failed = true
						break
					}
				}
				if !failed {
					check()
					time.Sleep(20 * time.Microsecond)
					check()
				}
				if failed || i%5 == 0 {
					r.abort(tx)
				} else {
					r.commit(tx)
				}
			}
		})
	}
	wg.Wait()
	assert.Positive(t, r.lm.Stats().LockWaits, "there was contention")
	assert.Empty(t, r.lm.Locks())
}

// TestKeyShareWhileUpdaterCommits: a key-share locker decides the new xmax
// of a version whose plain updater commits at that very moment. The
// decision must rest on one reading of the updater's status: read "in
// progress" and then "not in progress" (and so, wrongly, "a finished
// locker or an aborted updater"), it dropped the committed update from
// xmax, and the old version came back to life — a lost update that the
// crash tests' bank total caught once in several hundred runs.
func TestKeyShareWhileUpdaterCommits(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	t1, t2 := r.begin(), r.begin()
	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	v2 := r.versions(row)[1]

	var once sync.Once
	r.e.testAfterXmaxStatus = func(xmax uint64) {
		if xmax == t1.ID() {
			once.Do(func() { r.commit(t1) })
		}
	}
	require.Equal(t, heap.TMOk, r.lock(t2, row, v1, tuplemode.KeyShare))
	r.e.testAfterXmaxStatus = nil
	require.False(t, r.x.IsInProgress(t1.ID()), "the hook ran: t1 committed mid-decision")

	h1 := r.header(row, v1)
	require.NotNil(t, h1.multi, "the updater stays in xmax beside the locker: %s", h1.bits())
	assert.Equal(t, []multixact.Member{{Xid: t1.ID(), Status: multixact.NoKeyUpdate}, {Xid: t2.ID(), Status: multixact.ForKeyShare}}, h1.multi.Members())

	// A later writer must find v1 updated, not lockable.
	t3 := r.begin()
	res, err = r.e.Update(r.ctx, t3, r.tbl, row, v1, []byte("stale"), false)
	require.NoError(t, err)
	assert.Equal(t, heap.TMUpdated, res, "v1 was updated by a committed transaction")
	assert.Same(t, v2, r.e.LatestVersion(row, v1))
	r.commit(t2)
	r.abort(t3)
}

// TestTupleLockCarriedAcrossChainFollow: three updaters of one row queue up
// (rc-update-chain). When the first commits, the second gets TMUpdated and
// follows the chain; it keeps the tuple lock while doing so, so the third,
// queued on that lock, cannot overtake it on the new version.
func TestTupleLockCarriedAcrossChainFollow(t *testing.T) {
	r := newRig(t)
	row, v1 := r.committedRow("k")
	tag := lockmgr.Tag{Kind: lockmgr.TagTuple, Rel: "t", Key: "k"}
	holds := func(tx *Txn) bool {
		for _, li := range r.lm.Locks() {
			if li.Granted && li.Xid == tx.ID() && li.Tag == tag {
				return true
			}
		}
		return false
	}
	t1, t2, t3 := r.begin(), r.begin(), r.begin()
	res, err := r.e.Update(r.ctx, t1, r.tbl, row, v1, []byte("b"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)

	update := func(tx *Txn, value string) <-chan tmResult {
		return async(func() tmResult {
			res, err := r.e.Update(r.ctx, tx, r.tbl, row, v1, []byte(value), false)
			return tmResult{res, err}
		})
	}
	d2 := update(t2, "c")
	r.eventually("t2 waits for t1", func() bool { return r.waitingFor(t2, t1) })
	d3 := update(t3, "d")
	r.eventually("t3 queues on the tuple lock", func() bool {
		for _, li := range r.lm.Locks() {
			if !li.Granted && li.Xid == t3.ID() && li.Tag == tag {
				return true
			}
		}
		return false
	})

	r.commit(t1)
	got := receive(t, d2)
	require.NoError(t, got.err)
	require.Equal(t, heap.TMUpdated, got.res)
	assert.True(t, holds(t2), "t2 carries the tuple lock to the new version: %v", r.lm.Locks())
	assert.True(t, pending(d3), "t3 still queued")

	// t2 follows the chain, adopts the lock, updates, and releases it.
	v2 := r.e.LatestVersion(row, v1)
	res, err = r.e.Update(r.ctx, t2, r.tbl, row, v2, []byte("c"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	assert.False(t, holds(t2), "released after the update")

	// t3 now finds v1 updated (it carries the lock in turn) and, on v2,
	// waits for t2.
	got = receive(t, d3)
	require.NoError(t, got.err)
	require.Equal(t, heap.TMUpdated, got.res)
	assert.Same(t, v2, r.e.LatestVersion(row, v1), "t2's version is not committed yet: v2 is the newest t3 can follow to")
	d3 = async(func() tmResult {
		res, err := r.e.Update(r.ctx, t3, r.tbl, row, v2, []byte("d"), false)
		return tmResult{res, err}
	})
	r.eventually("t3 waits for t2", func() bool { return r.waitingFor(t3, t2) })
	r.commit(t2)
	got = receive(t, d3)
	require.NoError(t, got.err)
	require.Equal(t, heap.TMUpdated, got.res)
	v3 := r.e.LatestVersion(row, v2)
	res, err = r.e.Update(r.ctx, t3, r.tbl, row, v3, []byte("d"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	r.commit(t3)
	r.e.ReleaseCarried(t3) // nothing carried: a no-op
	assert.Empty(t, r.lm.Locks())
}

// TestSharerAfterEndedLockersTakesFastPath: once every member of a
// lock-only multixact has ended, the next FOR KEY SHARE or FOR SHARE
// locker replaces the set with its plain xid (the fast path) instead of
// joining it: a row keeps no multixact after a burst of sharers. (Joining
// without asking whether a member runs was tried for the hot row's sake;
// rows then kept multixacts for good, and bench's smoke test caught it.)
func TestSharerAfterEndedLockersTakesFastPath(t *testing.T) {
	for _, mode := range []tuplemode.Mode{tuplemode.KeyShare, tuplemode.Share} {
		r := newRig(t)
		row, v := r.committedRow("k")
		t1, t2 := r.begin(), r.begin()
		require.Equal(t, heap.TMOk, r.lock(t1, row, v, tuplemode.Share))
		require.Equal(t, heap.TMOk, r.lock(t2, row, v, tuplemode.KeyShare))
		require.NotNil(t, r.header(row, v).multi)
		r.commit(t1)
		r.abort(t2)

		t3 := r.begin()
		require.Equal(t, heap.TMOk, r.lock(t3, row, v, mode))
		h := r.header(row, v)
		assert.Nil(t, h.multi, "%v: a plain xid again", mode)
		assert.Equal(t, t3.ID(), h.xmax, "%v", mode)
	}
}

// latchFree fails the test unless row's latch is free (LockTupleLatched
// must release it on every path).
func (r *rig) latchFree(row *heap.Row, what string) {
	r.t.Helper()
	got := make(chan struct{})
	go func() { row.Lock(); row.Unlock(); close(got) }()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		r.t.Fatalf("%s: the row latch is still held", what)
	}
}

// lockLatched is lock through LockTupleLatched, the latch taken first as
// the engine's Lock holds it.
func (r *rig) lockLatched(tx *Txn, row *heap.Row, tup *heap.Tuple, mode tuplemode.Mode, policy WaitPolicy) heap.TMResult {
	r.t.Helper()
	row.Lock()
	res, err := r.e.LockTupleLatched(r.ctx, tx, r.tbl, row, tup, mode, policy, true)
	require.NoError(r.t, err)
	r.latchFree(row, mode.String())
	return res
}

// TestLockTupleLatched: entered with the row latch held, LockTuple's first
// pass decides in that hold and every way out releases it — the single
// xid, the hot-row append to a multixact, already held, NOWAIT, a sleep
// behind a conflicting locker, and an obsolete version.
func TestLockTupleLatched(t *testing.T) {
	r := newRig(t)
	row, v := r.committedRow("k")
	t1, t2, t3 := r.begin(), r.begin(), r.begin()
	require.Equal(t, heap.TMOk, r.lockLatched(t1, row, v, tuplemode.KeyShare, Block), "single xid")
	require.Equal(t, heap.TMOk, r.lockLatched(t2, row, v, tuplemode.KeyShare, Block), "beside another locker")
	assert.Equal(t, "XMAX_IS_MULTI XMAX_LOCK_ONLY XMAX_KEYSHR_LOCK", r.header(row, v).bits())
	n := r.numChanges()
	require.Equal(t, heap.TMOk, r.lockLatched(t2, row, v, tuplemode.KeyShare, Block), "already held")
	assert.Equal(t, n, r.numChanges(), "nothing written")
	require.Equal(t, heap.TMWouldBlock, r.lockLatched(t3, row, v, tuplemode.Exclusive, Error), "NOWAIT")

	done := async(func() tmResult {
		row.Lock()
		res, err := r.e.LockTupleLatched(r.ctx, t3, r.tbl, row, v, tuplemode.Exclusive, Block, true)
		return tmResult{res, err}
	})
	r.eventually("T3 waits for T1", func() bool { return r.waitingFor(t3, t1) })
	r.latchFree(row, "a sleeper")
	r.commit(t1)
	r.commit(t2)
	got := receive(t, done)
	require.NoError(t, got.err)
	assert.Equal(t, heap.TMOk, got.res)
	assert.Equal(t, t3.ID(), r.header(row, v).xmax)
	assert.Empty(t, r.lm.Locks(), "tuple lock released")

	res, err := r.e.Update(r.ctx, t3, r.tbl, row, v, []byte("v2"), false)
	require.NoError(t, err)
	require.Equal(t, heap.TMOk, res)
	r.commit(t3)
	t4 := r.begin()
	assert.Equal(t, heap.TMUpdated, r.lockLatched(t4, row, v, tuplemode.Share, Block), "an obsolete version")
	r.latchFree(row, "after TMUpdated")
}
