package tuplelock

import (
	"cmp"
	"context"
	"slices"

	"github.com/tupled/tupled/heap"
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/tuplemode"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/lockmgr"
	"github.com/tupled/tupled/multixact"
)

// Update is heap_update (isDelete false: a no-key update to value, taking
// LockTupleNoKeyExclusive) and heap_delete (isDelete true: taking
// LockTupleExclusive). It always waits (SQL UPDATE/DELETE have no NOWAIT),
// honouring ctx and the lock timeout. It returns TMOk when done,
// TMUpdated/TMDeleted when a committed change made tup obsolete (the caller
// follows the chain under READ COMMITTED or fails with 40001), TMInvisible
// when tup is not there for tx.
//
// Surviving lockers are kept: a non-key update proceeds over key-share
// lockers without waiting, records them beside itself in the old version's
// xmax, and carries them onto the new version's xmax, so a later DELETE of
// the new version still waits for them (multixact-no-forget,
// propagate-lock-delete).
func (e *Locker) Update(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, value []byte, isDelete bool) (result heap.TMResult, err error) {
	return e.update(ctx, tx, tbl, r, tup, value, isDelete, false)
}

// KeyUpdate is Update for an update that changes a key column (a column of
// a unique index, which a foreign key may reference): like heap_update
// when HeapDetermineColumnsInfo finds a key column modified, it takes
// LockTupleExclusive, so it waits for FOR KEY SHARE lockers (which a
// no-key update passes over) and marks the old version's xmax
// KeysUpdated, with the multixact status Update rather than NoKeyUpdate.
func (e *Locker) KeyUpdate(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, value []byte) (result heap.TMResult, err error) {
	return e.update(ctx, tx, tbl, r, tup, value, false, true)
}

func (e *Locker) update(ctx context.Context, tx *Txn, tbl *heap.Table, r *heap.Row, tup *heap.Tuple, value []byte, isDelete, keyUpdate bool) (result heap.TMResult, err error) {
	me := tx.x
	me.NoteWrite() // before anything is written: this commit needs a CSN
	tx.mayBeMember = true
	mode := tuplemode.NoKeyExclusive
	if isDelete || keyUpdate {
		mode = tuplemode.Exclusive
	}
	tag, haveTupleLock := e.adoptCarried(tx, tbl, r, hwMode(mode)) // tag built only when we must queue
	defer func() {
		if haveTupleLock {
			e.endTupleLock(tx, tag, hwMode(mode), result, err)
		}
	}()
	acquire := func() error {
		if haveTupleLock {
			return nil
		}
		tag = tupleTag(tbl, r)
		if err := e.locks.Lock(ctx, tx.proc, tag, hwMode(mode), lockmgr.Wait{Timeout: tx.lockTimeout}); err != nil {
			return err
		}
		haveTupleLock = true
		return nil
	}
	for {
		r.Lock()
		res := e.heap.SatisfiesUpdate(tup, me)
		if res == heap.TMInvisible || res == heap.TMSelfModified {
			r.Unlock()
			return res, nil
		}
		lockerRemains := false
		if res == heap.TMBeingModified {
			xwait, im, multi := tup.Xmax(), tup.Infomask(), tup.Multi()
			if im&heap.XmaxIsMulti != 0 {
				if e.multiConflicts(multi, me, mode) {
					currentIsMember := false
					for _, mb := range multi.Members() {
						if me.IsCurrent(mb.Xid) {
							currentIsMember = true
						}
					}
					r.Unlock()
					if !currentIsMember {
						if err := acquire(); err != nil {
							return 0, err
						}
					}
					if _, err := e.waitXacts(ctx, tx, e.conflictingMembers(multi, me, mode), Block); err != nil {
						return 0, err
					}
					continue
				}
				// No conflicting member: remaining members survive.
				lockerRemains = true
				if upd, _ := multi.UpdateXid(); upd != 0 && !heap.IsLockedOnly(im) {
					if st, _ := e.xacts.Status(upd); st == xact.Committed {
						res = heap.TMUpdated
						if tup.Next() == nil {
							res = heap.TMDeleted
						}
					}
				}
			} else if me.IsCurrent(xwait) {
				lockerRemains = true // our own lock
			} else if heap.IsLockedOnly(im) && heap.IsKeyShrLocked(im) && mode != tuplemode.Exclusive {
				lockerRemains = true // a key-share locker does not block a non-key update
			} else {
				r.Unlock()
				if err := acquire(); err != nil {
					return 0, err
				}
				if _, err := e.waitXacts(ctx, tx, []uint64{xwait}, Block); err != nil {
					return 0, err
				}
				continue
			}
		}
		if res == heap.TMUpdated || res == heap.TMDeleted {
			r.Unlock()
			return res, nil
		}
		err := e.applyUpdate(tbl, r, tup, me, mode, value, isDelete, lockerRemains)
		r.Unlock()
		return heap.TMOk, err
	}
}

