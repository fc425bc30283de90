package heap_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// world is a fixed cast of transactions around one snapshot taken by me:
//
//	ins, old  committed before the snapshot (ins inserts, old updates/locks)
//	abt       aborted
//	run       another running transaction
//	me        running, the caller; snap is its snapshot
//	late      committed after the snapshot was taken
type world struct {
	*env
	ins, old, abt, late uint64
	run, me             uint64
	snap                xact.Snapshot
	meX                 *xact.Xact // the transaction of me
}

func newWorld(t *testing.T) *world {
	w := &world{env: newEnv(t)}
	w.ins = w.committed()
	w.old = w.committed()
	w.abt = w.aborted()
	w.run = w.x.Begin().ID()
	late := w.x.Begin()
	me := w.x.Begin()
	w.me, w.meX = me.ID(), me
	w.snap = w.x.TakeSnapshot(me)
	w.x.Commit(late)
	w.late = late.ID()
	return w
}

func (w *world) multi(members ...multixact.Member) *multixact.MultiXact {
	m, err := w.ms.Create(members)
	require.NoError(w.t, err)
	return m
}

func mb(xid uint64, s multixact.Status) multixact.Member {
	return multixact.Member{Xid: xid, Status: s}
}

// withMulti makes a tuple inserted by xmin whose xmax is m, with IS_MULTI and im.
func withMulti(xmin uint64, m *multixact.MultiXact, im uint16) *heap.Tuple {
	return heap.MakeTuple(heap.TupleHeader{Xmin: xmin, Xmax: m.ID(), Multi: m, Infomask: heap.XmaxIsMulti | im})
}

const (
	xmaxInv   = heap.XmaxInvalid
	xminC     = heap.XminCommitted
	lockOnly  = heap.XmaxLockOnly
	multiLock = heap.XmaxLockOnly | heap.XmaxShrLock // a lock-only multixact of FOR SHARE lockers
	multiUpd  = heap.XmaxExclLock                    // a multixact with an updater
)

func TestSatisfiesMVCC(t *testing.T) {
	for _, c := range []struct {
		name    string
		tup     func(w *world) *heap.Tuple
		visible bool
		after   uint16 // the whole infomask after the call (hint bits)
	}{
		{"inserter running", func(w *world) *heap.Tuple { return live(w.run) }, false, xmaxInv},
		{"inserter aborted", func(w *world) *heap.Tuple { return live(w.abt) }, false, xmaxInv | heap.XminInvalid},
		{"inserter committed before the snapshot", func(w *world) *heap.Tuple { return live(w.ins) }, true, xmaxInv | xminC},
		{"inserter committed after the snapshot (hinted, still invisible)", func(w *world) *heap.Tuple { return live(w.late) }, false, xmaxInv | xminC},
		{"own insert", func(w *world) *heap.Tuple { return live(w.me) }, true, xmaxInv},
		{"XMIN_INVALID hint", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Infomask: xmaxInv | heap.XminInvalid})
		}, false, xmaxInv | heap.XminInvalid},
		{"frozen xmin is visible to every snapshot", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.late, Infomask: xmaxInv | heap.XminFrozen})
		}, true, xmaxInv | heap.XminFrozen},
		{"locked by a running xid", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run, Infomask: lockOnly | heap.XmaxExclLock})
		}, true, xminC | lockOnly | heap.XmaxExclLock},
		{"locked by a committed xid", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old, Infomask: lockOnly | heap.XmaxKeyShrLock})
		}, true, xminC | lockOnly | heap.XmaxKeyShrLock},
		{"own lock", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.me, Infomask: lockOnly | heap.XmaxExclLock})
		}, true, xminC | lockOnly | heap.XmaxExclLock},
		{"updater running", func(w *world) *heap.Tuple { return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run}) }, true, xminC},
		{"updater committed before the snapshot", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old})
		}, false, xminC | heap.XmaxCommitted},
		{"updater committed after the snapshot", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.late})
		}, true, xminC | heap.XmaxCommitted},
		{"XMAX_COMMITTED hint, committed after the snapshot", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.late, Infomask: xminC | heap.XmaxCommitted})
		}, true, xminC | heap.XmaxCommitted},
		{"XMAX_COMMITTED hint, committed before the snapshot", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old, Infomask: xminC | heap.XmaxCommitted})
		}, false, xminC | heap.XmaxCommitted},
		{"updater aborted", func(w *world) *heap.Tuple { return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.abt}) }, true, xminC | xmaxInv},
		{"own update", func(w *world) *heap.Tuple { return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.me}) }, false, xminC},
		{"own insert, own delete", func(w *world) *heap.Tuple { return heap.MakeTuple(heap.TupleHeader{Xmin: w.me, Xmax: w.me}) }, false, 0},
		{"lock-only multixact", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.run, multixact.ForShare), mb(w.me, multixact.ForShare)), multiLock)
		}, true, xminC | heap.XmaxIsMulti | multiLock},
		{"multixact, updater committed before the snapshot (never XMAX_COMMITTED)", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.old, multixact.NoKeyUpdate), mb(w.run, multixact.ForKeyShare)), multiUpd)
		}, false, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, updater committed after the snapshot", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.late, multixact.NoKeyUpdate), mb(w.run, multixact.ForKeyShare)), multiUpd)
		}, true, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, updater running", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.run, multixact.NoKeyUpdate), mb(w.old, multixact.ForKeyShare)), multiUpd)
		}, true, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, updater aborted (not hinted invalid)", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.abt, multixact.NoKeyUpdate), mb(w.old, multixact.ForKeyShare)), multiUpd)
		}, true, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, own update", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.run, multixact.ForKeyShare), mb(w.me, multixact.NoKeyUpdate)), multiUpd)
		}, false, xminC | heap.XmaxIsMulti | multiUpd},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			tup := c.tup(w)
			assert.Equal(t, c.visible, w.h.SatisfiesMVCC(tup, w.snap))
			assert.Equal(t, c.after, tup.Infomask(), "infomask after (hint bits): got %#x want %#x", tup.Infomask(), c.after)
			// Asking again (now from the hint bits) gives the same answer.
			assert.Equal(t, c.visible, w.h.SatisfiesMVCC(tup, w.snap), "second call")
		})
	}
}

