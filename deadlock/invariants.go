package deadlock

import (
	"time"

	"github.com/tupled/tupled/internal/invariants"
)

// invVictim names the invariant of doc.go checked under -tags invariants
// where decide resolves a wait as Victim: the cycle that condemns it starts
// at the wait being checked (the detector only ever resolves its own
// start), visits each wait once, and holds only waits that had begun by the
// check's asOf (the graph as of the deadline) — so the victim is
// PostgreSQL's: the first check in deadline order that finds a cycle
// through its own waiter. That the cycle's waits are still waiting is
// validation's business, not this check's: between validation and the
// victim's resolution an external event (a member's lock timeout or
// cancel, which ends its transaction and so grants a wait for that
// transaction without any partition lock) may resolve a member, which
// README.md §5 accepts; CI's race tier saw it happen.
const invVictim = "deadlock.victim-on-cycle"

// checkVictim checks path, the validated cycle through start found as of
// asOf, just before start is resolved as Victim (invariants.Enabled only;
// O(len(path))).
func checkVictim(start *Wait, path []*Wait, asOf time.Time) {
	if len(path) == 0 || path[0] != start {
		invariants.Fail(invVictim, "a cycle of %d waits condemns a wait it does not start at", len(path))
	}
	seen := make(map[*Wait]struct{}, len(path))
	for i, w := range path {
		if _, dup := seen[w]; dup {
			invariants.Fail(invVictim, "wait %d of the cycle appears twice", i)
		}
		seen[w] = struct{}{}
		if w.Start.After(asOf) {
			invariants.Fail(invVictim, "wait %d of the cycle began at %v, after the check's as-of %v", i, w.Start, asOf)
		}
	}
}