func (e *Locker) applyUpdate(tbl *heap.Table, r *heap.Row, tup *heap.Tuple, me *xact.Xact, mode tuplemode.Mode, value []byte, isDelete, lockerRemains bool) error {
	nx, err := e.computeNewXmax(tup, me, mode, true)
	if err != nil {
		return err
	}
	if invariants.Enabled {
		e.checkNewXmax(me, nx, "update")
		checkWriteNoted(me, "update")
	}
	c := heap.Change{Xid: me.ID(), Old: tup, Xmax: nx.xmax, Multi: nx.multi, Infomask: nx.im, Infomask2: nx.im2}
	if isDelete {
		c.Kind = heap.ChangeXmax
		tbl.Apply(r, c)
		return nil
	}
	nt := heap.NewTuple(me.ID(), value, true)
	if lockerRemains && tup.Infomask()&heap.XmaxInvalid == 0 && tup.Xmax() != 0 {
		// The lockers that survive the update lock the new version too.
		if tup.Infomask()&heap.XmaxIsMulti != 0 {
			im, im2 := multiHintBits(tup.Multi())
			nt.SetInitialXmax(tup.Xmax(), tup.Multi(), heap.XmaxIsMulti|im, im2)
		} else {
			nt.SetInitialXmax(tup.Xmax(), nil, heap.XmaxKeyShrLock|heap.XmaxLockOnly, 0)
		}
	}
	c.Kind = heap.ChangeUpdate
	c.New = nt
	tbl.Apply(r, c)
	return nil
}

// insertLockMode is the tuple-lock mode of a waiting inserter: that of a
// non-key update, which conflicts with itself, so inserters of one key
// queue one behind the other.
var insertLockMode = hwMode(tuplemode.NoKeyExclusive)

// Insert adds a row version for key, enforcing primary-key uniqueness like
// _bt_check_unique: it waits for an in-progress inserter or deleter of the
// key and then re-checks; a live version (even one the caller's snapshot
// cannot see) is ErrDuplicateKey. A row it creates keeps key and the
// version keeps value, neither copied: the caller passes copies of its
// own that nothing changes afterwards (heap.Table.RowForInsert).
//
// Unlike _bt_check_unique, a waiter first queues on the key's tuple lock
// (the heavyweight lock updaters queue on, in ExclusiveLock mode) and keeps
// it until it has inserted or failed, so only the head of the line waits
// for the transaction in the way. PostgreSQL's waiters all wait for that
// xid: when it ends they all wake, one inserts, and the rest wait again for
// the winner — with n waiters on a key each insert costs O(n) wakeups (the
// 2018 seed's contended inserts ran at ~44 lock waits per transaction).
// Queued, they are woken one at a time, in order of arrival.
func (e *Locker) Insert(ctx context.Context, tx *Txn, tbl *heap.Table, key, value []byte) (err error) {
	me := tx.x
	me.NoteWrite() // before anything is written: this commit needs a CSN
	var tag lockmgr.Tag
	haveTupleLock := false
	defer func() {
		if haveTupleLock {
			e.locks.Unlock(tx.proc, tag, insertLockMode)
		}
	}()
	for {
		r := tbl.RowForInsert(key)
		wait, dup := e.uniqueCheck(r, me)
		if dup {
			r.Unlock()
			return ErrDuplicateKey
		}
		if wait != 0 {
			r.Unlock()
			if !haveTupleLock {
				tag = tupleTag(tbl, r)
				if err := e.locks.Lock(ctx, tx.proc, tag, insertLockMode, lockmgr.Wait{Timeout: tx.lockTimeout}); err != nil {
					return err
				}
				haveTupleLock = true
				continue // whoever held it may have inserted meanwhile: look again
			}
			if _, err := e.waitXacts(ctx, tx, []uint64{wait}, Block); err != nil {
				return err
			}
			continue
		}
		if invariants.Enabled {
			checkWriteNoted(me, "insert")
		}
		nt, list := heap.NewInsertTuple(me.ID(), value)
		tbl.Apply(r, heap.Change{Kind: heap.ChangeInsert, Xid: me.ID(), New: nt, List: list})
		r.Unlock()
		return nil
	}
}

// uniqueCheck looks at every version of the key with a "dirty snapshot".
func (e *Locker) uniqueCheck(r *heap.Row, me *xact.Xact) (wait uint64, dup bool) {
	for _, v := range r.Versions() {
		if v.Infomask()&heap.XminFrozen != heap.XminFrozen && !me.IsCurrent(v.Xmin()) {
			switch st, _ := e.xacts.Status(v.Xmin()); st {
			case xact.Aborted:
				continue
			case xact.InProgress:
				return v.Xmin(), false
			}
		}
		upd := heap.UpdateXid(v)
		if upd == 0 {
			return 0, true // live (possibly locked) version
		}
		if me.IsCurrent(upd) {
			continue
		}
		switch st, _ := e.xacts.Status(upd); st {
		case xact.InProgress:
			return upd, false
		case xact.Aborted:
			return 0, true
		}
		// Committed: updated (a newer version follows) or deleted.
	}
	return 0, false
}

// Members returns the live lockers/updater in t's xmax and their statuses,
// for pgrowlocks-style introspection. Latch held.
func (e *Locker) Members(t *heap.Tuple) (multi bool, live []multixact.Member) {
	for _, mb := range memberList(t) {
		if e.xacts.IsInProgress(mb.Xid) {
			live = append(live, mb)
		}
	}
	// in (xid, status) order: a multixact keeps its members in order of
	// addition
	slices.SortFunc(live, func(a, b multixact.Member) int {
		return cmp.Or(cmp.Compare(a.Xid, b.Xid), cmp.Compare(a.Status, b.Status))
	})
	return t.Infomask()&heap.XmaxIsMulti != 0, live
}