func TestSatisfiesUpdate(t *testing.T) {
	withNext := func(tp *heap.Tuple) *heap.Tuple {
		heap.SetNext(tp, heap.MakeTuple(heap.TupleHeader{Xmin: tp.Xmax()}))
		return tp
	}
	for _, c := range []struct {
		name  string
		tup   func(w *world) *heap.Tuple
		want  heap.TMResult
		after uint16
	}{
		// xmin
		{"inserter running", func(w *world) *heap.Tuple { return live(w.run) }, heap.TMInvisible, xmaxInv},
		{"inserter aborted", func(w *world) *heap.Tuple { return live(w.abt) }, heap.TMInvisible, xmaxInv | heap.XminInvalid},
		{"own insert", func(w *world) *heap.Tuple { return live(w.me) }, heap.TMOk, xmaxInv},
		{"committed after my snapshot: still TM_Ok (not a snapshot test)", func(w *world) *heap.Tuple { return live(w.late) }, heap.TMOk, xmaxInv | xminC},
		// no xmax
		{"xmax 0", func(w *world) *heap.Tuple { return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins}) }, heap.TMOk, xminC},
		{"XMAX_INVALID hint over a stale xmax", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run, Infomask: xmaxInv})
		}, heap.TMOk, xminC | xmaxInv},
		// plain lock-only xmax
		{"locked by a running xid", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run, Infomask: lockOnly | heap.XmaxShrLock})
		}, heap.TMBeingModified, xminC | lockOnly | heap.XmaxShrLock},
		{"own lock is TM_BeingModified", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.me, Infomask: lockOnly | heap.XmaxKeyShrLock})
		}, heap.TMBeingModified, xminC | lockOnly | heap.XmaxKeyShrLock},
		{"locker committed: lock gone", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old, Infomask: lockOnly | heap.XmaxExclLock})
		}, heap.TMOk, xminC | lockOnly | heap.XmaxExclLock | xmaxInv},
		{"locker aborted: lock gone", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.abt, Infomask: lockOnly | heap.XmaxKeyShrLock})
		}, heap.TMOk, xminC | lockOnly | heap.XmaxKeyShrLock | xmaxInv},
		// plain updater
		{"updater running", func(w *world) *heap.Tuple { return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run}) }, heap.TMBeingModified, xminC},
		{"updater committed, successor exists", func(w *world) *heap.Tuple {
			return withNext(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old}))
		}, heap.TMUpdated, xminC | heap.XmaxCommitted},
		{"deleter committed", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.late, Infomask2: heap.KeysUpdated})
		}, heap.TMDeleted, xminC | heap.XmaxCommitted},
		{"XMAX_COMMITTED hint", func(w *world) *heap.Tuple {
			return heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old, Infomask: xminC | heap.XmaxCommitted})
		}, heap.TMDeleted, xminC | heap.XmaxCommitted},
		{"updater aborted", func(w *world) *heap.Tuple {
			return withNext(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.abt}))
		}, heap.TMOk, xminC | xmaxInv},
		{"own update", func(w *world) *heap.Tuple { return withNext(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.me})) }, heap.TMInvisible, xminC},
		// multixact, lock-only
		{"lock-only multixact with a running member", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.old, multixact.ForShare), mb(w.run, multixact.ForShare)), multiLock)
		}, heap.TMBeingModified, xminC | heap.XmaxIsMulti | multiLock},
		{"lock-only multixact with own lock", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.old, multixact.ForShare), mb(w.me, multixact.ForShare)), multiLock)
		}, heap.TMBeingModified, xminC | heap.XmaxIsMulti | multiLock},
		{"lock-only multixact, no member running", func(w *world) *heap.Tuple {
			return withMulti(w.ins, w.multi(mb(w.old, multixact.ForShare), mb(w.abt, multixact.ForShare)), multiLock)
		}, heap.TMOk, xminC | heap.XmaxIsMulti | multiLock | xmaxInv},
		// multixact with an updater
		{"multixact, updater running", func(w *world) *heap.Tuple {
			return withNext(withMulti(w.ins, w.multi(mb(w.old, multixact.ForKeyShare), mb(w.run, multixact.NoKeyUpdate)), multiUpd))
		}, heap.TMBeingModified, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, updater aborted, locker running: not forgotten (multixact-no-forget)", func(w *world) *heap.Tuple {
			return withNext(withMulti(w.ins, w.multi(mb(w.abt, multixact.NoKeyUpdate), mb(w.run, multixact.ForKeyShare)), multiUpd))
		}, heap.TMBeingModified, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, updater aborted, lockers finished", func(w *world) *heap.Tuple {
			return withNext(withMulti(w.ins, w.multi(mb(w.abt, multixact.NoKeyUpdate), mb(w.old, multixact.ForKeyShare)), multiUpd))
		}, heap.TMOk, xminC | heap.XmaxIsMulti | multiUpd | xmaxInv},
		{"multixact, updater committed, successor exists (never XMAX_COMMITTED)", func(w *world) *heap.Tuple {
			return withNext(withMulti(w.ins, w.multi(mb(w.old, multixact.NoKeyUpdate), mb(w.run, multixact.ForKeyShare)), multiUpd))
		}, heap.TMUpdated, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, deleter committed", func(w *world) *heap.Tuple {
			tp := withMulti(w.ins, w.multi(mb(w.late, multixact.Update), mb(w.run, multixact.ForKeyShare)), multiUpd)
			heap.SetInfomask2(tp, heap.KeysUpdated)
			return tp
		}, heap.TMDeleted, xminC | heap.XmaxIsMulti | multiUpd},
		{"multixact, own update", func(w *world) *heap.Tuple {
			return withNext(withMulti(w.ins, w.multi(mb(w.run, multixact.ForKeyShare), mb(w.me, multixact.NoKeyUpdate)), multiUpd))
		}, heap.TMInvisible, xminC | heap.XmaxIsMulti | multiUpd},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			tup := c.tup(w)
			got := w.h.SatisfiesUpdate(tup, w.meX)
			assert.Equal(t, c.want, got, "got %v want %v", got, c.want)
			assert.Equal(t, c.after, tup.Infomask(), "infomask after (hint bits): got %#x want %#x", tup.Infomask(), c.after)
			assert.Equal(t, c.want, w.h.SatisfiesUpdate(tup, w.meX), "second call, from the hint bits")
		})
	}
}

