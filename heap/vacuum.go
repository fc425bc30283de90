package heap

import (
	"github.com/tupled/tupled/internal/invariants"
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// SetPruneHorizon publishes the CSN horizon writers use to prune rows as
// they update them. Versions whose updater committed at or below it are
// invisible to every live and future snapshot.
func (h *Heap) SetPruneHorizon(csn uint64) { h.pruneHorizon.Store(csn) }

// dead reports whether no snapshot can ever see t again: its inserter
// aborted, or its updater/deleter committed at or below horizon.
func (h *Heap) dead(t *Tuple, horizon uint64) bool {
	if t.infomask&XminFrozen != XminFrozen {
		if t.infomask&XminInvalid != 0 {
			return true
		}
		if t.infomask&XminCommitted == 0 {
			switch st, _ := h.xacts.Status(t.xmin); st {
			case xact.Aborted:
				t.infomask |= XminInvalid
				return true
			case xact.InProgress:
				return false
			}
			t.infomask |= XminCommitted
		}
	}
	if horizon == 0 {
		return false
	}
	upd := UpdateXid(t)
	if upd == 0 {
		return false
	}
	st, csn := h.xacts.Status(upd)
	return st == xact.Committed && csn <= horizon
}

// deadToAll reports whether no snapshot, live or future, can see any
// version of r (each is dead at horizon, a CSN from xact.Horizon). It takes
// r's latch.
func (h *Heap) deadToAll(r *Row, horizon uint64) bool {
	r.Lock()
	defer r.Unlock()
	for _, v := range r.versions {
		if !h.dead(v, horizon) {
			return false
		}
	}
	return true
}

// prune removes r's dead versions (heap_page_prune). Latch held.
func (t *Table) prune(r *Row) int {
	return t.pruneWith(r, t.heap.pruneHorizon.Load())
}

func (t *Table) pruneWith(r *Row, horizon uint64) int {
	// Decide once: a transaction may end while we prune (ending takes no
	// row latch), and the counts must match what is actually removed.
	var isDead []bool
	n := 0
	for i, v := range r.versions {
		if t.heap.dead(v, horizon) {
			if isDead == nil {
				isDead = make([]bool, len(r.versions))
			}
			isDead[i] = true
			n++
		}
	}
	if n == 0 {
		return 0
	}
	if t.heap.hook != nil {
		t.heap.hook(t.name, r.key, &Change{Kind: ChangeVacuum})
	}
	kept := r.versions[:0]
	var removed []*Tuple
	for i, v := range r.versions {
		if isDead[i] {
			removed = append(removed, v)
			continue
		}
		kept = append(kept, v)
	}
	clear(r.versions[len(kept):])
	r.versions = kept
	if len(kept) == 0 {
		r.versions = nil // the list may live in a removed version's allocation (insertedTuple)
	}
	// A surviving version whose successor was removed had an aborted
	// updater: drop the link so the dead version can be reclaimed.
	for _, v := range kept {
		for _, d := range removed {
			if v.next == d {
				v.next = nil
			}
		}
	}
	r.publish()
	t.heap.tuplesLive.Add(-int64(n))
	t.heap.tuplesReclaimed.Add(uint64(n))
	return n
}

// VacuumResult reports one vacuum pass over a table.
type VacuumResult struct {
	Rows, Removed, RowsUnlinked int
	// MinXidRef is the smallest xid still referenced unfrozen by a tuple of
	// the table (xmin, xmax or a multixact member); ^0 if none.
	MinXidRef uint64
	// Multis are the distinct multixacts the table's tuples still name.
	Multis map[*multixact.MultiXact]struct{}
}

// Vacuum removes dead versions (horizon is a CSN from xact.Horizon), freezes
// xmins below freezeBelow, clears finished lockers from xmax (of the rows on
// the worklist: Apply leaves a single locker's xid off it), replaces
// multixacts that no transaction can need (FreezeMultiXactId: invalidate, or
// keep just a committed updater), and unlinks empty rows.
func (t *Table) Vacuum(horizon uint64, freezeBelow uint64) VacuumResult {
	res := VacuumResult{MinXidRef: ^uint64(0)}
	ref := func(x uint64) {
		if x != 0 && x < res.MinXidRef {
			res.MinXidRef = x
		}
	}
	t.vacMu.Lock()
	list := t.vacList
	t.vacList = nil
	t.vacMu.Unlock()
	// the rows kept on the worklist are compacted into list's own array
	// (again never passes the row being read), which then takes back the
	// rows noted meanwhile. A pass allocates nothing for the rows it
	// keeps: growing again, and then the worklist, anew from nil each pass
	// was a fifth of a bulk load's allocated bytes
	again := list[:0]
	var running uint64 // an xid found in progress in this pass (see pendingInsert)
	for _, r := range list {
		r.Lock()
		if t.pendingInsert(r, &running) {
			res.Rows++
			ref(r.versions[0].xmin)
			again = append(again, r)
			r.Unlock()
			continue
		}
		if t.vacuumRow(r, horizon, freezeBelow, &res, ref) {
			again = append(again, r)
		} else {
			r.inVac = false
		}
		r.Unlock()
	}
	clear(list[len(again):]) // no stale pointers kept alive past the length
	t.vacMu.Lock()
	if n := len(again) + len(t.vacList); n < cap(list)/4 {
		// mostly emptied (a load committed and was frozen): let the big
		// array go rather than hold it for a small list
		again = append(make([]*Row, 0, 2*n), again...)
	}
	t.vacList = append(again, t.vacList...)
	t.vacMu.Unlock()
	return res
}

// pendingInsert reports whether r is one version inserted by a
// transaction in progress, without xmax: vacuumRow would find nothing to
// do but keep it listed. A bulk load's rows are all such until it commits,
// and every pass during the load visits them all; running, the last xid
// found in progress in this pass, spares those visits the status lookup
// (it may have ended since: the row then waits for the next pass, as it
// would had vacuum looked just before the end). Latch held.
func (t *Table) pendingInsert(r *Row, running *uint64) bool {
	if len(r.versions) != 1 || r.removed.Load() {
		return false
	}
	v := r.versions[0]
	if v.xmin == 0 || v.infomask&(XminCommitted|XminInvalid) != 0 || (v.infomask&XmaxInvalid == 0 && v.xmax != 0) {
		return false
	}
	if v.xmin != *running {
		if st, _ := t.heap.xacts.Status(v.xmin); st != xact.InProgress {
			return false
		}
		*running = v.xmin
	}
	return true
}

// vacuumRow vacuums one row of the worklist (latch held) and reports whether
// it must stay on the list: anything left that a later vacuum may do.
func (t *Table) vacuumRow(r *Row, horizon, freezeBelow uint64, res *VacuumResult, ref func(uint64)) bool {
	h := t.heap
	if r.removed.Load() {
		return false
	}
	res.Rows++
	res.Removed += t.pruneWith(r, horizon)
	pending := len(r.versions) > 1
	for _, v := range r.versions {
		if v.infomask&XminFrozen != XminFrozen {
			if v.xmin < freezeBelow && v.infomask&XminCommitted != 0 {
				v.infomask |= XminFrozen
			} else {
				ref(v.xmin)
				pending = true
			}
		}
		h.freezeXmax(v)
		if v.infomask&XmaxInvalid == 0 && v.xmax != 0 {
			pending = true
			if v.infomask&XmaxIsMulti != 0 {
				if res.Multis == nil {
					res.Multis = make(map[*multixact.MultiXact]struct{})
				}
				res.Multis[v.multi] = struct{}{}
				for _, m := range v.multi.Members() {
					ref(m.Xid)
				}
			} else {
				ref(v.xmax)
			}
		}
	}
	r.publish() // freezing may have changed the newest version's header
	if len(r.versions) == 0 {
		if !r.dirty && r.pins.Load() == 0 && r.markRemoved() {
			t.store.Remove(r)
			res.RowsUnlinked++
			return false
		}
		return true // unlinked by a later pass, once clean and unpinned
	}
	return pending
}

// freezeXmax drops an xmax that no longer means anything. Latch held.
func (h *Heap) freezeXmax(v *Tuple) {
	if invariants.Enabled {
		defer checkHeader(v, "vacuum freezeXmax")
	}
	if v.infomask&XmaxInvalid != 0 || v.xmax == 0 {
		return
	}
	clearXmax := func() {
		v.xmax, v.multi = 0, nil
		v.infomask = v.infomask&^XmaxBits | XmaxInvalid
		v.infomask2 &^= KeysUpdated
	}
	if v.infomask&XmaxIsMulti != 0 {
		if v.multi != nil && h.multiRunning(v) {
			return
		}
		upd, status := uint64(0), uint8(0)
		if v.multi != nil {
			u, s := v.multi.UpdateXid()
			upd, status = u, uint8(s)
		}
		if upd != 0 && !IsLockedOnly(v.infomask) && h.xacts.DidCommit(upd) {
			// RETURN_IS_XID: keep just the committed updater.
			v.xmax, v.multi = upd, nil
			v.infomask = v.infomask&^XmaxBits | XmaxCommitted
			if status == 5 { // multixact.Update
				v.infomask2 |= KeysUpdated
			} else {
				v.infomask2 &^= KeysUpdated
			}
			return
		}
		clearXmax()
		return
	}
	if h.xacts.IsInProgress(v.xmax) {
		return
	}
	if IsLockedOnly(v.infomask) || !h.xacts.DidCommit(v.xmax) {
		clearXmax()
	}
}
