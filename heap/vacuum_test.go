package heap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/multixact"
)

// chain inserts v1 and, linked from it, v2 as versions of key (v1 updated
// into v2, headers as given).
func (e *env) chain(key string, v1, v2 *heap.Tuple) *heap.Row {
	r := e.insert(key, v1)
	r.Lock()
	heap.SetNext(v1, v2)
	e.tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: v2.Xmin(), New: v2})
	r.Unlock()
	return r
}

func TestVacuumRemovesVersionsDeadBelowHorizon(t *testing.T) {
	e := newEnv(t)
	ins := e.committed()
	updater := e.x.Begin()
	v1 := heap.MakeTuple(heap.TupleHeader{Xmin: ins, Xmax: updater.ID()})
	v2 := live(updater.ID())
	e.chain("k", v1, v2)

	// A reader whose snapshot predates the update's commit still sees v1.
	reader := e.x.Begin()
	e.x.TakeSnapshot(reader)
	e.x.Commit(updater)

	res := e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Zero(t, res.Removed, "a live snapshot can still see v1")
	assert.Equal(t, []*heap.Tuple{v1, v2}, e.versions("k"))

	e.x.Commit(reader)
	res = e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Equal(t, 1, res.Removed)
	assert.Equal(t, 1, res.Rows)
	assert.Zero(t, res.RowsUnlinked)
	assert.Equal(t, []*heap.Tuple{v2}, e.versions("k"))
	assert.Equal(t, int64(1), e.h.TuplesLive())
	assert.Equal(t, uint64(1), e.h.TuplesReclaimed())
	assert.Contains(t, e.seenKinds(), heap.ChangeVacuum, "pruning is reported to the hook")

	// Horizon 0 prunes nothing that needs a horizon.
	deleter := e.x.Begin()
	heap.SetXmax(v2, deleter.ID(), 0, heap.KeysUpdated)
	e.x.Commit(deleter)
	assert.Zero(t, e.tbl.Vacuum(0, 0).Removed)
	assert.Equal(t, 1, e.tbl.Vacuum(e.x.Horizon(), 0).Removed)
}

func TestVacuumRemovesAbortedVersionsAndUnlinksEmptyRows(t *testing.T) {
	e := newEnv(t)
	abortedIns := e.aborted()
	e.insert("gone", live(abortedIns))

	// An aborted update: v1 stays (its xmax is cleared), v2 goes, and v1
	// no longer links to it.
	ins, abortedUpd := e.committed(), e.aborted()
	v1 := heap.MakeTuple(heap.TupleHeader{Xmin: ins, Xmax: abortedUpd})
	v2 := live(abortedUpd)
	e.chain("k", v1, v2)

	// Dead inserters need no horizon.
	res := e.tbl.Vacuum(0, 0)
	assert.Equal(t, 2, res.Removed)
	assert.Equal(t, 2, res.Rows)
	assert.Equal(t, 1, res.RowsUnlinked)

	assert.Nil(t, e.tbl.Row([]byte("gone")), "the empty row is unlinked")
	assert.Equal(t, 1, e.tbl.CachedRows())
	assert.Equal(t, []*heap.Tuple{v1}, e.versions("k"))
	assert.Nil(t, v1.Next(), "no link to the removed successor")
	assert.Zero(t, v1.Xmax(), "the aborted updater is cleared from xmax")
	assert.NotZero(t, v1.Infomask()&heap.XmaxInvalid)

	// Inserting the key again makes a fresh row.
	r := e.tbl.RowForInsert([]byte("gone"))
	assert.False(t, r.Removed())
	assert.Empty(t, r.Versions())
	r.Unlock()
}

func TestVacuumMarksUnlinkedRowRemoved(t *testing.T) {
	e := newEnv(t)
	r := e.insert("gone", live(e.aborted()))
	e.tbl.Vacuum(0, 0)
	r.Lock()
	defer r.Unlock()
	assert.True(t, r.Removed())
	assert.NotSame(t, r, e.tbl.Row([]byte("gone")))
}

func TestVacuumFreezesXminBelowCutoff(t *testing.T) {
	e := newEnv(t)
	x1, x2 := e.committed(), e.committed()
	running := e.x.Begin()
	v1, v2, v3 := live(x1), live(x2), live(running.ID())
	e.insert("a", v1)
	e.insert("b", v2)
	e.insert("c", v3)

	cutoff := e.x.FreezeCutoff(e.x.Horizon())
	require.Equal(t, running.ID(), cutoff)
	res := e.tbl.Vacuum(e.x.Horizon(), x2) // freeze below x2 only
	assert.Equal(t, heap.XminFrozen, v1.Infomask()&heap.XminFrozen, "x1 < cutoff: frozen")
	assert.Equal(t, heap.XminCommitted, v2.Infomask()&heap.XminFrozen, "x2 not below the cutoff: only hinted")
	assert.Zero(t, v3.Infomask()&heap.XminFrozen, "running inserter: untouched")
	assert.Equal(t, x2, res.MinXidRef, "frozen xmins are no longer referenced")

	res = e.tbl.Vacuum(e.x.Horizon(), cutoff)
	assert.Equal(t, heap.XminFrozen, v2.Infomask()&heap.XminFrozen)
	assert.Equal(t, running.ID(), res.MinXidRef)

	// A frozen version stays visible after the clog is truncated past it.
	e.x.Commit(running)
	e.x.TruncateClog(e.x.NextXid())
	reader := e.x.Begin()
	assert.True(t, e.h.SatisfiesMVCC(v1, e.x.TakeSnapshot(reader)))
}