func TestHintBitsFollowLaterFates(t *testing.T) {
	// A running locker leaves no hint; once it ends, the next look hints
	// the lock gone. A running multixact member likewise.
	w := newWorld(t)
	locker := w.x.Begin()
	tup := heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: locker.ID(), Infomask: lockOnly | heap.XmaxKeyShrLock})
	assert.Equal(t, heap.TMBeingModified, w.h.SatisfiesUpdate(tup, w.meX))
	assert.Zero(t, tup.Infomask()&xmaxInv)
	w.x.Commit(locker)
	assert.Equal(t, heap.TMOk, w.h.SatisfiesUpdate(tup, w.meX))
	assert.NotZero(t, tup.Infomask()&xmaxInv)

	updater := w.x.Begin()
	tup = withMulti(w.ins, w.multi(mb(w.abt, multixact.ForShare), mb(updater.ID(), multixact.Update)), multiUpd)
	assert.Equal(t, heap.TMBeingModified, w.h.SatisfiesUpdate(tup, w.meX))
	w.x.Abort(updater)
	assert.Equal(t, heap.TMOk, w.h.SatisfiesUpdate(tup, w.meX))
	assert.NotZero(t, tup.Infomask()&xmaxInv, "no member runs and the updater aborted: now hinted invalid")
	assert.Zero(t, tup.Infomask()&heap.XmaxCommitted)
}

