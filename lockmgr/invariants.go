package lockmgr

import "github.com/tupled/tupled/internal/invariants"

// Names of the invariants of doc.go and of lock's comment checked under
// -tags invariants.
const (
	// invInUse: a lock object is in its partition's table only while
	// held or awaited.
	invInUse = "lockmgr.objects-in-use"
	// invGranted: granted[m] is the sum of the holders' counts of m, the
	// grant mask has m iff that is non-zero, a holder's mask has m iff
	// its count is, and no holder entry is empty or duplicated.
	invGranted = "lockmgr.granted-counts"
)

// checkGranted checks l's bookkeeping after a grant or ungrant of mode
// (partition mutex held; invariants.Enabled only; O(holders²), holders
// being few): every mode's granted count against its holders', since a
// broken count of another mode may be what this change would act on.
func (l *lock) checkGranted(mode LockMode) {
	var sum [len(lock{}.granted)]int32
	for i := range l.holders {
		h := &l.holders[i]
		if h.mask == 0 {
			invariants.Fail(invGranted, "%s: holder %d (transaction %d) holds nothing", l.tag, i, h.proc.xid)
		}
		for j := range i {
			if l.holders[j].proc == h.proc {
				invariants.Fail(invGranted, "%s: transaction %d has two holder entries", l.tag, h.proc.xid)
			}
		}
		for m := range sum {
			if (h.counts[m] > 0) != (h.mask&bit(LockMode(m)) != 0) {
				invariants.Fail(invGranted, "%s: transaction %d holds %s %d times but its mask is %#x", l.tag, h.proc.xid, LockMode(m), h.counts[m], h.mask)
			}
			sum[m] += int32(h.counts[m])
		}
	}
	for m := range sum {
		if sum[m] != l.granted[m] || (l.granted[m] > 0) != (l.grantMask&bit(LockMode(m)) != 0) {
			invariants.Fail(invGranted, "%s: %s granted %d, holders hold it %d times, grant mask %#x (after a change of %s)", l.tag, LockMode(m), l.granted[m], sum[m], l.grantMask, mode)
		}
	}
}

// checkInUse checks that l, found in its partition's table by a request
// or a release, is held or awaited (partition mutex held;
// invariants.Enabled only; O(1)): whoever left it empty should have
// removed it (partition.release).
func (l *lock) checkInUse() {
	if len(l.holders) == 0 && len(l.queue) == 0 {
		invariants.Fail(invInUse, "lock object %s is in its partition's table with no holder and no waiter", l.tag)
	}
}
