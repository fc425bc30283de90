package heap

import (
	"github.com/tupled/tupled/internal/xact"
	"github.com/tupled/tupled/multixact"
)

// TMResult is PostgreSQL's TM_Result: what HeapTupleSatisfiesUpdate says
// about a version a transaction wants to lock, update or delete.
type TMResult uint8

const (
	TMOk            TMResult = iota // nobody (alive) holds it: go ahead
	TMInvisible                     // not visible to the caller at all (aborted/in-progress inserter, or updated by the caller itself)
	TMSelfModified                  // updated/deleted by the caller in the current command (unused: tupled has no command ids)
	TMBeingModified                 // xmax (or a multixact member) is in progress — possibly the caller's own lock
	TMUpdated                       // a committed updater made a newer version
	TMDeleted                       // a committed deleter removed it
	TMWouldBlock                    // (heap_lock_tuple) SKIP LOCKED / NOWAIT could not get it
)

func (r TMResult) String() string {
	return [...]string{"TM_Ok", "TM_Invisible", "TM_SelfModified", "TM_BeingModified", "TM_Updated", "TM_Deleted", "TM_WouldBlock"}[r]
}

// xminState classifies a tuple's inserter for the caller, setting hint bits.
// It returns false when the version does not exist for self (aborted or
// still-running inserter other than self).
func (h *Heap) xminOK(t *Tuple, mine bool) bool {
	im := t.infomask
	if im&XminFrozen == XminFrozen || im&XminCommitted != 0 {
		return true
	}
	if im&XminInvalid != 0 {
		return false
	}
	if mine {
		return true
	}
	switch st, _ := h.xacts.Status(t.xmin); st {
	case xact.Committed:
		t.infomask |= XminCommitted
		return true
	case xact.Aborted:
		t.infomask |= XminInvalid
		return false
	}
	return false
}

// UpdateXid returns the transaction that updated or deleted t (0 if its xmax
// is only a lock or empty): HeapTupleHeaderGetUpdateXid.
func UpdateXid(t *Tuple) uint64 {
	if t.infomask&XmaxInvalid != 0 || IsLockedOnly(t.infomask) || t.xmax == 0 {
		return 0
	}
	if t.infomask&XmaxIsMulti != 0 {
		if t.multi == nil {
			return 0
		}
		x, _ := t.multi.UpdateXid()
		return x
	}
	return t.xmax
}

// SatisfiesMVCC is HeapTupleSatisfiesMVCC: is version t visible to snap?
// The row latch must be held (it may set hint bits).
func (h *Heap) SatisfiesMVCC(t *Tuple, snap xact.Snapshot) bool {
	if !h.xminOK(t, snap.IsCurrent(t.xmin)) {
		return false
	}
	if t.infomask&XminFrozen != XminFrozen && !snap.IsCurrent(t.xmin) {
		if _, csn := h.xacts.Status(t.xmin); csn > snap.CSN() {
			return false // committed after the snapshot was taken
		}
	}
	if t.infomask&XmaxInvalid != 0 {
		return true
	}
	if t.infomask&XmaxCommitted != 0 {
		if snap.IsCurrent(t.xmax) {
			return false
		}
		_, csn := h.xacts.Status(t.xmax)
		return csn > snap.CSN()
	}
	upd := UpdateXid(t)
	if upd == 0 {
		return true
	}
	if snap.IsCurrent(upd) {
		return false
	}
	st, csn := h.xacts.Status(upd)
	switch st {
	case xact.InProgress:
		return true
	case xact.Aborted:
		if t.infomask&XmaxIsMulti == 0 {
			t.infomask |= XmaxInvalid
		}
		return true
	}
	if t.infomask&XmaxIsMulti == 0 {
		t.infomask |= XmaxCommitted
	}
	return csn > snap.CSN()
}

// SatisfiesUpdate is HeapTupleSatisfiesUpdate for transaction self. The row
// latch must be held (it may set hint bits).
func (h *Heap) SatisfiesUpdate(t *Tuple, self *xact.Xact) TMResult {
	if !h.xminOK(t, self.IsCurrent(t.xmin)) {
		return TMInvisible
	}
	im := t.infomask
	if im&XmaxInvalid != 0 || t.xmax == 0 {
		return TMOk
	}
	if im&XmaxCommitted != 0 {
		return updatedOrDeleted(t)
	}
	if IsLockedOnly(im) {
		if im&XmaxIsMulti != 0 {
			if t.multi != nil && h.multiRunning(t) {
				return TMBeingModified
			}
			t.infomask |= XmaxInvalid
			return TMOk
		}
		if h.xacts.IsInProgress(t.xmax) {
			return TMBeingModified // includes our own lock (since 9.5)
		}
		t.infomask |= XmaxInvalid
		return TMOk
	}
	if im&XmaxIsMulti != 0 {
		if t.multi == nil {
			t.infomask |= XmaxInvalid // reclaimed: nobody can be running
			return TMOk
		}
		upd, _ := t.multi.UpdateXid()
		if self.IsCurrent(upd) {
			return TMInvisible // we updated it in an earlier command
		}
		switch st, _ := h.xacts.Status(upd); st {
		case xact.InProgress:
			return TMBeingModified
		case xact.Committed:
			return updatedOrDeleted(t)
		}
		// The updater aborted: live lockers still count (never forget them).
		if h.multiRunning(t) {
			return TMBeingModified
		}
		t.infomask |= XmaxInvalid
		return TMOk
	}
	if self.IsCurrent(t.xmax) {
		return TMInvisible
	}
	switch st, _ := h.xacts.Status(t.xmax); st {
	case xact.InProgress:
		return TMBeingModified
	case xact.Committed:
		t.infomask |= XmaxCommitted
		return updatedOrDeleted(t)
	}
	t.infomask |= XmaxInvalid
	return TMOk
}

func updatedOrDeleted(t *Tuple) TMResult {
	if t.next != nil {
		return TMUpdated
	}
	return TMDeleted
}

func (h *Heap) multiRunning(t *Tuple) bool {
	return multixact.IsRunning(t.multi, h.xacts)
}

// IsRunningXmax reports whether t's xmax names a transaction (or multixact
// member) still in progress.
func (h *Heap) IsRunningXmax(t *Tuple) bool {
	if t.infomask&XmaxInvalid != 0 || t.xmax == 0 {
		return false
	}
	if t.infomask&XmaxIsMulti != 0 {
		return t.multi != nil && h.multiRunning(t)
	}
	return h.xacts.IsInProgress(t.xmax)
}