func TestUpdateXid(t *testing.T) {
	w := newWorld(t)
	m := w.multi(mb(w.run, multixact.ForKeyShare), mb(w.old, multixact.Update))
	for _, c := range []struct {
		name string
		tup  *heap.Tuple
		want uint64
	}{
		{"no xmax", live(w.ins), 0},
		{"xmax 0 without hint", heap.MakeTuple(heap.TupleHeader{Xmin: w.ins}), 0},
		{"invalid hint", heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old, Infomask: xmaxInv}), 0},
		{"lock only", heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old, Infomask: lockOnly | heap.XmaxExclLock}), 0},
		{"plain updater", heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old}), w.old},
		{"multixact updater", withMulti(w.ins, m, multiUpd), w.old},
		{"lock-only multixact", withMulti(w.ins, m, multiLock), 0},
		{"multixact pointer missing", heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: 7, Infomask: heap.XmaxIsMulti}), 0},
	} {
		assert.Equal(t, c.want, heap.UpdateXid(c.tup), c.name)
	}
}

func TestIsRunningXmax(t *testing.T) {
	w := newWorld(t)
	assert.False(t, w.h.IsRunningXmax(live(w.ins)))
	assert.False(t, w.h.IsRunningXmax(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins})))
	assert.True(t, w.h.IsRunningXmax(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run, Infomask: lockOnly | heap.XmaxKeyShrLock})))
	assert.True(t, w.h.IsRunningXmax(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run})))
	assert.False(t, w.h.IsRunningXmax(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.old})))
	assert.False(t, w.h.IsRunningXmax(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: w.run, Infomask: xmaxInv})))
	assert.True(t, w.h.IsRunningXmax(withMulti(w.ins, w.multi(mb(w.old, multixact.ForShare), mb(w.run, multixact.ForShare)), multiLock)))
	assert.False(t, w.h.IsRunningXmax(withMulti(w.ins, w.multi(mb(w.old, multixact.ForShare), mb(w.abt, multixact.ForShare)), multiLock)))
	assert.False(t, w.h.IsRunningXmax(heap.MakeTuple(heap.TupleHeader{Xmin: w.ins, Xmax: 7, Infomask: heap.XmaxIsMulti})), "reclaimed multixact")
}

func TestTMResultString(t *testing.T) {
	assert.Equal(t, "TM_Ok", heap.TMOk.String())
	assert.Equal(t, "TM_BeingModified", heap.TMBeingModified.String())
	assert.Equal(t, "TM_WouldBlock", heap.TMWouldBlock.String())
}