func TestVacuumClearsFinishedLockers(t *testing.T) {
	e := newEnv(t)
	ins := e.committed()
	lockerDone, lockerAborted := e.committed(), e.aborted()
	running := e.x.Begin()
	done := heap.MakeTuple(heap.TupleHeader{Xmin: ins, Xmax: lockerDone, Infomask: heap.XmaxLockOnly | heap.XmaxExclLock, Infomask2: heap.KeysUpdated})
	abt := heap.MakeTuple(heap.TupleHeader{Xmin: ins, Xmax: lockerAborted, Infomask: heap.XmaxLockOnly | heap.XmaxKeyShrLock})
	held := heap.MakeTuple(heap.TupleHeader{Xmin: ins, Xmax: running.ID(), Infomask: heap.XmaxLockOnly | heap.XmaxShrLock})
	e.insert("a", done)
	e.insert("b", abt)
	e.insert("c", held)

	res := e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Zero(t, res.Removed, "a locked version is not dead")
	for _, v := range []*heap.Tuple{done, abt} {
		assert.Zero(t, v.Xmax())
		assert.Nil(t, v.Multi())
		assert.Equal(t, heap.XmaxInvalid, v.Infomask()&heap.XmaxBits, "lock bits gone, XMAX_INVALID set")
		assert.Zero(t, v.Infomask2()&heap.KeysUpdated)
	}
	assert.Equal(t, running.ID(), held.Xmax(), "a running locker stays")
	assert.Equal(t, heap.XmaxLockOnly|heap.XmaxShrLock, held.Infomask()&heap.XmaxBits)
	assert.Equal(t, ins, res.MinXidRef, "xmins are not frozen (cutoff 0) and still referenced")

	res = e.tbl.Vacuum(e.x.Horizon(), running.ID())
	assert.Equal(t, running.ID(), res.MinXidRef, "after freezing, only the running locker is referenced")
}

func TestVacuumMultixacts(t *testing.T) {
	e := newEnv(t)
	ins := e.committed()
	lockerDone := e.committed()
	running := e.x.Begin()
	keyUpd, noKeyUpd, abortedUpd := e.x.Begin(), e.x.Begin(), e.aborted()
	mk := func(members ...multixact.Member) *multixact.MultiXact {
		m, err := e.ms.Create(members)
		require.NoError(t, err)
		return m
	}

	// A reader pins the horizon below the updaters' commits, so their old
	// versions are kept and only their xmax is simplified.
	reader := e.x.Begin()
	e.x.TakeSnapshot(reader)
	e.x.Commit(keyUpd)
	e.x.Commit(noKeyUpd)

	deleted := withMulti(ins, mk(mb(lockerDone, multixact.ForKeyShare), mb(keyUpd.ID(), multixact.Update)), multiUpd)
	heap.SetInfomask2(deleted, heap.KeysUpdated)
	updated := withMulti(ins, mk(mb(lockerDone, multixact.ForKeyShare), mb(noKeyUpd.ID(), multixact.NoKeyUpdate)), multiUpd)
	heap.SetInfomask2(updated, heap.KeysUpdated) // must be cleared: a no-key update
	locksDone := withMulti(ins, mk(mb(lockerDone, multixact.ForShare), mb(abortedUpd, multixact.ForShare)), multiLock)
	abortedU := withMulti(ins, mk(mb(lockerDone, multixact.ForKeyShare), mb(abortedUpd, multixact.NoKeyUpdate)), multiUpd)
	stillRunning := withMulti(ins, mk(mb(lockerDone, multixact.ForShare), mb(running.ID(), multixact.ForShare)), multiLock)
	for k, v := range map[string]*heap.Tuple{"deleted": deleted, "updated": updated, "locksDone": locksDone, "abortedU": abortedU, "running": stillRunning} {
		e.insert(k, v)
	}

	res := e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Zero(t, res.Removed)

	// A committed updater replaces the multixact (RETURN_IS_XID).
	assert.Equal(t, keyUpd.ID(), deleted.Xmax())
	assert.Nil(t, deleted.Multi())
	assert.Equal(t, heap.XmaxCommitted, deleted.Infomask()&heap.XmaxBits)
	assert.Equal(t, heap.KeysUpdated, deleted.Infomask2(), "Update keeps KEYS_UPDATED")
	assert.Equal(t, noKeyUpd.ID(), updated.Xmax())
	assert.Nil(t, updated.Multi())
	assert.Equal(t, heap.XmaxCommitted, updated.Infomask()&heap.XmaxBits)
	assert.Zero(t, updated.Infomask2(), "NoKeyUpdate has no KEYS_UPDATED")
	assert.Equal(t, keyUpd.ID(), heap.UpdateXid(deleted))

	// Nothing anyone needs: the xmax is invalidated.
	for _, v := range []*heap.Tuple{locksDone, abortedU} {
		assert.Zero(t, v.Xmax())
		assert.Nil(t, v.Multi())
		assert.Equal(t, heap.XmaxInvalid, v.Infomask()&heap.XmaxBits)
	}

	// A multixact with a running member is left alone, and its members
	// are referenced.
	assert.NotNil(t, stillRunning.Multi())
	assert.Equal(t, heap.XmaxIsMulti|multiLock, stillRunning.Infomask()&heap.XmaxBits)
	assert.Equal(t, ins, res.MinXidRef)
	res = e.tbl.Vacuum(e.x.Horizon(), running.ID())
	assert.Equal(t, lockerDone, res.MinXidRef, "the finished member of a live multixact still counts")

	// The simplified versions are still what they were to the old reader,
	// and dead once it ends.
	e.x.Commit(reader)
	res = e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Equal(t, 2, res.Removed)
	assert.Nil(t, e.tbl.Row([]byte("deleted")))
	assert.Nil(t, e.tbl.Row([]byte("updated")))
}

func TestVacuumMinXidRefEmpty(t *testing.T) {
	e := newEnv(t)
	assert.Equal(t, ^uint64(0), e.tbl.Vacuum(0, 0).MinXidRef, "empty table")
	x := e.committed()
	e.insert("k", live(x))
	res := e.tbl.Vacuum(e.x.Horizon(), e.x.NextXid())
	assert.Equal(t, ^uint64(0), res.MinXidRef, "every xmin frozen, no xmax")
	assert.Equal(t, 1, res.Rows)
}

// TestPruneCountsWhatItRemoves: a transaction may end while a row is being
// pruned (aborting takes no row latch). Here the inserter of the second
// version aborts between pruning's decision to prune and the removal
// itself (the hook runs in between); the counts must still match the
// versions actually removed.
func TestPruneCountsWhatItRemoves(t *testing.T) {
	e := newEnv(t)
	b := e.x.Begin()
	e.insert("k", live(b.ID()))
	e.insert("k", live(e.aborted())) // after b's: an insert prunes what is dead before it
	require.Equal(t, int64(2), e.h.TuplesLive())

	e.onChange = func(c *heap.Change) {
		if c.Kind == heap.ChangeVacuum && e.x.IsInProgress(b.ID()) {
			e.x.Abort(b) // concurrently, as far as the pruner can tell
		}
	}
	res := e.tbl.Vacuum(0, 0)
	left := len(e.versions("k"))
	assert.Equal(t, 2-left, res.Removed, "Removed counts the versions removed")
	assert.Equal(t, int64(left), e.h.TuplesLive(), "TuplesLive is the number of versions left")
	assert.Equal(t, uint64(res.Removed), e.h.TuplesReclaimed())
}

// TestVacuumKeepsABulkLoadsRowsUntilItEnds: rows a running transaction
// inserted (a COPY in progress) stay on the worklist untouched, their xmin
// counted in MinXidRef; once the loader aborts, the next pass removes
// them, and once another loader commits, a pass freezes its rows and
// takes them off the list.
func TestVacuumKeepsABulkLoadsRowsUntilItEnds(t *testing.T) {
	e := newEnv(t)
	load := e.x.Begin()
	other := e.x.Begin() // a second running inserter, interleaved
	for _, k := range []string{"a", "b", "c"} {
		e.insert(k, live(load.ID()))
		e.insert(k+"2", live(other.ID()))
	}
	res := e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Equal(t, 6, res.Rows)
	assert.Zero(t, res.Removed)
	assert.Equal(t, load.ID(), res.MinXidRef)

	e.x.Abort(load)
	res = e.tbl.Vacuum(e.x.Horizon(), 0)
	assert.Equal(t, 3, res.Removed, "the aborted load's rows go")
	assert.Equal(t, 3, res.RowsUnlinked)
	assert.Equal(t, other.ID(), res.MinXidRef)
	assert.Equal(t, 3, e.tbl.CachedRows())

	e.x.Commit(other)
	res = e.tbl.Vacuum(e.x.Horizon(), e.x.NextXid())
	assert.Equal(t, 3, res.Rows)
	assert.Equal(t, ^uint64(0), res.MinXidRef, "frozen: nothing unfrozen is left")
	assert.Zero(t, e.tbl.Vacuum(e.x.Horizon(), e.x.NextXid()).Rows, "off the worklist")
}
